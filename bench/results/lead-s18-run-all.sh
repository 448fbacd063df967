#!/usr/bin/env bash
# The lead's final sittings of session 18, in order; then the sizes of main's final 1 GB build.
set -uo pipefail
OUT=/work/lead-s18/out; L=/work/bench-data/lead18s
bash /work/lead-s18/sittings.sh
bash /work/lead-s18/sitting2.sh
bash /work/lead-s18/growth.sh
bash /work/lead-s18/sitting3.sh
cd /work/lead-s18/final
python bench/bench_sizes.py $(ls -d $L/fin/agentdex-data/homes/*/index) /work/bench-data/c1000 > $OUT/sizes-1000.json 2> $OUT/sizes-1000.err
echo "== all end $(date -u +%H:%M:%S)" | tee -a $OUT/steps.txt
