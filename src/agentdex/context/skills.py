"""Skill front matter: ``name`` must equal the folder name and be kebab-case.

Only the safe loaders are used (no tags, no object construction); the
text is already capped at 64 KiB by the reader. PyYAML's C loader recurses
in C once per flow level (``[[[[...``) and crashes the process far below
64 KiB, so front matter that *could* nest deeper than ``MAX_NESTING``
levels (more opening brackets than that) goes to the pure-Python loader,
whose recursion ends in a catchable ``RecursionError``; anything deeper
than the limit is invalid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentdex.context.names import KEBAB_CASE
from agentdex.nesting import MAX_NESTING, may_be_deeper, value_depth

_KEBAB = re.compile(KEBAB_CASE)
_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*$", re.S | re.M)


@dataclass(frozen=True, slots=True)
class SkillMeta:
    name: str | None
    description: str | None
    error: str | None  # set when the skill is invalid


def front_matter(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The YAML front matter of ``text`` as a mapping, or (None, reason)."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None, "no YAML front matter (expected a leading '---' block)"
    import yaml

    block = match.group(1)
    too_deep = f"front matter is nested more than {MAX_NESTING} levels deep"
    loader = yaml.SafeLoader if may_be_deeper(block) else getattr(yaml, "CSafeLoader", None)
    try:
        data = yaml.load(block, Loader=loader or yaml.SafeLoader)
    except RecursionError:
        return None, too_deep
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        return None, f"front matter is not valid YAML: {problem}{where}"
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        return None, f"front matter is not a mapping (got {kind})"
    if value_depth(data, stop_above=MAX_NESTING) > MAX_NESTING:
        return None, too_deep
    return data, None


def skill_meta(folder: str, text: str) -> SkillMeta:
    """Validate a SKILL.md's front matter against its folder name."""
    data, error = front_matter(text)
    if data is None:
        return SkillMeta(None, None, error)
    name = data.get("name")
    description = data.get("description")
    desc = description.strip() if isinstance(description, str) else None
    if not isinstance(name, str) or not name:
        return SkillMeta(None, desc, "front matter has no string 'name'")
    if description is not None and not isinstance(description, str):
        return SkillMeta(name, None, "front matter 'description' is not a string")
    if name != folder:
        return SkillMeta(name, desc, f"name {name!r} does not match its folder {folder!r}")
    if not _KEBAB.match(name):
        return SkillMeta(name, desc, f"name {name!r} is not kebab-case ({KEBAB_CASE})")
    return SkillMeta(name, desc, None)
