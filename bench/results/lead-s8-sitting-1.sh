#!/usr/bin/env bash
# Lead s8: final quiet sittings on main (run after the helpers are done). Each step under quiet-run.
set -u
V=/work/bench-data/lead-venv/bin/python
S=/root/.pyenv/versions/3.11.7/bin/python
B=/work/bench-data/lead-s8
W=$B/w
O=$B/out
rm -rf $B; mkdir -p $W $O
cd /work/main
log() { echo "$(date -u +%T) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/log; }
log "start $(git rev-parse --short HEAD)"
# 1. floor, cold build and the six classes at 1 GB, fresh processes in the clean venv
/work/bin/quiet-run python bench/bench_search.py /work/bench-data/c1000 --work $W --runs 11 --no-append --python $V > $O/search-1000-cold.json 2> $O/search-1000-cold.err
log "1 done"
# 2. the same index: venv vs this machine's shared interpreter, interleaved
/work/bin/quiet-run python bench/bench_search.py /work/bench-data/c1000 --work $W --runs 11 --no-append --reuse --python $V --against /work/main/src --against-work $W --against-python $S > $O/search-1000-interp.json 2> $O/search-1000-interp.err
log "2 done"
# 3. hybrid on occurring words: the s7 fill's vectors beside this index (linked by text on first search)
D=$(ls -d $W/agentdex-data/homes/c1000-*/index)
cp -a /work/bench-data/s7-fill/data/homes/c1000-*/index/semantic $D/
ln -sfn $W/agentdex-data $W/data
/work/bin/quiet-run python bench/bench_semantic.py /work/bench-data/c1000 --work $W --skip-sample --skip-loading --runs 32 --occurring --python $V --out $O/hybrid-occurring-1000.json > $O/hybrid.out 2> $O/hybrid.err
log "3 done"
# 4. 250 MB for growth
/work/bin/quiet-run python bench/bench_search.py /work/bench-data/c250 --work $B/w250 --runs 11 --no-append --python $V > $O/search-250-cold.json 2> $O/search-250-cold.err
log "4 done"
