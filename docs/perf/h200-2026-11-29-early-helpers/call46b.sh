#!/bin/bash
# forty-sixth session, call B: --smoke of g, A/B of g (helpers) and f (landed) at B = 1, 64 (three runs), then B = 1024 (one run)
cd "$(dirname "$0")"
SMOKE=g BUILDS="g f" REPS="1 2 3" BATCHES=1,64 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1_64.tar.xz
SMOKE=g BUILDS="g f" REPS="1" BATCHES=1024 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1024.tar.xz
