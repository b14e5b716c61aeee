#!/bin/bash
# forty-seventh session, call B: the mask's and the copy's A/B at B = 1 with g first (BUILDS="g h"), two runs: is h's 1% on the mask's other cells the order or the code?
cd "$(dirname "$0")"
SMOKE=" " BUILDS="g h" REPS="1 2" BATCHES=1 FILTER='^(qrita|copy)/' bash s42.sh ab
