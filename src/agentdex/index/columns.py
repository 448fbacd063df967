"""A file's prepared records as columns: what a parse worker sends the writer.

A parse worker sent one 13-field tuple a record (the fields of a
:class:`agentdex.index.segments.Prepared`, with a 14-field meta tuple and a 5-field
cols tuple inside): the writer's main thread, the build's serial chain, unpickled
three tuples a record and walked them field by field in the index's and the
archive's loops. :class:`Columns` holds the same fields one list a field for a
whole file: fewer objects to pickle and unpickle, the meta's context fields sent
once a context (a record's meta is its context's fields with its role, kind,
time, locator and offset), and loops that zip the lists they need.

What a record's fields mean stays :class:`~agentdex.index.segments.Prepared`'s:
:meth:`Columns.append_row` takes one such tuple (or a wire tuple: ``lower`` None
when it is the UTF-8 of ``postings_text``) and :meth:`Columns.rows` gives them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from agentdex.index.rowpack import unpack_locator
from agentdex.index.segments import Prepared

#: the column lists, in the order ``__init__`` and pickling take them
LISTS = (
    "contexts",
    "roles",
    "kinds",
    "times",
    "offsets",
    "texts",
    "thashes",
    "postings",
    "rks",
    "flags",
    "levels",
    "role_xs",
    "kind_xs",
    "packed_times",
    "locs",
    "keys",
)
#: the sparse columns, by position: what most records do not have
SPARSE = ("lowers", "chars", "raws", "metas")


class Columns:
    """A file's records, one list a field (:data:`LISTS`) and a few sparse ones by
    position (:data:`SPARSE`): ``lowers`` the lower-cased UTF-8 where it is not
    ``postings``' (a lone surrogate), ``chars`` the non-ASCII characters of the postings
    text where there are any, ``raws`` a prompt's source line where the worker read one
    (b"": none to keep), ``metas`` the meta tuple where it is not the record's context,
    role, kind, time, unpacked ``loc`` and offset."""

    __slots__ = (*LISTS, *SPARSE)

    contexts: list[tuple[object, ...]]
    roles: list[object]
    kinds: list[object]
    times: list[object]
    offsets: list[object]
    texts: list[str]
    thashes: list[int]
    postings: list[str]
    rks: list[int]
    flags: list[int]
    levels: list[int]
    role_xs: list[object]
    kind_xs: list[object]
    packed_times: list[object]
    locs: list[Any]
    keys: list[Any]
    lowers: dict[int, bytes]
    chars: dict[int, str]
    raws: dict[int, bytes]
    metas: dict[int, tuple[object, ...]]

    def __init__(self, *columns: Any) -> None:
        if not columns:
            columns = tuple([] for _ in LISTS) + tuple({} for _ in SPARSE)
        for name, column in zip(self.__slots__, columns, strict=True):
            setattr(self, name, column)

    def __reduce__(self) -> tuple[object, ...]:
        return (Columns, tuple(getattr(self, name) for name in self.__slots__))

    def __len__(self) -> int:
        return len(self.texts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Columns) and all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Columns({len(self)} records)"

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[Any]]) -> Columns:
        """Columns of :class:`~agentdex.index.segments.Prepared` records or wire tuples."""
        out = cls()
        for row in rows:
            out.append_row(row)
        return out

    def append_row(self, row: Sequence[Any]) -> None:
        """Add one record given as a :class:`~agentdex.index.segments.Prepared` or a wire
        tuple (the same fields; ``lower`` None when it is ``postings_text``'s UTF-8)."""
        (meta, lower, text, thash, postings, rk, flags, level, context, cols, chars, key,
         raw) = row  # fmt: skip
        at = len(self.texts)
        packed_rk, role_x, kind_x, packed_time, loc = cols
        if packed_rk != rk:
            raise ValueError(f"a record's rk {rk!r} is not its cols' {packed_rk!r}")
        role, kind, timestamp, offset = meta[3], meta[4], meta[5], meta[13]
        if tuple(meta) != meta_of(context, role, kind, timestamp, loc, offset):
            self.metas[at] = tuple(meta)
        self.contexts.append(context)
        self.roles.append(role)
        self.kinds.append(kind)
        self.times.append(timestamp)
        self.offsets.append(offset)
        self.texts.append(text)
        self.thashes.append(thash)
        self.postings.append(postings)
        self.rks.append(rk)
        self.flags.append(flags)
        self.levels.append(level)
        self.role_xs.append(role_x)
        self.kind_xs.append(kind_x)
        self.packed_times.append(packed_time)
        self.locs.append(loc)
        self.keys.append(key)
        if lower is not None:
            self.lowers[at] = lower
        if chars:
            self.chars[at] = chars
        if raw is not None:
            self.raws[at] = raw

    def rows(self) -> list[tuple[object, ...]]:
        """Each record's tuple (:meth:`append_row`'s input: ``lower`` None where it was)."""
        return list(self._rows())

    def _rows(self) -> Iterator[tuple[object, ...]]:
        lowers, chars, raws, metas = self.lowers, self.chars, self.raws, self.metas
        for at, (context, role, kind, timestamp, offset, text, thash, postings, rk, flags,
                 level, role_x, kind_x, packed_time, loc, key) in enumerate(
            zip(*(getattr(self, name) for name in LISTS), strict=True)
        ):  # fmt: skip
            meta = metas.get(at)
            if meta is None:
                meta = meta_of(context, role, kind, timestamp, loc, offset)
            yield (
                meta,
                lowers.get(at),
                text,
                thash,
                postings,
                rk,
                flags,
                level,
                context,
                (rk, role_x, kind_x, packed_time, loc),
                chars.get(at, ""),
                key,
                raws.get(at),
            )

    def prepared(self) -> list[Prepared]:
        """Each record as a :class:`Prepared` (``lower`` filled in where the wire left it
        out): for the paths that take records one at a time (an archive that is not in a
        first build, forgotten conversations)."""
        new = tuple.__new__
        return [
            new(Prepared, (row[0], lower, *row[2:]))
            for row, lower in zip(self._rows(), self.lower_bytes(), strict=True)
        ]

    def lower_bytes(self) -> list[bytes]:
        """Each record's lower-cased UTF-8 (what the text blocks hold)."""
        out = [text.encode() for text in self.postings] if len(self.lowers) < len(self) else []
        if out:
            for at, lower in self.lowers.items():
                out[at] = lower
            return out
        return [self.lowers[at] for at in range(len(self))]


def meta_of(
    context: Sequence[object],
    role: object,
    kind: object,
    timestamp: object,
    loc: Any,
    offset: object,
) -> tuple[object, ...]:
    """A record's meta (:attr:`Prepared.meta`) from its context and its own fields."""
    agent, store, session, model, cwd, project, branch, worktree, host = context
    return (agent, store, session, role, kind, timestamp, model, cwd, project, branch, worktree,
            host, unpack_locator(loc), offset)  # fmt: skip
