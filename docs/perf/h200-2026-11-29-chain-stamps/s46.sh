#!/bin/bash
# s46.sh: the forty-sixth session's device call: the stamped CLI on the big nuclei at B = 1 (mask, then sample_tokens,
# then candidate_list C = 64), then the CUDA tests of the mended headers and memcheck.
cd "$(dirname "$0")"; HERE=$PWD
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=$OUT/res; mkdir -p $R
pack() { tar cf - -C $R . | xz -1 > $OUT/res_$1.tar.xz; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > $R/device.txt; date -u >> $R/device.txt
if [ -f bin/cli.xz ]; then
  xz -dc bin/cli.xz > /tmp/cli && chmod +x /tmp/cli
  for cell in "randn 128256 --k 0 --p 0.7" "uniform 262144 --k 0 --p 0.7" "serving 128256 --k 0 --p 0.7" "randn 128256 --k 0 --p 0.9"; do
    set -- $cell; sh=$1; V=$2; shift 2
    for mode in "--sample" "--candidates 64"; do
      tag=$(echo "$sh $V $* $mode" | tr ' ' '_' | tr -d '-')
      echo "== $sh V=$V $* $mode" >> $R/stamps.txt
      timeout 60 /tmp/cli --shape $sh --vocab $V --batch 1 "$@" $mode --repeat 5 --rows 0 --no-check > $R/out_$tag.txt 2>&1; echo "rc=$?" >> $R/stamps.txt
      grep -E "median|call" $R/out_$tag.txt | head -5 >> $R/stamps.txt
      python3 stamps46.py $R/out_$tag.txt >> $R/stamps.txt
    done
  done
  pack stamps
fi
if [ -f bin/tests.tar.xz ]; then
  (cd /tmp && xz -dc $HERE/bin/tests.tar.xz | tar xf -)
  QRITA_TEST_LARGE=1 timeout 240 /tmp/qrita_tests --gtest_brief=1 --gtest_output=json:$R/tests.json > $R/tests.log 2>&1; echo "tests rc=$? $(date -u +%T)" | tee -a $R/device.txt
  tail -6 $R/tests.log
  QRITA_TEST_UNDER_TOOL=1 timeout 200 compute-sanitizer --tool memcheck /tmp/qrita_tests --gtest_brief=1 --gtest_filter='*Cuda*:-*ServingSizes*' > $R/memcheck.log 2>&1; echo "memcheck rc=$? $(date -u +%T)" | tee -a $R/device.txt
  tail -4 $R/memcheck.log
fi
pack all; rm -rf $R
