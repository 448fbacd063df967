#!/usr/bin/env bash
# main's final tree at 1 GB with 2 workers (the default here) and 1, interleaved: how the build scales with workers.
set -uo pipefail
FINAL=/work/lead-s18/final; OUT=/work/lead-s18/out; L=/work/bench-data/lead18s
cd "$FINAL"
echo "== 8 workers 2 vs 1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"
rm -rf $L/workers
python bench/bench_cold_build.py /work/bench-data/c1000 --work $L/workers --src $FINAL/src --workers 2 --workers 1 --rounds 1 \
    > "$OUT/workers-1000.json" 2> "$OUT/workers-1000.err"
echo "== 8 end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"
