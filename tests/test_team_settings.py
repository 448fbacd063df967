"""Where the team settings come from (docs/team.md "Configuration"), and masked URLs.

``--url`` (the call's argument) over ``AGENTDEX_TEAM_URL`` over ``[team] url``; the
machine from ``--machine``, ``AGENTDEX_MACHINE``, ``[team] machine``, then the host
name; ``[team] exclude`` as paths. No server is needed: nothing here connects.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentdex.api import team as api
from agentdex.errors import ConfigError, UsageError
from agentdex.team.connect import mask_url

CONFIG_URL = "postgresql://cfg_user:cfg-secret@db.example.com/agentdex?sslmode=verify-full"
ENV_URL = "postgresql://env_user:env-secret@127.0.0.1:5432/agentdex"
ARG_URL = "postgresql://arg_user:arg-secret@127.0.0.1:5433/agentdex"


def _config(text: str) -> None:
    Path(os.environ["AGENTDEX_CONFIG"]).write_text(text, encoding="utf-8")


def test_each_setting_from_the_first_place_that_has_it(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTDEX_TEAM_URL", raising=False)
    monkeypatch.delenv("AGENTDEX_MACHINE", raising=False)
    _config(
        f'[team]\nurl = "{CONFIG_URL}"\nmachine = "cfg-box"\n'
        f'exclude = ["~/src/client-x", "{home}/private"]\n'
    )
    found = api.settings()
    assert (found.url, found.machine) == (CONFIG_URL, "cfg-box")
    assert found.exclude == (home / "src" / "client-x", home / "private")
    assert found.masked == ("postgresql://cfg_user:***@db.example.com/agentdex?sslmode=verify-full")

    monkeypatch.setenv("AGENTDEX_TEAM_URL", ENV_URL)
    monkeypatch.setenv("AGENTDEX_MACHINE", "env-box")
    found = api.settings()
    assert (found.url, found.machine) == (ENV_URL, "env-box")

    found = api.settings(ARG_URL, "arg-box")
    assert (found.url, found.machine) == (ARG_URL, "arg-box")
    assert "arg-secret" not in found.masked and ":***@" in found.masked


def test_the_machine_defaults_to_the_host_name(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTDEX_MACHINE", raising=False)
    monkeypatch.setattr("socket.gethostname", lambda: "the-host")
    assert api.settings(ARG_URL).machine == "the-host"


@pytest.mark.parametrize(
    "machine", ["x" * 101, "tab\there", "   "], ids=["too-long", "control", "blank"]
)
def test_a_bad_machine_name_is_a_usage_error(machine: str) -> None:
    with pytest.raises(UsageError, match="invalid machine name"):
        api.settings(ARG_URL, machine)


def test_no_url_or_another_scheme_is_a_usage_error_without_the_password(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTDEX_TEAM_URL", raising=False)
    with pytest.raises(UsageError, match="AGENTDEX_TEAM_URL"):
        api.settings()
    with pytest.raises(UsageError) as refused:
        api.settings("mysql://someone:hunter2@db/x")
    assert "hunter2" not in str(refused.value) and "someone:***@db" in str(refused.value)


def test_a_config_url_that_is_not_a_string_is_a_config_error(home: Path) -> None:
    _config("[team]\nurl = 5\n")
    with pytest.raises(ConfigError, match=r"team\.url"):
        api.settings()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:p%40ss@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://:only-pw@h/db", "postgresql://:***@h/db"),
        ("postgresql://u@h/db?password=qs-secret&sslmode=require", None),
        ("postgres://u:pw@h/db", "postgres://u:***@h/db"),
        ("postgresql://h/db", "postgresql://h/db"),
    ],
)
def test_urls_are_shown_masked(url: str, shown: str | None) -> None:
    masked = mask_url(url)
    if shown is not None:
        assert masked == shown
    for secret in ("p%40ss", "only-pw", "qs-secret", ":pw@"):
        assert secret not in masked
    assert "sslmode=require" in masked or "sslmode" not in url
