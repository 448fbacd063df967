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
