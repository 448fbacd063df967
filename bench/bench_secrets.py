"""Measure the secret detector: recall on planted secrets, false positives, speed.

Three measurements, for ``agentdex.secrets`` and (when installed, for
comparison only: it is not a dependency) Yelp's ``detect-secrets``:

1. **Planted secrets**: ``--planted`` random secrets of every kind the
   detector names (the issue's ten among them: AWS key id and secret,
   GitHub ``ghp_``, OpenAI, Anthropic, Slack, a JWT, an RSA private key
   block, a postgres URL with a password) in prose, JSON, shell and env
   contexts. Recall = secrets whose value no longer appears.
2. **Look-alikes** that must stay: git SHAs, UUIDs, SHA-256 digests, base64
   data (data URLs, runs longer than 256 characters: a shorter random one is
   ``high-entropy``'s), long identifiers and paths, also as values of
   assignments. Any finding is a false positive.
3. **The shared corpus** (``../shared/corpus``, real public transcripts):
   every line of every file; findings are listed in ``--review FILE`` (with
   their values, for a human to judge: the corpus is public) and counted per
   MB. Speed: MB/s over the corpus lines, median of ``--runs``.

    python bench/bench_secrets.py --runs 3 --review /tmp/secrets-review.txt
    python bench/bench_secrets.py --build /work/bench-data/c250 --work /tmp/w --runs 3

``--build HOME`` instead times cold ``agentdex index`` builds of HOME's
stores with ``[privacy] redact`` on and off (alternating, fresh data dirs
under ``--work``): what redaction adds to a first build.

Not a test: the numbers go into docs/security.md.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import statistics
import string
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from agentdex.secrets import redact  # noqa: E402

ALNUM = string.ascii_letters + string.digits


def _rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _pem(rng: random.Random) -> str:
    body = base64.b64encode(rng.randbytes(600)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    kind = "RSA PRIVATE" + " KEY"
    return f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----"


def _jwt(rng: random.Random) -> str:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = _b64url(json.dumps({"sub": _rand(rng, 10), "iat": rng.randrange(10**9)}).encode())
    return f"{head}.{claims}.{_b64url(rng.randbytes(32))}"


#: kind -> (how to make a secret value, how to put it in text)
def secret_makers(rng: random.Random) -> dict[str, Callable[[], tuple[str, str]]]:
    upper = string.ascii_uppercase + string.digits
    b64 = ALNUM + "+/"

    def plain(value: str) -> tuple[str, str]:
        return value, value

    return {
        "aws-access-key-id": lambda: plain("AK" + "IA" + _rand(rng, 16, upper)),
        "aws-secret-access-key": lambda: (
            v := _rand(rng, 40, b64),
            f"aws_secret_access_key = {v}",
        ),
        "github-token": lambda: plain("gh" + "p_" + _rand(rng, 36)),
        "openai-key": lambda: plain("sk-" + "proj-" + _rand(rng, 40) + "7"),
        "anthropic-key": lambda: plain("sk-" + "ant-api03-" + _rand(rng, 80, ALNUM + "_-")),
        "slack-token": lambda: plain(
            "xo"
            + "xb-"
            + "".join(rng.choice(string.digits) for _ in range(12))
            + "-"
            + _rand(rng, 24)
        ),
        "jwt": lambda: plain(_jwt(rng)),
        "private-key": lambda: plain(_pem(rng)),
        "url-password": lambda: (
            v := _rand(rng, 14),
            f"postgres://app:{v}@db.internal:5432/app",
        ),
        "stripe-key": lambda: plain("sk" + "_live_" + _rand(rng, 24)),
        "google-api-key": lambda: plain("AI" + "za" + _rand(rng, 35, ALNUM + "_-")),
        "bearer-token": lambda: (v := _rand(rng, 32) + "9", f"Authorization: Bearer {v}"),
        "basic-auth": lambda: (
            v := base64.b64encode(f"admin:{_rand(rng, 12)}".encode()).decode(),
            f"Authorization: Basic {v}",
        ),
        "slack-webhook": lambda: (
            v := "T0" + _rand(rng, 8, upper) + "/B0" + _rand(rng, 8, upper) + "/" + _rand(rng, 24),
            f"https://hooks.slack.com/services/{v}",
        ),
        "secret-assignment": lambda: (v := _rand(rng, 12), f"DB_PASSWORD={v}"),
        "credential-assignment": lambda: (v := _rand(rng, 32) + "4", f"SENDGRID_KEY={v}"),
        # no key name: 32 random bytes in base64 (a typical generated key) or 40 base62
        "high-entropy": lambda: plain(
            base64.b64encode(rng.randbytes(32)).decode() if rng.random() < 0.5 else _rand(rng, 40)
        ),
    }


CONTEXTS = (
    "here is my key {} please use it",
    '{{"env": {{"X": "{}"}}}}',
    "export TOKEN_VALUE='{}'",
    "```\n{}\n```",
    "$ curl -s '{}' | jq .",
)


def planted(rng: random.Random, count: int) -> Iterator[tuple[str, str, str]]:
    """(kind, the secret value, a text holding it)."""
    makers = secret_makers(rng)
    for index in range(count):
        for kind, make in makers.items():
            value, snippet = make()
            yield kind, value, CONTEXTS[index % len(CONTEXTS)].format(snippet)


def lookalikes(rng: random.Random, count: int) -> Iterator[str]:
    """Text that only looks random and must come out unchanged."""
    words = ["user", "Service", "Handler", "Factory", "request", "Config", "value", "Manager"]
    for _ in range(count):
        sha1 = hashlib.sha1(rng.randbytes(16)).hexdigest()
        sha256 = hashlib.sha256(rng.randbytes(16)).hexdigest()
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        blob = base64.b64encode(rng.randbytes(rng.randrange(24, 300))).decode()
        # data: a base64 run longer than a key (a short random one is high-entropy's)
        data = base64.b64encode(rng.randbytes(rng.randrange(200, 300))).decode()
        ident = "".join(rng.sample(words, 5)) + str(rng.randrange(100))
        snake = "_".join(w.lower() for w in rng.sample(words, 6))
        yield f"commit {sha1} fixed it; HEAD is {sha1[:12]}"
        yield f"git checkout {sha1} && git cherry-pick {sha1[:7]}"
        yield f'{{"id": "{uid}", "sessionId": "{uid}", "sha256": "{sha256}"}}'
        yield f"cache_key = {sha256}"
        yield f'"integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}"'
        yield f"data:image/png;base64,{blob}"
        yield f'{{"data": "{data}"}}'
        yield f"class {ident}: pass  # see {snake}.py"
        yield f"key: src/agentdex/{snake}/{ident}.py"
        yield f"request_id={uid} trace={sha1}"
        yield f"api_key_id = {uid}"
        yield f"session_token_ttl_seconds = {rng.randrange(10**6)}"
        yield f"private_key_path = ~/.ssh/{snake}"


def _detect_secrets() -> Callable[[str], list[str]] | None:
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def scan(text: str) -> list[str]:
        with default_settings():
            return [
                str(found.secret_value)
                for line in text.splitlines()
                for found in scan_line(line)
                if found.secret_value
            ]

    return scan


def _ours(text: str) -> list[str]:
    return [finding.kind for finding in redact(text)[1]]


def corpus_lines(root: Path) -> list[str]:
    lines = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix not in {".png", ".jpg", ".gz", ".zip", ".db", ".vscdb"}:
            try:
                text = path.read_bytes().decode("utf-8", "replace")
            except OSError:
                continue
            lines.extend(text.splitlines())
    return lines


def _median_seconds(texts: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        for text in texts:
            redact(text)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def record_texts(home: Path, mb: float) -> list[str]:
    """The texts of the first ``mb`` MB of records parsed from ``home``'s stores."""
    from agentdex.discovery import discover
    from agentdex.parsers import ParseCursor, run
    from agentdex.readers import Diagnostics

    texts: list[str] = []
    size = 0
    for source in discover(str(home)).sources:
        if not source.row.parser:
            continue
        for record in run(source, ParseCursor(), Diagnostics()):
            texts.append(record.text or "")
            size += len(texts[-1].encode())
        if size > mb * 1e6:
            break
    return texts


