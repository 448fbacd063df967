#!/usr/bin/env bash
set -u
V=/work/bench-data/lead-venv/bin/python
S=/root/.pyenv/versions/3.11.7/bin/python
B=/work/bench-data/lead-s8
W=$B/w
W2=$B/w2
O=$B/out
cd /work/main
log() { echo "$(date -u +%T) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/log; }
stopres() { for p in $(pgrep -f resident_server); do kill $p; done; sleep 1; }
log "B start $(git rev-parse --short HEAD)"
/work/bin/quiet-run python bench/bench_semantic.py /work/bench-data/c1000 --work $W --skip-sample --skip-loading --runs 32 --occurring --python $S --out $O/hybrid-B-shared.json > /dev/null 2> $O/hybrid-B-shared.err
stopres; log "B hybrid shared done"
/work/bin/quiet-run python bench/bench_semantic.py /work/bench-data/c1000 --work $W --skip-sample --skip-loading --runs 32 --occurring --python $V --out $O/hybrid-B-venv.json > /dev/null 2> $O/hybrid-B-venv.err
stopres; log "B hybrid venv done"
mkdir -p $W2
/work/bin/quiet-run python bench/bench_search.py /work/bench-data/c1000 --work $W2 --runs 11 --no-append > $O/search-1000-cold-C-shared.json 2> $O/search-1000-cold-C.err
log "C cold shared done"
D=$(ls -d $W2/agentdex-data/homes/c1000-*/index)
cp -a /work/bench-data/s7-fill/data/homes/c1000-*/index/semantic $D/
ln -sfn $W2/agentdex-data $W2/data
/work/bin/quiet-run python bench/bench_semantic.py /work/bench-data/c1000 --work $W2 --skip-sample --skip-loading --runs 32 --occurring --python $V --out $O/hybrid-D-venv.json > /dev/null 2> $O/hybrid-D-venv.err
stopres; log "D hybrid venv done"
/work/bin/quiet-run python bench/bench_semantic.py /work/bench-data/c1000 --work $W2 --skip-sample --skip-loading --runs 32 --occurring --python $S --out $O/hybrid-D-shared.json > /dev/null 2> $O/hybrid-D-shared.err
stopres; log "D hybrid shared done"
