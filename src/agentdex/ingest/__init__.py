"""The write path: how history gets from the agents' stores into agentdex's stores.

Above the stores it drives (:mod:`agentdex.index`, :mod:`agentdex.archive`),
below the library API. :mod:`.refresh` (discover, plan and parse changed
files, feed both stores, commit), :mod:`.workers` (forked parse workers),
:mod:`.manifest` (the no-change fast path), :mod:`.archiving` (the
archive's part of a refresh, and the commit order of the two stores),
:mod:`.sync` (backfill, re-import, tombstones between the stores),
:mod:`.manage` (forget, prune), :mod:`.stats` (what a refresh did).

Each store is the only writer of its own tables; this layer decides what
goes into them and in which order.
"""
