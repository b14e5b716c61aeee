#!/bin/bash
# fifty-seventh session, call B (from the repository root; ship/ and .peers/ carried): the targets
# recounted at n (perf_head): ../h100-2026-11-28-targets/targets.sh (smoke, the whole default grid,
# FlashInfer's fused sampler and vLLM's sampler), then vLLM's Triton mask and torch.topk on the
# same generated inputs (perf/peers.py), into a second tarball.
repo=$PWD
TMO=300 PTMO=300 bash docs/perf/h100-2026-11-28-targets/targets.sh
R=/tmp/res2; mkdir -p $R
timeout 200 python3 perf/peers.py --out $R/peers_mask.json --peers-dir .peers/vllm_ops \
  --kinds vllm-triton,torch-topk > $R/peers_mask.log 2>&1
echo "mask peers rc=$? $(date -u +%T)" | tee $R/device.txt
tar cf - -C $R . | xz -6 > $OUT/res_mask_peers.tar.xz
