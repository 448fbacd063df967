#!/usr/bin/env bash
# The lead's final sittings of session 11: main at its last commit against the session's
# start (4244854), interleaved, at 1 GB and 250 MB.
set -uo pipefail
FINAL=/work/lead-s11/final; BASE=/work/lead-s11/base-src
V=/work/bench-data/venv/bin/python
OUT=/work/lead-s11/out; mkdir -p "$OUT"
rm -rf "$FINAL"; git clone -q /work/main "$FINAL"; (cd "$FINAL" && git log --oneline -1) | tee "$OUT/commit.txt"
cd "$FINAL"
stamp() { echo "== $1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"; }
L=/work/bench-data/lead
fresh_copies() { rm -rf $L/ha $L/hb; cp -a /work/bench-data/h1000 $L/ha; cp -a /work/bench-data/h1000 $L/hb; }
stop_residents() { for p in $(pgrep -f "resident_server"); do kill "$p"; done; sleep 2; }
# 1. hybrid at 1 GB: final against base (the same index: the stores are identical)
fresh_copies
stamp "1 hybrid A/B"
python bench/bench_semantic.py /work/bench-data/c1000 --work $L/ha --skip-sample --skip-loading \
    --occurring --runs 32 --python $V --against $BASE/src --against-work $L/hb > "$OUT/hybrid-1.json" 2> "$OUT/hybrid-1.err"
stop_residents
# 2. every class fresh at 1 GB, final against base (reuse: a refresh first)
stamp "2 classes 1 GB A/B"
python bench/bench_search.py /work/bench-data/c1000 --work $L/ha --reuse --runs 11 --no-append --python $V \
    --against $BASE/src --against-work $L/hb > "$OUT/classes-1000.json" 2> "$OUT/classes-1000.err"
stop_residents
# 3. the cold build at 1 GB, base and final interleaved, with the floor
stamp "3 cold 1 GB A/B"
python bench/bench_cold_build.py /work/bench-data/c1000 --work $L/cold --src $BASE/src --src $FINAL/src \
    > "$OUT/cold-1000.json" 2> "$OUT/cold-1000.err"
stamp "3b digest of the final build"
python bench/store_digest.py --texts $L/cold/agentdex-data > "$OUT/digest-final-1000.txt" 2>&1
rm -rf $L/cold
# 4. 250 MB: the whole bench_search (cold build, classes) for growth
stamp "4 250 MB"
python bench/bench_search.py /work/bench-data/c250 --work $L/f250 --runs 11 --no-append --python $V \
    > "$OUT/b250.json" 2> "$OUT/b250.err"
stop_residents
# 5. hybrid again
stamp "5 hybrid A/B again"
python bench/bench_semantic.py /work/bench-data/c1000 --work $L/ha --skip-sample --skip-loading \
    --occurring --runs 32 --python $V --against $BASE/src --against-work $L/hb > "$OUT/hybrid-5.json" 2> "$OUT/hybrid-5.err"
stop_residents
stamp "end"
