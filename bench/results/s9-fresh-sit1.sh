#!/bin/bash
B=/work/bench-data/s9-fresh
V=/work/bench-data/lead-venv/bin/python
cd $B/base
for S in 250 1000; do
  echo "== $S $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  PYTHONPATH=$B/base/src $V $B/tools/checkparts.py $B/W$S /work/bench-data/c$S 21
  AGENTDEX_DATA_DIR=$B/W$S/agentdex-data AGENTDEX_CONFIG=$B/W$S/no-config.toml $V bench/fresh_steps.py /work/bench-data/c$S --runs 15 --python $V --src $B/base/src --mark agentdex.search.engine:Engine.__init__ --mark agentdex.search.plan:Planner.plan --mark agentdex.api.index:reader -- search --json --limit 20 zq1000067
done
echo "== end $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
