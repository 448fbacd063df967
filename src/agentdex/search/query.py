"""The query language: a parser from text to a small AST.

Grammar (``NOT`` binds tighter than the implicit ``AND``, which binds
tighter than ``OR``)::

    query   := or ( EOF )
    or      := and ( "OR" and )*
    and     := unary ( ["AND"] unary )*
    unary   := ("NOT" | "-") unary | primary
    primary := "(" or ")" | WORD | "PHRASE" | FIELD:VALUE | FIELD:"VALUE"

Words and phrases are exact substrings (grep semantics). ``name:value`` is a
field filter when ``name`` is a known field; an unknown ``name:`` is an error
naming the valid fields, except when the value starts with ``/`` or ``:``
(``http://x``, ``std::vector`` stay text). Quote text holding ``(``, ``)``,
``"`` or a leading ``-``; inside quotes ``\\"`` is a literal quote. In regex
mode (``-E``) parentheses inside a term are part of the regex and grouping
parentheses stand alone, separated by spaces.
"""

from __future__ import annotations

import re
from typing import Union

from agentdex.errors import UsageError
from agentdex.records import AGENTS, KINDS, ROLES

MAX_QUERY_CHARS = 4000
MAX_TERMS = 64
#: Most parentheses and NOTs nested inside one another (the parser and every walk of
#: the tree recurse once per level, so deeper input would exhaust Python's stack).
MAX_DEPTH = 64

#: field -> how its value matches (documented in docs/query-language.md)
FIELDS: dict[str, str] = {
    "agent": "exact agent id",
    "role": "exact role",
    "kind": "exact kind",
    "session": "session id prefix",
    "project": "path prefix (absolute value) or substring",
    "cwd": "path prefix (absolute value) or substring",
    "worktree": "path prefix (absolute value) or substring",
    "path": "source file path prefix (absolute value) or substring",
    "branch": "substring",
    "model": "substring",
    "host": "substring",
    "since": "time (ISO date, 7d, 2w, yesterday)",
    "until": "time (ISO date, 7d, 2w, yesterday)",
}
_FIELD_RE = re.compile(r"^([A-Za-z_]+):(.*)$", re.DOTALL)


class _Value:
    """A node of the tree: a frozen value, equal and hashed by its fields (``__slots__``,
    in order) as a frozen dataclass is. Written out because a dataclass costs every fresh
    process ~0.5-1 ms to create (it compiles its methods), and a search creates five."""

    __slots__: tuple[str, ...] = ()

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Value)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return type(self), self._fields()  # copy and pickle through __init__


_set = object.__setattr__


class Term(_Value):
    __slots__ = ("text", "phrase")  # noqa: RUF023 - field order (repr, equality)

    def __init__(self, text: str, phrase: bool = False) -> None:
        _set(self, "text", text)
        _set(self, "phrase", phrase)

    text: str
    phrase: bool


class Field(_Value):
    __slots__ = ("name", "value", "time")  # noqa: RUF023 - field order (repr, equality)

    def __init__(self, name: str, value: str, time: float | None = None) -> None:
        _set(self, "name", name)
        _set(self, "value", value)
        _set(self, "time", time)  # since/until as epoch seconds

    name: str
    value: str
    time: float | None


class Not(_Value):
    __slots__ = ("child",)

    def __init__(self, child: Node) -> None:
        _set(self, "child", child)

    child: Node


class And(_Value):
    __slots__ = ("children",)

    def __init__(self, children: tuple[Node, ...]) -> None:
        _set(self, "children", children)

    children: tuple[Node, ...]


class Or(_Value):
    __slots__ = ("children",)

    def __init__(self, children: tuple[Node, ...]) -> None:
        _set(self, "children", children)

    children: tuple[Node, ...]


Node = Union[Term, Field, Not, And, Or]  # noqa: UP007 - runtime alias used by isinstance users


def valid_fields_message() -> str:
    return "valid fields: " + ", ".join(f"{name}:" for name in FIELDS)


