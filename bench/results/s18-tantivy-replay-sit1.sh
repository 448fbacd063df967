#!/bin/sh
# tantivy's indexing thread on c250's texts (a replay): settings side by side, 2 rounds
G=/work/bench-data/tantivy/wperf/agentdex-data/homes/c250-65e3fe70feec/index/gen-000001
PY=/work/bench-data/venv/bin/python
R=/work/bench-data/tantivy/replay.py
W=/work/bench-data/tantivy/rw
export PYTHONPATH=/work/bench-data/tantivy/base/src
for round in 1 2; do
  $PY $R $G --work $W
  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 $PY $R $G --work $W
  $PY $R $G --work $W --option freq
  $PY $R $G --work $W --heap-mb 200
  $PY $R $G --work $W --heap-mb 40
done
rm -rf $W
