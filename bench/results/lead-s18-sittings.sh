#!/usr/bin/env bash
# The lead's final sittings of session 18: main at its last commit against the session's
# start (37275eb), interleaved where it can be, at 1 GB, 400 MB and 250 MB.
set -uo pipefail
FINAL=/work/lead-s18/final; BASE=/work/lead-s18/base
V=/work/bench-data/venv/bin/python
OUT=/work/lead-s18/out; mkdir -p "$OUT"
rm -rf "$FINAL" "$BASE"; git clone -q /work/main "$FINAL"; (cd "$FINAL" && git log --oneline -1) | tee "$OUT/commit.txt"
mkdir -p "$BASE"; git -C /work/main archive 37275eb | tar -x -C "$BASE"
cd "$FINAL"
stamp() { echo "== $1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"; }
L=/work/bench-data/lead18s; mkdir -p $L
stop_residents() { for p in $(pgrep -f "resident_server"); do kill "$p"; done; sleep 2; }
# 1. the cold build at 1 GB, base and final interleaved, with the floor
stamp "1 cold 1 GB A/B"
rm -rf $L/cold
python bench/bench_cold_build.py /work/bench-data/c1000 --work $L/cold --src $BASE/src --src $FINAL/src --rounds 3 \
    > "$OUT/cold-1000.json" 2> "$OUT/cold-1000.err"
stamp "1b digest of the final build"
python bench/store_digest.py --texts $L/cold/agentdex-data > "$OUT/digest-final-1000.txt" 2>&1
# 2. every class fresh at 1 GB, lexical: final on its own build, base on a copy of its build
stamp "2 classes 1 GB A/B"
rm -rf $L/fin $L/bas; cp -a $L/cold $L/fin; cp -a /work/bench-data/lead18/main $L/bas
python bench/bench_search.py /work/bench-data/c1000 --work $L/fin --reuse --runs 11 --no-append --python $V \
    --against $BASE/src --against-work $L/bas > "$OUT/classes-1000.json" 2> "$OUT/classes-1000.err"
stop_residents
stamp "2b classes 1 GB A/B, order swapped"
python bench/bench_search.py /work/bench-data/c1000 --work $L/bas --src $BASE/src --reuse --runs 11 --no-append --python $V \
    --against $FINAL/src --against-work $L/fin > "$OUT/classes-1000-swapped.json" 2> "$OUT/classes-1000-swapped.err"
stop_residents
# 3. 250 MB: the whole bench_search (cold build, classes) for growth
stamp "3 250 MB"
rm -rf $L/f250
python bench/bench_search.py /work/bench-data/c250 --work $L/f250 --runs 11 --no-append --python $V \
    > "$OUT/b250.json" 2> "$OUT/b250.err"
stop_residents
# 4. the first answer at 400 MB
stamp "4 first answer 400 MB"
rm -rf $L/fa
python bench/bench_first_answer.py /work/bench-data/c400 --work $L/fa > "$OUT/first-400.json" 2> "$OUT/first-400.err"
stop_residents
stamp "end"
