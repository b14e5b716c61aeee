#!/bin/bash
# forty-seventh session, call D: k (M(> K) through an out-parameter, wip/below-out) against g, one run each: B = 1 (mask, sampler, list, copy), then B = 1024 (sampler, list)
cd "$(dirname "$0")"
SMOKE=" " BUILDS="k g" REPS="1" BATCHES=1 bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1.tar.xz
SMOKE=" " BUILDS="k g" REPS="1" BATCHES=1024 FILTER='^(qrita-sample|qrita-cand64)/' bash s42.sh ab
mv $OUT/res_ab.tar.xz $OUT/res_ab_b1024.tar.xz
