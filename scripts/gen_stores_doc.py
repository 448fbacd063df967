"""Generate ``docs/stores.md`` from the catalogue, so the table cannot drift from the code.

Usage: ``python scripts/gen_stores_doc.py`` rewrites the doc;
``python scripts/gen_stores_doc.py --check`` exits 1 when it is stale
(``tests/test_stores_doc.py`` runs the same comparison).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from agentdex.catalogue import CATALOGUE, StoreRow  # noqa: E402

DOC = REPO / "docs" / "stores.md"

HEADER = """# Stores

Every store agentdex knows, generated from the catalogue
(`src/agentdex/catalogue/`) by `python scripts/gen_stores_doc.py` — do not
edit by hand; `tests/test_stores_doc.py` fails when this file is stale.

Coverage: **default** = discovered, parsed and searched; **opt-in** =
parsed only when enabled in the config (`[stores] enabled`); **listed** =
shown by `sources` when present, never parsed (e.g. encrypted);
**private** = documented only, never listed or opened (secrets).

Locations are relative to the named discovery root
(`src/agentdex/discovery/roots.py`); extra roots can be added per root name
in the config file (`[stores.paths] <root> = [...]`).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_TIMES = {
    "file-mtime": "none stored; every record gets the file's modification time "
    "(listings mark it `~`)",
    "partly file-mtime": "records without one get the file's modification time",
}


def _locations(row: StoreRow) -> str:
    places = "<br>".join(f"{os_}: `{path}`" for os_, path in row.locations.items())
    globs = ", ".join(f"`{p}`" for p in row.patterns)
    return f"{places}<br>root `{row.root}`: {globs}" if places else f"root `{row.root}`: {globs}"


def render() -> str:
    lines = [
        HEADER,
        "| agent | store | holds | format | default locations | env overrides "
        "| coverage | parser |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in CATALOGUE:
        env = ", ".join(f"`{v}`" for v in row.env) or "—"
        parser = f"`{row.parser}`" if row.parser else "—"
        lines.append(
            f"| {row.agent} | `{row.store}` | {_cell(row.holds)} | {_cell(row.format)} "
            f"| {_cell(_locations(row))} | {env} | {row.coverage.value} | {parser} |"
        )
    lines.append("")
    lines.append("## Notes per store")
    lines.append("")
    for row in CATALOGUE:
        times = "" if row.times == "recorded" else f" Times: {_TIMES[row.times]}."
        if row.description or times:
            lines.append(f"- `{row.store}`: {_cell(row.description)}{times}")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print("docs/stores.md is stale: run python scripts/gen_stores_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
