"""Write a realistic agent-history corpus as a fake home, in the agents' real on-disk formats.

Claude Code transcripts (envelopes, tool_use / tool_result blocks), Codex
rollouts (session_meta, response_item, event_msg twins), Gemini CLI chats
(JSON documents) and VS Code Copilot chat sessions (v3 JSON + workspace.json),
laid out as ``/work/shared/STORES.md`` describes. Text mixes prose, code and
tool output with a Zipf-like vocabulary, plus rare tokens ``zq<number>`` that
make selective queries (each appears in a handful of records).

    python bench/generate_corpus.py OUT_HOME --size-mb 250 [--files 10000] [--seed 1]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import time
import uuid
from pathlib import Path

import orjson

COMMON = (  # noqa: SIM905 - a word list reads better as text
    "the a to of and in is it that for you this with on be are as can not we if use "
    "function test error file code run value return data should will need fix add "
    "change update check build config path module import class type string list "
    "object call retry backoff timeout request response server client cache index "
    "query search token parse record session agent branch worktree commit merge diff "
    "review lint format performance memory thread async await lock write read open "
    "close stream buffer "
).split()


def _vocab(rng: random.Random, size: int = 6000) -> list[str]:
    syll = ["ka", "to", "ri", "mel", "zon", "pra", "sti", "lu", "ven", "dor", "qui", "bex"]
    words = list(COMMON)
    while len(words) < size:
        words.append("".join(rng.choice(syll) for _ in range(rng.randint(2, 4))))
    return words


class Text:
    """Sentence/code pools sampled with a Zipf-like skew: fast and realistic enough."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        vocab = _vocab(rng)
        weights = [1.0 / (i + 1) ** 1.05 for i in range(len(vocab))]
        self.sentences = []
        for _ in range(6000):
            words = rng.choices(vocab, weights, k=rng.randint(6, 22))
            self.sentences.append(" ".join(words).capitalize() + rng.choice([".", ".", "?", ":"]))
        idents = [w + rng.choice(["_id", "Handler", "_count", "Config", "", "2"]) for w in vocab]
        self.code = []
        for _ in range(3000):
            name = rng.choice(idents)
            line = rng.choice(
                [
                    f"    if {name} is None: return {rng.choice(idents)}({rng.randint(0, 99)})",
                    f"def {name}(self, {rng.choice(idents)}: int) -> str:",
                    f"src/{rng.choice(vocab)}/{name}.py:{rng.randint(1, 900)}: {rng.choice(vocab)}",
                    f"    {name} = {rng.choice(idents)}.get('{rng.choice(vocab)}',"
                    f" {rng.randint(0, 9)})",
                    f"ERROR {name}: {rng.choice(self.sentences)[:60]}",
                ]
            )
            self.code.append(line)
        self.rare = 0

    def prose(self, sentences: int) -> str:
        text = " ".join(self.rng.choices(self.sentences, k=sentences))
        if self.rng.random() < 0.05:
            text += f" zq{self.rng.randint(0, 200_000)}"
        return text

    def tool_output(self, lines: int) -> str:
        out = "\n".join(self.rng.choices(self.code, k=lines))
        if self.rng.random() < 0.05:
            out += f"\nzq{self.rng.randint(0, 200_000)}"
        return out


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts * 1000) % 1000:03d}Z"


def _slug(cwd: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in cwd)


def _dumps(obj: object) -> bytes:
    return orjson.dumps(obj) + b"\n"


