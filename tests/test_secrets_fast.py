"""The quick skips of :func:`agentdex.secrets.redact` mask exactly what running every
pattern whose needles are present masks.

``redact`` leaves a pattern out when the text cannot hold a match: the needles
are found in one pass (Aho-Corasick), and an assignment pattern is run only when
one of its key words is followed by ``=`` or ``:``. :func:`reference` below is the
masking before those skips (each pattern run when one of its needles is in the
lower-cased text, as ``redact`` did until the cold-build work of issue 21); both
must give the same text and findings on planted secrets, look-alikes, the shared
corpus and generated mixtures of the fragments the skips look at.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from agentdex.secrets import PATTERNS, Finding, masked, redact, spans_of
from conftest import CORPUS_DIR as CORPUS
from conftest import REPO_DIR


def reference(text: str) -> tuple[str, list[Finding]]:
    """Every pattern with a needle (or a gate) present and those with a finder, in order,
    no other skip (as ``redact`` chose them before its quick skips)."""
    if len(text) < 8:
        return text, []
    lowered = text.lower()
    present = {n.lower() for p in PATTERNS for n in p.needles if n.lower() in lowered}
    chosen = []
    for pattern in PATTERNS:
        if pattern.finder is not None:
            pass  # run on every text
        elif pattern.gate is not None:
            if pattern.gate.search(text if pattern.fast is None else lowered) is None:
                continue
        elif pattern.fast is None:
            if not any(n in text for n in pattern.needles if n.lower() in present):
                continue
        elif present.isdisjoint(pattern.needles):
            continue
        chosen.append(pattern)
    return masked(text, spans_of(text, lowered, chosen))


def _bench_secrets() -> object:
    spec = importlib.util.spec_from_file_location(
        "bench_secrets_for_tests", REPO_DIR / "bench" / "bench_secrets.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _differences(texts: list[str]) -> list[str]:
    return [text for text in texts if redact(text) != reference(text)]


def test_planted_secrets_and_look_alikes_mask_the_same() -> None:
    bench = _bench_secrets()
    rng = random.Random(21)
    texts = [text for _, _, text in bench.planted(rng, 60)]  # type: ignore[attr-defined]
    texts += list(bench.lookalikes(rng, 300))  # type: ignore[attr-defined]
    masked = sum(1 for text in texts if redact(text)[1])
    assert masked >= 500  # the planted ones are found (recall is test_redaction's)
    assert _differences(texts) == []


#: what the skips look at: key words with and without an assignment after them, needles,
#: characters whose lower case is longer (the patterns then run on the text itself)
FRAGMENTS = [
    "password", "passwd", "passphrase", "secret", "token", "api_key", "apikey", "access-key",
    "secret_key", "private_key", "client_secret", "auth_token", "key", "keys", "credential",
    "credentials", "cred", "creds", "pwd", "pass", "auth", "authorization", "Authorization",
    "AUTHORIZATION", "Basic ", "basic ", "bearer ", "Bearer ", "=", "==", ":", " = ", ": ",
    "'", '"', " ", "\n", "s", "İ", "ı", "K", "ſ", "Σ", "aws_secret_access_key",
    "hooks.slack.com/services/", "https://", "postgres://user:", "@db", "sk-", "sk-ant-",
    "ghp_", "AKIA", "xoxb-", "sk_live_", "AIza", "eyJ", "-----BEGIN RSA PRIVATE KEY-----",
    "[REDACTED:jwt]", "process.env.X", "<your-key>", "changeme",
    "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "dGhpcyBpcyBhIHRlc3Q=", "abcdefgh12345678XYZ", "Zm9vOmJhcg==", "IOSFODNN7EXAMPLE", "ASIA",
    "github_pat_", "ghs_",
]  # fmt: skip


def test_generated_mixtures_mask_the_same() -> None:
    rng = random.Random(2026)
    texts = ["".join(rng.choices(FRAGMENTS, k=rng.randint(1, 14))) for _ in range(20000)]
    assert sum(1 for text in texts if redact(text)[1]) > 1000  # secrets among them
    assert _differences(texts) == []


def test_unicode_that_changes_length_keeps_the_old_path() -> None:
    # lowering 'İ' adds a character: the case-insensitive patterns run on the text, where
    # (?i) also matches 'ı' for 'i'; the key-word skip must not apply there
    texts = [
        "İ authorızation: Basic dXNlcjpwYXNzd29yZA== token",
        "İ pass: 'hunter22hunter22' and a token",
        "İ KEY = 'Zx8Qw3Rt7Yp2Lm5Nb9Vc4Xz1' done",
        'Σ password="Zx8Qw3Rt7Yp2Lm5Nb9"',
        "ıtoken = 'abcdEFGH1234ijkl'",
    ]
    assert _differences(texts) == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no shared corpus here")
def test_shared_corpus_masks_the_same() -> None:
    texts: list[str] = []
    for path in sorted(CORPUS.rglob("*")):
        if not path.is_file() or path.stat().st_size > 4 * 1024 * 1024:
            continue
        try:
            texts.extend(path.read_text("utf-8", "replace").splitlines())
        except OSError:
            continue
    assert len(texts) > 1000
    assert _differences(texts) == []


def test_sample_home_texts_mask_the_same(rendered_sample: Path) -> None:
    from agentdex.discovery import discover
    from agentdex.parsers import ParseCursor, run

    texts = [
        record.text
        for source in discover(str(rendered_sample)).sources
        if source.row.parser is not None
        for record in run(source, ParseCursor())
        if record.text
    ]
    assert len(texts) > 50
    assert _differences(texts) == []
