"""Leaving a finished command's process without the interpreter's teardown.

When ``agentdex search`` has printed its answer, a normal exit still runs
the interpreter's finalization: a few full garbage collections and the
deallocation of every module, object and cache (the search engine's
decompressed blocks, tantivy's reader): 10-20 ms of one core on a quiet
machine, more on a busy one, in every fresh search, after the answer is out.

A command that holds nothing that needs that teardown (no file written
through a buffer left open, no database connection with work uncommitted,
no thread still working) may *allow* :func:`leave`: the entry point then,
once the command is done, runs the ``atexit`` callbacks (the same ones a
normal exit runs, in the same order), flushes stdout and stderr and ends
the process with :func:`os._exit` and the same status. Whenever something
could be lost it returns instead, and the interpreter exits normally:

* only when this interpreter runs agentdex as its program (the console
  script or ``python -m agentdex``), never when another program called
  :func:`agentdex.cli.main` (it may go on after the ``SystemExit``);
* only with a plain status (``None`` or an int);
* not while a non-daemon thread other than the main one is alive (a normal
  exit would wait for it);
* not when flushing stdout or stderr fails (the normal exit reports it).
"""

from __future__ import annotations

import os
import sys

#: set by a command whose process may skip the teardown (see the module docstring)
_allowed = False


def allow() -> None:
    """This command's process may end with :func:`leave` once it is done."""
    global _allowed
    _allowed = True


def runs_agentdex() -> bool:
    """Is agentdex this interpreter's program (its console script or ``python -m
    agentdex``) with the command line it was started with, not a host that calls
    :func:`agentdex.cli.main` or runs the module itself (``runpy.run_module``)?"""
    argv = sys.argv
    orig = list(getattr(sys, "orig_argv", []) or [])
    if not argv or len(orig) < len(argv):
        return False
    given = len(argv) - 1  # the arguments after the program, unchanged since the start
    head, tail = orig[: len(orig) - given], orig[len(orig) - given :]
    if tail != argv[1:] or not head:
        return False
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if getattr(spec, "name", None) == "agentdex.__main__":
        return head[-2:] == ["-m", "agentdex"] or head[-1:] == ["-magentdex"]
    script = getattr(main, "__file__", None)
    if spec is not None or not script or head[-1] != argv[0]:
        return False
    name = os.path.basename(script).lower()
    return name in ("agentdex", "agentdex.exe", "agentdex-script.py") and script == argv[0]


def leave(code: object) -> None:
    """End the process now with ``code`` if the command allowed it and nothing can be
    lost (the module docstring); otherwise return (the caller exits normally)."""
    if not _allowed or not (code is None or isinstance(code, int)):
        return
    if not _main_thread_alone():
        return
    if not _flushed() or not runs_agentdex():
        return
    import atexit

    atexit._run_exitfuncs()  # what a normal exit runs first (then they are forgotten)
    _flushed()  # what the callbacks printed; past this point a failure changes nothing
    os._exit(int(code or 0))


def _main_thread_alone() -> bool:
    """Called from the main thread, with no other non-daemon thread alive? A process
    that never imported ``threading`` started no thread (a fresh search answered by the
    resident: importing it to ask was ~1 ms of that process's CPU)."""
    threading = sys.modules.get("threading")
    if threading is None:
        return True
    main_thread = threading.main_thread()
    if threading.current_thread() is not main_thread:
        return False
    return not any(
        t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()
    )


def _flushed() -> bool:
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            return False
    return True
