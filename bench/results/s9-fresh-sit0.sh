#!/bin/bash
set -x
B=/work/bench-data/s9-fresh
V=/work/bench-data/lead-venv/bin/python
cd $B/base
uptime
python bench/bench_search.py /work/bench-data/c1000 --work $B/W1000 --runs 11 --no-append --python $V > $B/sit0-1000.json 2> $B/sit0-1000.err
uptime
python bench/bench_search.py /work/bench-data/c250 --work $B/W250 --runs 11 --no-append --python $V > $B/sit0-250.json 2> $B/sit0-250.err
uptime
