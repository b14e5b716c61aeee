#!/bin/bash
# fifty-seventh session, call A (ship/ carried, with s42.sh of ../h200-2026-11-29-early-range copied in):
# --smoke of n, then n (k.diff + boundary_in_group) against h (main, 4b901e0) on the mask, the sampler,
# the list and the copy: two interleaved runs at B = 1 and 64, then one at B = 1024.
cd "$(dirname "$0")"
SMOKE=n BUILDS="n h" REPS="1 2" BATCHES=1,64 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1_64.tar.xz
SMOKE=" " BUILDS="h n" REPS="1" BATCHES=1024 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1024.tar.xz
