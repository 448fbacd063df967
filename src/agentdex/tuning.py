"""Tuning numbers read from the environment (commit sizes, windows, queue limits).

These knobs are for benchmarks, tests and unusual machines, read once at import.
A value that is not a number, or is below the knob's minimum, falls back to the
built-in default instead of stopping every command that imports the module with
a traceback.
"""

from __future__ import annotations

import os


def env_int(variable: str, default: int, *, minimum: int = 0) -> int:
    """A whole number of at least ``minimum`` from the environment ``variable``, else
    ``default``."""
    try:
        value = int(os.environ.get(variable, "").strip())
    except ValueError:
        return default
    return value if value >= minimum else default


def env_float(variable: str, default: float, *, minimum: float = 0.0) -> float:
    """A number of at least ``minimum`` from the environment ``variable``, else
    ``default``."""
    try:
        value = float(os.environ.get(variable, "").strip())
    except ValueError:
        return default
    return value if value >= minimum else default
