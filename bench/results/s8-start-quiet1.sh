#!/usr/bin/env bash
# s8-start sitting 1: the shared interpreter against a clean venv, same code (main 3437d21 + bench tooling), 1 GB
set -u
T=/work/wt/s8-start; O=/work/bench-data/s8-start/out; W=/work/bench-data/s8-start/lex
V=/work/bench-data/s8-start/venv/bin/python; S=/root/.pyenv/versions/3.11.7/bin/python
cd $T
echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet1.log
$S bench/bench_startup.py --runs 20 --python $V --python $S --json > $O/quiet1-startup.json 2>> $O/quiet1.err
echo "startup done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet1.log
$S bench/bench_search.py /work/bench-data/c1000 --work $W --python $V --no-append --runs 11 \
    --against $T/src --against-work $W --against-python $S > $O/quiet1-search.json 2>> $O/quiet1.err
echo "search done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet1.log
export AGENTDEX_DATA_DIR=$W/agentdex-data AGENTDEX_CONFIG=$W/no-config.toml
for py in $V $S; do
  for q in "-E buffer (commit|zzq)" "zq1000067"; do
    if [ "$q" = "zq1000067" ]; then set -- zq1000067; else set -- -E 'buffer (commit|zzq)'; fi
    $S bench/fresh_steps.py /work/bench-data/c1000 --runs 11 --python $py --json -- search --json --limit 20 "$@" >> $O/quiet1-steps.jsonl 2>> $O/quiet1.err
  done
done
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/quiet1.log
