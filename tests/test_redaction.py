"""``export --redact``: every documented pattern masks its secret and leaves look-alikes alone.

Secrets are assembled at run time from pieces (``"gh" + "p_"``) so no
scanner mistakes this file for a leak; they have the real shapes.
"""

from __future__ import annotations

import re

import pytest

from agentdex.secrets import PATTERNS, count_kinds
from agentdex.secrets import redact as _redact
from conftest import REPO_DIR


def redact(text: str) -> tuple[str, object]:
    masked, findings = _redact(text)
    return masked, count_kinds(findings)


A36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # 36 alphanumerics
JWT = (
    "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".ey" + "JzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE"
    + " KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt\n"
    "-----END RSA PRIVATE" + " KEY-----"
)

#: pattern name -> (text holding a secret, the text after redaction)
POSITIVES: dict[str, list[tuple[str, str]]] = {
    "private-key": [
        (f"key:\n{PEM}\ndone", "key:\n[REDACTED:private-key]\ndone"),
        (
            "-----BEGIN OPENSSH PRIVATE" + " KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA (cut here",
            "[REDACTED:private-key]",
        ),
    ],
    "jwt": [(f"cookie session={JWT}; Path=/", "cookie session=[REDACTED:jwt]; Path=/")],
    "anthropic-key": [
        ("ANTHROPIC_API_KEY=sk-" + "ant-api03-" + A36, "ANTHROPIC_API_KEY=[REDACTED:anthropic-key]")
    ],
    "openai-key": [
        ("use sk-" + "proj-" + A36 + " here", "use [REDACTED:openai-key] here"),
        ('"key": "sk-' + A36[:24] + '"', '"key": "[REDACTED:openai-key]"'),
    ],
    "github-token": [
        (
            "git clone https://gh" + "p_" + A36 + "@github.com/o/r",
            "git clone https://[REDACTED:github-token]@github.com/o/r",
        ),
        ("token gh" + "s_" + A36, "token [REDACTED:github-token]"),
        (
            "github" + "_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "[REDACTED:github-token]",
        ),
    ],
    "aws-access-key-id": [
        (
            "aws_access_key_id = AK" + "IAIOSFODNN7EXAMPLE",
            "aws_access_key_id = [REDACTED:aws-access-key-id]",
        )
    ],
    "aws-secret-access-key": [
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [REDACTED:aws-secret-access-key]",
        )
    ],
    "slack-token": [
        ("SLACK=xo" + "xb-1234567890-0987654321-AbCdEfGhIjKl", "SLACK=[REDACTED:slack-token]"),
        ("xa" + "pp-1-A0123456789-abcdef", "[REDACTED:slack-token]"),
    ],
    "slack-webhook": [
        (
            "post to https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "post to https://hooks.slack.com/services/[REDACTED:slack-webhook]",
        )
    ],
    "stripe-key": [
        (
            "stripe.api_key = 'sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc'",
            "stripe.api_key = '[REDACTED:stripe-key]'",
        )
    ],
    "google-api-key": [
        ("?key=AI" + "zaSyA-1234567890abcdefghijklmnopqrstu", "?key=[REDACTED:google-api-key]")
    ],
    "bearer-token": [
        (
            "Authorization: Bearer abc123def456ghi789",
            "Authorization: Bearer [REDACTED:bearer-token]",
        ),
        (
            "-H 'authorization: bearer 9f8e7d6c5b4a39281706'",
            "-H 'authorization: bearer [REDACTED:bearer-token]'",
        ),
    ],
    "basic-auth": [
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:basic-auth]")
    ],
    "url-password": [
        (
            "DATABASE_URL=postgres://app:s3cr3t-pw@db:5432/app",
            "DATABASE_URL=postgres://app:[REDACTED:url-password]@db:5432/app",
        ),
        ("redis://default:hunter2@cache", "redis://default:[REDACTED:url-password]@cache"),
    ],
    "secret-assignment": [
        ("password=hunter22", "password=[REDACTED:secret-assignment]"),
        ('DB_PASSWORD: "correct horse battery"', 'DB_PASSWORD: "[REDACTED:secret-assignment]"'),
        ('{"client_secret": "a1b2c3d4e5"}', '{"client_secret": "[REDACTED:secret-assignment]"}'),
        ("export API_KEY=abcd1234efgh", "export API_KEY=[REDACTED:secret-assignment]"),
        ("auth_token: tkn-998877", "auth_token: [REDACTED:secret-assignment]"),
        ("passphrase = 'open sesame'", "passphrase = '[REDACTED:secret-assignment]'"),
    ],
    "credential-assignment": [
        ("SENDGRID_KEY=SG7xk2Lq9vT4mW8pR3zY6nB1", "SENDGRID_KEY=[REDACTED:credential-assignment]"),
        (
            '"encryption_key": "q8Zr2Lw9Xv4Tn7Kp1Ms6Yb3H"',
            '"encryption_key": "[REDACTED:credential-assignment]"',
        ),
        ("db_creds: Zk3xQ9wLp2Vn8Rt5Ys7M", "db_creds: [REDACTED:credential-assignment]"),
    ],
    # no key name before them: random base62 / base64 / base64url runs
    "high-entropy": [
        ("blob Zk3xQ9wLp2Vn8Rt5Ys7MaB4cD1eF", "blob [REDACTED:high-entropy]"),
        (
            "here it is:\nq8Zr2Lw9Xv4Tn7Kp1Ms6Yb3HcE5gJ0uWd/Af+Ri=\nthanks",
            "here it is:\n[REDACTED:high-entropy]\nthanks",
        ),
        (
            "export SERVICE_SIG=k7Pq2Zx9Lm4Wt8Rv1Ny6Bc3Hd5Gf",
            "export SERVICE_SIG=[REDACTED:high-entropy]",
        ),
        ("the hook is tX9-kQ2_zL7mWp4RvB8nYc3Hd6Jf.", "the hook is [REDACTED:high-entropy]."),
        ('{"value": "Zk3xQ9wLp2Vn8Rt5Ys7MaB4cD1eF"}', '{"value": "[REDACTED:high-entropy]"}'),
        ("sig: «Zk3xQ9wLp2Vn8Rt5Ys7MaB4cD1eF»", "sig: «[REDACTED:high-entropy]»"),  # not ASCII
    ],
}

