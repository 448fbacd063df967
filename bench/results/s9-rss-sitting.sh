#!/bin/bash
export AGENTDEX_RESIDENT_EMBEDDER=0
cd /work/wt/s9-rss
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
python bench/bench_cold_build.py /work/bench-data/c1000 --work /work/bench-data/s9-rss/wcb --src /work/bench-data/s9-rss/snap/new2/src --src /work/bench-data/s9-rss/snap/base2/src > /work/bench-data/s9-rss/cb-1.json 2> /work/bench-data/s9-rss/cb-1.err
echo "1 done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
python bench/store_digest.py /work/bench-data/s9-rss/wcb/agentdex-data > /work/bench-data/s9-rss/digest-base.json 2>&1
python bench/bench_cold_build.py /work/bench-data/c1000 --work /work/bench-data/s9-rss/wcb --src /work/bench-data/s9-rss/snap/base2/src --src /work/bench-data/s9-rss/snap/new2/src > /work/bench-data/s9-rss/cb-2.json 2> /work/bench-data/s9-rss/cb-2.err
echo "2 done $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
python bench/store_digest.py /work/bench-data/s9-rss/wcb/agentdex-data > /work/bench-data/s9-rss/digest-new.json 2>&1
python bench/bench_first_answer.py /work/bench-data/c400 --work /work/bench-data/s9-rss/wfa --src /work/bench-data/s9-rss/snap/new2/src > /work/bench-data/s9-rss/fa.json 2> /work/bench-data/s9-rss/fa.err
echo "end $(date -u +%H:%M:%S)"
