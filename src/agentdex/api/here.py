"""``--here``: a search or listing kept to (or ranked by) the folder it runs in.

The place is the folder, and the git project and worktree holding it
(:func:`here_roots`); a record is there when its cwd, project or worktree is
one of them or inside one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentdex.search.engine import Engine


def here_roots(here: str) -> list[str]:
    """``--here``: the folder, and the git project and worktree holding it."""
    from agentdex.gitinfo import git_info

    base = os.path.normpath(os.path.abspath(os.path.expanduser(here)))
    info = git_info(base)
    return sorted({p.rstrip("/") or "/" for p in (base, info.project, info.worktree) if p})


def inside_any(roots: list[str]) -> Callable[[str | None], bool]:
    """A test: is a path one of ``roots`` or inside one?"""

    def inside(path: str | None) -> bool:
        if not path:
            return False
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

    return inside


def here_place(engine: Engine, here: str) -> tuple[Callable[[tuple[Any, ...]], bool], Any]:
    """The ``--here`` place as a row predicate and as an exact postings query."""
    from agentdex.search.plan import context_ids
    from agentdex.search.query import Field

    roots = here_roots(here)
    inside = inside_any(roots)

    def predicate(row: tuple[Any, ...]) -> bool:
        return inside(row[8]) or inside(row[9]) or inside(row[10])

    ids: set[int] = set()
    for column in ("cwd", "project", "worktree"):
        for root in roots:
            ids.update(context_ids(engine.db, Field(column, root)))
    import tantivy

    query = tantivy.Query.term_set_query(engine.schema, "ctx", sorted(ids))
    return predicate, query