def claude_session(home: Path, t: Text, cwd: str, start: float, turns: int) -> int:
    rng = t.rng
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    folder = home / ".claude" / "projects" / _slug(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    out = bytearray()
    ts, parent = start, None
    env = {
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": sid,
        "version": "2.0.14",
        "gitBranch": rng.choice(["main", "feat/retry", "fix/lint"]),
    }
    for _ in range(turns):
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        out += _dumps(
            {
                "parentUuid": parent,
                **env,
                "type": "user",
                "uuid": uid,
                "timestamp": _iso(ts),
                "message": {"role": "user", "content": t.prose(rng.randint(1, 3))},
            }
        )
        parent, ts = uid, ts + rng.uniform(2, 30)
        for _ in range(rng.randint(1, 3)):
            aid, tool_id = str(uuid.uuid4()), f"toolu_{rng.getrandbits(60):x}"
            out += _dumps(
                {
                    "parentUuid": parent,
                    **env,
                    "type": "assistant",
                    "uuid": aid,
                    "timestamp": _iso(ts),
                    "requestId": f"req_{rng.getrandbits(40):x}",
                    "message": {
                        "id": f"msg_{rng.getrandbits(60):x}",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4-5",
                        "content": [
                            {"type": "text", "text": t.prose(rng.randint(1, 5))},
                            {
                                "type": "tool_use",
                                "id": tool_id,
                                "name": "Bash",
                                "input": {"command": rng.choice(t.code)[:80]},
                            },
                        ],
                        "usage": {
                            "input_tokens": rng.randint(10, 9000),
                            "output_tokens": rng.randint(10, 900),
                        },
                    },
                }
            )
            rid = str(uuid.uuid4())
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
                                "content": t.tool_output(rng.randint(3, 60)),
                                "is_error": False,
                            }
                        ],
                    },
                }
            )
            parent, ts = rid, ts + rng.uniform(2, 20)
    (folder / f"{sid}.jsonl").write_bytes(out)
    return len(out)


def codex_session(home: Path, t: Text, cwd: str, start: float, turns: int) -> int:
    rng = t.rng
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    tm = time.gmtime(start)
    folder = home / ".codex" / "sessions" / time.strftime("%Y/%m/%d", tm)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', tm)}-{sid}.jsonl"
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
                "git": {"commit_hash": f"{rng.getrandbits(160):040x}", "branch": "main"},
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
        prompt = t.prose(rng.randint(1, 3))
        out += _dumps(
            {
                "timestamp": _iso(ts),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": prompt}],
                },
            }
        )
        out += _dumps(
            {
                "timestamp": _iso(ts),
                "type": "event_msg",
                "payload": {"type": "user_message", "message": prompt},
            }
        )
        ts += rng.uniform(2, 20)
        out += _dumps(
            {
                "timestamp": _iso(ts),
                "type": "response_item",
                "payload": {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": t.prose(1)}],
                },
            }
        )
        call = f"call_{rng.getrandbits(60):x}"
        out += _dumps(
            {
                "timestamp": _iso(ts),
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell",
                    "call_id": call,
                    "arguments": orjson.dumps(
                        {"command": ["bash", "-lc", rng.choice(t.code)[:60]]}
                    ).decode(),
                },
            }
        )
        out += _dumps(
            {
                "timestamp": _iso(ts + 1),
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": call,
                    "output": orjson.dumps(
                        {"output": t.tool_output(rng.randint(3, 50)), "metadata": {"exit_code": 0}}
                    ).decode(),
                },
            }
        )
        out += _dumps(
            {
                "timestamp": _iso(ts + 2),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": t.prose(rng.randint(1, 6))}],
                },
            }
        )
        out += _dumps(
            {
                "timestamp": _iso(ts + 2),
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {"total_token_usage": {"input_tokens": 1}},
                },
            }
        )
        ts += rng.uniform(2, 20)
    (folder / name).write_bytes(out)
    return len(out)


