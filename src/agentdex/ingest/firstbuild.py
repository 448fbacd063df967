"""A first build that answers early: newest files first, an early commit, a deadline.

Readers see a first build as it commits (it is the only generation there
is). So that the first search on a new machine can answer within seconds
from the newest history, a first build with at least ``FIRST_ANSWER_BYTES``
to read:

* reads the changed files newest first (by modification time);
* commits after ``FIRST_COMMIT_SECONDS`` instead of waiting for the usual
  64 MB or 10 s, and rewrites its term list at a commit at most every
  ``TERMS_EVERY_SECONDS`` when a reader asked for it since the last one
  (readers verify every record the list does not cover: without it a search
  during the build could not finish in time; a reader that finds the list
  behind asks, :func:`agentdex.index.postings.want_terms`, and a build nobody
  reads writes it only at its first commit and its end);
* stops at the caller's deadline (a search's; ``agentdex index`` has none)
  at the next file boundary, committed, leaving the rest for the next
  refresh, which goes on where it stopped (every indexed file is unchanged).

Every first build (of any size) records its coverage in each commit
(:mod:`agentdex.index.coverage`), so a reader can say how much it searched
while the build is incomplete; the commit that completes it clears the mark.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from agentdex.index.coverage import BuildCoverage
from agentdex.tuning import env_float, env_int

if TYPE_CHECKING:
    from agentdex.discovery import Source
    from agentdex.index.writer import IndexWriter

#: only a first build reading at least this much is ordered, committed early and stopped
FIRST_ANSWER_BYTES = env_int("AGENTDEX_FIRST_ANSWER_BYTES", 64 * 1024 * 1024)
#: the first commit of such a build comes after this many seconds of work
FIRST_COMMIT_SECONDS = env_float("AGENTDEX_FIRST_COMMIT_SECONDS", 1.0)
#: while a first build runs, its term list is rewritten at a commit at most this often (when
#: a reader asked), so readers need not verify every record the list does not cover yet
TERMS_EVERY_SECONDS = 20.0


class FirstBuild:
    """The coverage, order and deadline of one refresh of a generation still being built."""

    def __init__(
        self,
        index: IndexWriter,
        sources: list[Source],
        changed: list[Source],
        deadline: float | None,
    ) -> None:
        prior = index.coverage()
        remaining = sum(s.size for s in changed)
        total = sum(s.size for s in sources)
        self.coverage: BuildCoverage | None = BuildCoverage(
            bytes=total - remaining,
            bytes_total=total,
            files=len(sources) - len(changed),
            files_total=len(sources),
            back_to=prior.back_to if prior is not None else None,
        )
        self.big = remaining >= FIRST_ANSWER_BYTES
        self.deadline = deadline if self.big else None
        self.started = time.monotonic()
        self.committed = False
        self.stopped = False
        index.before_commit.append(self._record)
        index.terms_every = TERMS_EVERY_SECONDS

    def order(self, changed: list[Source]) -> list[Source]:
        """Newest first for a big first build; otherwise discovery's order."""
        return sorted(changed, key=lambda s: s.mtime, reverse=True) if self.big else changed

    def done(self, source: Source) -> None:
        """One more changed file is indexed (or could not be: it is looked at again later)."""
        if self.coverage is None:
            return
        self.coverage.bytes += source.size
        self.coverage.files += 1
        if self.coverage.back_to is None or source.mtime < self.coverage.back_to:
            self.coverage.back_to = source.mtime

    def wants_early_commit(self) -> bool:
        return (
            self.big
            and not self.committed
            and time.monotonic() - self.started >= FIRST_COMMIT_SECONDS
        )

    def out_of_time(self) -> bool:
        """Past the deadline: stop at this file boundary (the caller commits)."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.stopped = True
        return self.stopped

    def complete(self, index: IndexWriter) -> None:
        """Every changed file is in: the next commit clears the coverage mark (and the term
        list is written once, at the end, as for any big build)."""
        self.coverage = None
        index.terms_every = None

    def _record(self, index: IndexWriter) -> None:
        index.set_coverage(self.coverage)
        self.committed = True
