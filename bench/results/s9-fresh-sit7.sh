#!/bin/bash
B=/work/bench-data/s9-fresh
V=/work/bench-data/lead-venv/bin/python
cd $B/final
for S in 1000 250; do
  echo "== $S $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  python bench/bench_search.py /work/bench-data/c$S --work $B/W$S --reuse --runs 15 --no-append --python $V --src $B/final/src --against $B/base/src --against-work $B/W$S > $B/sit7-$S.json
done
echo "== end $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
