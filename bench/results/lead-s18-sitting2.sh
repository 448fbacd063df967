#!/usr/bin/env bash
# The lead's second cold-build sitting of session 18: the same trees, main first (A B order swapped).
set -uo pipefail
FINAL=/work/lead-s18/final; BASE=/work/lead-s18/base; OUT=/work/lead-s18/out; L=/work/bench-data/lead18s
cd "$FINAL"
echo "== 5 cold 1 GB, main first $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"
rm -rf $L/cold2
python bench/bench_cold_build.py /work/bench-data/c1000 --work $L/cold2 --src $FINAL/src --src $BASE/src --rounds 3 \
    > "$OUT/cold-1000-swapped.json" 2> "$OUT/cold-1000-swapped.err"
echo "== 5 end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"
