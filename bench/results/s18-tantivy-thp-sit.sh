#!/bin/sh
PY=/work/bench-data/venv/bin/python
for r in 1 2 3; do
  for v in base thr thp; do $PY /work/bench-data/tantivy/thp.py /work/bench-data/tantivy/base/src $v; done
done
