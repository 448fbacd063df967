"""Team history on PostgreSQL: push this machine's index, search every machine's.

* :mod:`~agentdex.team.connect`: settings (URL, machine name, excluded projects),
  masked URLs, connecting with one-line errors;
* :mod:`~agentdex.team.schema`: the database schema as named, versioned migrations,
  the writer and reader roles, row-level security;
* :mod:`~agentdex.team.local`: what this machine would send (read from the local
  index and archive through their reader APIs, excluded projects left out);
* :mod:`~agentdex.team.push`: incremental, idempotent, batched, crash-safe push;
* :mod:`~agentdex.team.plan` and :mod:`~agentdex.team.search`: the local query
  language over the team database (pg_trgm candidates, every hit verified by the
  local matchers).

``psycopg`` is imported only here, and only when a team command runs.
"""
