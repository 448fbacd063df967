"""Token usage of a Cline, Roo Code or Kilo Code task, from its UI log (``docs/usage.md``).

The task's ``ui_messages.json`` holds one ``say: "api_req_started"`` entry per
API request; its ``text`` is JSON that the agent rewrites in place as the
request streams and ends: ``{request?, apiProtocol?, tokensIn, tokensOut,
cacheWrites, cacheReads, cost, cancelReason?, streamingFailedMessage?}``. Cline
also counts ``deleted_api_reqs`` (the requests of messages the person deleted,
summed into one entry) and ``subagent_usage`` (one subagent batch's sum) in
its task totals (``getApiMetrics``), and Claude Dev (Cline in 2024) wrote the counts on a
separate ``api_req_finished`` entry after its ``api_req_started``. Each is one
"call" here; an entry without any count (a request that has not answered yet,
a ``request`` text only) is none.

**Cache and input.** The issue's ``input_tokens`` are fresh input only. What
``tokensIn`` holds differs by agent and provider:

* Roo Code (from 3.30, Roo-Code #8954, Oct 2025) and Kilo Code (its fork)
  store the *whole* prompt, cache reads and writes included, for both API
  protocols (``consolidateTokenUsage``: "tokensIn now stores TOTAL input
  tokens"); before that, OpenAI-protocol requests held the whole prompt and
  Anthropic-protocol ones fresh input. The version is not in the task, so a
  Roo/Kilo ``tokensIn`` counts as whole when it can be (at least
  ``cacheReads + cacheWrites``) and as fresh when it cannot.
* Cline keeps ``tokensIn``, ``cacheReads`` and ``cacheWrites`` disjoint (its
  ``getApiMetrics`` sums them; its SDK's ``normalizeUsageEvent`` subtracts the
  cache from the provider's prompt count "to be disjoint buckets"), except
  the classic handlers in :data:`WHOLE_PROMPT_PROVIDERS`, which pass the
  provider's ``prompt_tokens`` (cache included) as ``tokensIn``. The provider
  is the entry's ``modelInfo.providerId`` (Cline from 3.37, Nov 2025), else
  the ``task_metadata.json`` ``model_usage`` entry in force at the request's
  time; for those providers the cache counts are subtracted (when they fit).

``tokensOut`` is output (no reasoning split is recorded, so reasoning is 0).
The model: ``modelInfo.modelId``, else ``model_usage``'s ``model_id``, else
the task's model (the history's ``modelInfo``); Roo Code and Kilo Code record
none, so their calls are unpriced. The agent's own ``cost`` is not used
(prices come from agentdex's table). One call per entry ``ts`` (the agent
rewrites an entry in place; should a file hold the same ``ts`` twice, the
later entry is the call's final state).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers._agent_common import dict_of, opt_str
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Usage, parse_timestamp

UI_LOG = "ui_messages.json"
#: UI entries whose ``text`` carries a request's (or a sum of requests') counts.
USAGE_SAYS = frozenset(
    {"api_req_started", "api_req_finished", "deleted_api_reqs", "subagent_usage"}
)
#: Cline providers whose classic handler (``src/core/api/providers/<id>.ts``) reports the
#: provider's whole ``prompt_tokens`` as ``inputTokens`` beside its cached part.
WHOLE_PROMPT_PROVIDERS = frozenset(
    {"openai", "openai-codex", "requesty", "litellm", "oca", "xai", "zai", "lmstudio",
     "fireworks", "doubao", "qwen", "hicap"}
)  # fmt: skip
#: Agents whose ``tokensIn`` is the whole prompt (Roo Code from 3.30 and its fork).
WHOLE_PROMPT_AGENTS = frozenset({"roo-code", "kilo-code"})
_REQUIRED = ("tokensIn", "tokensOut")
_OPTIONAL = ("cacheReads", "cacheWrites")


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def load_ui_log(task_dir: Path) -> Any:
    """The task's parsed ``ui_messages.json`` (None when missing or unreadable); read once
    per parse for both the message times and the usage."""
    return _load(task_dir / UI_LOG)


class _ModelTimeline:
    """``task_metadata.json``'s ``model_usage``: which model and provider were in force when."""

    def __init__(self, task_dir: Path) -> None:
        entries = dict_of(_load(task_dir / "task_metadata.json")).get("model_usage")
        rows: list[tuple[float, str | None, str | None]] = []
        for entry in entries if isinstance(entries, list) else []:
            entry = dict_of(entry)
            stamp = parse_timestamp(entry.get("ts"))
            model = opt_str(entry.get("model_id"))
            provider = opt_str(entry.get("model_provider_id"))
            if stamp is not None and (model or provider):
                rows.append((stamp, model, provider))
        rows.sort(key=lambda row: row[0])
        self.times = [row[0] for row in rows]
        self.rows = rows

    def at(self, stamp: float | None) -> tuple[str | None, str | None]:
        """(model, provider) in force at ``stamp`` (the first one before any; none known)."""
        if not self.rows:
            return None, None
        i = bisect_right(self.times, stamp) - 1 if stamp is not None else len(self.rows) - 1
        _, model, provider = self.rows[max(i, 0)]
        return model, provider


