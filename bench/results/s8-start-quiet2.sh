#!/usr/bin/env bash
# s8-start sitting 2: base (main) vs this work, both in the clean venv, interleaved; plus the two interpreters on this work
set -u
T=/work/wt/s8-start; B=/work/bench-data/s8-start; O=$B/out; W=$B/lex
V=$B/venv/bin/python; S=/root/.pyenv/versions/3.11.7/bin/python
cd $T
echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet2.log
$S bench/bench_startup.py --runs 20 --src $B/snap-new/src --against $B/snap-base/src --python $V --python $S --json > $O/quiet2-startup.json 2>> $O/quiet2.err
echo "startup done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet2.log
$S bench/bench_search.py /work/bench-data/c1000 --work $W --src $B/snap-new/src --python $V --no-append --runs 15 \
    --against $B/snap-base/src --against-work $W > $O/quiet2-search.json 2>> $O/quiet2.err
echo "search done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet2.log
export AGENTDEX_DATA_DIR=$W/agentdex-data AGENTDEX_CONFIG=$W/no-config.toml
for src in $B/snap-base/src $B/snap-new/src; do
  $S bench/fresh_steps.py /work/bench-data/c1000 --runs 11 --src $src --python $V --json -- search --json --limit 20 -E 'buffer (commit|zzq)' >> $O/quiet2-steps.jsonl 2>> $O/quiet2.err
  $S bench/fresh_steps.py /work/bench-data/c1000 --runs 11 --src $src --python $V --json -- search --json --limit 20 zq1000067 >> $O/quiet2-steps.jsonl 2>> $O/quiet2.err
done
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet2.log
