#!/bin/sh
# THP for tantivy's arena: base against glibc.malloc.hugetlb=1, 5 pairs alternated (replay of c250)
G=/work/bench-data/tantivy/wperf/agentdex-data/homes/c250-65e3fe70feec/index/gen-000001
PY=/work/bench-data/venv/bin/python
R=/work/bench-data/tantivy/replay.py
W=/work/bench-data/tantivy/rw
export PYTHONPATH=/work/bench-data/tantivy/base/src
for round in 1 2 3 4 5; do
  $PY $R $G --work $W
  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 $PY $R $G --work $W
done
rm -rf $W
