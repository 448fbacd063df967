"""Git worktrees: parse, name, validate, add and remove (engine layer).

Nothing here knows about sessions or surfaces; :mod:`agentdex.api.worktrees`
composes these with :mod:`agentdex.sessions`.
"""
