#!/usr/bin/env python3
"""Make a clean virtual environment that starts like a user's ``pip install agentdex``.

    python bench/make_venv.py DIR [--tree TREE] [--install]

Prints the venv's python path (the last line of stdout); pass it to the
fresh-process benches as ``--python PATH`` (bench_search.py, bench_semantic.py,
fresh_steps.py, bench_startup.py).

Why: a fresh process of this machine's shared interpreter pays ~45 ms at start
that a user's does not. Its site-packages holds ``.pth`` files run by ``site``
at every start: the sandbox's ``_sandboxing_egress_ca.pth`` (imports
``certifi`` and through it ``importlib.resources``, ``pathlib``, ``re``,
``tempfile``, ``zipfile``...), the editable install's
``__editable__.agentdex-0.1.0.pth`` (puts /work/main/src on the path) and
``distutils-precedence.pth``, and ~340 entries to list. A venv made here from
the same interpreter has its own site-packages (``include-system-site-packages
= false``) holding agentdex's dependencies only.

The dependencies are those of TREE's pyproject.toml (default: this checkout),
installed with the base interpreter's ``pip freeze`` as constraints, so every
package a search imports has the version the shared interpreter has (the
report lists any that differ: none should). agentdex itself is not installed:
the benches put ``SRC`` first on ``PYTHONPATH``, so one venv serves an A/B of
two trees. ``--install`` installs TREE non-editable too (``pip install TREE``,
what a user gets; then ``python -m agentdex`` without PYTHONPATH runs it).

Idempotent: a DIR made from the same constraints and dependencies is left as
it is (``DIR/agentdex-venv.json`` records what it was made from).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

TREE = Path(__file__).resolve().parent.parent
STAMP = "agentdex-venv.json"


def dependencies(tree: Path) -> list[str]:
    with open(tree / "pyproject.toml", "rb") as handle:
        return list(tomllib.load(handle)["project"]["dependencies"])


def frozen(python: str) -> list[str]:
    """``name==version`` of every non-editable distribution ``python`` holds."""
    out = subprocess.run(
        [python, "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(line for line in out.splitlines() if "==" in line and not line.startswith("#"))


def versions(lines: list[str]) -> dict[str, str]:
    pairs = (line.split("==", 1) for line in lines)
    return {name.lower().replace("_", "-"): version for name, version in pairs}


def make(target: Path, tree: Path, base: str, install: bool) -> Path:
    python = target / "bin" / "python"
    pins = frozen(base)
    deps = dependencies(tree)
    wanted = {"base": base, "pins": pins, "deps": deps, "install": install}
    if install:
        wanted["tree"] = str(tree)
    digest = hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()
    stamp = target / STAMP
    if python.exists() and stamp.exists() and json.loads(stamp.read_text())["digest"] == digest:
        return python
    subprocess.run([base, "-m", "venv", "--clear", str(target)], check=True)
    constraints = target / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n")
    pip = [str(python), "-m", "pip", "install", "--quiet", "-c", str(constraints)]
    subprocess.run([*pip, *deps], check=True)
    if install:
        subprocess.run([*pip, "--no-deps", str(tree)], check=True)
    have = versions(frozen(str(python)))
    base_versions = versions(pins)
    differ = {
        name: {"venv": version, "base": base_versions.get(name)}
        for name, version in have.items()
        if base_versions.get(name) != version and name not in ("pip", "setuptools", "agentdex")
    }
    stamp.write_text(
        json.dumps({"digest": digest, **wanted, "differ": differ}, indent=1, sort_keys=True) + "\n"
    )
    return python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--tree", type=Path, default=TREE, help="whose pyproject.toml")
    parser.add_argument(
        "--base", default=sys.executable, help="the interpreter to copy (default: this one)"
    )
    parser.add_argument("--install", action="store_true", help="pip install TREE too")
    args = parser.parse_args()
    python = make(args.dir.absolute(), args.tree.resolve(), args.base, args.install)
    differ = json.loads((args.dir.absolute() / STAMP).read_text()).get("differ")
    if differ:
        print(f"versions that differ from the base interpreter: {differ}", file=sys.stderr)
    print(python)


if __name__ == "__main__":
    main()
