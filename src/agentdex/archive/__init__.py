"""agentdex's own copy of the conversations it indexed (``docs/archive.md``).

Agents delete and rewrite their history; the archive keeps every record
agentdex has read, compressed and deduplicated, beside the index (so it
survives rebuilds), and feeds back into the index what the sources no
longer hold. :mod:`.keys` (record identity, archived paths), :mod:`.store`
(files on disk), :mod:`.writer` (adding records), :mod:`.sync` (index and
archive in step), :mod:`.indexing` (the refresh's calls), :mod:`.manage`
(status, export, prune, forget).
"""
