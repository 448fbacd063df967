"""uri_to_path / wsl_distro: the workspace URIs agents record, mapped to local paths."""

from __future__ import annotations

import pytest

from agentdex.uris import uri_to_path, wsl_distro


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///home/me/my%20app", "/home/me/my app"),
        ("file:///home/me/%E2%9C%93-done", "/home/me/✓-done"),
        ("file:///home/me/100%25", "/home/me/100%"),
        ("file://localhost/etc/app", "/etc/app"),
        ("/already/a/path", "/already/a/path"),
        # Windows drive letters (encoded colon, either case) map to the WSL mount.
        ("file:///c%3A/Users/alex/site", "/mnt/c/Users/alex/site"),
        ("file:///C:/Users/alex/site", "/mnt/c/Users/alex/site"),
        ("file:///D%3A/", "/mnt/d"),
        # A Windows editor opening a WSL folder through its UNC share.
        ("file://wsl.localhost/Ubuntu/home/alex/proj", "/home/alex/proj"),
        ("file://wsl%24/Ubuntu-22.04/home/alex/proj", "/home/alex/proj"),
        # Remote authorities reduce to their path.
        ("vscode-remote://wsl%2Bubuntu/home/alex/proj", "/home/alex/proj"),
        ("vscode-remote://wsl+Ubuntu/home/alex/my%20proj", "/home/alex/my proj"),
        ("vscode-remote://ssh-remote%2Bbuild-box/srv/app", "/srv/app"),
        ("vscode-remote://dev-container%2B7b22/workspaces/app", "/workspaces/app"),
    ],
)
def test_path_uris(uri: str, path: str) -> None:
    assert uri_to_path(uri) == path


@pytest.mark.parametrize(
    "uri",
    [
        "untitled:Untitled-1",
        "vscode-vfs://github/microsoft/vscode",
        "vscode-remote://codespaces%2Bcurly-space/workspaces/x",
        "file://fileserver/share/project",  # a network share is not a local path
        "file://wsl.localhost/Ubuntu",  # a distro with no path
        "file:///home/me/evil%00name",  # NUL would break every os call downstream
        "http://[::1",  # urlsplit raises on this
        "https://example.com/x",
        "file://",
        "",
        ":::",
        "\x00",
        None,
        42,
        ["file:///x"],
        {"path": "/x"},
    ],
)
def test_non_path_uris_give_none(uri: object) -> None:
    assert uri_to_path(uri) is None


def test_wsl_distro() -> None:
    assert wsl_distro("vscode-remote://wsl%2Bubuntu/home/x") == "ubuntu"
    assert wsl_distro("vscode-remote://wsl+Debian/home/x") == "Debian"
    assert wsl_distro("vscode-remote://ssh-remote%2Bbox/x") is None
    assert wsl_distro("http://[::1") is None
    assert wsl_distro(None) is None
