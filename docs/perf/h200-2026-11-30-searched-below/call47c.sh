#!/bin/bash
# forty-seventh session, call C: --smoke of i, A/B of i (M(> K) outside Boundary) and g (landed) at B = 1, 64 (two runs), then B = 1024 (one run)
cd "$(dirname "$0")"
SMOKE=i BUILDS="i g" REPS="1 2" BATCHES=1,64 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1_64.tar.xz
SMOKE=" " BUILDS="i g" REPS="1" BATCHES=1024 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1024.tar.xz
