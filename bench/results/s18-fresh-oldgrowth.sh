#!/usr/bin/env bash
# the lead's s17 growth measure, on fresh's builds: bench_search --reuse, 21 runs, sizes alternated
set -uo pipefail
cd /work/wt/fresh
V=/work/bench-data/venv/bin/python; F=/work/bench-data/fresh; OUT=$F/out; mkdir -p $OUT
TAG=${1:-g}
stop_mine() { for p in $(pgrep -f "search_resident_server"); do grep -qz "AGENTDEX_DATA_DIR=$F/" /proc/$p/environ 2>/dev/null && kill $p; done; sleep 2; }
for i in 1 2; do
  for size in 250 1000; do
    echo "== $TAG $size #$i $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    python bench/bench_search.py /work/bench-data/c$size --work $F/w$size --reuse --runs 21 --no-append --python $V \
      > $OUT/$TAG-$size-$i.json 2> $OUT/$TAG-$size-$i.err
    stop_mine
  done
done
echo "== end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
