#!/usr/bin/env bash
# Growth 250 MB -> 1 GB on main's final builds: 21 fresh runs a side, the sizes alternated.
set -uo pipefail
cd /work/lead-s17/final
V=/work/bench-data/venv/bin/python; L=/work/bench-data/lead17s; OUT=/work/lead-s17/out
stop_residents() { for p in $(pgrep -f "resident_server"); do kill "$p"; done; sleep 2; }
for i in 1 2 3; do
  for size in 250 1000; do
    w=$L/f250; [ $size = 1000 ] && w=$L/fin
    echo "== growth $size #$i $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $OUT/steps.txt
    python bench/bench_search.py /work/bench-data/c$size --work $w --reuse --runs 21 --no-append --python $V \
      > $OUT/growth-$size-$i.json 2> $OUT/growth-$size-$i.err
    stop_residents
  done
done
echo "== growth end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $OUT/steps.txt
