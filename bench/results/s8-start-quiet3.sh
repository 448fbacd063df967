#!/usr/bin/env bash
# s8-start sitting 3: base vs early fork (2593a38) vs + nice child (b9f119c), clean venv, 1 GB lexical, wall + CPU interleaved
set -u
T=/work/wt/s8-start; B=/work/bench-data/s8-start; O=$B/out; W=$B/lex
V=$B/venv/bin/python; S=/root/.pyenv/versions/3.11.7/bin/python
cd $T
export AGENTDEX_DATA_DIR=$W/agentdex-data AGENTDEX_CONFIG=$W/no-config.toml
echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet3.log
C="$S bench/fresh_cpu.py /work/bench-data/c1000 --runs 21 --python $V --src $B/snap-base/src --label base --src $B/snap-new/src --label early --src $B/snap-nice/src --label nice"
$C -- search --json --limit 20 -E 'buffer (commit|zzq)' > $O/quiet3-regex.json 2>> $O/quiet3.err
echo "regex done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet3.log
$C -- search --json --limit 20 zq1000067 > $O/quiet3-rare.json 2>> $O/quiet3.err
echo "rare done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet3.log
$C -- search --json --limit 20 function > $O/quiet3-function.json 2>> $O/quiet3.err
echo "function done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet3.log
$S bench/bench_search.py /work/bench-data/c1000 --work $W --src $B/snap-nice/src --python $V --no-append --runs 15 \
    --against $B/snap-base/src --against-work $W > $O/quiet3-search.json 2>> $O/quiet3.err
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet3.log
