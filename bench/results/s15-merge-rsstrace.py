"""RSS timeline of a cold build's writer, every 0.2 s: VmRSS, RssAnon, RssFile, segments, commits.

    python s15-merge-rsstrace.py SRC_MARK WORK_DIR OUT.jsonl

Run beside ``bench_cold_build.py``; the writer is the process whose environment holds
SRC_MARK (its ``--src``) and whose parent does not. Stops 30 s after the writer ends.
"""

import glob
import json
import os
import sys
import time

mark, work, out = sys.argv[1].encode(), sys.argv[2], sys.argv[3]


def env_has(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as h:
            return mark in h.read()
    except OSError:
        return False


def status(pid):
    d = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as h:
            for line in h:
                k, _, v = line.partition(b":")
                if k in (b"VmRSS", b"RssAnon", b"RssFile", b"PPid", b"VmHWM"):
                    d[k.decode()] = int(v.split()[0])
    except OSError:
        return None
    return d


def threads(pid):
    cpu = {}
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/stat") as h:
                    s = h.read()
                name = s[s.index("(") + 1 : s.rindex(")")]
                f = s[s.rindex(")") + 2 :].split()
                cpu[name] = cpu.get(name, 0) + (int(f[11]) + int(f[12])) / 100
            except (OSError, ValueError):
                pass
    except OSError:
        pass
    return cpu


seen = last = None
t0 = time.monotonic()
with open(out, "w") as o:
    while True:
        writer = None
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        cands = [p for p in pids if env_has(p)]
        kids = []
        for p in cands:
            st = status(p)
            if st and st.get("PPid") not in cands:
                try:
                    with open(f"/proc/{p}/cmdline", "rb") as h:
                        cmd = h.read()
                except OSError:
                    continue
                if b"-c" in cmd.split(b"\0"):
                    writer = (p, st)
            elif st:
                kids.append(st.get("VmRSS", 0))
        now = time.monotonic()
        if writer is None:
            if seen is not None and now - seen > 30:
                break
            time.sleep(0.2)
            continue
        if seen is None:
            t0 = now
        seen = now
        metas = glob.glob(f"{work}/**/postings/meta.json", recursive=True)
        segs = idx = 0
        mtime = None
        for m in metas:
            try:
                mtime = os.stat(m).st_mtime
                with open(m) as h:
                    segs = len(json.load(h).get("segments", ()))
                idx = len(glob.glob(os.path.join(os.path.dirname(m), "*.idx")))
            except (OSError, ValueError):
                pass
        p, st = writer
        rec = {
            "t": round(now - t0, 2),
            "pid": p,
            "rss": st.get("VmRSS"),
            "anon": st.get("RssAnon"),
            "file": st.get("RssFile"),
            "hwm": st.get("VmHWM"),
            "segs": segs,
            "idx": idx,
            "meta_mtime": mtime,
            "kids": len(kids),
            "kids_rss": sum(kids),
            "cpu": threads(p),
        }
        o.write(json.dumps(rec) + "\n")
        o.flush()
        time.sleep(0.2)
