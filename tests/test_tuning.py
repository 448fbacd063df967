"""Tuning numbers from the environment: a bad value falls back to the default, never a
traceback at import (agentdex.tuning)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agentdex.tuning import env_float, env_int


@pytest.mark.parametrize(
    ("raw", "expected"), [("12", 12), (" 7 ", 7), ("0", 0), ("-3", 99), ("lots", 99), ("", 99)]
)
def test_env_int(monkeypatch: pytest.MonkeyPatch, raw: str, expected: int) -> None:
    monkeypatch.setenv("AGENTDEX_TEST_KNOB", raw)
    assert env_int("AGENTDEX_TEST_KNOB", 99) == expected


def test_env_int_minimum_and_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTDEX_TEST_KNOB", "0")
    assert env_int("AGENTDEX_TEST_KNOB", 4, minimum=1) == 4
    monkeypatch.delenv("AGENTDEX_TEST_KNOB")
    assert env_int("AGENTDEX_TEST_KNOB", 4, minimum=1) == 4


@pytest.mark.parametrize(
    ("raw", "expected"), [("0.5", 0.5), ("2", 2.0), ("-1", 5.0), ("soon", 5.0), ("nan", 5.0)]
)
def test_env_float(monkeypatch: pytest.MonkeyPatch, raw: str, expected: float) -> None:
    monkeypatch.setenv("AGENTDEX_TEST_KNOB", raw)
    assert env_float("AGENTDEX_TEST_KNOB", 5.0) == expected


def test_bad_knobs_do_not_stop_the_modules_that_read_them() -> None:
    """Every module reading a tuning knob imports with nonsense in all of them, and takes
    the defaults."""
    env = {
        **os.environ,
        **{
            name: "not-a-number"
            for name in (
                "AGENTDEX_INDEX_COMMIT_BYTES",
                "AGENTDEX_INDEX_COMMIT_GROWTH",
                "AGENTDEX_FIRST_ANSWER_BYTES",
                "AGENTDEX_FIRST_COMMIT_SECONDS",
                "AGENTDEX_INDEX_PARALLEL_MIN_BYTES",
                "AGENTDEX_INDEX_COMMIT_AHEAD_BYTES",
                "AGENTDEX_MAX_SEARCHES",
                "AGENTDEX_SEARCH_QUEUE_SECONDS",
                "AGENTDEX_MAX_EXPORTS",
                "AGENTDEX_EXPORT_QUEUE_SECONDS",
            )
        },
    }
    script = (
        "from agentdex.ingest import feed, firstbuild, parallel\n"
        "from agentdex.api import search_worker\n"
        "from agentdex.http import export_api\n"
        "print(feed.COMMIT_BYTES, feed.COMMIT_GROWTH, firstbuild.FIRST_ANSWER_BYTES,"
        " firstbuild.FIRST_COMMIT_SECONDS, parallel.PARALLEL_MIN_BYTES,"
        " parallel.COMMIT_AHEAD_BYTES, search_worker.MAX_CONCURRENT_SEARCHES,"
        " search_worker.QUEUE_SECONDS, export_api.MAX_CONCURRENT_EXPORTS,"
        " export_api.QUEUE_SECONDS)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    mb = 1024 * 1024
    assert done.stdout.split() == [
        str(64 * mb),
        "2.0",
        str(64 * mb),
        "1.0",
        str(32 * mb),
        str(32 * mb),
        "4",
        "5.0",
        "2",
        "60.0",
    ]
