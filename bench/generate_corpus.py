"""Write a deterministic, realistic agent-history corpus as a fake home (Claude Code + Codex).

The same ``--seed`` and ``--size-mb`` always give the same bytes (numpy's
PCG64 stream, a fixed ``--now``, no ``uuid4``). The text is shaped like real
transcripts rather than like a word list:

* prose from a Zipf-distributed vocabulary (250 real English and programming
  words at the top, ~40,000 generated words below), sentences of varied
  length with inline code, paths and numbers;
* code-like tool output making about a third of the bytes: source lines
  with identifiers composed from the vocabulary (``retry_backoff``,
  ``parseSessionConfig``; nine in ten from a fixed pool of 30,000, as code
  repeats its names), file paths with line numbers, test and build
  logs, git logs with hex hashes, stack traces, JSON fragments, uuids;
  so the term dictionary keeps growing with the corpus as it does on real
  history (ids, hashes and numbers are mostly unique);
* rare tokens ``zq<number>`` in about 3% of texts (most appear once), for
  selective queries.

Claude Code transcripts (envelopes, ``tool_use`` / ``tool_result`` blocks,
``file-history-snapshot`` noise) and Codex rollouts (``session_meta``,
``turn_context``, ``response_item`` messages, reasoning, function calls and
outputs, ``event_msg`` twins and token counts) follow ``shared/STORES.md``.

    python bench/generate_corpus.py OUT_HOME --size-mb 1000 [--files 10000] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson

COMMON = (  # noqa: SIM905 - a word list reads better as text
    "the to of and a in is it that for you this with on be are as can not we if use "
    "function test error file code run value return data should will need fix add "
    "change update check build config path module import class type string list "
    "object call retry backoff timeout request response server client cache index "
    "query search token parse record session agent branch worktree commit merge diff "
    "review lint format performance memory thread async await lock write read open "
    "close stream buffer i have so but what there all was when which do your they one "
    "how make like just now also more then here see into only some could about would "
    "first new because way after where want look these other than well work still "
    "user output input line method default version support instead handle issue case "
    "result state event message log null true false none self init main app api http "
    "json yaml docs readme package install dependency release tests failing passing "
    "fails failed expected actual assert mock fixture schema table column row database "
    "migration field key map array loop print debug trace stack exception raise catch "
    "try finally yield lambda decorator context manager process worker queue job task "
    "retry_count max_retries interval deadline budget limit size offset cursor page "
    "sort filter match pattern regex escape quote unicode bytes encode decode hash "
    "sha commit_hash origin remote push pull rebase checkout stash tag ci pipeline "
    "deploy docker container image volume env secret permission owner group mode "
    "timestamp date time zone duration second minute hour day week month year"
).split()

SYLLABLES = (  # noqa: SIM905 - a syllable list reads better as text
    "ka to ri mel zon pra sti lu ven dor qui bex an el in on un ar er or ta te ti "
    "ma me mi mo na ne ni no ra re ro sa se si so la le li lo va ve vi da de di do"
).split()
EXTS = ("py", "ts", "go", "rs", "md", "json", "tsx", "toml", "yaml", "sql")
DEFAULT_NOW = "2026-11-01T00:00:00+00:00"
#: cumulative odds of the 12 code-line shapes in ``Language.code_line`` (hash-heavy ones rarer)
LINE_KINDS = np.cumsum([0.1, 0.12, 0.14, 0.12, 0.02, 0.04, 0.06, 0.06, 0.03, 0.1, 0.09, 0.12])


class Language:
    """Vectorized word sampling from a fixed Zipf vocabulary, plus code and log lines."""

    def __init__(self, rng: np.random.Generator, size: int = 40_000) -> None:
        self.rng = rng
        words = list(dict.fromkeys(COMMON))
        seen = set(words)
        syll = np.array(SYLLABLES)
        while len(words) < size:
            count = int(rng.integers(2, 5))
            word = "".join(syll[rng.integers(0, len(syll), count)])
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = np.array(words)
        ranks = np.arange(1, len(words) + 1, dtype=np.float64)
        weights = 1.0 / ranks**1.07
        self.cumulative = np.cumsum(weights / weights.sum())
        self._pool: list[str] = []
        self._pos = 0
        self.identifiers = [self.new_identifier() for _ in range(30_000)]
        id_weights = 1.0 / np.arange(1, len(self.identifiers) + 1, dtype=np.float64) ** 0.9
        self.id_cumulative = np.cumsum(id_weights / id_weights.sum())
        self.id_cumulative[-1] = 1.0

    # -- sampling ----------------------------------------------------------------------
    def sample(self, n: int) -> list[str]:
        """``n`` words drawn from the Zipf vocabulary (drawn a million at a time: fast)."""
        if self._pos + n > len(self._pool):
            ids = np.searchsorted(self.cumulative, self.rng.random(1 << 20))
            self._pool = self.words[np.minimum(ids, len(self.words) - 1)].tolist()
            self._pos = 0
        out = self._pool[self._pos : self._pos + n]
        self._pos += n
        return out

    def pick(self, options: tuple[str, ...] | list[str]) -> str:
        return options[int(self.rng.integers(0, len(options)))]

    def identifier(self) -> str:
        """A code identifier: most come from the corpus's fixed pool (code repeats its names)."""
        if self.rng.random() < 0.9:
            return self.identifiers[int(np.searchsorted(self.id_cumulative, self.rng.random()))]
        return self.new_identifier()

    def new_identifier(self) -> str:
        parts = self.sample(int(self.rng.integers(2, 4)))
        style = int(self.rng.integers(0, 4))
        if style == 0:
            return "_".join(parts)
        if style == 1:
            return parts[0] + "".join(p.capitalize() for p in parts[1:])
        if style == 2:
            return "".join(p.capitalize() for p in parts)
        return "_".join(parts).upper() if self.rng.random() < 0.3 else "-".join(parts)

    def path(self) -> str:
        depth = int(self.rng.integers(1, 4))
        dirs = "/".join(self.sample(depth))
        return f"src/{dirs}/{self.identifier()}.{self.pick(EXTS)}"

    def hexid(self, length: int) -> str:
        return self.rng.bytes((length + 1) // 2).hex()[:length]

    def uuid(self) -> str:
        h = self.rng.bytes(16).hex()
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"

    def rare_token(self) -> str:
        return f"zq{int(self.rng.integers(0, 10_000_000))}"

    # -- text ----------------------------------------------------------------------------
    def prose(self, sentences: int) -> str:
        out: list[str] = []
        for _ in range(sentences):
            n = int(self.rng.integers(5, 24))
            words = self.sample(n)
            roll = self.rng.random()
            if roll < 0.15:
                words.insert(int(self.rng.integers(1, n)), f"`{self.identifier()}()`")
            elif roll < 0.25:
                words.insert(int(self.rng.integers(1, n)), self.path())
            elif roll < 0.3:
                words.insert(int(self.rng.integers(1, n)), str(int(self.rng.integers(0, 5000))))
            words[0] = words[0].capitalize()
            out.append(" ".join(words) + self.pick((".", ".", ".", "?", ":", "!")))
        text = " ".join(out)
        if self.rng.random() < 0.03:
            text += f" {self.rare_token()}"
        return text

    def code_line(self) -> str:
        kind = int(np.searchsorted(LINE_KINDS, self.rng.random()))
        a, b = self.identifier(), self.identifier()
        n = int(self.rng.integers(0, 999))
        if kind == 0:
            return f"def {a}(self, {b}: int = {n}) -> {self.pick(('str', 'bool', 'None'))}:"
        if kind == 1:
            return f"    if {a} is None:\n        return {b}({n})"
        if kind == 2:
            return f"{self.path()}:{n}:{int(self.rng.integers(1, 80))}: {self.prose(1)}"
        if kind == 3:
            return f"    {a} = {b}.get('{self.sample(1)[0]}', {n})"
        if kind == 4:
            return f"commit {self.hexid(40)}\nAuthor: {a} <{b}@example.com>\n\n    {self.prose(1)}"
        if kind == 5:
            return f"{self.hexid(7)} {self.prose(1)[:70]}"
        if kind == 6:
            return (
                f'  File "/home/dev/{self.path()}", line {n}, in {a}\n    {b}({self.identifier()})'
            )
        if kind == 7:
            return f"FAILED tests/test_{a.lower()}.py::test_{b.lower()} - AssertionError: {n}"
        if kind == 8:
            return f'{{"id": "{self.uuid()}", "{a}": {n}, "{b}": "{self.hexid(12)}"}}'
        if kind == 9:
            return f"const {a} = await {b}({self.identifier()}, {{ timeout: {n} }});"
        if kind == 10:
            return f"ERROR [{a}] {self.prose(1)[:90]}"
        return f"    {a}.{b}({self.identifier()}, {n})"

    def code(self, lines: int) -> str:
        text = "\n".join(self.code_line() for _ in range(lines))
        if self.rng.random() < 0.03:
            text += f"\n{self.rare_token()}"
        return text

    def reply(self, sentences: int) -> str:
        """Assistant prose, sometimes with a fenced code block."""
        text = self.prose(sentences)
        if self.rng.random() < 0.25:
            text += f"\n\n```{self.pick(EXTS)}\n{self.code(int(self.rng.integers(2, 12)))}\n```\n"
            text += self.prose(int(self.rng.integers(1, 3)))
        return text


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{int(ts * 1000) % 1000:03d}Z"
    )


