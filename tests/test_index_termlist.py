"""The whole term list written by a child process (``index/termlist.py``): the same list the
writer would write itself, failures brought back as the writer's own, and no child outliving it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentdex.index import postings
from agentdex.index.termlist import write_term_list

TEXTS = [
    "zeta alpha café naïve",
    "alpha beta 0x1f retry-backoff",
    "日本語 текст zeta9",
    "Ünïcode straße ß",
]


def _gen(tmp_path: Path, texts: list[str]) -> tuple[Path, set[str]]:
    """A generation folder whose postings hold ``texts`` (committed), and their non-ASCII chars."""
    gen = tmp_path / "gen-000001"
    gen.mkdir()
    writer = postings.PostingsWriter(gen / "postings", threads=1, heap_bytes=15 << 20)
    chars: set[str] = set()
    for rid, text in enumerate(texts):
        lower = text.lower()
        chars.update(c for c in lower if c > "\x7f")
        writer.add(rid, 1, 1, 0, 0, lower, None, 0)
    writer.commit()
    writer.close(wait_merges=True)
    return gen, chars


def _child(gen: Path, parent: int, **popen: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # type: ignore[call-overload,no-any-return]
        [sys.executable, "-m", "agentdex.index.termlist", "--child", str(gen), str(parent)],
        env=dict(os.environ, PYTHONPATH=str(Path(postings.__file__).resolve().parents[2])),
        **popen,
    )


def test_the_child_writes_the_list_the_writer_would_and_drops_the_delta(tmp_path: Path) -> None:
    gen, chars = _gen(tmp_path, TEXTS)
    postings.append_vocabulary(gen, ["stale"])  # a delta the full list now covers
    write_term_list(gen, chars)
    from_child = (gen / postings.VOCAB_FILE).read_bytes()
    assert not (gen / postings.VOCAB_DELTA).exists()
    assert not postings.vocabulary_temp(gen).exists()

    postings.write_vocabulary(gen, postings.all_terms(gen / "postings", chars))
    assert from_child == (gen / postings.VOCAB_FILE).read_bytes()
    assert from_child.splitlines()[-1].startswith(postings.SPLIT_MARK)  # sorted, in two parts
    terms = {line.split(b"\t")[1].decode() for line in from_child.splitlines()[:-1]}
    assert {"alpha", "日本語", "текст", "straße", "0x1f", "backoff"} <= terms
    assert "stale" not in terms


def test_a_write_failure_in_the_child_is_the_writers_oserror(tmp_path: Path) -> None:
    gen, chars = _gen(tmp_path, TEXTS)
    write_term_list(gen, chars)
    before = (gen / postings.VOCAB_FILE).read_bytes()
    postings.vocabulary_temp(gen).mkdir()  # the child cannot open its output
    with pytest.raises(OSError) as failed:
        write_term_list(gen, chars)
    assert failed.value.errno == errno.EISDIR
    assert failed.value.filename == str(postings.vocabulary_temp(gen))
    assert (gen / postings.VOCAB_FILE).read_bytes() == before


def test_a_child_whose_writer_is_gone_writes_nothing(tmp_path: Path) -> None:
    gen, _chars = _gen(tmp_path, TEXTS)
    not_parent = os.getpid()  # the child's parent is this process, not the one it is told
    child = _child(gen, not_parent + 1 if not_parent > 1 else 2, stdin=subprocess.DEVNULL)
    assert child.wait(timeout=60) == 1
    assert not postings.vocabulary_temp(gen).exists()
    assert not (gen / postings.VOCAB_FILE).exists()


@pytest.mark.parametrize("nice", [None, "5"])
def test_a_tail_child_runs_the_nice_levels_it_is_told_below_the_writer(
    tmp_path: Path, nice: str | None
) -> None:
    """The term-list and merge children share ``child_input``'s start: there they lower their
    priority (beside the archive's entries in a first build's tail) before any thread starts."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    probe = (
        "import os, sys\n"
        "from agentdex.index.termlist import child_input\n"
        "before = os.getpriority(os.PRIO_PROCESS, 0)\n"
        "given = child_input(sys.argv[1:], b'\\0')\n"
        "print(given is not None, os.getpriority(os.PRIO_PROCESS, 0) - before)\n"
    )
    told = [nice] if nice else []
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path), str(os.getpid()), *told],
        input=b"chars\0",
        capture_output=True,
        env={**os.environ, "PYTHONPATH": src},
        timeout=60,
        check=True,
    )
    assert done.stdout.decode().split() == ["True", nice or "0"]


def test_the_child_writes_the_same_list_when_niced(tmp_path: Path) -> None:
    gen, chars = _gen(tmp_path, TEXTS)
    write_term_list(gen, chars, nice=3)
    assert "zeta" in (gen / postings.VOCAB_FILE).read_text()


