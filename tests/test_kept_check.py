"""The resident searcher's no-change check (:class:`agentdex.ingest.manifest.KeptCheck`):
the manifest kept parsed, the noted states compared as numbers. It must answer as
:func:`agentdex.ingest.manifest.check` does after every kind of change, on a real home
indexed by a real refresh."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.index.store import index_root
from agentdex.ingest import manifest
from agentdex.paths import changed_signatures, stat_signature
from test_index_manifest import claude_line, write_transcript


def _same(kept: manifest.KeptCheck, root: Path, home: Path) -> tuple[Any, ...]:
    """Both checks' answers, compared: (files, changed paths or None)."""
    files, changes = kept.check(root, str(home))
    files_full, changes_full = manifest.check(root, str(home))
    assert files == files_full
    assert (changes is None) == (changes_full is None)
    if changes is not None and changes_full is not None:
        assert changes.now == changes_full.now and changes.sources == changes_full.sources
    return files, None if changes is None else sorted(changes.now)


def test_it_answers_as_the_full_check_after_each_change(home: Path) -> None:
    transcript = write_transcript(home)
    api.refresh(home=str(home))
    root = Path(index_root(None, home=str(home)))
    kept = manifest.KeptCheck()
    assert _same(kept, root, home) == (1, None)
    assert _same(kept, root, home) == (1, None)  # the kept states, again
    with open(transcript, "ab") as handle:  # an append: the store file alone changed
        handle.write(claude_line("c1", "and the wombat one too", 2))
    files, changed = _same(kept, root, home)
    assert files is None and changed == [str(transcript)]
    api.refresh(home=str(home))  # a new manifest: read again
    assert _same(kept, root, home) == (1, None)
    os.utime(transcript, ns=(0, transcript.stat().st_mtime_ns + 1))  # the mtime alone
    assert _same(kept, root, home)[0] is None
    api.refresh(home=str(home))
    (transcript.parent / "c2.jsonl").write_bytes(claude_line("c2", "a second chat", 1))
    assert _same(kept, root, home) == (None, None)  # its folder changed: discovery knows
    api.refresh(home=str(home))
    assert _same(kept, root, home) == (2, None)
    (transcript.parent / "c2.jsonl").unlink()
    assert _same(kept, root, home) == (None, None)
    api.refresh(home=str(home))
    codex = home / ".codex" / "sessions"
    codex.mkdir(parents=True)  # a noted missing root appears
    assert _same(kept, root, home)[0] is None
    api.refresh(home=str(home))
    assert _same(kept, root, home) == (1, None)
    shutil.rmtree(home / ".codex")
    assert _same(kept, root, home)[0] is None


