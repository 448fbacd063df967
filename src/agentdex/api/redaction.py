"""Mask what looks like a key or a token in exported text (``export --redact``).

Each :class:`SecretPattern` is documented in ``docs/resume-and-export.md``
and tested with a real-shaped secret and with look-alikes that must stay.
Patterns run in order, most specific first, so a GitHub token inside a
``token=`` assignment is labelled ``github-token``. A match is replaced by
``[REDACTED:<name>]``; the part of a match that only gives context (``Bearer``,
``password=``, ``postgres://user:``) is kept. Redaction is a safety net for
sharing a transcript, not a guarantee: an unusual secret can slip through.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import partial

#: Values of ``key = value`` assignments that are types or placeholders, not secrets.
_NOT_A_VALUE = (
    r"(?!(?:str|string|int|bool|boolean|number|none|null|nil|true|false|undefined|any|bytes"
    r"|optional)\b)"
)
_UNQUOTED = r"[^\s\"'`,;&()<>\[\]{}]{4,}(?=$|[\s\"'`,;&)\]}>])"
_KEYWORDS = (
    r"password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token"
)


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One kind of secret: the ``secret`` group (or the whole match) is masked."""

    name: str
    description: str
    regex: re.Pattern[str]


def _p(name: str, description: str, pattern: str, flags: int = 0) -> SecretPattern:
    return SecretPattern(name, description, re.compile(pattern, flags))


PATTERNS: tuple[SecretPattern, ...] = (
    _p(
        "private-key",
        "a PEM private key block, BEGIN to END (or to the end of the text when cut)",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    _p(
        "jwt",
        "a JSON Web Token: three base64url parts, the first two starting `eyJ`",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
    ),
    _p(
        "anthropic-key",
        "an Anthropic API key `sk-ant-...` (20+ characters after the prefix)",
        r"\bsk-ant-[A-Za-z0-9_-]{20,}",
    ),
    _p(
        "openai-key",
        "an OpenAI-style key `sk-...`, `sk-proj-...` (20+ characters, at least one digit)",
        r"\bsk-(?=[A-Za-z0-9_-]{20,})(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]+",
    ),
    _p(
        "github-token",
        "a GitHub token: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 36 characters, or a "
        "fine-grained `github_pat_...`",
        r"\b(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
    ),
    _p(
        "aws-access-key-id",
        "an AWS access key id: `AKIA`, `ASIA` (and the other AWS id prefixes) + 16 "
        "upper-case letters or digits",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}\b",
    ),
    _p(
        "aws-secret-access-key",
        "the 40-character value of an `aws_secret_access_key` assignment",
        r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})"
        r"(?![A-Za-z0-9/+=])",
    ),
    _p(
        "slack-token",
        "a Slack token `xoxb-`, `xoxp-`, `xoxa-`, `xoxo-`, `xoxs-`, `xoxr-` or an app "
        "token `xapp-`",
        r"\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})",
    ),
    _p(
        "slack-webhook",
        "the secret path of a Slack incoming webhook `hooks.slack.com/services/...`",
        r"https://hooks\.slack\.com/services/(?P<secret>[A-Za-z0-9/_-]{20,})",
    ),
    _p(
        "stripe-key",
        "a Stripe secret or restricted key `sk_live_`, `sk_test_`, `rk_live_`, `rk_test_`",
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    _p(
        "google-api-key",
        "a Google API key `AIza` + 35 characters",
        r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",
    ),
    _p(
        "bearer-token",
        "the token after `Bearer ` (16+ characters with at least one digit, so prose such "
        "as 'bearer authentication' stays)",
        r"\b[Bb]earer\s+(?P<secret>(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)",
    ),
    _p(
        "basic-auth",
        "the credentials after `Authorization: Basic `",
        r"(?i)\bauthorization[\"']?\s*:\s*[\"']?basic\s+(?P<secret>[A-Za-z0-9+/]{8,}=*)",
    ),
    _p(
        "url-password",
        "the password in a URL `scheme://user:password@host`",
        r"\b[a-z][a-z0-9+.-]*://[^\s:/@\[\]]+:(?P<secret>[^\s@/\[\]]+)(?=@)",
        re.IGNORECASE,
    ),
    _p(
        "secret-assignment",
        "the value of an assignment whose key ends in password, passwd, passphrase, secret, "
        "token, api_key/apikey, access_key, secret_key, private_key, client_secret or "
        'auth_token (`KEY=value`, `key: value`, `"key": "value"`): a quoted value of 4+ '
        "characters, or a bare one of 4+ characters that is not a call, an index, a "
        "variable reference (`$X`) or a type name (`str`, `string`, `null`...)",
        rf"(?i)\b[\w.-]*?(?:{_KEYWORDS})[\"']?\s*[:=](?!=)\s*"
        rf"(?P<secret>\"(?!\[REDACTED){_NOT_A_VALUE}[^\"\n]{{4,}}\""
        rf"|'(?!\[REDACTED){_NOT_A_VALUE}[^'\n]{{4,}}'"
        rf"|(?!\[REDACTED|\$){_NOT_A_VALUE}{_UNQUOTED})",
    ),
)


class Redactor:
    """Masks secrets in texts and counts what it masked, per pattern."""

    def __init__(self, patterns: tuple[SecretPattern, ...] = PATTERNS) -> None:
        self.patterns = patterns
        self.counts: Counter[str] = Counter()

    def __call__(self, text: str) -> str:
        for pattern in self.patterns:
            text = pattern.regex.sub(partial(self._mask, pattern.name), text)
        return text

    def _mask(self, name: str, match: re.Match[str]) -> str:
        self.counts[name] += 1
        label = f"[REDACTED:{name}]"
        if "secret" not in match.re.groupindex:
            return label
        whole, start, end = match.group(0), *match.span("secret")
        offset = match.start()
        value = match.group("secret")
        quote = value[0] if value[:1] in {'"', "'"} and value[-1:] == value[:1] else ""
        return whole[: start - offset] + quote + label + quote + whole[end - offset :]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def redact(text: str) -> tuple[str, Counter[str]]:
    """``text`` with every secret masked, and how many of each kind were masked."""
    redactor = Redactor()
    return redactor(text), redactor.counts