def _reading_a_pipe(pid: int) -> bool:
    try:
        return "pipe_read" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_child_dies_with_its_writer(tmp_path: Path) -> None:
    """A writer killed while its child waits for its input leaves no child running and no
    list written (the pipe's end reaches the child a moment before the kernel's signal: the
    child must not take that end for an empty input)."""
    gen, _chars = _gen(tmp_path, TEXTS)
    source = str(Path(postings.__file__).resolve().parents[2])
    # the "writer": starts the child (which waits for its input), says its pid, and is killed
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-m', 'agentdex.index.termlist',"
            f" '--child', {str(gen)!r}, str(os.getpid())], stdin=subprocess.PIPE)\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(600)\n",
        ],
        env=dict(os.environ, PYTHONPATH=source),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    child = int(writer.stdout.readline())
    # the child reads its input once it has set its death signal: kill the writer after that
    # (killed before, the child sees another parent and stops without the kernel's help)
    deadline = time.monotonic() + 60
    while not _reading_a_pipe(child):
        if time.monotonic() > deadline:
            writer.kill()
            pytest.skip("this kernel does not say where a process waits (/proc/PID/wchan)")
        time.sleep(0.05)
    writer.kill()
    writer.wait(timeout=60)
    deadline = time.monotonic() + 60
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child)
    assert not postings.vocabulary_temp(gen).exists()


def _file_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssFile:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no RssFile")


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="madvise of mapped pages is Linux's"
)
def test_mapped_pages_of_the_folder_leave_the_resident_set_and_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the writer's merges map is handed back to the kernel; reads see the same bytes."""
    import mmap

    from agentdex.index import memory

    monkeypatch.setattr(memory, "MAPPED_CHECK_SECONDS", 0.0)
    folder = tmp_path / "postings"
    folder.mkdir()
    size = 48 * 1024 * 1024
    data = os.urandom(1024 * 1024) * 48
    (folder / "seg.idx").write_bytes(data)
    outside = tmp_path / "other.bin"  # mapped too, but not in the folder: left alone
    outside.write_bytes(data)
    pages = memory.MappedPages(str(folder))
    if pages.base is None:
        pytest.skip("no madvise in this C library")
    with open(folder / "seg.idx", "rb") as one, open(outside, "rb") as two:
        mine = mmap.mmap(one.fileno(), 0, access=mmap.ACCESS_READ)
        theirs = mmap.mmap(two.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            digest = sum(mine[i] for i in range(0, size, 4096))  # every page resident
            sum(theirs[i] for i in range(0, size, 4096))
            touched = _file_rss()
            pages.check()
            if pages.base is None:
                pytest.skip("this system refuses MADV_DONTNEED")
            after = _file_rss()
            assert pages.reclaims == 1
            assert touched - after >= 32 * 1024 * 1024  # the folder's pages left ...
            assert after >= pages.base + 40 * 1024 * 1024  # ... the other file's stayed
            assert sum(mine[i] for i in range(0, size, 4096)) == digest
            assert mine[:] == data
        finally:
            mine.close()
            theirs.close()


def test_mapped_pages_below_the_slack_are_left_alone(tmp_path: Path) -> None:
    from agentdex.index import memory

    pages = memory.MappedPages(str(tmp_path))
    pages.check()
    assert pages.reclaims == 0


def _cached_pages(path: Path, size: int) -> int:
    """How many pages of this process's mapping of ``path`` are in the page cache
    (``mincore``; the mapping found in ``/proc/self/maps``)."""
    import ctypes
    import mmap

    starts = [
        int(line.split("-")[0], 16)
        for line in Path("/proc/self/maps").read_text().splitlines()
        if line.endswith(str(path))
    ]
    assert len(starts) == 1
    lib = ctypes.CDLL(None, use_errno=True)
    vec = (ctypes.c_ubyte * (size // mmap.PAGESIZE))()
    if lib.mincore(ctypes.c_void_p(starts[0]), ctypes.c_size_t(size), vec) != 0:
        pytest.skip("no mincore")
    return sum(b & 1 for b in vec)


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="madvise of mapped pages is Linux's"
)
def test_mapped_pages_handed_back_stay_in_the_page_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pages leave this process's resident set, not the page cache: a merge that reads
    them again maps them back, it does not read the disk (MADV_PAGEOUT evicted them)."""
    import mmap

    from agentdex.index import memory

    monkeypatch.setattr(memory, "MAPPED_CHECK_SECONDS", 0.0)
    folder = tmp_path / "postings"
    folder.mkdir()
    size = 16 * 1024 * 1024
    with open(folder / "seg.pos", "wb") as out:  # clean pages: nothing to write back first
        out.write(os.urandom(size))
        out.flush()
        os.fsync(out.fileno())
    pages = memory.MappedPages(str(folder))
    if pages.base is None:
        pytest.skip("no madvise in this C library")
    with open(folder / "seg.pos", "rb") as one:
        view = mmap.mmap(one.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            sum(view[i] for i in range(0, size, mmap.PAGESIZE))  # every page resident
            touched = _file_rss()
            pages.check()
            if pages.base is None:
                pytest.skip("this system refuses MADV_DONTNEED")
            assert pages.reclaims == 1
            assert touched - _file_rss() >= 12 * 1024 * 1024  # out of the resident set ...
            assert _cached_pages(folder / "seg.pos", size) == size // mmap.PAGESIZE  # ... cached
        finally:
            view.close()