def _agents() -> tuple[str, ...]:
    from agentdex.catalogue import agents

    return tuple(dict.fromkeys((*agents(), *AGENTS)))


def make_field(name: str, value: str, now: float | None = None) -> Field:
    """Validate one field filter (raises UsageError naming the valid values)."""
    name = name.lower()
    if name not in FIELDS:
        raise UsageError(f"unknown field {name + ':'!r}; {valid_fields_message()}")
    if not value:
        raise UsageError(f"field {name}: needs a value")
    # the built-in ids first: the catalogue (every agent module, plug-ins' entry points) is
    # loaded only for another name (a fresh filtered search saves ~40-70 ms)
    if name == "agent" and value not in AGENTS and value not in _agents():
        raise UsageError(f"unknown agent {value!r}; valid agents: {', '.join(_agents())}")
    if name == "role" and value not in ROLES:
        raise UsageError(f"unknown role {value!r}; valid roles: {', '.join(ROLES)}")
    if name == "kind" and value not in KINDS:
        raise UsageError(f"unknown kind {value!r}; valid kinds: {', '.join(KINDS)}")
    if name in ("since", "until"):
        from agentdex.search.timeparse import parse_time

        return Field(name, value, parse_time(value, end=name == "until", now=now))
    return Field(name, value)


# -- tokenizer -----------------------------------------------------------------

_LPAREN, _RPAREN, _OR, _AND, _NOT, _TERM, _FIELD = "(", ")", "OR", "AND", "NOT", "TERM", "FIELD"


class _Token:
    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: object = None) -> None:
        self.kind = kind
        self.value = value


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """Read a quoted string starting after the opening quote at ``i - 1``."""
    out: list[str] = []
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] == '"':
            out.append('"')
            i += 2
            continue
        if ch == '"':
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise UsageError('unbalanced quote in query: a phrase opened with " is never closed')


def _standalone(text: str, i: int) -> bool:
    return i + 1 >= len(text) or text[i + 1].isspace()


def _tokenize(text: str, now: float | None, regex: bool = False) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    stops = "" if regex else '()"'
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if regex and ch in "()" and not _standalone(text, i):
            pass  # part of a regex term; grouping parentheses stand alone in regex mode
        elif ch == "(":
            tokens.append(_Token(_LPAREN))
            i += 1
            continue
        elif ch == ")":
            tokens.append(_Token(_RPAREN))
            i += 1
            continue
        if ch == '"':
            value, i = _read_quoted(text, i + 1)
            if value == "":
                raise UsageError('empty phrase "" in query')
            tokens.append(_Token(_TERM, Term(value, phrase=True)))
            continue
        if ch == "-" and i + 1 < n and not text[i + 1].isspace() and text[i + 1] != ")":
            tokens.append(_Token(_NOT))
            i += 1
            continue
        start = i
        while i < n and not text[i].isspace() and text[i] not in stops:
            i += 1
        word = text[start:i]
        if word in ("OR", "AND", "NOT"):
            tokens.append(_Token(word))
            continue
        match = _FIELD_RE.match(word)
        if match:
            name, value = match.group(1), match.group(2)
            known = name.lower() in FIELDS
            if known or not value.startswith(("/", ":")) or not value:
                if value == "" and i < n and text[i] == '"':
                    value, i = _read_quoted(text, i + 1)
                tokens.append(_Token(_FIELD, make_field(name, value, now)))
                continue
        tokens.append(_Token(_TERM, Term(word)))
    return tokens


