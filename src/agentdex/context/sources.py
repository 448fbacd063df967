"""User-added context sources: validation, persistence, and the scan-root list.

A source must be absolute (or ``~``-relative), contain no ``..``, exist,
and resolve (symlinks followed) under an allowed root: the workspace,
``~/.claude``, ``~/.codex``, ``~/.gemini``, ``~/.agents`` (or the folders
named by ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``) or a
configured ``[context] roots`` entry. The bare home directory is never an allowed
root, so ``~/.ssh`` can never be added. Sources are re-validated at every
resolve, so a source whose symlink is later pointed elsewhere is ignored
(``not_allowed``), never followed.

Sources persist in ``<data dir>/context/sources.json`` (written atomically
under an exclusive ``flock``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from agentdex.context.caps import DEFAULT_LIMITS, Limits
from agentdex.context.names import USER_SKIP_DIRS
from agentdex.context.reading import is_within
from agentdex.context.resolver import ScanRoot
from agentdex.errors import CorruptError, NotFoundError, UsageError
from agentdex.paths import data_dir, ensure_private_dir, home_dir
from agentdex.readers import is_secret

#: Directory names that are refused anywhere in a source path (defense in depth).
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".kube", ".docker", ".password-store"})
SOURCES_FILE = "sources.json"


def _first_dir(var: str) -> str | None:
    """The first existing directory named by env ``var`` (comma-separated), if any."""
    for part in (os.environ.get(var) or "").split(","):
        part = os.path.expanduser(part.strip())
        if part and os.path.isabs(part) and os.path.isdir(part):
            return part
    return None


def user_folders(home: str | None = None) -> list[str]:
    """User-level agent folders, honouring the agents' own env overrides."""
    base = str(home_dir(home))
    claude = _first_dir("CLAUDE_CONFIG_DIR") or os.path.join(base, ".claude")
    codex = _first_dir("CODEX_HOME") or os.path.join(base, ".codex")
    gemini_home = _first_dir("GEMINI_CLI_HOME")
    gemini = os.path.join(gemini_home or base, ".gemini")
    return [claude, codex, gemini, os.path.join(base, ".agents")]


def _store_dir(base: Path | None = None) -> Path:
    return (base or data_dir()) / "context"


def sources_path(base: Path | None = None) -> Path:
    return _store_dir(base) / SOURCES_FILE


def allowed_roots(workspace: str | None, home: str | None = None) -> list[str]:
    """Resolved directories a source may live under (never the bare home)."""
    from agentdex.config import load_config

    home_real = os.path.realpath(home_dir(home))
    roots = [os.path.realpath(path) for path in user_folders(home)]
    roots += [os.path.realpath(os.path.expanduser(str(p))) for p in load_config().context_roots]
    if workspace:
        ws = os.path.realpath(workspace)
        # A workspace that is the home (or holds it) would make ~/.ssh addable.
        if not is_within(home_real, ws):
            roots.append(ws)
    roots = [r for r in roots if not is_within(home_real, r)]
    return sorted(set(roots))


class SourceRefused(UsageError):
    """A source agentdex will not read: outside every allowed root, or a secret.

    A usage error on the command line (exit 2); over HTTP a 403, since the
    request is well formed and refused by policy, not malformed.
    """

    code = "FORBIDDEN"
    http_status = 403


def canonical_path(raw: str, *, home: str | None = None) -> str:
    """Syntax checks and symlink resolution, without the allowed-root check.

    The path is taken as given (no stripping): a name may end in a space.
    """
    if not isinstance(raw, str) or not raw:
        raise UsageError("source path is empty")
    if "\0" in raw:
        raise UsageError("source path contains a NUL byte")
    text = raw
    if text.startswith("~"):
        if text != "~" and not text.startswith("~/"):
            raise UsageError(f"{raw}: only '~/' paths are expanded, not '~user'")
        text = str(home_dir(home)) + text[1:]
    if not os.path.isabs(text):
        raise UsageError(f"{raw}: source paths must be absolute or start with '~/'")
    if ".." in PurePosixPath(text).parts:
        raise UsageError(f"{raw}: source paths must not contain '..'")
    return os.path.realpath(text)


def validate_source(raw: str, workspace: str | None, *, home: str | None = None) -> str:
    """The canonical form of ``raw`` if it may be added; UsageError otherwise."""
    real = canonical_path(raw, home=home)
    parts = PurePosixPath(real).parts
    if any(part in SECRET_DIRS for part in parts) or is_secret(real):
        raise SourceRefused(f"{raw}: refusing a path inside a secrets folder or naming a secret")
    allowed = allowed_roots(workspace, home)
    if not any(is_within(real, root) for root in allowed):
        raise SourceRefused(
            f"{raw}: not under an allowed root; allowed: {', '.join(allowed) or 'none'} "
            "(the workspace, the agents' user folders, and [context] roots in the config)",
            detail="allowed roots: " + ", ".join(allowed),
        )
    if not os.path.exists(real):
        raise NotFoundError(f"{raw}: no such file or directory")
    return real


