"""From a parsed query to a SQL condition whose rows are a *superset* of the matches.

The condition only chooses candidates (pg_trgm's GIN index serves the ``LIKE`` and
``ILIKE`` patterns); every candidate is then checked in Python by the local
matchers (:mod:`agentdex.search.matchers`, :mod:`agentdex.search.fields`), so the
answer is exactly the local one. What makes the condition never miss a match:

* the ``text`` column collates ``"C"``: ``LIKE`` compares characters exactly and
  ``ILIKE`` folds ASCII letters only, whatever the server's locale;
* a case-sensitive literal ``t`` matches where ``t in text``: ``text LIKE '%t%'``
  says exactly that;
* ignoring case, the literal matches where ``t.lower() in text.lower()``. Only
  two non-ASCII characters lower-case to ASCII letters (``K`` KELVIN SIGN to
  ``k``, ``İ`` to ``i`` + a combining dot), and a regex ignoring case also
  matches ``ſ`` to ``s``: so the pattern keeps the literal's ASCII runs, cut at
  ``i``, ``k`` and ``s``, in order, with ``%`` between (``'%retr%%backoff%'``);
* a regex uses its required literals (:mod:`agentdex.search.regex_literals`);
* pieces shorter than 3 characters give no trigram, so they constrain nothing;
  ``NOT`` constrains nothing (verification decides); ``OR`` with an
  unconstrained side is unconstrained;
* NUL and lone surrogates never reach the server (U+FFFD instead), so a literal
  holding one constrains nothing.

Field filters become SQL supersets too (path prefixes, ``ILIKE`` substrings, time
bounds), and are checked in Python like the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentdex.search.fields import is_path_value, normalize_path_value
from agentdex.search.query import And, Field, Node, Not, Or, Term

_ASCII_RUN = re.compile(r"[\x00-\x7f]+")
MIN_PIECE = 3


@dataclass(frozen=True, slots=True)
class Sql:
    """A WHERE fragment and its parameters (``%s`` placeholders)."""

    text: str
    params: tuple[object, ...] = ()

    def both(self, other: Sql | None) -> Sql:
        if other is None:
            return self
        return Sql(f"({self.text}) AND ({other.text})", self.params + other.params)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _usable(text: str) -> bool:
    return "\x00" not in text and not any("\ud800" <= c <= "\udfff" for c in text)


def _folded_pieces(literal: str) -> list[str]:
    """ASCII runs of the lower-cased literal, cut at i, k and s (see the module docstring)."""
    pieces: list[str] = []
    for run in _ASCII_RUN.findall(literal.lower()):
        pieces.extend(p for p in re.split("[iks]", run) if p)
    return pieces


def literal_sql(literal: str, *, sensitive: bool, column: str = "text") -> Sql | None:
    """Rows whose ``column`` may contain ``literal`` (None: no useful constraint)."""
    if not _usable(literal):
        return None
    if sensitive:
        if len(literal) < MIN_PIECE:
            return None
        return Sql(f"{column} LIKE %s", ("%" + _escape(literal) + "%",))
    pieces = _folded_pieces(literal)
    if not any(len(p.strip()) >= MIN_PIECE for p in pieces):
        return None
    pattern = "%" + "%".join(_escape(p) for p in pieces) + "%"
    return Sql(f"{column} ILIKE %s", (pattern,))


def _and(parts: list[Sql | None]) -> Sql | None:
    kept = [p for p in parts if p is not None]
    if not kept:
        return None
    if len(kept) == 1:
        return kept[0]
    return Sql(" AND ".join(f"({p.text})" for p in kept), tuple(x for p in kept for x in p.params))


def _or(parts: list[Sql | None]) -> Sql | None:
    if not parts or any(p is None for p in parts):
        return None
    if len(parts) == 1:
        return parts[0]
    kept = [p for p in parts if p is not None]
    return Sql(" OR ".join(f"({p.text})" for p in kept), tuple(x for p in kept for x in p.params))


class SqlPlanner:
    """Builds the candidate condition for one query (case and mode fixed)."""

    def __init__(self, *, sensitive: bool, word: bool, regex: bool) -> None:
        self.sensitive = sensitive
        self.word = word
        self.regex = regex

    def plan(self, node: Node) -> Sql | None:
        if isinstance(node, Term):
            return self.term(node)
        if isinstance(node, Field):
            return field_sql(node)
        if isinstance(node, Not):
            return None
        if isinstance(node, And):
            return _and([self.plan(child) for child in node.children])
        assert isinstance(node, Or)
        return _or([self.plan(child) for child in node.children])

    def term(self, term: Term) -> Sql | None:
        if not self.regex:
            return literal_sql(term.text, sensitive=self.sensitive)
        from agentdex.search.regex_literals import Alternatives, required_literals

        requirement, ignore_case = required_literals(term.text, self.sensitive)
        if requirement is None:
            return None

        def walk(item: object) -> Sql | None:
            if isinstance(item, str):
                return literal_sql(item, sensitive=not ignore_case)
            if isinstance(item, Alternatives):
                return _or([walk(i) for i in item])
            assert isinstance(item, list)
            return _and([walk(i) for i in item])

        return walk(requirement)


_SUBSTRING = {"branch": "branch", "model": "model", "host": "host"}
_PATHS = {"project": "project", "cwd": "cwd", "worktree": "worktree", "path": "source_path"}


def field_sql(field: Field) -> Sql | None:
    """A superset condition for one field filter (checked exactly in Python afterwards)."""
    name, value = field.name, field.value
    if name in ("agent", "role", "kind"):
        return Sql(f"{name} = %s", (value,))
    if name == "session":
        return Sql("left(session_id, %s) = %s", (len(value), value))
    if name in ("since", "until"):
        assert field.time is not None
        return Sql("ts >= %s" if name == "since" else "ts <= %s", (field.time,))
    column = _PATHS.get(name) or _SUBSTRING[name]
    if name in _PATHS and is_path_value(value):
        prefix = normalize_path_value(value)
        sep = "/" if "/" in prefix or not prefix.startswith("\\") else "\\"
        with_sep = prefix if prefix.endswith(sep) else prefix + sep
        return Sql(
            f'({column} COLLATE "C" = %s OR left({column}, %s) COLLATE "C" = %s)',
            (prefix, len(with_sep), with_sep),
        )
    pieces = _folded_pieces(value)
    if not _usable(value) or not any(pieces):
        return None
    pattern = "%" + "%".join(_escape(p) for p in pieces) + "%"
    return Sql(f'{column} COLLATE "C" ILIKE %s', (pattern,))