#: Text that looks close to a secret and must come out unchanged.
NEGATIVES = [
    "max_tokens=1000",
    "token = get_token()",
    "if token == expected:",
    "api_key: str = Field(...)",
    "token: string;",
    "password: ${DB_PASSWORD}",
    "password = os.environ['DB_PASSWORD']",
    "secret_name: null",
    "the password is stored in the vault",
    "use a bearer token for authentication",
    "Bearer authentication is used here",
    "task-sk-thing and risk-assessment-document-2026",
    "sk-short1",
    "ghp_tooShort123",
    "AKIA is the prefix of AWS key ids",
    "https://example.com:8080/path@v2",
    "eyJhbGciOiJIUzI1NiJ9 alone is a header, not a token",
    "git@github.com:owner/repo.git",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "tokenizer = AutoTokenizer.from_pretrained(name)",
    "xoxo hugs",
    # only looks random: git SHAs, UUIDs, digests, base64 data, long identifiers, paths
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "cache_key = 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    'api_key_id = "0f8fad5b-d9cb-469f-a165-70867728950e"',
    '{"sessionId": "0f8fad5b-d9cb-469f-a165-70867728950e"}',
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    '"integrity": "sha512-Q2VudHJhbCBpbnRlZ3JpdHkgdmFsdWUgaGVyZSBmb3IgdGVzdHM="',
    "key: src/agentdex/config_service_handler/ConfigServiceHandlerManager75.py",
    "class RequestHandlerFactoryConfigManager2: pass",
    "private_key_path = ~/.ssh/id_ed25519_work",
    "apiKey = process.env.OPENROUTER_API_KEY;",
    "expectedToken: expectedToken,",
    "OPENAI_API_KEY=your-key-here",
    "api_key: <your key>",
    "  - Token: gho_************************************",
    'f.Add("http://localhost:3000@attacker.com")',
    # bare runs that only look random (high-entropy), most seen in the shared corpus
    "Model swapped from Qwen3.5-4B to Qwen3-VL-8B-Instruct",
    "cd /tmp/TestInitCommand3364995919/001",
    "[ queued] P35 audit-loop — cold-audit-cron_daemon-py-20260608T215721",
    "<tool-use-id>toolu_01JxSQrx7ewYtedpaQBkAzLp</tool-use-id>",
    "request req_011CUxK2m9PqRtYvZ4bN7wLs failed",
    "getUserAccountByIdentifier2 calls SHA256HashOfTheFile",
    "see src/components/UserProfileCard/UserProfileCard2.tsx",
    "HEAD 3f786850e387550fdab836ed7e6dc881de23001b, 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B",
    "https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
    "open http://localhost:3000/share/Zk3xQ9wLp2Vn8Rt5Ys7MaB4cD1eF in a browser",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@host",
    "github.com/stretchr/testify v1.8.4 h1:CcVxjf3Q8PM0mHUKJCdn+eZZtm5yQwehR5yeSVQQcUk=",
    "curl Zk3xQ9wLp2Vn8Rt5Ys7MaB4cD1eF.lambda-url.us-east-1.on.aws",
    "LONG_SETTING_NAME_FOR_2026=value",
]


