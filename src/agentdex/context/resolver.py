"""Turn scan roots into typed resources: walk, inspect, dedupe, cap, read, parse.

:func:`resolve` is a pure function of the filesystem: no locks, no
globals, no publishing. It checks ``should_stop`` between directories and
files and raises :class:`Cancelled` instead of returning a partial result,
so a cancelled resolve can never be mistaken for an empty workspace.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from agentdex.context.caps import DEFAULT_LIMITS, Budget, Limits
from agentdex.context.mcp_configs import mcp_meta
from agentdex.context.model import Resource, RootInfo
from agentdex.context.names import SKIP_DIRS, classify, classify_file_source, mcp_format
from agentdex.context.reading import Inspection, inspect, is_within, read_capped
from agentdex.context.skills import front_matter, skill_meta


class Cancelled(Exception):
    """The resolve was asked to stop; its partial result must not be published."""


@dataclass(frozen=True, slots=True)
class ScanRoot:
    """A directory (or single file) whose recognized files become resources."""

    path: str
    scope: str  # "workspace", "user" or "source"
    source_path: str | None = None
    max_depth: int = DEFAULT_LIMITS.workspace_depth
    skip: frozenset[str] = SKIP_DIRS
    allow_file: bool = False
    denied: str | None = None  # set when a user source is no longer under an allowed root
    shallow: bool = False  # only the files directly inside (workspace ancestors)


@dataclass(frozen=True, slots=True)
class WatchPlan:
    """What a watcher must arm so that every recognized change is seen."""

    dirs: frozenset[str] = frozenset()  # walked: new children here matter
    files: frozenset[str] = frozenset()  # discovered paths and symlink targets
    parents: frozenset[str] = frozenset()  # watched only for a file root inside them
    skip: frozenset[str] = SKIP_DIRS

    @property
    def all_dirs(self) -> frozenset[str]:
        return self.dirs | self.parents


@dataclass(frozen=True, slots=True)
class Resolution:
    resources: tuple[Resource, ...]
    roots: tuple[RootInfo, ...]
    error: str | None
    plan: WatchPlan


@dataclass(slots=True)
class _Candidate:
    kind: str
    path: str
    root: ScanRoot
    root_real: str
    root_index: int
    depth: int
    inspection: Inspection
    aliases: list[str] = field(default_factory=list)

    def sort_key(self) -> tuple[int, int, str]:
        return (self.root_index, self.depth, f"{self.kind}:{self.path}")


StopCheck = Callable[[], bool]


@dataclass(slots=True)
class _Walk:
    limits: Limits
    should_stop: StopCheck
    candidates: list[_Candidate] = field(default_factory=list)
    dirs: set[str] = field(default_factory=set)
    parents: set[str] = field(default_factory=set)
    awaited: set[str] = field(default_factory=set)  # missing roots: their creation matters
    visited: set[tuple[int, int]] = field(default_factory=set)
    listed: int = 0
    unlisted: int = 0
    undecodable: int = 0
    truncated: bool = False

    def check(self) -> None:
        if self.should_stop():
            raise Cancelled


def _root_info(root: ScanRoot, status: str, error: str | None = None) -> RootInfo:
    return RootInfo(root.path, root.scope, status, root.source_path, error)


def _walk_root(walk: _Walk, index: int, root: ScanRoot) -> RootInfo:
    if root.denied is not None:
        return _root_info(root, "not_allowed", root.denied)
    try:
        st = os.stat(root.path)
    except FileNotFoundError:
        parent = os.path.dirname(root.path)
        if os.path.isdir(parent):
            walk.awaited.add(root.path)
            walk.parents.add(parent)
        return _root_info(root, "missing")
    except OSError as exc:
        return _root_info(root, "unreadable", exc.strerror)
    if stat.S_ISREG(st.st_mode) and root.allow_file:
        kind = classify_file_source(root.path) if root.scope == "source" else classify(root.path)
        if kind is None:
            return _root_info(root, "not_recognized")
        parent = os.path.dirname(root.path)
        walk.parents.add(parent)
        walk.candidates.append(
            _Candidate(
                kind,
                root.path,
                root,
                os.path.realpath(parent),
                index,
                0,
                inspect(root.path, os.path.realpath(parent)),
            )
        )
        return _root_info(root, "ok")
    if not stat.S_ISDIR(st.st_mode):
        return _root_info(root, "not_a_directory")
    root_real = os.path.realpath(root.path)
    stack: list[tuple[str, int]] = [(root.path, 0)]
    ok = False
    while stack:
        walk.check()
        directory, depth = stack.pop()
        if walk.listed >= walk.limits.max_dirs:
            walk.truncated = True
            if not ok:
                return _root_info(root, "truncated", "directory walk limit reached")
            break
        try:
            dst = os.stat(directory)
            if (dst.st_dev, dst.st_ino) in walk.visited:
                if depth == 0:
                    return _root_info(root, "ok", "already scanned under an earlier root")
                continue
            walk.visited.add((dst.st_dev, dst.st_ino))
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            walk.unlisted += 1
            if depth == 0:
                return _root_info(root, "unreadable", "cannot list directory")
            continue
        walk.listed += 1
        (walk.parents if root.shallow else walk.dirs).add(directory)
        ok = True
        for entry in entries:
            _visit(walk, index, root, root_real, entry, depth, stack)
    return _root_info(root, "ok" if ok else "unreadable")


def _visit(
    walk: _Walk,
    index: int,
    root: ScanRoot,
    root_real: str,
    entry: os.DirEntry[str],
    depth: int,
    stack: list[tuple[str, int]],
) -> None:
    name = entry.name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        walk.undecodable += 1  # cannot be named in JSON: counted in the snapshot error
        return
    try:
        is_link = entry.is_symlink()
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError:
        is_link, is_dir = False, False
    if is_dir or (is_link and _points_to_dir(entry.path)):
        if name in root.skip or depth + 1 > root.max_depth:
            return
        if is_link and not is_within(os.path.realpath(entry.path), root_real):
            return  # a directory link leaving the root is never descended
        stack.append((entry.path, depth + 1))
        return
    kind = classify(entry.path)
    if kind is None:
        return
    walk.candidates.append(
        _Candidate(
            kind, entry.path, root, root_real, index, depth + 1, inspect(entry.path, root_real)
        )
    )


def _points_to_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def _dedupe(candidates: list[_Candidate]) -> list[_Candidate]:
    """Collapse paths that reach the same file (same kind) into one, keeping aliases."""
    by_path: dict[str, _Candidate] = {}
    for cand in candidates:
        by_path.setdefault(f"{cand.kind}:{cand.path}", cand)
    groups: dict[tuple[str, int, int], list[_Candidate]] = {}
    out: list[_Candidate] = []
    for cand in by_path.values():
        ident = cand.inspection.identity
        if cand.inspection.status != "ok" or ident is None:
            out.append(cand)
            continue
        groups.setdefault((cand.kind, *ident), []).append(cand)
    for group in groups.values():
        group.sort(key=lambda c: (c.inspection.is_link, c.root_index, len(c.path), c.path))
        keep = group[0]
        keep.aliases = sorted(c.path for c in group[1:])
        out.append(keep)
    return out


def _first_heading(text: str) -> str | None:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip()
            if heading:
                return heading[:200]
    return None


def _resource(cand: _Candidate, **fields: object) -> Resource:
    return Resource(
        kind=cand.kind,
        source=cand.path,
        scope=cand.root.scope,
        root=cand.root.path,
        source_path=cand.root.source_path,
        target=cand.inspection.target,
        aliases=tuple(cand.aliases),
        **fields,  # type: ignore[arg-type]
    )


def _build(cand: _Candidate, limits: Limits, budget: Budget) -> Resource:
    insp = cand.inspection
    if insp.status != "ok":
        return _resource(cand, status=insp.status, error=insp.error, size=insp.size)
    if cand.kind == "mcp_config":
        return _build_mcp(cand, limits)
    read = read_capped(insp, limits.max_resource_bytes)
    base = {"size": read.size, "content_hash": read.content_hash}
    if read.status == "unreadable":
        return _resource(cand, status="unreadable", error=read.error, **base)
    text: str | None
    try:
        text = read.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if read.status == "ok":
            return _resource(
                cand, status="invalid", error=f"not valid UTF-8 (byte {exc.start})", **base
            )
        text = read.data.decode("utf-8", "ignore")
    name: str | None
    description: str | None = None
    error = read.error
    status = read.status
    if cand.kind == "skill":
        meta = skill_meta(PurePath(cand.path).parent.name, text)
        name, description = meta.name, meta.description
        if meta.error is not None and status == "ok":
            return _resource(
                cand, status="invalid", error=meta.error, name=name, description=description, **base
            )
    else:
        name = _first_heading(text)
        if cand.path.endswith(".mdc"):
            data, _ = front_matter(text)
            if data and isinstance(data.get("description"), str):
                description = data["description"].strip() or None
    if status != "ok":
        return _resource(
            cand, status=status, error=error, name=name, description=description, **base
        )
    if not budget.take(len(text.encode("utf-8"))):
        return _resource(
            cand,
            status="excluded",
            error=f"aggregate payload cap of {limits.max_total_bytes} bytes reached",
            name=name,
            description=description,
            **base,
        )
    return _resource(cand, status="ok", name=name, description=description, payload=text, **base)


def _build_guarded(cand: _Candidate, limits: Limits, budget: Budget) -> Resource:
    """``_build``, but a file that breaks it is that file's problem, never the snapshot's.

    The error names only the exception type: messages could quote the
    file's content (an MCP config's values).
    """
    try:
        return _build(cand, limits, budget)
    except (MemoryError, RecursionError, ValueError, TypeError, LookupError) as exc:
        return _resource(
            cand,
            status="invalid",
            error=f"could not be read ({type(exc).__name__})",
            size=cand.inspection.size,
        )


def _build_mcp(cand: _Candidate, limits: Limits) -> Resource:
    read = read_capped(cand.inspection, limits.max_mcp_config_bytes)
    base = {"size": read.size, "content_hash": read.content_hash}
    if read.status != "ok":
        return _resource(cand, status=read.status, error=read.error, **base)
    fmt = mcp_format(cand.path)
    if fmt is None:  # an explicitly added file source with an unrecognized MCP name
        return _resource(cand, status="invalid", error="not a recognized MCP config", **base)
    meta = mcp_meta(fmt, read.data)
    if meta.error is not None:
        return _resource(cand, status="invalid", error=meta.error, **base)
    if meta.section_hash is not None:
        base["content_hash"] = meta.section_hash
    return _resource(cand, status="ok", servers=meta.servers, **base)


def _never() -> bool:
    return False


def resolve(
    roots: Sequence[ScanRoot],
    *,
    limits: Limits = DEFAULT_LIMITS,
    should_stop: StopCheck | None = None,
) -> Resolution:
    """Resolve ``roots`` (in priority order) into resources sorted by id."""
    walk = _Walk(limits, should_stop or _never)
    infos = [_walk_root(walk, index, root) for index, root in enumerate(roots)]
    budget = Budget(limits)
    if walk.truncated:
        budget.notes.append(f"directory walk stopped after {limits.max_dirs} directories")
    if walk.unlisted:
        budget.notes.append(f"{walk.unlisted} directories could not be listed")
    if walk.undecodable:
        budget.notes.append(f"{walk.undecodable} entries with non-UTF-8 names were skipped")
    ordered = sorted(_dedupe(walk.candidates), key=_Candidate.sort_key)
    resources: list[Resource] = []
    for position, cand in enumerate(ordered):
        walk.check()
        if position >= limits.max_resources:
            budget.excluded_by_count += 1
            resources.append(
                _resource(
                    cand,
                    status="excluded",
                    size=cand.inspection.size,
                    error=f"over the {limits.max_resources}-resource cap",
                )
            )
            continue
        resources.append(_build_guarded(cand, limits, budget))
    files = {c.path for c in ordered} | {
        c.inspection.target for c in ordered if c.inspection.target
    }
    files |= {alias for c in ordered for alias in c.aliases} | walk.awaited
    plan = WatchPlan(
        dirs=frozenset(walk.dirs),
        files=frozenset(files),
        parents=frozenset(walk.parents - walk.dirs),
    )
    resources.sort(key=lambda r: r.id)
    return Resolution(tuple(resources), tuple(infos), budget.error(), plan)