# -- parser --------------------------------------------------------------------


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise UsageError(
                f"query nests too deeply: more than {MAX_DEPTH} levels of parentheses and NOT (-)"
            )

    def peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def parse(self) -> Node:
        node = self.parse_or()
        token = self.peek()
        if token is not None:
            if token.kind == _RPAREN:
                raise UsageError("unbalanced parentheses in query: ')' without '('")
            raise UsageError(f"unexpected {token.kind} in query")
        return node

    def parse_or(self) -> Node:
        children = [self.parse_and()]
        while (token := self.peek()) is not None and token.kind == _OR:
            self.take()
            if self.peek() is None or self.peek().kind in (_RPAREN, _OR):  # type: ignore[union-attr]
                raise UsageError("OR needs a term on both sides")
            children.append(self.parse_and())
        return children[0] if len(children) == 1 else Or(tuple(children))

    def parse_and(self) -> Node:
        children = [self.parse_unary()]
        while (token := self.peek()) is not None and token.kind not in (_OR, _RPAREN):
            if token.kind == _AND:
                self.take()
                if self.peek() is None or self.peek().kind in (_RPAREN, _OR, _AND):  # type: ignore[union-attr]
                    raise UsageError("AND needs a term on both sides")
                continue
            children.append(self.parse_unary())
        return children[0] if len(children) == 1 else And(tuple(children))

    def parse_unary(self) -> Node:
        token = self.peek()
        if token is None:
            raise UsageError("query ends where a term was expected")
        if token.kind == _NOT:
            self.take()
            if self.peek() is None:
                raise UsageError("NOT (or -) needs a term after it")
            self.nest()
            negated = Not(self.parse_unary())
            self.depth -= 1
            return negated
        if token.kind == _LPAREN:
            self.take()
            if (nxt := self.peek()) is not None and nxt.kind == _RPAREN:
                raise UsageError("empty parentheses in query")
            self.nest()
            node = self.parse_or()
            closing = self.peek()
            if closing is None or closing.kind != _RPAREN:
                raise UsageError("unbalanced parentheses in query: '(' is never closed")
            self.take()
            self.depth -= 1
            return node
        if token.kind == _RPAREN:
            raise UsageError("unbalanced parentheses in query: ')' without '('")
        if token.kind in (_OR, _AND):
            raise UsageError(f"{token.kind} needs a term on both sides")
        self.take()
        value = token.value
        assert isinstance(value, Term | Field)
        return value


def parse_query(text: str, *, now: float | None = None, regex: bool = False) -> Node | None:
    """Parse ``text``; None for an empty query. Raises UsageError on malformed input.

    With ``regex``, parentheses and quotes inside a term belong to it; grouping
    parentheses must stand alone (``( a OR b )``).
    """
    if len(text) > MAX_QUERY_CHARS:
        raise UsageError(f"query too long ({len(text)} characters; at most {MAX_QUERY_CHARS})")
    _require_utf8(text)
    tokens = _tokenize(text, now, regex)
    if not tokens:
        return None
    if sum(1 for t in tokens if t.kind in (_TERM, _FIELD)) > MAX_TERMS:
        raise UsageError(f"query has too many terms (at most {MAX_TERMS})")
    return _Parser(tokens).parse()


def _require_utf8(text: str) -> None:
    """Refuse undecodable bytes (a shell passes them as lone surrogates) with their position."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        byte = ord(text[exc.start]) - 0xDC00 if "\udc80" <= text[exc.start] <= "\udcff" else None
        what = f"byte 0x{byte:02x}" if byte is not None else "a lone surrogate"
        raise UsageError(f"query is not valid UTF-8: {what} at character {exc.start + 1}") from None


def terms(node: Node | None) -> list[Term]:
    """Every text term, in order."""
    out: list[Term] = []

    def walk(n: Node) -> None:
        if isinstance(n, Term):
            out.append(n)
        elif isinstance(n, Not):
            walk(n.child)
        elif isinstance(n, And | Or):
            for child in n.children:
                walk(child)

    if node is not None:
        walk(node)
    return out


def positive_terms(node: Node | None) -> list[Term]:
    """Text terms not under a NOT (the ones worth highlighting and ranking on)."""
    out: list[Term] = []

    def walk(n: Node) -> None:
        if isinstance(n, Term):
            out.append(n)
        elif isinstance(n, And | Or):
            for child in n.children:
                walk(child)

    if node is not None:
        walk(node)
    return out


def has_uppercase(node: Node | None) -> bool:
    return any(t.text != t.text.lower() for t in terms(node))