def _slug(cwd: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in cwd)


def _dumps(obj: object) -> bytes:
    return orjson.dumps(obj) + b"\n"


def claude_session(home: Path, lang: Language, cwd: str, start: float, turns: int) -> int:
    rng = lang.rng
    sid = lang.uuid()
    folder = home / ".claude" / "projects" / _slug(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    out = bytearray()
    ts, parent = start, None
    env = {
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": sid,
        "version": "2.0.42",
        "gitBranch": lang.pick(("main", "feat/retry", "fix/lint", "feat/search-index")),
    }
    for _ in range(turns):
        uid = lang.uuid()
        out += _dumps(
            {
                "parentUuid": parent,
                **env,
                "type": "user",
                "uuid": uid,
                "timestamp": _iso(ts),
                "message": {"role": "user", "content": lang.prose(int(rng.integers(1, 4)))},
            }
        )
        parent, ts = uid, ts + float(rng.uniform(2, 30))
        for _ in range(int(rng.integers(1, 4))):
            aid, tool_id = lang.uuid(), f"toolu_{lang.hexid(24)}"
            tool = lang.pick(("Bash", "Read", "Grep", "Edit"))
            tool_input: dict[str, Any]
            if tool == "Bash":
                tool_input = {"command": lang.code_line()[:100]}
            else:
                tool_input = {"file_path": lang.path()}
            out += _dumps(
                {
                    "parentUuid": parent,
                    **env,
                    "type": "assistant",
                    "uuid": aid,
                    "timestamp": _iso(ts),
                    "requestId": f"req_{lang.hexid(24)}",
                    "message": {
                        "id": f"msg_{lang.hexid(24)}",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4-5-20250929",
                        "content": [
                            {"type": "text", "text": lang.reply(int(rng.integers(1, 8)))},
                            {"type": "tool_use", "id": tool_id, "name": tool, "input": tool_input},
                        ],
                        "usage": {
                            "input_tokens": int(rng.integers(10, 90_000)),
                            "output_tokens": int(rng.integers(10, 900)),
                        },
                    },
                }
            )
            rid = lang.uuid()
            out += _dumps(
                {
                    "parentUuid": aid,
                    **env,
                    "type": "user",
                    "uuid": rid,
                    "timestamp": _iso(ts + 1),
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": tool_id,
                                "content": lang.code(int(rng.integers(2, 26))),
                                "is_error": False,
                            }
                        ],
                    },
                }
            )
            parent, ts = rid, ts + float(rng.uniform(2, 20))
        if rng.random() < 0.2:
            out += _dumps(
                {
                    "type": "file-history-snapshot",
                    "messageId": lang.uuid(),
                    "snapshot": {"trackedFileBackups": {}, "timestamp": _iso(ts)},
                    "isSnapshotUpdate": False,
                }
            )
    (folder / f"{sid}.jsonl").write_bytes(out)
    return len(out)


