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
  ``k``, ``İ`` to ``i`` + a combining dot): so the pattern keeps the literal's
  ASCII runs, cut at ``k``, in order, with ``%`` between (``'%retry bac%off%'``).
  An ``i`` needs no cut inside a run: ``İ`` lower-cases to two characters, so it
  can stand for the literal's ``i`` only where the literal goes on with the
  combining dot (or ends), that is at the end of a run, and a run's last ``i``
  is dropped. A regex ignoring case matches ``ı`` and ``İ`` to ``i`` and ``ſ`` to
  ``s`` one character for one, anywhere, so its literals are cut at ``i``, ``k``
  and ``s`` (``'%retr%%bac%off%'``);
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


def _folded_pieces(literal: str, *, regex: bool = True) -> list[str]:
    """ASCII runs of the lower-cased literal, cut where a non-ASCII character may stand
    for a letter: at i, k and s in a regex, at k and a run's last i otherwise (see the
    module docstring)."""
    pieces: list[str] = []
    for run in _ASCII_RUN.findall(literal.lower()):
        if regex:
            pieces.extend(p for p in re.split("[iks]", run) if p)
            continue
        if run.endswith("i"):
            run = run[:-1]
        pieces.extend(p for p in run.split("k") if p)
    return pieces


def literal_sql(
    literal: str, *, sensitive: bool, column: str = "text", regex: bool = True
) -> Sql | None:
    """Rows whose ``column`` may contain ``literal`` (None: no useful constraint).

    ``regex``: the literal is a regex's (ignoring case, a regex also matches ``ı``
    and ``ſ``); a plain term's literal is compared lower-cased.
    """
    if not _usable(literal):
        return None
    if sensitive:
        if len(literal) < MIN_PIECE:
            return None
        return Sql(f"{column} LIKE %s", ("%" + _escape(literal) + "%",))
    pieces = _folded_pieces(literal, regex=regex)
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

    def plan(self, node: Node, *, terms: bool = True) -> Sql | None:
        """The candidates' condition; ``terms=False``: of the field filters alone."""
        if isinstance(node, Term):
            return self.term(node) if terms else None
        if isinstance(node, Field):
            return field_sql(node)
        if isinstance(node, Not):
            return None
        if isinstance(node, And):
            return _and([self.plan(child, terms=terms) for child in node.children])
        assert isinstance(node, Or)
        return _or([self.plan(child, terms=terms) for child in node.children])

    def term(self, term: Term) -> Sql | None:
        if not self.regex:
            return literal_sql(term.text, sensitive=self.sensitive, regex=False)
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
