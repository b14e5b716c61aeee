#!/bin/bash
# the planted build of test_sampling (forty-seventh session: draw_helped takes K0's group for any target above M(> K0)): the Cuda large-kept-set test
cd "$(dirname "$0")"; HERE=$PWD
export LD_LIBRARY_PATH=$PWD/lib:$LD_LIBRARY_PATH
R=$OUT/res; mkdir -p $R
(cd /tmp && xz -dc $HERE/bin/tests.tar.xz | tar xf -)
timeout 300 /tmp/qrita_tests --gtest_brief=1 --gtest_filter='*Cuda*LargeKeptSets*:*Cuda*RandomFilters*:*Cuda*Case32*' > $R/planted.log 2>&1; echo "planted rc=$? $(date -u +%T)" | tee $R/device.txt
grep -c "Expected equality" $R/planted.log
grep -E "split rows" $R/planted.log | grep -c "row " 
tail -5 $R/planted.log
tar cf - -C $R . | xz -1 > $OUT/res_planted.tar.xz
