"""Replay VS Code's chat-session mutation log (``chatSessions/*.jsonl``) to its state.

VS Code >= 1.109 writes each session as an append-only log of entries
``{"kind": K, "k": [path...], "v": value, "i": index}`` (VS Code's
``ObjectMutationLog``), replayed in order:

* ``kind 0`` Initial: the whole state is ``v`` (replaces what came before;
  VS Code rewrites the file as one such entry when the log grows);
* ``kind 1`` Set: the value at key path ``k`` becomes ``v`` (an empty path
  is a no-op, as in VS Code);
* ``kind 2`` Push: at the array at ``k``, truncate to length ``i`` first when
  ``i`` is given, then append the items of ``v`` (``v`` may be absent: a pure
  truncate); a missing array is created;
* ``kind 3`` Delete: remove the key at ``k``.

Where VS Code would throw (an entry before the initial one, a path through
a missing or non-container value, an unknown kind), this replay skips that
one entry with a diagnostic and goes on. The replayed state lives in
memory: that is inherent to the format (a later line can rewrite any part
of the session), so the parser is not resumable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentdex.readers import Diagnostics, JsonlReader


class _BadPath(Exception):
    """A key path that does not lead anywhere in the current state."""


def _step(container: Any, key: object) -> Any:
    if isinstance(container, dict) and isinstance(key, str) and key in container:
        return container[key]
    in_list = isinstance(container, list) and isinstance(key, int) and not isinstance(key, bool)
    if in_list and 0 <= key < len(container):  # type: ignore[operator]
        return container[key]
    raise _BadPath(f"no {key!r} in {type(container).__name__}")


def _parent(state: Any, path: list[Any]) -> Any:
    current = state
    for key in path[:-1]:
        current = _step(current, key)
    return current


def _assign(container: Any, key: object, value: Any) -> None:
    if isinstance(container, dict) and isinstance(key, str):
        container[key] = value
        return
    if isinstance(container, list) and isinstance(key, int) and not isinstance(key, bool):
        if 0 <= key < len(container):
            container[key] = value
            return
        if key == len(container):
            container.append(value)
            return
    raise _BadPath(f"cannot set {key!r} on {type(container).__name__}")


def apply_entry(state: Any, entry: dict[str, Any]) -> Any:
    """Apply one log entry to ``state`` and return the new state (raises ``_BadPath``)."""
    kind = entry.get("kind")
    if kind == 0:
        return entry.get("v")
    if state is None:
        raise _BadPath("entry before the initial state")
    path = entry.get("k")
    if not isinstance(path, list):
        raise _BadPath("key path is not a list")
    if kind == 1:
        if path:
            _assign(_parent(state, path), path[-1], entry.get("v"))
        return state
    if kind == 2:
        if not path:
            raise _BadPath("push needs a key path")
        parent = _parent(state, path)
        key = path[-1]
        current = parent.get(key) if isinstance(parent, dict) and isinstance(key, str) else None
        if current is None and isinstance(parent, list):
            current = _step(parent, key)
        array = current if isinstance(current, list) else None
        if array is None and current is not None:
            raise _BadPath(f"{key!r} is not an array")
        array = array if array is not None else []
        index = entry.get("i")
        if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
            del array[index:]
        items = entry.get("v")
        if isinstance(items, list):
            array.extend(items)
        _assign(parent, key, array)
        return state
    if kind == 3:
        if path:
            parent = _parent(state, path)
            key = path[-1]
            if isinstance(parent, dict) and isinstance(key, str):
                parent.pop(key, None)
            elif isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
                parent[key] = None  # JS `arr[i] = undefined` keeps the slot
            else:
                raise _BadPath(f"cannot delete {key!r}")
        return state
    raise _BadPath(f"unknown kind {kind!r}")


def replay(path: Path, diagnostics: Diagnostics) -> Any:
    """The session state a mutation log describes (``None`` when it has no initial state)."""
    state: Any = None
    for line in JsonlReader(path, diagnostics):
        entry = line.value
        if not isinstance(entry, dict):
            diagnostics.add(path, f"line:{line.lineno}", "log entry is not an object; skipped")
            continue
        try:
            state = apply_entry(state, entry)
        except _BadPath as exc:
            diagnostics.add(path, f"line:{line.lineno}", f"log entry skipped: {exc}")
    return state
