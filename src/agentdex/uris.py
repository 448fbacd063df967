"""Map the workspace URIs agents record to local paths.

``file://`` URIs are percent-decoded; ``vscode-remote://wsl+<distro>/path``
and ``vscode-remote://ssh-remote+<host>/path`` reduce to their path, as do
the UNC forms a Windows editor uses for a WSL folder
(``file://wsl.localhost/<distro>/path``, ``file://wsl$/<distro>/path``). A
``file://`` URI naming any other host (a network share), a path containing
NUL, and any other URI (``untitled:``, ``vscode-vfs:``...) map to ``None``.
Nothing here raises on bad input.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

_WINDOWS_DRIVE = re.compile(r"^/?([A-Za-z]):[/\\]?(.*)$")
#: Hosts of the UNC paths Windows uses for a WSL distro's files.
_WSL_UNC_HOSTS = ("wsl.localhost", "wsl$")


def uri_to_path(uri: object) -> str | None:
    """Local path for a workspace URI, or ``None``.

    >>> uri_to_path("file:///home/me/my%20app")
    '/home/me/my app'
    >>> uri_to_path("vscode-remote://wsl%2Bubuntu/home/me/proj")
    '/home/me/proj'
    >>> uri_to_path("untitled:Untitled-1") is None
    True
    """
    if not isinstance(uri, str) or not uri:
        return None
    if "\x00" in uri or "%00" in uri:
        return None
    if uri.startswith("/"):
        return uri
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme == "file":
        path = unquote(parts.path)
        host = unquote(parts.netloc).lower()
        if host in _WSL_UNC_HOSTS:
            distro_and_path = path.lstrip("/").split("/", 1)
            return "/" + distro_and_path[1] if len(distro_and_path) == 2 else None
        if host not in ("", "localhost"):
            return None
        drive = _WINDOWS_DRIVE.match(path)
        if drive:
            rest = drive.group(2).replace("\\", "/")
            return f"/mnt/{drive.group(1).lower()}/{rest}".rstrip("/") or "/"
        return path or None
    if scheme == "vscode-remote":
        authority = unquote(parts.netloc).lower()
        if authority.startswith(("wsl+", "ssh-remote+", "dev-container+", "attached-container+")):
            path = unquote(parts.path)
            return path or None
        return None
    return None


def wsl_distro(uri: object) -> str | None:
    """The distro name in a ``vscode-remote://wsl+<distro>`` URI, else ``None``."""
    if not isinstance(uri, str):
        return None
    try:
        netloc = unquote(urlsplit(uri).netloc)
    except ValueError:
        return None
    if netloc.lower().startswith("wsl+"):
        return netloc[4:] or None
    return None
