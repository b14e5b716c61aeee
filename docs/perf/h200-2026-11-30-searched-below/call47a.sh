#!/bin/bash
# forty-seventh session, call A: --smoke of h, A/B of h (searched M(>K)) and g (landed) at B = 1, 64 (three runs), then B = 1024 (one run)
cd "$(dirname "$0")"
SMOKE=h BUILDS="h g" REPS="1 2 3" BATCHES=1,64 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1_64.tar.xz
SMOKE=h BUILDS="h g" REPS="1" BATCHES=1024 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1024.tar.xz