def fresh_input(agent: str, provider: str | None, counts: dict[str, int]) -> int:
    """The fresh part of ``tokensIn`` (see the module docstring)."""
    tokens_in = counts["tokensIn"]
    cached = counts["cacheReads"] + counts["cacheWrites"]
    whole = agent in WHOLE_PROMPT_AGENTS or (provider or "").lower() in WHOLE_PROMPT_PROVIDERS
    return tokens_in - cached if whole and tokens_in >= cached else tokens_in


def _info(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The entry's counts object; None when it carries no count at all."""
    text = entry.get("text")
    if not isinstance(text, str) or ("tokens" not in text and "cache" not in text):
        return None
    try:
        info = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(info, dict) or not any(k in info for k in (*_REQUIRED, *_OPTIONAL)):
        return None
    return info


def note_task_usage(
    ref: SourceRef,
    cursor: ParseCursor,
    diag: Diagnostics,
    ui: Any,
    task_id: str,
    cwd: str | None,
    task_model: str | None,
) -> None:
    """Hand every request the task's UI log (``ui``, parsed) counted to ``cursor`` (one per
    entry ``ts``)."""
    if not isinstance(ui, list):
        return
    timeline = _ModelTimeline(Path(ref.path).parent)
    calls: dict[str, Usage] = {}
    started: tuple[str, float | None] | None = None  # what a legacy ``api_req_finished`` ends
    for index, entry in enumerate(ui):
        if not isinstance(entry, dict) or entry.get("say") not in USAGE_SAYS:
            continue
        say, stamp = entry["say"], parse_timestamp(entry.get("ts"))
        call = f"{task_id}/{say}/{entry.get('ts')}" if stamp is not None else f"{task_id}/{index}"
        if say == "api_req_started":
            started = (call, stamp)
        elif say == "api_req_finished" and started is not None:
            (call, stamp), started = started, None
        info = _info(entry)
        if info is None or entry.get("partial") is True:
            continue
        locator = f"{UI_LOG}:json:/{index}"
        counts = read_counts(info, _REQUIRED, _OPTIONAL)
        if isinstance(counts, str):
            cursor.skip_usage(diag, ref.path, locator, counts)
            calls.pop(call, None)
            continue
        own = dict_of(entry.get("modelInfo"))
        model, provider = timeline.at(stamp)
        model = opt_str(own.get("modelId")) or model or task_model
        provider = opt_str(own.get("providerId")) or provider
        calls.pop(call, None)  # a later write of the same call is its final state
        calls[call] = Usage(
            agent=ref.agent,
            store=ref.store,
            source_path=str(ref.path),
            locator=locator,
            session_id=task_id,
            call_id=call,
            input_tokens=fresh_input(ref.agent, provider, counts),
            cache_read_tokens=counts["cacheReads"],
            cache_write_tokens=counts["cacheWrites"],
            output_tokens=counts["tokensOut"],
            timestamp=stamp,
            model=model,
            cwd=cwd,
            host=ref.host,
        )
    for usage in calls.values():
        cursor.add_usage(usage, diag)
