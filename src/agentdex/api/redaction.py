"""Mask what looks like a key or a token in exported text (``export --redact``).

The detector is :mod:`agentdex.secrets` (the patterns, documented in
``docs/resume-and-export.md``); this keeps a running count per kind over
the texts of one export.
"""

from __future__ import annotations

from collections import Counter

from agentdex.secrets import PATTERNS, SecretPattern, redact

__all__ = ["PATTERNS", "Redactor", "SecretPattern", "redact"]


class Redactor:
    """Masks secrets in texts and counts what it masked, per kind."""

    def __init__(self, patterns: tuple[SecretPattern, ...] = PATTERNS) -> None:
        self.patterns = patterns
        self.counts: Counter[str] = Counter()

    def __call__(self, text: str) -> str:
        masked, findings = redact(text, self.patterns)
        self.counts.update(finding.kind for finding in findings)
        return masked

    @property
    def total(self) -> int:
        return sum(self.counts.values())
