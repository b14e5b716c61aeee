#!/bin/bash
# forty-fifth session, call 1: smoke + A/B f vs a (B 1, 64), ncu per launch, ncu source counters (SASS) of f and a
cd "$(dirname "$0")"
SMOKE=f BUILDS="f a" REPS="1 2 3" BATCHES=1,64 bash s42.sh ab
NCU_BUILDS="f a" NCU_CELLS="randn/p0.7/V:128256/B:1/ serving/t0.7-mp0.05-k50-p0.9/V:128256/B:1/ uniform/p0.7/V:262144/B:1/" bash ncu44.sh
for c in qrita qrita-sample; do NCU_CALL=$c NCU_BUILDS="f a" bash ncu45src.sh; done