def cold_builds(home: Path, work: Path, runs: int, src: Path) -> None:
    """Alternate cold ``agentdex index`` builds with redaction on and off; print medians.

    Each build is a fresh process on a fresh data dir under ``work`` with ``--home HOME``
    (HOME itself is only read: ``$HOME`` points into ``work``). ``runs`` rounds, each one
    build with redaction on and one off, the order swapped every round.
    """
    import os
    import resource
    import shutil
    import subprocess

    env0 = dict(os.environ, PYTHONPATH=str(src))
    env0.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tool runs byte-compiled modules
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=env0)
    times: dict[bool, list[float]] = {True: [], False: []}
    for run in range(runs):
        for masked in (True, False) if run % 2 == 0 else (False, True):
            data = work / f"data-{masked}"
            shutil.rmtree(data, ignore_errors=True)
            scratch = work / "scratch-home"
            scratch.mkdir(parents=True, exist_ok=True)
            config = work / f"config-{masked}.toml"
            config.write_text("" if masked else "[privacy]\nredact = false\n")
            env = dict(env0, HOME=str(scratch), AGENTDEX_DATA_DIR=str(data))
            env["AGENTDEX_CONFIG"] = str(config)
            env["AGENTDEX_BACKGROUND_BUILD"] = "0"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "agentdex", "--home", str(home), "index", "--json"],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            times[masked].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            print(
                f"  run {run} redact={masked}: {times[masked][-1]:.1f} s wall, {cpu:.1f} s CPU",
                flush=True,
            )
    on, off = statistics.median(times[True]), statistics.median(times[False])
    print(
        f"cold index of {home} ({runs} of each, median): redact on {on:.1f} s,"
        f" off {off:.1f} s: {on / off:.3f}x"
    )
    for masked in (True, False):
        shutil.rmtree(work / f"data-{masked}", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--planted", type=int, default=200, help="secrets of each kind")
    parser.add_argument("--lookalikes", type=int, default=500, help="rounds of look-alikes")
    parser.add_argument("--runs", type=int, default=3)
    bases = (REPO.parent, REPO.parent.parent)
    default = next(
        (b / "shared" / "corpus" for b in bases if (b / "shared").is_dir()),
        REPO.parent / "shared" / "corpus",
    )
    parser.add_argument("--corpus", type=Path, default=default)
    parser.add_argument("--review", type=Path, help="write corpus findings here")
    parser.add_argument("--no-compare", action="store_true", help="skip detect-secrets")
    parser.add_argument("--home", type=Path, help="also time record texts of this home")
    parser.add_argument("--mb", type=float, default=64, help="record text to time (--home)")
    parser.add_argument("--build", type=Path, help="time cold builds of this home instead")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-secrets"))
    parser.add_argument("--src", type=Path, default=REPO / "src", help="code to build with")
    args = parser.parse_args()
    if args.build:
        args.work.mkdir(parents=True, exist_ok=True)
        cold_builds(args.build, args.work, args.runs, args.src)
        return
    rng = random.Random(22)

    cases = list(planted(rng, args.planted))
    looks = list(lookalikes(rng, args.lookalikes))
    corpus = corpus_lines(args.corpus) if args.corpus.is_dir() else []
    corpus_mb = sum(len(line.encode()) + 1 for line in corpus) / 1e6

    print(f"planted: {len(cases)} secrets, {len(cases) // args.planted} kinds")
    missed: Counter[str] = Counter()
    for kind, value, text in cases:
        masked, _ = redact(text)
        if value in masked:
            missed[kind] += 1
    recall = 1 - sum(missed.values()) / len(cases)
    print(f"  agentdex.secrets recall {recall:.4f} missed {dict(missed)}")
    false_looks = [(text, _ours(text)) for text in looks if _ours(text)]
    print(f"look-alikes: {len(looks)} texts; agentdex.secrets flagged {len(false_looks)}")
    for text, kinds in false_looks[:5]:
        print("   ", kinds, text[:100])

    found: Counter[str] = Counter()
    review = []
    for number, line in enumerate(corpus):
        masked, findings = redact(line)
        for finding in findings:
            found[finding.kind] += 1
        if findings:
            for f in findings:
                around = masked[max(0, f.start - 100) : f.end + 20].replace("\n", " ")
                review.append(f"{number}\t{f.kind}\t{around}")
    print(f"corpus: {len(corpus)} lines, {corpus_mb:.1f} MB; agentdex.secrets: {dict(found)}")
    if args.review:
        args.review.write_text("\n".join(review) + "\n", encoding="utf-8")

    median = _median_seconds(corpus, args.runs)
    print(f"  speed: {corpus_mb / median:.1f} MB/s (median of {args.runs}: {median:.3f} s)")

    if args.home:
        texts = record_texts(args.home, args.mb)
        size = sum(len(text.encode()) for text in texts) / 1e6
        median = _median_seconds(texts, args.runs)
        print(
            f"records of {args.home}: {len(texts)} texts, {size:.1f} MB:"
            f" {size / median:.1f} MB/s (median of {args.runs}: {median:.3f} s)"
        )

    scan = None if args.no_compare else _detect_secrets()
    if scan is None:
        return
    missed.clear()
    for kind, value, text in cases:
        hits = scan(text)
        if not any(hit in value or value in hit for hit in hits):
            missed[kind] += 1
    recall = 1 - sum(missed.values()) / len(cases)
    print(f"  detect-secrets recall {recall:.4f} missed {dict(missed)}")
    flagged = sum(1 for text in looks if scan(text))
    print(f"  detect-secrets flagged {flagged} of {len(looks)} look-alikes")
    sample = corpus[: max(1, len(corpus) // 4)]
    sample_mb = sum(len(line.encode()) + 1 for line in sample) / 1e6
    started = time.perf_counter()
    hits = sum(len(scan(line)) for line in sample)
    elapsed = time.perf_counter() - started
    print(
        f"  detect-secrets on the corpus' first quarter ({sample_mb:.1f} MB): {hits} findings,"
        f" {sample_mb / elapsed:.2f} MB/s"
    )
    ours = sum(len(redact(line)[1]) for line in sample)
    print(f"  agentdex.secrets on the same quarter: {ours} findings")


if __name__ == "__main__":
    main()
