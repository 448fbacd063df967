"""The README's tour is true: its commands, run as pasted, print what it shows.

``scripts/readme_tour.py`` runs every command of the README's tour in one
bash inside an 80-column pseudo-terminal (rendered by a terminal emulator)
against a freshly rendered sample home, and compares each output with the
README. After a deliberate change: ``python scripts/readme_tour.py --update``.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import REPO_DIR

pytestmark = pytest.mark.serial


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def readme_tour() -> ModuleType:
    return _load(REPO_DIR / "scripts" / "readme_tour.py", "readme_tour")


@pytest.fixture(scope="module")
def sample_home() -> ModuleType:
    return _load(REPO_DIR / "examples" / "sample_home.py", "sample_home")


def test_readme_tour_prints_what_the_readme_shows(readme_tour: ModuleType) -> None:
    pytest.importorskip("pyte")
    if shutil.which("bash") is None or shutil.which("git") is None:
        pytest.skip("the tour needs bash and git")
    result = readme_tour.run_tour()
    assert len(result.steps) >= 20
    problems = result.problems()
    assert not problems, (
        "\n\n".join(problems) + "\n\nthe README tour drifted; after a deliberate change run "
        "`python scripts/readme_tour.py --update`"
    )


def test_the_checker_catches_drift(readme_tour: ModuleType, tmp_path: Path) -> None:
    """A README whose shown output is wrong is reported (the check can fail)."""
    pytest.importorskip("pyte")
    readme = tmp_path / "README.md"
    readme.write_text(
        "<!-- tour -->\n```console\n$ echo hello\ngoodbye\n$ false\n```\n<!-- /tour -->\n"
    )
    result = readme_tour.run_tour(readme)
    problems = result.problems()
    assert any("-goodbye" in p and "+hello" in p for p in problems)
    assert any("exited 1" in p for p in problems)
    fixed = result.updated_readme()
    assert "$ echo hello\nhello\n$ false\n```" in fixed


def test_the_live_tour_shows_each_commands_own_status(
    readme_tour: ModuleType, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """``sample_home.py --tour`` echoes each command before running it: an ``echo $?``
    after a failing command still shows that command's status, not the echo's (0)."""
    if shutil.which("bash") is None:
        pytest.skip("the tour needs bash")
    readme = tmp_path / "README.md"
    readme.write_text(
        "<!-- tour -->\n```console\n$ sh -c 'exit 3'\n$ echo $?\n3\n"
        "$ echo pager=$AGENTDEX_PAGER\n```\n<!-- /tour -->\n"
    )
    readme_tour.run_live(tmp_path, readme)
    out = capfd.readouterr().out
    assert "\n$ echo $?\n3\n" in out, out
    assert "pager=cat" in out  # the live tour never waits in a pager


def test_a_pasted_tour_never_stops_in_a_pager(sample_home: ModuleType) -> None:
    text = sample_home.tour_env_text(Path("/tmp/agentdex-tour"))
    assert "export AGENTDEX_PAGER=cat" in text
    assert "AGENTDEX_PAGER" not in " ".join(line for line in text.splitlines() if "unset" in line)


def test_normalised_are_only_what_must_vary(readme_tour: ModuleType) -> None:
    pinned = "2026-11-23T12:00:00Z"
    lines = [
        "s-20261123-162437088-8601  ~/x  2026-11-23T16:24:37.088Z",
        "data/homes/agentdex-tour-0123456789ab/index  2026-11-20T09:00:00.000Z",
    ]
    assert readme_tour.normalise(lines, pinned) == [
        "s-YYYYMMDD-HHMMSSmmm-xxxx  ~/x  <clock>",
        "data/homes/agentdex-tour-<key>/index  2026-11-20T09:00:00.000Z",
    ]


def test_a_similarity_may_move_a_little_between_cpus(readme_tour: ModuleType) -> None:
    """The int8 model's kernels round differently on different CPUs: a ``meaning`` score
    within the slack matches the README's; one further off, or another change, does not."""
    want = ["grok  9d ago  user/prompt  ~/src/shop (main)  meaning 0.59", "next line"]
    moved = ["grok  9d ago  user/prompt  ~/src/shop (main)  meaning 0.61", "next line"]
    assert readme_tour.same_similarities(want, moved) == want
    far = ["grok  9d ago  user/prompt  ~/src/shop (main)  meaning 0.70", "next line"]
    assert readme_tour.same_similarities(want, far) == far
    other = ["codex  9d ago  user/prompt  ~/src/shop (main)  meaning 0.60", "next line"]
    assert readme_tour.same_similarities(want, other) != want
    assert readme_tour.same_similarities(want, moved[:1]) == want[:1]


def test_tour_env_unsets_every_location_override(sample_home: ModuleType) -> None:
    """No agent variable of the reader's shell can point the tour elsewhere."""
    from agentdex.catalogue import CATALOGUE

    # The README's own path: a pytest temp path (longer under xdist) would break the width check.
    text = sample_home.tour_env_text(Path("/tmp/agentdex-tour"))
    unset = {
        name for line in text.splitlines() if line.startswith("unset ") for name in line.split()[1:]
    }
    exported = {
        line.split()[1].split("=")[0] for line in text.splitlines() if line.startswith("export ")
    }
    wanted = {var for row in CATALOGUE for var in row.env}
    assert wanted <= unset | exported
    assert all(len(line) <= 80 for line in text.splitlines())


def test_sample_home_replaces_only_a_sample(tmp_path: Path) -> None:
    script = REPO_DIR / "examples" / "sample_home.py"
    dest = tmp_path / "tour"
    first = subprocess.run([sys.executable, str(script), str(dest)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert (dest / "tour.env").is_file() and f". {dest / 'tour.env'}" in first.stdout
    (dest / "stray").write_text("from the first render")
    again = subprocess.run([sys.executable, str(script), str(dest)], capture_output=True, text=True)
    assert again.returncode == 0 and not (dest / "stray").exists()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "keep.txt").write_text("not a sample")
    refused = subprocess.run(
        [sys.executable, str(script), str(other)], capture_output=True, text=True
    )
    assert refused.returncode != 0 and "not a sample home" in refused.stderr
    assert (other / "keep.txt").read_text() == "not a sample"
