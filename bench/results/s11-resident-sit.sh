#!/bin/sh
# s11-resident's sitting: the resident searcher (this) against main before it (base), interleaved
set -x
B=/work/bench-data/s11-resident
V=/work/bench-data/venv/bin/python
uptime
python $B/this/bench/bench_semantic.py /work/bench-data/c1000 --work $B/h1000 --skip-sample --skip-loading --occurring --runs 21 --python $V --against $B/base/src --against-work $B/h1000b --out $B/sitA-hybrid.json
uptime
python $B/variant/bench/bench_semantic.py /work/bench-data/c1000 --work $B/h1000 --skip-sample --skip-loading --occurring --runs 21 --python $V --against $B/this/src --against-work $B/h1000b --out $B/sitA-nice.json
uptime
python $B/this/bench/bench_search.py /work/bench-data/c250 --work $B/w250 --reuse --runs 11 --no-append --python $V --against $B/base/src --against-work $B/w250b > $B/sitA-classes250.json
AGENTDEX_DATA_DIR=$B/w250/agentdex-data AGENTDEX_CONFIG=$B/w250/no-config.toml PYTHONPATH=$B/this/src $V -c "from agentdex.api import search_resident as s; print('stopped', s.stop())"
uptime
python $B/this/bench/bench_startup.py --runs 20 --python $V --src $B/this/src --against $B/base/src --json > $B/sitA-startup.json
uptime
python $B/this/bench/resident_answers.py /work/bench-data/c1000 --work $B/h1000 --python $V --src $B/this/src > $B/sitA-answers.json
uptime
