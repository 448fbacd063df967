"""Tables that fit a terminal by shrinking the columns a person reads least.

Rich shrinks every column alike, so at 80 columns a title (the one column a
person reads) ends up a few letters wide. Here each column says how far it
may shrink and in what order; the flexible column (a title) takes what is
left and shrinks last. Cells are cut with an ellipsis (paths keep their
end; ids are cut plainly, like git's short hashes, so what shows is still a
usable prefix).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

GAP = 2


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    #: shrink no further than this (before the flexible column gives way)
    floor: int = 0
    right: bool = False
    #: "end" (default: keep the start), "start" (paths: keep the end), "plain" (ids: no
    #: ellipsis), "never" (numbers: the column keeps its full width, or is dropped)
    cut: str = "end"
    #: kept (when the content is that wide) until the flexible column is down to its floor
    keep: int = 0
    #: takes the width that is left; shrinks after every other column
    flex: bool = False
    #: may disappear when nothing else helps
    droppable: bool = False
    style: str = ""


def fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None) -> list[int]:
    """Width of each column (0: dropped) so a row fits ``width`` (None: no limit)."""
    natural = [
        max([len(col.header), *(len(row[i]) for row in rows)]) for i, col in enumerate(columns)
    ]
    widths = list(natural)
    if width is None:
        return widths

    def overflow() -> int:
        shown = [w for w in widths if w]
        return sum(shown) + GAP * (len(shown) - 1) - width

    order = [i for i, col in enumerate(columns) if not col.flex]
    flex = [i for i, col in enumerate(columns) if col.flex]

    def floor(i: int) -> int:
        if columns[i].cut == "never":
            return natural[i]
        return max(columns[i].floor, min(len(columns[i].header), natural[i]))

    def shrink(i: int, to: int) -> None:
        widths[i] = max(to, widths[i] - overflow())

    for i in order:  # first down to what a column keeps, then the flexible one to its floor
        if overflow() > 0:
            shrink(i, max(floor(i), min(columns[i].keep, natural[i])))
    kept = [i for i in order if columns[i].keep]
    for i in flex + kept + order:  # then down to the floors, the flexible one first
        if overflow() <= 0:
            return widths
        shrink(i, floor(i))
    for i in order:  # then drop what may go
        if overflow() <= 0:
            return widths
        if columns[i].droppable:
            widths[i] = 0
    for i in flex:  # last: the flexible column below its floor, down to 1
        excess = overflow()
        if excess > 0:
            widths[i] = max(1, widths[i] - excess)
    return widths


def cut(text: str, width: int, how: str) -> str:
    if len(text) <= width:
        return text
    if how == "plain":
        return text[:width]
    if width <= 1:
        return "…"[:width]
    if how == "start":
        return "…" + text[len(text) - width + 1 :]
    return text[: width - 1] + "…"


def layout(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None
) -> list[list[tuple[str, str]]]:
    """Each line (the header first) as its (text, style) pieces, laid out by :func:`fit`;
    cells are made :func:`~agentdex.cli._output.terminal_safe` first, so widths count what
    is shown. Header pieces have no style of their own (:func:`render` dims the line)."""
    from agentdex.cli._output import terminal_safe

    rows = [[terminal_safe(value) for value in row] for row in rows]
    widths = fit(columns, rows, width)
    header: list[tuple[str, str]] = []
    body: list[list[tuple[str, str]]] = [[] for _ in rows]
    shown = [i for i, w in enumerate(widths) if w]
    for position, i in enumerate(shown):
        col, w = columns[i], widths[i]
        last = position == len(shown) - 1
        for line, value, style in [(header, col.header, "")] + [
            (body[r], row[i], col.style) for r, row in enumerate(rows)
        ]:
            text = cut(value, w, col.cut)
            padded = text.rjust(w) if col.right else (text if last else text.ljust(w))
            line.append((padded, style))
            if not last:
                line.append((" " * GAP, ""))
    return [header, *body]


def render(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None
) -> list[Any]:
    """Rich ``Text`` lines (a dim header first) of :func:`layout`."""
    from rich.text import Text

    lines = []
    for n, pieces in enumerate(layout(columns, rows, width)):
        line = Text(style="" if n else "dim")
        for text, style in pieces:
            line.append(text, style=style)
        lines.append(line)
    return lines


#: the SGR parameters of the styles :func:`sgr_line` knows, in the order Rich writes them
SGR = {"bold": "1", "dim": "2"}


def _sgr(styles: Sequence[str]) -> str:
    codes = sorted({SGR[part] for style in styles for part in style.split()})
    return f"\x1b[{';'.join(codes)}m" if codes else ""


def sgr_line(pieces: Sequence[tuple[str, str]], style: str = "", *, color: bool) -> str:
    """One line of (text, style) pieces (styles of :data:`SGR` only) as Rich writes the
    same ``Text`` (``style`` over the whole line) to a terminal, without importing Rich
    (~30 ms of a fresh process): each styled piece, and each stretch of unstyled ones, in
    its own escape codes, reset after it; no codes at all without ``color``. The caller makes the
    text :func:`~agentdex.cli._output.terminal_safe` (:func:`layout` does)."""
    if not color:
        return "".join(text for text, _ in pieces)
    out: list[str] = []
    plain: list[str] = []  # unstyled pieces: one run (Rich adds no span for them)
    for text, piece_style in pieces:
        if not text:
            continue  # Rich adds no span for empty text either
        if not piece_style:
            plain.append(text)
            continue
        out.append(_run("".join(plain), (style,)))
        plain = []
        out.append(_run(text, (style, piece_style)))  # a span of its own, as in Rich
    out.append(_run("".join(plain), (style,)))
    return "".join(out)


def _run(text: str, styles: Sequence[str]) -> str:
    code = _sgr(styles)
    return f"{code}{text}\x1b[0m" if code and text else text
