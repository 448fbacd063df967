#!/usr/bin/env bash
# Growth 250 MB -> 1 GB by bench/bench_growth.py (s18-fresh's measure: sizes interleaved run by run,
# residents warmed first, 41 runs): main's final builds and the base's, A B A B.
set -uo pipefail
FINAL=/work/lead-s18/final; BASE=/work/lead-s18/base; OUT=/work/lead-s18/out; L=/work/bench-data/lead18s
V=/work/bench-data/venv/bin/python
cd "$FINAL"
stamp() { echo "== $1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"; }
stop_residents() { for p in $(pgrep -f "resident_server"); do kill "$p"; done; sleep 2; }
stamp "7a base 250 MB build"
[ -d $L/b250/agentdex-data ] || python bench/bench_cold_build.py /work/bench-data/c250 --work $L/b250 --src $BASE/src > "$OUT/b250-build.json" 2> "$OUT/b250-build.err"
for i in 1 2; do
  stamp "7 growth final #$i"
  python bench/bench_growth.py /work/bench-data/c250 /work/bench-data/c1000 --small-work $L/f250 --large-work $L/fin \
    --runs 41 --python $V --src $FINAL/src > "$OUT/growth-final-$i.json" 2> "$OUT/growth-final-$i.err"
  stop_residents
  stamp "7 growth base #$i"
  python bench/bench_growth.py /work/bench-data/c250 /work/bench-data/c1000 --small-work $L/b250 --large-work $L/bas \
    --runs 41 --python $V --src $BASE/src > "$OUT/growth-base-$i.json" 2> "$OUT/growth-base-$i.err"
  stop_residents
done
stamp "7 end"