@contextlib.contextmanager
def _locked(base: Path | None) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no flock on this platform: the atomic replace still holds
        fcntl = None  # type: ignore[assignment]
    directory = ensure_private_dir(_store_dir(base))
    fd = os.open(directory / "sources.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def load_sources(base: Path | None = None) -> list[dict[str, Any]]:
    """Stored sources, oldest first (an absent file is an empty list)."""
    path = sources_path(base)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise CorruptError(f"{path}: cannot read context sources: {exc.strerror}") from exc
    try:
        doc = orjson.loads(raw)
        entries = doc["sources"]
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("path"), str) for e in entries
        ):
            raise ValueError("bad entries")
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CorruptError(f"{path}: context sources file is not valid") from exc
    return entries


def _save(entries: list[dict[str, Any]], base: Path | None) -> None:
    directory = ensure_private_dir(_store_dir(base))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".sources-", suffix=".json")
    with os.fdopen(fd, "wb") as handle:
        handle.write(orjson.dumps({"version": 1, "sources": entries}, option=orjson.OPT_INDENT_2))
    os.replace(tmp, sources_path(base))


def add_source(
    raw: str, workspace: str | None, *, home: str | None = None, base: Path | None = None
) -> tuple[dict[str, Any], bool]:
    """Validate and persist; returns (entry, created). Adding twice is not an error."""
    real = validate_source(raw, workspace, home=home)
    with _locked(base):
        entries = load_sources(base)
        for entry in entries:
            if entry["path"] == real:
                return entry, False
        entry = {
            "path": real,
            "added_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "workspace": os.path.realpath(workspace) if workspace else None,
        }
        entries.append(entry)
        _save(entries, base)
    return entry, True


def find_source(raw: str, *, home: str | None = None, base: Path | None = None) -> dict[str, Any]:
    """The stored entry for ``raw`` (matched canonically or literally); NotFoundError."""
    real = canonical_path(raw, home=home)
    literal = raw
    for entry in load_sources(base):
        if entry["path"] in (real, literal):
            return entry
    raise NotFoundError(f"{raw}: not a context source")


def remove_source(raw: str, *, home: str | None = None, base: Path | None = None) -> str:
    """Forget a source; NotFoundError when it was never added."""
    real = canonical_path(raw, home=home)
    literal = raw
    with _locked(base):
        entries = load_sources(base)
        kept = [e for e in entries if e["path"] not in (real, literal)]
        if len(kept) == len(entries):
            raise NotFoundError(f"{raw}: not a context source")
        _save(kept, base)
    removed: str = next(e["path"] for e in entries if e["path"] in (real, literal))
    return removed


def source_status(entry: dict[str, Any], workspace: str | None, home: str | None = None) -> str:
    """``ok``, ``missing`` or ``not_allowed`` (re-checked now, symlinks resolved now)."""
    try:
        validate_source(entry["path"], workspace, home=home)
    except NotFoundError:
        return "missing"
    except UsageError:
        return "not_allowed"
    return "ok"


def ancestors(workspace: str, home: str | None = None) -> list[str]:
    """Directories above ``workspace`` up to its repository root, nearest first.

    Agents read instruction files from these too (Codex from the git root
    down, Claude and Gemini upward). Nothing above the repository root, the
    home directory, or the filesystem root is included; outside a repository
    the list is empty.
    """
    home_real = os.path.realpath(home_dir(home))
    chain: list[str] = []
    current = workspace
    if os.path.exists(os.path.join(current, ".git")):
        return []
    while True:
        parent = os.path.dirname(current)
        if parent == current or is_within(home_real, parent):
            return []  # reached home or / without finding a repository
        chain.append(parent)
        if os.path.exists(os.path.join(parent, ".git")):
            return chain
        current = parent


def scan_roots(
    workspace: str,
    *,
    home: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    base: Path | None = None,
) -> list[ScanRoot]:
    """Every root of a workspace's snapshot, in priority order."""
    home_path = str(home_dir(home))
    roots = [ScanRoot(workspace, "workspace", max_depth=limits.workspace_depth)]
    for parent in ancestors(workspace, home):
        roots.append(ScanRoot(parent, "ancestor", max_depth=0, shallow=True))
    for folder in user_folders(home):
        path = os.path.realpath(folder)
        roots.append(ScanRoot(path, "user", max_depth=limits.user_depth, skip=USER_SKIP_DIRS))
    roots.append(ScanRoot(os.path.join(home_path, ".claude.json"), "user", allow_file=True))
    for entry in load_sources(base):
        stored = entry["path"]
        denied: str | None = None
        try:
            path = validate_source(stored, workspace, home=home)
        except NotFoundError:
            path = stored  # a missing root is simply ignored
        except UsageError as exc:
            path, denied = stored, exc.message
        roots.append(
            ScanRoot(
                path,
                "source",
                source_path=stored,
                max_depth=limits.workspace_depth,
                allow_file=True,
                denied=denied,
            )
        )
    return roots
