#!/usr/bin/env bash
# Lead s9: final quiet sittings on main (run after the helpers are done). Each step under quiet-run.
set -u
V=/work/bench-data/lead-venv/bin/python
B=/work/bench-data/lead-s9/final
W=$B/w
W2=$B/w2
O=$B/out
rm -rf $B; mkdir -p $W $W2 $O
cd /work/main
log() { echo "$(date -u +%T) $* load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/log; }
stopres() { for p in $(pgrep -f agentdex.semantic.resident_server); do kill $p; done; sleep 1; }
fill() { D=$(ls -d $1/agentdex-data/homes/c1000-*/index); cp -a /work/bench-data/s7-fill/data/homes/c1000-*/index/semantic $D/; ln -sfn $1/agentdex-data $1/data; }
log "start $(git rev-parse --short HEAD)"
# 1. floor, cold build and the six classes at 1 GB (fresh processes in the clean venv)
/work/bin/quiet-run python bench/bench_search.py /work/bench-data/c1000 --work $W --runs 11 --no-append --python $V > $O/search-1000-cold-1.json 2> $O/search-1000-cold-1.err
log "1 cold 1 GB done"
# 2. 250 MB for growth
/work/bin/quiet-run python bench/bench_search.py /work/bench-data/c250 --work $B/w250 --runs 11 --no-append --python $V > $O/search-250-cold.json 2> $O/search-250-cold.err
log "2 cold 250 MB done"
# 3. hybrid on occurring words, the fill's vectors beside index 1 (linked by text on the first search)
fill $W
/work/bin/quiet-run python bench/bench_semantic.py /work/bench-data/c1000 --work $W --skip-sample --skip-loading --runs 32 --occurring --python $V --out $O/hybrid-3.json > $O/hybrid-3.out 2> $O/hybrid-3.err
stopres; log "3 hybrid on index 1 done"
# 4. a second cold build
/work/bin/quiet-run python bench/bench_search.py /work/bench-data/c1000 --work $W2 --runs 11 --no-append --python $V > $O/search-1000-cold-2.json 2> $O/search-1000-cold-2.err
log "4 cold 1 GB (2) done"
fill $W2
/work/bin/quiet-run python bench/bench_semantic.py /work/bench-data/c1000 --work $W2 --skip-sample --skip-loading --runs 32 --occurring --python $V --out $O/hybrid-5.json > $O/hybrid-5.out 2> $O/hybrid-5.err
stopres; log "5 hybrid on index 2 done"
# 6. 250 MB again (reuse) and hybrid on index 1 again
/work/bin/quiet-run python bench/bench_search.py /work/bench-data/c250 --work $B/w250 --runs 11 --no-append --reuse --python $V > $O/search-250-reuse.json 2> $O/search-250-reuse.err
log "6 250 MB reuse done"
/work/bin/quiet-run python bench/bench_semantic.py /work/bench-data/c1000 --work $W --skip-sample --skip-loading --runs 32 --occurring --python $V --out $O/hybrid-7.json > $O/hybrid-7.out 2> $O/hybrid-7.err
stopres; log "7 hybrid on index 1 again done"
python bench/semantic_eval.py --json $O/semantic-eval.json > $O/semantic-eval.out 2>&1
log "8 labelled set done"
