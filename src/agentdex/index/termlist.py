"""The whole term list, rewritten by a short-lived child process, so the writer never maps it.

Reading every term (:func:`agentdex.index.postings.term_buckets`) walks every
segment's term dictionary through tantivy's memory maps; the pages it
touches stay in the reading process's resident set while its searcher is
open. In the writer of a 1 GB first build, which rewrites the list at a
commit every 20 s, those were ~90 MB on top of its own ~170 MB: the build's
peak RSS (docs/performance.md). A fresh interpreter that imports only
tantivy reads the dictionaries and writes the list to a temporary file; the
writer, which waited for it, puts the file in place (the child never
replaces the list itself: a child outliving a killed writer could otherwise
put an older list over a newer one). On Linux the child dies with the
writer (``PR_SET_PDEATHSIG``), and a child whose input ended before the
writer's last byte writes nothing (the writer's exit closes that pipe a
moment before the kernel sends the signal). A child killed while it writes
leaves a partial temporary file, never installed, replaced by the next.

A write failure in the child (a full disk, ``ulimit -f``) comes back to the
writer as the same ``OSError`` it would have raised itself.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

from agentdex.index import postings

#: the child's argument that says it runs as one (``python -m agentdex.index.termlist``)
_CHILD = "--child"
#: the last byte the writer sends (its characters are all non-ASCII: never a NUL)
_END = b"\0"


def write_term_list(gen: Path, non_ascii: set[str] | str, *, nice: int = 0) -> None:
    """Replace ``gen``'s full term list (and drop its delta) with every term of its postings.

    Reads the terms a first character at a time (:func:`~agentdex.index.postings.term_buckets`)
    and writes them (:func:`~agentdex.index.postings.write_term_buckets`) in a
    child process, then installs the list here; raises ``OSError`` when the child
    could not write it and ``RuntimeError`` when it failed otherwise. ``nice``: the child
    runs that many nice levels below this process (:func:`child_input`).
    """
    import agentdex

    env = dict(os.environ)
    # the child runs this very code, whatever the interpreter's own path says
    source = str(Path(agentdex.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    # ends with END: a child that reads to the end without it knows its writer died
    chars = "".join(sorted(set(non_ascii))).encode("utf-8", "surrogatepass") + _END
    done = subprocess.run(
        [sys.executable, "-m", "agentdex.index.termlist", _CHILD, str(gen), str(os.getpid())]
        + ([str(nice)] if nice > 0 else []),
        input=chars,
        capture_output=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        _raise_failure(done)
    postings.install_vocabulary(gen)


def _raise_failure(done: subprocess.CompletedProcess[bytes]) -> None:
    report = done.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        failure = json.loads(report[-1]) if report else {}
    except ValueError:
        failure = {}
    if failure.get("errno"):
        code = failure["errno"]
        raise OSError(code, failure.get("strerror") or os.strerror(code), failure.get("filename"))
    last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [
        f"exit status {done.returncode}"
    ]
    raise RuntimeError(f"could not write the term list: {last[0]}")


def _die_with_parent(parent: int) -> None:
    """Be killed when the writer dies (Linux), and stop now if it already has."""
    from agentdex.index.memory import libc

    lib = libc()
    if lib is not None and hasattr(lib, "prctl"):
        lib.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        raise SystemExit(1)


def child_input(argv: list[str], end: bytes) -> tuple[Path, bytes] | None:
    """A writer's child's start (``GEN PARENT_PID [NICE]`` arguments): die with the writer,
    lower its priority by ``NICE`` levels, then the generation and what the writer sent on
    stdin before ``end`` (None: it died before it said everything, so the child must do
    nothing).

    ``NICE``: in a first build's tail the term list's child and the merge child run beside
    the archive's entries, the tail's longest chain (one SQLite statement on the writer's
    hooks thread); at the writer's priority the four chains shared the two cores evenly,
    the entries got ~0.6 of one, and ran alone, a core idle, once the children were done
    (docs/performance.md, s18-tail)."""
    gen, parent = Path(argv[0]), int(argv[1])
    _die_with_parent(parent)
    if len(argv) > 2 and int(argv[2]) > 0:
        with suppress(OSError):
            os.nice(int(argv[2]))  # before any thread starts (the merge's): they inherit it
    given = sys.stdin.buffer.read()
    if not given.endswith(end):
        return None
    return gen, given[: -len(end)]


def _child(argv: list[str]) -> int:
    given = child_input(argv, _END)
    if given is None:
        return 1
    gen, non_ascii = given[0], given[1].decode("utf-8", "surrogatepass")
    try:
        postings.write_term_buckets(
            postings.vocabulary_temp(gen), postings.term_buckets(gen / "postings", non_ascii)
        )
    except OSError as exc:
        code = exc.errno or errno.EIO
        print(json.dumps({"errno": code, "strerror": exc.strerror, "filename": exc.filename}))
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == _CHILD:
        raise SystemExit(_child(sys.argv[2:]))
    raise SystemExit("usage: python -m agentdex.index.termlist --child GEN PARENT_PID [NICE]")
