from agentdex.catalogue import CATALOGUE, agents
from agentdex.records import AGENTS


def test_catalogue_agents_are_known() -> None:
    assert set(agents()) <= set(AGENTS)
    assert len({row.store for row in CATALOGUE}) == len(CATALOGUE)


def test_help_runs(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("--help")
    assert result.returncode == 0
    assert "search" in result.stdout