def test_every_pattern_has_a_positive_case() -> None:
    assert {p.name for p in PATTERNS} == set(POSITIVES)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [(name, text, expected) for name, cases in POSITIVES.items() for text, expected in cases],
)
def test_pattern_masks_its_secret(name: str, text: str, expected: str) -> None:
    masked, counts = redact(text)
    assert masked == expected
    assert counts[name] >= 1


@pytest.mark.parametrize("text", NEGATIVES)
def test_look_alikes_are_left_alone(text: str) -> None:
    masked, counts = redact(text)
    assert masked == text and not counts


def test_masking_twice_changes_nothing_more() -> None:
    text = "\n".join(case for cases in POSITIVES.values() for case, _ in cases)
    once, _ = redact(text)
    twice, counts = redact(once)
    assert twice == once and not counts


def test_patterns_are_documented_in_order() -> None:
    doc = (REPO_DIR / "docs" / "resume-and-export.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| (.+) \|$", doc, flags=re.MULTILINE)
    assert rows == [(p.name, p.description) for p in PATTERNS]


def test_large_text_stays_linear() -> None:
    import time

    text = ("password is near but " * 20000) + (
        "-----BEGIN EC PRIVATE" + " KEY-----\n" + "A" * 200000
    )
    started = time.perf_counter()
    masked, counts = redact(text)
    assert counts["private-key"] == 1 and masked.endswith("[REDACTED:private-key]")
    assert time.perf_counter() - started < 5


def test_random_tokens_are_masked_and_words_are_not() -> None:
    """Recall of the bare-token rule on seeded random tokens of each alphabet (20-64
    characters); its expected misses are tokens without a digit or one of the two cases,
    or that happen to read as words."""
    import random
    import string

    rng = random.Random(25)
    alphabets = {
        "base62": string.ascii_letters + string.digits,
        "base64": string.ascii_letters + string.digits + "+/",
        "base64url": string.ascii_letters + string.digits + "-_",
    }
    for name, alphabet in alphabets.items():
        tokens = [
            "".join(rng.choice(alphabet) for _ in range(rng.randrange(20, 65))) for _ in range(400)
        ]
        masked = [
            t for t in tokens if redact(f"use {t} now")[0] == "use [REDACTED:high-entropy] now"
        ]
        assert len(masked) >= 0.93 * len(tokens), name
    words = [
        "user",
        "Service",
        "handler",
        "Factory",
        "request",
        "Config",
        "value",
        "Manager2",
        "v3",
        "api",
    ]
    for _ in range(400):
        ident = "".join(w.capitalize() for w in rng.sample(words, 5)) + str(rng.randrange(1000))
        joined = rng.choice("-_/").join(rng.sample(words, 6))
        assert redact(f"{ident} {joined}")[0] == f"{ident} {joined}"


def test_bare_tokens_found_in_the_shared_corpus_are_few() -> None:
    """False positives of ``high-entropy`` on real public transcripts (no secrets in them:
    MANIFEST.md): every line of every corpus file, at most one token per MB. Measured when
    the rule was added: 8 in 10 MB, all one sample WebSocket key (base64 of 'the sample
    nonce') in Go test code quoted eight times; 0 in the texts agentdex indexes from it."""
    from agentdex.entropy import bare_tokens
    from conftest import CORPUS_DIR

    if not (CORPUS_DIR / "MANIFEST.md").is_file():
        pytest.skip("shared corpus not present beside this clone")
    size = 0
    found: list[str] = []
    for path in sorted(CORPUS_DIR.rglob("*")):
        if not path.is_file() or path.suffix in {".png", ".jpg", ".gz", ".zip", ".db"}:
            continue
        data = path.read_bytes()
        size += len(data)
        for line in data.decode("utf-8", "replace").splitlines():
            found += [line[start:end] for start, end in bare_tokens(line)]
    assert size > 1_000_000
    assert len(found) <= size / 1_000_000, found