def codex_session(home: Path, lang: Language, cwd: str, start: float, turns: int) -> int:
    rng = lang.rng
    sid = lang.uuid()
    day = datetime.fromtimestamp(start, UTC)
    folder = home / ".codex" / "sessions" / day.strftime("%Y/%m/%d")
    folder.mkdir(parents=True, exist_ok=True)
    name = f"rollout-{day.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl"
    out = bytearray()
    ts = start
    out += _dumps(
        {
            "timestamp": _iso(ts),
            "type": "session_meta",
            "payload": {
                "id": sid,
                "timestamp": _iso(ts),
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.46.0",
                "model_provider": "openai",
                "git": {"commit_hash": lang.hexid(40), "branch": "main"},
            },
        }
    )
    out += _dumps(
        {
            "timestamp": _iso(ts),
            "type": "turn_context",
            "payload": {"cwd": cwd, "model": "gpt-5-codex", "effort": "medium"},
        }
    )
    for _ in range(turns):
        prompt = lang.prose(int(rng.integers(1, 4)))
        item = {"type": "message", "role": "user"}
        item["content"] = [{"type": "input_text", "text": prompt}]  # type: ignore[assignment]
        out += _dumps({"timestamp": _iso(ts), "type": "response_item", "payload": item})
        out += _dumps(
            {
                "timestamp": _iso(ts),
                "type": "event_msg",
                "payload": {"type": "user_message", "message": prompt},
            }
        )
        ts += float(rng.uniform(2, 20))
        for _ in range(int(rng.integers(1, 3))):
            out += _dumps(
                {
                    "timestamp": _iso(ts),
                    "type": "response_item",
                    "payload": {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": lang.prose(1)}],
                    },
                }
            )
            call = f"call_{lang.hexid(24)}"
            arguments = {"command": ["bash", "-lc", lang.code_line()[:80]]}
            out += _dumps(
                {
                    "timestamp": _iso(ts),
                    "type": "response_item",
                    "payload": {
                        "type": "function_call",
                        "name": "shell",
                        "call_id": call,
                        "arguments": orjson.dumps(arguments).decode(),
                    },
                }
            )
            result = {"output": lang.code(int(rng.integers(2, 26))), "metadata": {"exit_code": 0}}
            out += _dumps(
                {
                    "timestamp": _iso(ts + 1),
                    "type": "response_item",
                    "payload": {
                        "type": "function_call_output",
                        "call_id": call,
                        "output": orjson.dumps(result).decode(),
                    },
                }
            )
            ts += float(rng.uniform(2, 20))
        answer = lang.reply(int(rng.integers(2, 10)))
        out += _dumps(
            {
                "timestamp": _iso(ts),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": answer}],
                },
            }
        )
        out += _dumps(
            {
                "timestamp": _iso(ts),
                "type": "event_msg",
                "payload": {"type": "agent_message", "message": answer},
            }
        )
        out += _dumps(
            {
                "timestamp": _iso(ts),
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {"total_token_usage": {"input_tokens": int(rng.integers(1, 99999))}},
                },
            }
        )
        ts += float(rng.uniform(2, 20))
    (folder / name).write_bytes(out)
    return len(out)