def test_the_config_file_and_a_build_are_seen(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_transcript(home)
    api.refresh(home=str(home))
    root = Path(index_root(None, home=str(home)))
    kept = manifest.KeptCheck()
    assert _same(kept, root, home) == (1, None)
    config = Path(os.environ["AGENTDEX_CONFIG"]) if "AGENTDEX_CONFIG" in os.environ else None
    if config is None:
        config = tmp_path / "config.toml"
        monkeypatch.setenv("AGENTDEX_CONFIG", str(config))
        assert _same(kept, root, home) == (None, None)  # another config path: another fingerprint
        api.refresh(home=str(home))
        assert _same(kept, root, home) == (1, None)
    config.write_text("# changed\n")
    assert _same(kept, root, home) == (None, None)
    api.refresh(home=str(home))
    assert _same(kept, root, home) == (1, None)
    (root / "BUILDING").write_text("")
    assert kept.check(root, str(home)) == (None, None)
    (root / "BUILDING").unlink()
    assert _same(kept, root, home) == (1, None)


def test_noted_states_compare_as_stat_signature_does(tmp_path: Path) -> None:
    """Every kind of path and change, one at a time, against ``stat_signature``."""
    folder, file, gone, later = (tmp_path / n for n in ("dir", "file", "gone", "later"))
    folder.mkdir()
    file.write_bytes(b"abc")
    gone.write_bytes(b"x")
    paths = [str(p) for p in (folder, file, gone, later)]

    def noted_now() -> tuple[dict[str, str], list[tuple[str, int, int, int]]]:
        noted = {p: stat_signature(p) for p in paths}
        states = manifest._noted_states(noted)
        assert states is not None
        return noted, states

    def folder_to_file() -> None:
        folder.rmdir()
        folder.write_bytes(b"")

    def same_mtime(path: Path, change: Any) -> None:
        """``change`` with ``path``'s mtime put back: only the size or the kind differs."""
        mtime = path.stat().st_mtime_ns
        change()
        os.utime(path, ns=(0, mtime))

    changes = [
        lambda: same_mtime(file, lambda: file.write_bytes(b"abcd")),  # the size alone
        lambda: os.utime(file, ns=(0, file.stat().st_mtime_ns + 1)),  # mtime alone
        lambda: os.utime(folder, ns=(0, folder.stat().st_mtime_ns + 1)),  # a folder's mtime
        lambda: gone.unlink(),  # a noted file gone
        lambda: later.write_bytes(b""),  # a noted missing path there
        lambda: same_mtime(later, lambda: (later.unlink(), later.mkdir())),  # file -> folder
        lambda: same_mtime(folder, folder_to_file),  # a folder became a file
    ]
    for change in changes:
        noted, states = noted_now()
        assert manifest._unchanged(states) and not any(changed_signatures(noted))
        change()
        assert manifest._unchanged(states) == (not any(changed_signatures(noted)))
        assert not manifest._unchanged(states)
    assert manifest._noted_states({"x": "q:1"}) is None
    assert manifest._noted_states({"x": "f:1"}) is None


def _watched(home: Path) -> tuple[manifest.KeptCheck, Path]:
    """A kept check over a refreshed home, armed (its folders watched: skips where this
    system cannot watch them, e.g. not Linux)."""
    api.refresh(home=str(home))
    root = Path(index_root(None, home=str(home)))
    kept = manifest.KeptCheck()
    assert _same(kept, root, home)[0] is not None
    if not kept._armed:
        pytest.skip("no inotify watch on this system: every check is a full pass")
    return kept, root


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the state lists stat-ed by each ``_unchanged`` call from now on."""
    sizes: list[int] = []
    real = manifest._unchanged

    def counting(states: list[tuple[str, int, int, int]]) -> bool:
        sizes.append(len(states))
        return real(states)

    monkeypatch.setattr(manifest, "_unchanged", counting)
    return sizes


def test_a_watched_check_stats_only_what_no_notice_vouches_for(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = write_transcript(home)
    for n in range(2, 6):  # more store files in the watched folder
        (transcript.parent / f"c{n}.jsonl").write_bytes(claude_line(f"c{n}", "a chat", 1))
    kept, root = _watched(home)
    noted = len(kept._noted)
    sizes = _passes(monkeypatch)
    assert _same(kept, root, home)[0] == 5
    assert sizes and max(sizes) < noted  # no full pass: the files' folder is watched
    assert not any(s[0] == str(transcript) for s in kept._watch.unwatched)  # type: ignore[union-attr]
    with open(transcript, "ab") as handle:  # noticed: the full pass says what changed
        handle.write(claude_line("c1", "and the wombat one too", 2))
    sizes.clear()
    files, changed = _same(kept, root, home)
    assert files is None and changed == [str(transcript)]
    assert noted in sizes


def test_every_change_is_seen_while_watched(home: Path, tmp_path: Path) -> None:
    """Each change made while the check is armed, one at a time, after a refresh each."""
    transcript = write_transcript(home)
    folder = transcript.parent
    outside = tmp_path / "outside.jsonl"

    def write_same_size_same_mtime() -> None:  # only a notice sees it; stat would not
        mtime = transcript.stat().st_mtime_ns
        data = transcript.read_bytes()
        transcript.write_bytes(data.replace(b"quokka", b"wombat"))
        os.utime(transcript, ns=(0, mtime))

    def folder_swapped() -> None:  # the folder replaced by a copy: same names, new inode
        shutil.copytree(folder, folder.with_name("copy"))
        os.rename(folder.with_name("copy"), folder.with_name("-work-app2"))
        os.rename(folder, folder.with_name("gone"))
        os.rename(folder.with_name("-work-app2"), folder)
        (folder / "c1.jsonl").write_bytes((folder / "c1.jsonl").read_bytes() + b"\n")

    def projects_swapped() -> None:  # a folder above it moved away and another put there
        projects = folder.parent
        shutil.copytree(projects, projects.with_name("p2"))
        with open(projects.with_name("p2") / folder.name / "c1.jsonl", "ab") as handle:
            handle.write(claude_line("c1", "swapped in", 2))
        os.rename(projects, projects.with_name("p3"))
        os.rename(projects.with_name("p2"), projects)

    changes = [
        ("an append", lambda: transcript.open("ab").write(claude_line("c1", "more", 2))),
        ("the mtime alone", lambda: os.utime(transcript, ns=(0, 1))),
        ("a new file", lambda: (folder / "c2.jsonl").write_bytes(claude_line("c2", "x", 1))),
        ("a file removed", lambda: transcript.unlink()),
        ("the folder's mtime", lambda: os.utime(folder, ns=(0, 1))),
        ("the folder swapped", folder_swapped),
        ("a folder above swapped", projects_swapped),
        ("a missing root made", lambda: (home / ".codex" / "sessions").mkdir(parents=True)),
    ]
    for name, change in changes:
        if not transcript.exists():
            write_transcript(home) if not folder.exists() else transcript.write_bytes(
                claude_line("c1", "back again", 1)
            )
        for extra in ("gone", "p3"):
            for stale in (folder.with_name(extra), folder.parent.with_name(extra)):
                if stale.exists():
                    shutil.rmtree(stale)
        if (home / ".codex").exists():
            shutil.rmtree(home / ".codex")
        kept, root = _watched(home)
        assert _same(kept, root, home)[0] is not None, name
        change()
        assert _same(kept, root, home)[0] is None, name  # seen, as the full check sees it
        kept._unwatch()
    outside.write_bytes(b"")
    # a change stat cannot see (same size and mtime) is noticed, then the full pass decides
    kept, root = _watched(home)
    write_same_size_same_mtime()
    assert not kept._quiet()
    assert _same(kept, root, home)[0] is not None  # the full pass: as check() says
    assert kept._armed and kept._quiet()  # armed again once that pass found nothing


def test_links_and_second_names_are_stat_ed_every_time(home: Path, tmp_path: Path) -> None:
    """A store file with another name elsewhere, or a link, can change without a notice in
    its folder: those are stat-ed at every check."""
    from agentdex.ingest import watch

    transcript = write_transcript(home)
    second = tmp_path / "second-name.jsonl"
    os.link(transcript, second)
    kept, root = _watched(home)
    assert str(transcript) in {s[0] for s in kept._watch.unwatched}  # type: ignore[union-attr]
    with open(second, "ab") as handle:  # written through the other name: no notice here
        handle.write(claude_line("c1", "through the other name", 2))
    assert _same(kept, root, home)[0] is None
    # a noted path that is a link (its target's folder is not watched)
    target = tmp_path / "target.jsonl"
    target.write_bytes(b"x")
    linked = tmp_path / "linked.jsonl"
    linked.symlink_to(target)
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b"y")
    states = [(str(p), manifest._FILE, 1, p.stat().st_mtime_ns) for p in (linked, plain)]
    made = watch.watch(states, manifest._MISSING, manifest._FILE)
    assert made is not None
    assert made.unwatched == [states[0]]
    made.close()


def test_no_watch_off_local_file_systems(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder on a file system another machine may change (NFS, FUSE...) is not watched:
    every check stats every path, and still sees each change."""
    from agentdex.ingest import watch

    monkeypatch.setattr(watch, "LOCAL", frozenset())
    transcript = write_transcript(home)
    api.refresh(home=str(home))
    root = Path(index_root(None, home=str(home)))
    kept = manifest.KeptCheck()
    assert _same(kept, root, home) == (1, None)
    assert kept._watch is None and not kept._armed
    sizes = _passes(monkeypatch)
    assert _same(kept, root, home) == (1, None)
    assert sizes == [len(kept._noted)]
    transcript.write_bytes(transcript.read_bytes() + claude_line("c1", "more", 2))
    assert _same(kept, root, home)[0] is None


def test_mount_table_lookup() -> None:
    from agentdex.ingest.watch import _fs_type, _unescape

    mounts = sorted(
        [("/", "overlay"), ("/home", "ext4"), ("/home/u/net share", "nfs4"), ("/tmp", "tmpfs")],
        key=lambda m: len(m[0]),
        reverse=True,
    )
    assert _fs_type("/home/u/.claude", mounts) == "ext4"
    assert _fs_type("/home/u/net share/x", mounts) == "nfs4"
    assert _fs_type("/home/u/net sharex", mounts) == "ext4"
    assert _fs_type("/tmp", mounts) == "tmpfs"
    assert _fs_type("/var/lib", mounts) == "overlay"
    assert _unescape("/home/u/net\\040share") == "/home/u/net share"


def test_a_folder_above_the_watched_ones_swapped_is_seen(tmp_path: Path) -> None:
    """No notice comes when a folder above the watched ones is renamed: the watched
    folders' paths then name other folders, which the check sees by their inodes."""
    from agentdex.ingest import watch

    store = tmp_path / "above" / "store"
    store.mkdir(parents=True)
    file = store / "chat.jsonl"
    file.write_bytes(b"one\n")
    st = file.stat()
    states = [(str(file), manifest._FILE, st.st_size, st.st_mtime_ns)]
    made = watch.watch(states, manifest._MISSING, manifest._FILE)
    if made is None:
        pytest.skip("no inotify watch on this system")
    assert made.unwatched == [] and made.drained() and made.folders_in_place()
    shutil.copytree(tmp_path / "above", tmp_path / "copy")  # same names, sizes and times
    os.rename(tmp_path / "above", tmp_path / "old")
    os.rename(tmp_path / "copy", tmp_path / "above")
    assert made.drained()  # nothing noticed in the watched folder (it moved away whole)
    assert not made.folders_in_place()
    made.close()
