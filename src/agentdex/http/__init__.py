"""The HTTP surface: an ASGI app (FastAPI) over :mod:`agentdex.api`, loopback + token."""
