"""``agentdex index``: build or refresh the search index."""

from __future__ import annotations

import sys
from typing import Any

import click

from agentdex.cli._common import emit_json, json_option


class _ProgressBar:
    """A Rich progress bar on stderr (files, bytes, rate), only on a terminal."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        from agentdex.cli._common import console

        self.progress = Progress(
            TextColumn("indexing"),
            BarColumn(),
            TextColumn("{task.fields[files]} files"),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=console(stderr=True),
            transient=True,
        )
        self.task: Any = None

    def __enter__(self) -> _ProgressBar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def __call__(
        self, files_done: int, files_total: int, bytes_done: int, bytes_total: int
    ) -> None:
        if self.task is None:
            self.task = self.progress.add_task("index", total=bytes_total or 1, files="0")
        self.progress.update(self.task, completed=bytes_done, files=f"{files_done}/{files_total}")


def semantic_line(info: dict[str, Any]) -> str:
    """``Embeddings: 1,234 of 2,000 messages (62%), 1,300 vectors, 0.5 MB``."""
    from agentdex.cli._format import human_size

    eligible = info.get("eligible") or 0
    pct = f" ({100 * info['embedded'] / eligible:.0f}%)" if eligible else ""
    line = (
        f"Embeddings: {info.get('embedded', 0):,} of {eligible:,} messages{pct}, "
        f"{info.get('vectors', 0):,} vectors, {human_size(info.get('bytes'))}"
    )
    run = info.get("run")
    if run:
        line += f"; {run['texts_embedded']:,} embedded now in {run['seconds']:.1f}s"
    return line


def run_refresh(home: str | None, *, full: bool, quiet: bool) -> Any:
    """Refresh with a progress bar on an interactive stderr; warnings to stderr."""
    from agentdex.api import search as api

    def warn(message: str) -> None:
        click.echo(f"agentdex: {message}", err=True)

    if quiet or not sys.stderr.isatty():
        return api.refresh(home=home, full=full, warn=warn)
    with _ProgressBar() as bar:
        return api.refresh(home=home, full=full, warn=warn, progress=bar)


def run_embedding(home: str | None, *, quiet: bool) -> Any:
    """``index --semantic``: embed what is missing, with a progress bar on a terminal."""
    from agentdex.api.semantic import embed_missing

    if quiet or not sys.stderr.isatty():
        return embed_missing(home=home)
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from agentdex.cli._common import console

    with Progress(
        TextColumn("embedding"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("messages"),
        TimeRemainingColumn(),
        console=console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("embed", total=None)

        def progress(done: int, todo: int) -> None:
            bar.update(task, completed=done, total=todo or 1)

        return embed_missing(home=home, progress=progress)


@click.command("index")
@json_option
@click.option("--full", is_flag=True, help="Rebuild the index from scratch.")
@click.option(
    "--semantic",
    is_flag=True,
    help="Also embed every prompt and reply not embedded yet (search by meaning).",
)
@click.pass_context
def index(ctx: click.Context, as_json: bool, full: bool, semantic: bool) -> None:
    """Build or refresh the search index.

    Incremental by default: unchanged files are skipped, append-only JSONL
    files resume where the last run stopped, rewritten files are reparsed and
    deleted files drop out. Another process indexing at the same time makes
    this one wait for it. Each home has its own index, under the data dir
    ($AGENTDEX_DATA_DIR/homes/<home>/index, or <[index] path>/<home> when
    the config sets one), so --home never mixes homes.

    --semantic then embeds the prompts, replies and summaries that have no
    embedding yet (newest first; a killed run resumes where it stopped), for
    search by meaning. `serve`, `ui` and `mcp` also fill them while idle.
    """
    from agentdex.api import context_history
    from agentdex.api import search as api
    from agentdex.cli._common import home_of

    home = home_of(ctx)
    stats = run_refresh(home, full=full, quiet=as_json)
    status = api.index_status(home=home)
    contexts = context_history.record_indexed_workspaces(home=home)
    from agentdex.api.semantic import semantic_status

    filled = run_embedding(home, quiet=as_json).to_json() if semantic else None
    embeddings = semantic_status(home=home)
    if filled is not None:
        embeddings["run"] = filled
    if as_json:
        emit_json(
            {
                "refresh": stats.to_json(),
                "index": status,
                "context_history": contexts,
                "semantic": embeddings,
            }
        )
        return
    from agentdex.cli._common import console
    from agentdex.cli._format import human_size

    parsed = stats.files_parsed + stats.files_resumed
    console().print(
        f"Indexed {parsed} changed file(s) ({human_size(stats.bytes_parsed)}), "
        f"{stats.files_unchanged} unchanged, {stats.files_removed} removed; "
        f"+{stats.records_added} / -{stats.records_removed} records in {stats.seconds:.2f}s. "
        f"Index: {status.get('records', 0)} records, {human_size(status.get('bytes'))} "
        f"at {status['path']}",
        soft_wrap=True,
    )
    if stats.diagnostics:
        console(stderr=True).print(
            f"[yellow]{stats.diagnostics} parse diagnostic(s)[/] (lines or entries a parser"
            " skipped): `agentdex audit` lists them per file",
            soft_wrap=True,
        )
    if filled is not None or embeddings.get("embedded"):
        console().print(semantic_line(embeddings), soft_wrap=True)
    if filled is not None and embeddings.get("problem"):
        console(stderr=True).print(f"[yellow]{embeddings['problem']}[/]", soft_wrap=True)
    if contexts["enabled"]:
        console().print(
            f"Context history: {contexts['workspaces']} workspace(s) checked, "
            f"{contexts['resolved']} resolved, {contexts['recorded']} new version(s)"
        )
        for failure in contexts["failed"]:
            console(stderr=True).print(f"[yellow]context history: {failure}[/]", soft_wrap=True)
