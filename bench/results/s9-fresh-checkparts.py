"""Time the refresh check's parts in-process (warm), medians of N runs."""
import os, statistics, sys, time
from pathlib import Path
import orjson
work = Path(sys.argv[1]); home = sys.argv[2]; n = int(sys.argv[3]) if len(sys.argv) > 3 else 21
os.environ["AGENTDEX_DATA_DIR"] = str(work / "agentdex-data")
os.environ["AGENTDEX_CONFIG"] = str(work / "no-config.toml")
from agentdex.index.store import index_root
from agentdex.ingest import manifest
from agentdex.paths import changed_signatures
root = Path(index_root(None, home=home))
t = {"read": [], "parse": [], "fingerprint": [], "stats": [], "check": []}
for _ in range(n):
    a = time.perf_counter(); raw = (root / manifest.MANIFEST).read_bytes()
    b = time.perf_counter(); data = orjson.loads(raw)
    c = time.perf_counter(); manifest.fingerprint(home)
    d = time.perf_counter(); list(changed_signatures(data["paths"]))
    e = time.perf_counter(); manifest.check(root, home)
    f = time.perf_counter()
    for k, x, y in (("read", a, b), ("parse", b, c), ("fingerprint", c, d), ("stats", d, e), ("check", e, f)):
        t[k].append(1000 * (y - x))
print(home, "paths", len(data["paths"]), "bytes", len(raw), {k: round(statistics.median(v), 2) for k, v in t.items()})
