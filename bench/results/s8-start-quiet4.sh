#!/usr/bin/env bash
# s8-start sitting 4: hybrid on occurring words, base (ada37fe) vs this work (b9f119c), clean venv, 1 GB with the full vector store;
# then this work's six lexical classes with the two interpreters interleaved
set -u
T=/work/wt/s8-start; B=/work/bench-data/s8-start; O=$B/out
V=$B/venv/bin/python; S=/root/.pyenv/versions/3.11.7/bin/python
cd $T
echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet4.log
$S $B/snap-nice/bench/bench_semantic.py /work/bench-data/c1000 --work $B/hyb-b --python $V --runs 16 --occurring \
   --against $B/snap-base/src --against-work $B/hyb-a --out $O/quiet4-hybrid.json > /dev/null 2>> $O/quiet4.err
echo "hybrid done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet4.log
$S bench/bench_search.py /work/bench-data/c1000 --work $B/lex --src $B/snap-nice/src --python $V --no-append --runs 11 \
    --against $B/snap-nice/src --against-work $B/lex --against-python $S > $O/quiet4-interp.json 2>> $O/quiet4.err
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet4.log
