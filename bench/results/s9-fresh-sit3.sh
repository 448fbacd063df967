#!/bin/bash
B=/work/bench-data/s9-fresh
V=/work/bench-data/lead-venv/bin/python
cd $B/new2
for S in 1000 250; do
  echo "== $S $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  python bench/bench_search.py /work/bench-data/c$S --work $B/W$S --reuse --runs 15 --no-append --python $V --src $B/new2/src --against $B/base/src --against-work $B/W$S > $B/sit3-$S.json
done
for S in 1000 250; do
for T in base new2; do
  echo "== steps $S $T $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  AGENTDEX_DATA_DIR=$B/W$S/agentdex-data AGENTDEX_CONFIG=$B/W$S/no-config.toml $V bench/fresh_steps.py /work/bench-data/c$S --runs 11 --python $V --src $B/$T/src -- search --json --limit 20 zq1000067
done
done
echo "== end $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
