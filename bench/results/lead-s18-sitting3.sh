#!/usr/bin/env bash
# The lead's third cold-build sitting of session 18: the same trees, the base first as in the first.
set -uo pipefail
FINAL=/work/lead-s18/final; BASE=/work/lead-s18/base; OUT=/work/lead-s18/out; L=/work/bench-data/lead18s
cd "$FINAL"
echo "== 6 cold 1 GB, base first (third sitting) $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"
rm -rf $L/cold3
python bench/bench_cold_build.py /work/bench-data/c1000 --work $L/cold3 --src $BASE/src --src $FINAL/src --rounds 3 \
    > "$OUT/cold-1000-third.json" 2> "$OUT/cold-1000-third.err"
echo "== 6 end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"