def generate(out: Path, size_mb: float, files: int, seed: int, now: float) -> dict[str, Any]:
    """Write sessions until ``size_mb`` is reached; returns counts."""
    rng = np.random.default_rng(seed)
    lang = Language(rng)
    target = int(size_mb * 1024 * 1024)
    per_file = max(4_000, target // max(files, 1))
    projects = [f"/home/dev/src/{lang.identifier().lower()}" for _ in range(24)]
    written = 0
    count = {"claude": 0, "codex": 0}
    while written < target:
        cwd = projects[int(rng.integers(0, len(projects)))]
        start = now - float(rng.uniform(0, 180 * 86400))
        # turns scale so files average per_file bytes (heavy tail: a few long sessions)
        turns = min(400, max(1, int((rng.pareto(1.6) + 1) * per_file / 14_000)))
        if rng.random() < 0.55:
            written += claude_session(out, lang, cwd, start, turns)
            count["claude"] += 1
        else:
            written += codex_session(out, lang, cwd, start, turns)
            count["codex"] += 1
    return {**count, "files": count["claude"] + count["codex"], "bytes": written}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mb", type=float, default=250)
    parser.add_argument("--files", type=int, default=None, help="about size-mb * 10 by default")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--now", default=DEFAULT_NOW, help="newest session start (ISO time)")
    args = parser.parse_args()
    files = args.files if args.files is not None else int(args.size_mb * 10)
    started = time.perf_counter()
    now = datetime.fromisoformat(args.now).timestamp()
    counts = generate(args.out, args.size_mb, files, args.seed, now)
    seconds = round(time.perf_counter() - started, 1)
    print(orjson.dumps({**counts, "seconds": seconds, "out": str(args.out)}).decode())


if __name__ == "__main__":
    os.umask(0o077)
    main()