def gemini_session(home: Path, t: Text, cwd: str, start: float, turns: int) -> int:
    rng = t.rng
    project_hash = hashlib.sha256(cwd.encode()).hexdigest()
    folder = home / ".gemini" / "tmp" / project_hash / "chats"
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / ".project_root").write_text(cwd)
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    ts, messages = start, []
    for _ in range(turns):
        messages.append(
            {
                "id": str(uuid.uuid4()),
                "timestamp": _iso(ts),
                "type": "user",
                "content": t.prose(rng.randint(1, 3)),
            }
        )
        ts += rng.uniform(2, 20)
        messages.append(
            {
                "id": str(uuid.uuid4()),
                "timestamp": _iso(ts),
                "type": "gemini",
                "content": t.prose(rng.randint(1, 6)),
                "model": "gemini-2.5-pro",
                "thoughts": [{"subject": "Plan", "description": t.prose(1)}],
                "toolCalls": [
                    {
                        "name": "run_shell_command",
                        "args": {"command": rng.choice(t.code)[:60]},
                        "result": [
                            {
                                "functionResponse": {
                                    "response": {"output": t.tool_output(rng.randint(3, 30))}
                                }
                            }
                        ],
                    }
                ],
            }
        )
        ts += rng.uniform(2, 20)
    doc = {
        "sessionId": sid,
        "projectHash": project_hash,
        "startTime": _iso(start),
        "lastUpdated": _iso(ts),
        "messages": messages,
    }
    stamp = time.strftime("%Y-%m-%dT%H-%M", time.gmtime(start))
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    (folder / f"session-{stamp}-{sid[:8]}.json").write_bytes(data)
    return len(data)


def vscode_session(home: Path, t: Text, cwd: str, start: float, turns: int) -> int:
    rng = t.rng
    ws = home / ".config" / "Code" / "User" / "workspaceStorage"
    folder = ws / hashlib.md5(cwd.encode()).hexdigest() / "chatSessions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / "workspace.json").write_text(
        orjson.dumps({"folder": Path(cwd).as_uri()}).decode()
    )
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    ts, requests = start, []
    for _ in range(turns):
        requests.append(
            {
                "requestId": f"request_{uuid.uuid4()}",
                "timestamp": int(ts * 1000),
                "message": {"text": t.prose(rng.randint(1, 3)), "parts": []},
                "response": [
                    {"value": t.prose(rng.randint(1, 6))},
                    {"kind": "toolInvocationSerialized", "toolId": "run_in_terminal"},
                    {"value": "```\n" + t.tool_output(rng.randint(2, 20)) + "\n```"},
                ],
                "modelId": "copilot/gpt-4.1",
                "result": {"metadata": {}},
            }
        )
        ts += rng.uniform(5, 60)
    doc = {
        "version": 3,
        "sessionId": sid,
        "creationDate": int(start * 1000),
        "lastMessageDate": int(ts * 1000),
        "requests": requests,
    }
    data = orjson.dumps(doc)
    (folder / f"{sid}.json").write_bytes(data)
    return len(data)


WRITERS = (
    (claude_session, 0.45),
    (codex_session, 0.35),
    (gemini_session, 0.1),
    (vscode_session, 0.1),
)


def generate(out: Path, size_mb: float, files: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    t = Text(rng)
    target = int(size_mb * 1024 * 1024)
    per_file = max(2_000, target // max(files, 1))
    projects = [f"/home/dev/src/{w}" for w in _vocab(random.Random(seed + 1), 80)[60:80]]
    written, count = 0, {fn.__name__: 0 for fn, _ in WRITERS}
    now = time.time()
    while written < target:
        fn = rng.choices([w for w, _ in WRITERS], [p for _, p in WRITERS])[0]
        cwd = rng.choice(projects)
        start = now - rng.uniform(0, 180 * 86400)
        # turns scale so files average per_file bytes (heavy tail: a few long sessions)
        turns = max(1, int(rng.paretovariate(1.6) * per_file / 9000))
        written += fn(out, t, cwd, start, min(turns, 400))
        count[fn.__name__] += 1
    count["bytes"] = written
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--size-mb", type=float, default=250)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    counts = generate(args.out, args.size_mb, args.files, args.seed)
    print(
        orjson.dumps(
            {**counts, "seconds": round(time.perf_counter() - started, 1), "out": str(args.out)}
        ).decode()
    )


if __name__ == "__main__":
    os.umask(0o077)
    main()
