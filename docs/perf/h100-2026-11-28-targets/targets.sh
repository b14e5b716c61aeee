#!/bin/bash
# 34th session: the targets recounted at the landed kernels (perf_head, built by
# ../h200-h100-2026-11-27-fused-finish/build_perf.sh), with FlashInfer's fused sampler and
# vLLM's sampler in the same call. Run from the repository root with ship/ and .peers/ carried;
# every output in one tarball (the device returns at most 8 files).
repo=$PWD
export LD_LIBRARY_PATH=$repo/ship/lib:$LD_LIBRARY_PATH
(cd ship/bin && xz -dc perfs.tar.xz | tar xf - && chmod +x perf_*)
R=/tmp/res; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $R/device.txt
date -u >> $R/device.txt
P=ship/bin/perf_head
$P --smoke > $R/smoke.txt 2>&1; echo "smoke rc=$? $(date -u +%T)" | tee -a $R/device.txt
timeout ${TMO:-300} $P --benchmark_out=$R/perf.json --benchmark_out_format=json > $R/perf.txt 2>&1
echo "perf rc=$? $(date -u +%T)" | tee -a $R/device.txt
timeout ${PTMO:-400} python3 perf/peers.py --out $R/peers.json --peers-dir .peers/vllm_ops \
  --flashinfer-dir .peers/flashinfer --flashinfer-cache /tmp/fi-cache \
  --kinds flashinfer-sample,vllm-sample-native > $R/peers.log 2>&1
echo "peers rc=$? $(date -u +%T)" | tee -a $R/device.txt
if python3 -c "import matplotlib" 2> /dev/null; then
  python3 scripts/plot_perf.py $R/perf.json $R/peers.json --out $R/plots > $R/plots.log 2>&1
  echo "plots rc=$? $(date -u +%T)" | tee -a $R/device.txt
fi
tar cf - -C $R . | xz -6 > $OUT/res.tar.xz
