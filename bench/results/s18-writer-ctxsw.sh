#!/bin/bash
# run a play and sample per-thread context switches and CPU
/work/bench-data/venv/bin/python /work/wt/writer/bench/bench_writer_replay.py play /work/bench-data/c250 --work /work/bench-data/writer/play --results /work/bench-data/writer/c250.results --src ${SRC:-/work/bench-data/writer/A/src} > /work/bench-data/writer/ctx-play.json &
pid=$!
out=/work/bench-data/writer/ctx-samples.txt; : > $out
while kill -0 $pid 2>/dev/null; do
  for t in /proc/$pid/task/*; do
    tid=${t##*/}
    comm=$(cat $t/comm 2>/dev/null)
    v=$(awk '/^voluntary_ctxt/{print $2}' $t/status 2>/dev/null)
    nv=$(awk '/^nonvoluntary_ctxt/{print $2}' $t/status 2>/dev/null)
    cpu=$(awk '{print $14+$15}' $t/stat 2>/dev/null)
    echo "$tid $comm $v $nv $cpu"
  done >> $out
  sleep 0.5
done
wait $pid
