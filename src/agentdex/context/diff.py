"""What changed between two recorded versions of a workspace's context.

Resources are matched by id (``<kind>:<source>``): present only in the
newer version is ``added``, only in the older ``removed``, in both with a
different entry ``changed``. A changed resource lists the fields that
differ and, when both versions' text was stored (``ok`` instruction files
and skills), a unified diff of the text. MCP configs never have text: their
changes show as ``content_hash``/``servers`` fields.
"""

from __future__ import annotations

import difflib
from typing import Any

from agentdex.context.history import HistoryStore, Version

#: Fields compared for ``changed`` (``body`` stands for the text).
COMPARED = (
    "status",
    "error",
    "content_hash",
    "size",
    "name",
    "description",
    "servers",
    "target",
    "aliases",
    "scope",
    "root",
    "source_path",
    "payload_bytes",
)


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "body"}


def _text_diff(
    store: HistoryStore, old: dict[str, Any], new: dict[str, Any], labels: tuple[str, str]
) -> tuple[str | None, str | None]:
    """(unified diff, None) when both texts are stored, else (None, why not)."""
    if old.get("body") is not None and old.get("body") == new.get("body"):
        return None, None  # same text; only metadata moved
    if new["kind"] == "mcp_config":
        return None, "MCP configs are recorded as metadata only (server names, hash, size)"
    before, after = store.body(old.get("body")), store.body(new.get("body"))
    if before is None or after is None:
        side = "older" if before is None else "newer"
        status = (old if before is None else new)["status"]
        return None, f"no text stored for the {side} version (status {status})"
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{old['source']} @ {labels[0]}",
        tofile=f"{new['source']} @ {labels[1]}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text, None


def diff_versions(
    store: HistoryStore, older: Version, newer: Version, labels: tuple[str, str]
) -> dict[str, Any]:
    """``{"identical", "added", "removed", "changed", "error"}`` from ``older`` to ``newer``."""
    before = {e["id"]: e for e in store.resources(older)}
    after = {e["id"]: e for e in store.resources(newer)}
    added = [_public(after[i]) for i in sorted(after.keys() - before.keys())]
    removed = [_public(before[i]) for i in sorted(before.keys() - after.keys())]
    changed: list[dict[str, Any]] = []
    for rid in sorted(before.keys() & after.keys()):
        old, new = before[rid], after[rid]
        if old == new:
            continue
        fields = {
            name: {"from": old.get(name), "to": new.get(name)}
            for name in COMPARED
            if old.get(name) != new.get(name)
        }
        text, note = _text_diff(store, old, new, labels)
        changed.append(
            {
                "id": rid,
                "kind": new["kind"],
                "source": new["source"],
                "fields": fields,
                "diff": text,
                "diff_note": note,
            }
        )
    error = None if older.error == newer.error else {"from": older.error, "to": newer.error}
    return {
        "identical": older.content_key == newer.content_key,
        "added": added,
        "removed": removed,
        "changed": changed,
        "error": error,
    }
