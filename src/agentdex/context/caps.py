"""Limits that keep a snapshot bounded, and the budget that enforces them.

Overflow is always visible: a file over the per-resource cap is
``oversize`` (its capped prefix is still hashed), resources past the count
cap or the aggregate payload budget are ``excluded``, and the snapshot
error says how many. Nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True, slots=True)
class Limits:
    max_resource_bytes: int = 64 * KiB
    max_total_bytes: int = 2 * MiB
    max_resources: int = 500
    #: MCP configs ship no payload; they are parsed (never shipped) up to this size.
    max_mcp_config_bytes: int = 4 * MiB
    #: Directories listed per resolve, across every root.
    max_dirs: int = 10_000
    workspace_depth: int = 10
    user_depth: int = 2


DEFAULT_LIMITS = Limits()


@dataclass(slots=True)
class Budget:
    """Running totals for one resolve; collects the reasons for the snapshot error."""

    limits: Limits
    used_bytes: int = 0
    excluded_by_count: int = 0
    excluded_by_bytes: int = 0
    notes: list[str] = field(default_factory=list)

    def take(self, nbytes: int) -> bool:
        """Reserve ``nbytes`` of aggregate payload; False when it would overflow."""
        if self.used_bytes + nbytes > self.limits.max_total_bytes:
            self.excluded_by_bytes += 1
            return False
        self.used_bytes += nbytes
        return True

    def error(self) -> str | None:
        parts = list(self.notes)
        if self.excluded_by_count:
            parts.append(
                f"{self.excluded_by_count} resources excluded: over the "
                f"{self.limits.max_resources}-resource cap"
            )
        if self.excluded_by_bytes:
            parts.append(
                f"{self.excluded_by_bytes} resources excluded: aggregate payload cap of "
                f"{self.limits.max_total_bytes} bytes reached"
            )
        return "; ".join(parts) or None
