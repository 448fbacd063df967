#!/usr/bin/env bash
# bench_growth.py on main (A) and this branch (B), A B B A, 41 runs each, the sizes interleaved
set -uo pipefail
F=/work/bench-data/fresh; OUT=$F/out; TAG=${1:-bp}; V=/work/bench-data/venv/bin/python
cd /work/wt/fresh
stamp() { echo "== $1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
growth() {
  python bench/bench_growth.py /work/bench-data/c250 /work/bench-data/c1000 --small-work $F/w250 --large-work $F/w1000 \
    --runs 41 --python $V --src $F/$1/src > $OUT/$2.json 2> $OUT/$2.err
}
stamp "$TAG A #1"; growth A $TAG-A-1
stamp "$TAG B #1"; growth B $TAG-B-1
stamp "$TAG B #2"; growth B $TAG-B-2
stamp "$TAG A #2"; growth A $TAG-A-2
stamp end
