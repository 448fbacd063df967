#!/bin/bash
B=/work/bench-data/s9-fresh
V=/work/bench-data/lead-venv/bin/python
cd $B/new3
echo "== hybrid 1000 $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
python bench/bench_semantic.py /work/bench-data/c1000 --work $B/W1000h --skip-sample --skip-loading --runs 32 --occurring --python $V --against $B/base/src --against-work $B/W1000h > $B/sit6-hybrid.json 2> $B/sit6.err
echo "== end $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
