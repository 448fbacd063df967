#!/usr/bin/env bash
# fresh's sitting: the growth by bench_growth.py on main (A) twice, the client A/B by fresh_cpu.py at
# both sizes, then bench_growth.py on this branch (B) twice. 41 runs each, the sizes interleaved.
set -uo pipefail
F=/work/bench-data/fresh; OUT=$F/out; TAG=${1:-bg}; V=/work/bench-data/venv/bin/python
cd /work/wt/fresh
stamp() { echo "== $1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
growth() {  # tree tag
  python bench/bench_growth.py /work/bench-data/c250 /work/bench-data/c1000 --small-work $F/w250 --large-work $F/w1000 \
    --runs 41 --python $V --src $F/$1/src > $OUT/$2.json 2> $OUT/$2.err
}
stamp "$TAG growth A #1"; growth A $TAG-A-1
stamp "$TAG growth B #1"; growth B $TAG-B-1
for s in 250 1000; do
  tok=zq1001177; [ $s = 1000 ] && tok=zq1000067
  stamp "$TAG client A/B c$s"
  export AGENTDEX_DATA_DIR=$F/w$s/agentdex-data AGENTDEX_CONFIG=$F/w$s/no-config.toml
  for t in A B; do for i in 1 2 3 4; do PYTHONPATH=$F/$t/src $V -m agentdex --home /work/bench-data/c$s search --json --limit 20 $tok >/dev/null; done; done
  python bench/fresh_cpu.py /work/bench-data/c$s --runs 41 --src $F/A/src --src $F/B/src --label A --label B --python $V \
    -- search --json --limit 20 $tok > $OUT/$TAG-cpu-$s.json 2> $OUT/$TAG-cpu-$s.err
  unset AGENTDEX_DATA_DIR AGENTDEX_CONFIG
done
stamp "$TAG growth A #2"; growth A $TAG-A-2
stamp "$TAG growth B #2"; growth B $TAG-B-2
for s in 250 1000; do for p in $(pgrep -f search_resident_server); do grep -qz "AGENTDEX_DATA_DIR=$F/w$s/" /proc/$p/environ 2>/dev/null && kill $p; done; done
stamp end
