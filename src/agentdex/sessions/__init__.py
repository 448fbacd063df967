"""agentdex sessions: one append-only JSONL event log per session (engine layer).

The current work directory is *derived* from the log (latest
``workdir-changed``, else the ``start`` event); nothing global holds one.
"""
