#!/usr/bin/env bash
# s10-start's sitting (run under /work/bin/bench-run): base = main at 68cd3ef (session 10's
# start), mine = base + s10-start's commits (git archive of each into trees/); one clean venv.
set -uo pipefail
D=/work/bench-data/s10-start
T=$D/trees
V=/work/bench-data/venv/bin/python
PART=${1:-all}  # hybrid | fresh | all
O=$D/out/${2:-sit}
mkdir -p "$O"
load() { echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
load "start"
if [ "$PART" != fresh ]; then
# 1. hybrid at 1 GB (occurring words), interleaved run by run, one work dir and resident
load "hybrid 1 GB"
$V $T/mine/bench/bench_semantic.py /work/bench-data/c1000 --work $D/h1000 --skip-sample \
    --skip-loading --occurring --runs 21 --python $V --against $T/base/src \
    --against-work $D/h1000 > "$O/hybrid1000.json" 2> "$O/hybrid1000.err"
fi
[ "$PART" != hybrid ] || { load "end"; exit 0; }
# 2. the six classes fresh at 250 MB (rare = the fixed cost), interleaved
load "classes 250 MB"
$V $T/mine/bench/bench_search.py /work/bench-data/c250 --work $D/w250 --reuse --runs 21 \
    --no-append --python $V --src $T/mine/src --against $T/base/src --against-work $D/w250 \
    > "$O/classes250.json" 2> "$O/classes250.err"
# 3. a fresh rare search's steps, A B A B
load "steps 250 MB"
for tree in base mine base mine; do
    AGENTDEX_DATA_DIR=$D/w250/agentdex-data AGENTDEX_CONFIG=$D/w250/no-config.toml \
        $V $T/mine/bench/fresh_steps.py /work/bench-data/c250 --runs 11 --python $V \
        --src $T/$tree/src --json -- search --json -n 20 zq1000067 > "$O/steps-$tree-$RANDOM.json"
done
# 4. agentdex --help must not get slower
load "startup"
$V $T/mine/bench/bench_startup.py --runs 20 --python $V --src $T/mine/src --against $T/base/src \
    --json > "$O/startup.json"
load "end"
