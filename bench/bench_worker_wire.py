"""A parse worker's side of a build alone: parse_in_worker and the pickle a worker sends, then the
writer's unpickle (+ from_wire where the tree has it), CPU seconds (process_time), N files.

    python bench/bench_worker_wire.py SRC HOME N
"""

import pickle
import sys
import time


def main() -> None:
    src, home, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, src)
    from multiprocessing.reduction import ForkingPickler

    import agentdex.ingest.pipeline as pl
    from agentdex.discovery import discover
    from agentdex.ingest.feed import parse_in_worker
    from agentdex.ingest.pipeline import stages
    from agentdex.parsers import ParseCursor

    srcs = [s for s in discover(home).sources if s.row.parser][:n]
    st = stages(redact_secrets=True)
    blobs = []
    a = time.process_time()
    for s in srcs:
        blobs.append(bytes(ForkingPickler.dumps(parse_in_worker(s, ParseCursor(), st))))
    worker = time.process_time() - a
    fw = getattr(pl, "from_wire", None)
    a = time.process_time()
    records = 0
    for b in blobs:
        out = pickle.loads(b)
        items = fw(out[0]) if fw else out[0]
        records += len(items)
    writer = time.process_time() - a
    sent = sum(map(len, blobs)) / 1e6
    print(
        f"{src.split('/')[-2]:6s} records {records} worker {worker:.2f} s"
        f"  writer-unpickle {writer:.2f} s  bytes {sent:.1f} MB"
    )


if __name__ == "__main__":
    main()
