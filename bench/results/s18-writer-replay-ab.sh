#!/bin/bash
# interleaved c250 replays of the writer: A B A B ... (one bench-run turn); args: OUT A_SRC B_SRC PAIRS
out=$1; a=$2; b=$3; pairs=${4:-3}
py=/work/bench-data/venv/bin/python
for i in $(seq 1 $pairs); do
  for side in A B; do
    src=$a; [ $side = B ] && src=$b
    line=$($py /work/wt/writer/bench/bench_writer_replay.py play /work/bench-data/c250 --work /work/bench-data/writer/play-$side --results /work/bench-data/writer/c250.results --src $src)
    echo "{\"side\": \"$side\", \"pair\": $i, \"utc\": \"$(date -u +%H:%M:%S)\", \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"play\": $line}" >> $out
  done
done
