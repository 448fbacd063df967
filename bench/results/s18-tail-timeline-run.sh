#!/bin/sh
cd /work/bench-data/tail/tl
P=/work/bench-data/venv/bin/python
uptime; date -u
$P timeline.py /work/bench-data/c1000 /work/bench-data/tail/tl/w /work/bench-data/tail/new/src new-1000.json
uptime; date -u
cd /work/wt/tail && $P bench/store_digest.py --texts /work/bench-data/tail/tl/w/agentdex-data > /work/bench-data/tail/tl/digest-new-1000.txt 2>&1
uptime; date -u
rm -rf /work/bench-data/tail/tl/w
