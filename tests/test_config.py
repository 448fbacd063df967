from pathlib import Path

import pytest

from agentdex.config import load_config
from agentdex.errors import ConfigError


def test_missing_config_is_default(tmp_path: Path) -> None:
    cfg = load_config(tmp_path / "nope.toml")
    assert cfg.max_worktrees == 8 and cfg.project_roots == ()


def test_valid_config(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[projects]\nroots = ["/src"]\n[agents]\ndisabled = ["cursor"]\n'
        '[stores.paths]\nclaude = ["/opt/c"]\n[worktrees]\nmax = 3\n'
    )
    cfg = load_config(path)
    assert cfg.project_roots == (Path("/src"),)
    assert cfg.disabled_agents == {"cursor"}
    assert cfg.store_paths == {"claude": (Path("/opt/c"),)}
    assert cfg.max_worktrees == 3


def test_bad_key_names_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[worktrees]\n\nmax = -1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert f"{path}:3" in info.value.message and "worktrees.max" in info.value.message


def test_syntax_error_names_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[projects\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in info.value.message and "line 1" in info.value.message
