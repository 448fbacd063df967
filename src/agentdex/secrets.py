"""Find secrets in text and mask them: ``redact(text) -> (masked, findings)``.

A bottom-layer module (it imports nothing from agentdex), so every layer may
call it: the index and the archive redact each record before they store it,
``export --redact`` and a team push run it before anything leaves the machine.

Each :class:`SecretPattern` is documented in ``docs/resume-and-export.md``
and tested with a real-shaped secret and with look-alikes that must stay
(``tests/test_redaction.py``; git SHAs, UUIDs, hashes, base64 data and long
identifiers included). Patterns are tried in order, most specific first: a
GitHub token inside a ``token=`` assignment is labelled ``github-token``,
and a later pattern never masks inside an earlier one's match. The secret
(the ``secret`` group, or the whole match) becomes ``[REDACTED:<kind>]``;
the context of a match (``Bearer``, ``password=``, ``postgres://user:``) is
kept. A :class:`Finding` says which kind was masked and where its label is
in the masked text; it never holds the value.

Speed: each pattern has *needles*, lower-case substrings one of which any
match contains; a pattern whose needles are all absent from the text is not
run. Most records hold none, so most records cost one ``lower()``, one
pass that finds every needle at once (Aho-Corasick, ``ahocorasick_rs``) and
the patterns run on every text (gates, ``high-entropy``'s finder). An
assignment pattern also needs one of its key words followed by ``=`` or
``:`` (``SecretPattern.keys``), checked with ``str.find`` before its regex
runs. These skips only leave out patterns that cannot match:
``tests/test_secrets_fast.py`` compares the masks with running every pattern
whose needles are present. Redaction is a safety net, not a guarantee: an unusual
secret can slip through.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, count
from operator import add
from typing import Any

from agentdex.entropy import CANDIDATE, bare_tokens, run_starts, shannon_bits

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
#: names that hold a credential when their value looks random (``STRIPE_KEY=...``)
_CREDENTIAL_NAMES = r"key|keys|credentials?|creds?|pwd|pass|auth|apikey"
LABEL = "[REDACTED:{}]"
_LABEL_START = "[REDACTED:"


Check = Callable[[str], bool]
#: the (start, end) of each secret in a text, for a pattern a regex cannot say
Finder = Callable[[str], Iterator[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One kind of secret: the ``secret`` group (or the whole match) is masked.

    ``needles``: substrings one of which every match contains; the pattern
    is skipped on a text without any. A case-insensitive pattern (``(?i)``)
    has lower-case needles and runs on the lower-cased text (``fast``,
    several times quicker than ``(?i)``); a case-sensitive one has needles
    as written. ``check``: an extra test of the value (entropy, placeholder),
    when the regex alone is too broad.
    """

    name: str
    description: str
    regex: re.Pattern[str]
    needles: tuple[str, ...]
    check: Check | None = None
    #: a regex any match contains, tried when one of the needles (lower-cased) is in the
    #: lower-cased text, or on every text when there are none
    gate: re.Pattern[str] | None = None
    #: the same pattern without ``(?i)``, for the lower-cased text (None: case-sensitive)
    fast: re.Pattern[str] | None = None
    #: finds the secrets instead of ``regex`` (which then documents the candidates), on
    #: every text: no needles
    finder: Finder | None = None
    #: a case-insensitive pattern's key words (``token``, ``key``...) one of which any
    #: match has right before its ``=`` or ``:`` (:func:`_assigned`): when none of them is
    #: followed by one in the lower-cased text, the pattern is not run
    keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Finding:
    """One masked secret: its kind and where its ``[REDACTED:<kind>]`` label starts
    and ends in the masked text (character offsets). Never the value."""

    kind: str
    start: int
    end: int


def _p(
    name: str,
    description: str,
    pattern: str,
    needles: tuple[str, ...],
    check: Check | None = None,
    gate: str | None = None,
    finder: Finder | None = None,
    keys: tuple[str, ...] = (),
) -> SecretPattern:
    fast = None
    if pattern.startswith("(?i)"):
        fast = re.compile(pattern.removeprefix("(?i)").replace("REDACTED", "redacted"))
    gated = None if gate is None else re.compile(gate)
    return SecretPattern(
        name, description, re.compile(pattern), needles, check, gated, fast, finder, keys
    )


_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_SEPARATORS = re.compile(r"[/.:\\-]+")
#: a word of a name: letters and underscores, digits only at its end
_WORD = re.compile(r"[A-Za-z_]*[A-Za-z][A-Za-z_]*[0-9]{0,4}|[0-9]{1,4}")


def looks_random(value: str) -> bool:
    """Does an assigned value look like a generated credential?

    16+ characters, letters *and* digits, at least 3.5 bits of entropy per
    character; not hex alone (git SHAs, digests), not a UUID, not a dotted or
    slashed path of words (``module.Class``, ``src/app.py``), not ``$VAR``.
    """
    value = value.strip("\"'")
    if len(value) < 16 or value.startswith(("$", "${", "%", "<", "[REDACTED")):
        return False
    if _HEX.fullmatch(value) or _UUID.fullmatch(value):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    parts = _SEPARATORS.split(value)
    if len(parts) > 1 and all(_WORD.fullmatch(part) for part in parts if part):
        return False  # a path or a dotted name: every part a word (``src/app_v2/main.py``)
    return shannon_bits(value) >= 3.5


#: a dotted reference (``process.env.API_KEY``) or a camelCase variable named after what
#: it holds (``expectedToken``, ``apiKey``)
_REFERENCE = re.compile(
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+"
    r"|[a-z]+(?:[A-Z][a-z]+)*(?:Token|Key|Secret|Password|Passwd|Pass|Pwd|Credentials?)"
)
_PLACEHOLDER = re.compile(
    r"(?i)<[^>]*>|\.\.\.+|[x*•.]{3,}|.*\*{4,}.*|changeme|placeholder|example|dummy|redacted"
    r"|your[-_ ].*|.*[-_ ]here"
)


def plausible_value(value: str) -> bool:
    """Could this assigned value be a real secret? Not a reference to one.

    A bare ``process.env.API_KEY``, ``self.token`` or camelCase ``expectedToken``
    names a variable; ``<token>``, ``your-key-here``, ``****`` and
    ``gho_****`` (already masked by the tool that printed it) hold nothing.
    """
    quoted = value[:1] in {'"', "'"}
    value = value.strip("\"'")
    if not quoted and _REFERENCE.fullmatch(value):
        return False
    return _PLACEHOLDER.fullmatch(value) is None


PATTERNS: tuple[SecretPattern, ...] = (
    _p(
        "private-key",
        "a PEM private key block, BEGIN to END (or to the end of the text when cut)",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ("KEY",),
    ),
    _p(
        "jwt",
        "a JSON Web Token: three base64url parts, the first two starting `eyJ`",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        ("eyJ",),
    ),
    _p(
        "anthropic-key",
        "an Anthropic API key `sk-ant-...` (20+ characters after the prefix)",
        r"\bsk-ant-[A-Za-z0-9_-]{20,}",
        ("sk-",),
    ),
    _p(
        "openai-key",
        "an OpenAI-style key `sk-...`, `sk-proj-...` (20+ characters, at least one digit)",
        r"\bsk-(?=[A-Za-z0-9_-]{20,})(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]+",
        ("sk-",),
    ),
    _p(
        "github-token",
        "a GitHub token: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 36 characters, or a "
        "fine-grained `github_pat_...`",
        r"\b(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        gate=r"gh[pousr]_|github_pat_",
    ),
    _p(
        "aws-access-key-id",
        "an AWS access key id: `AKIA`, `ASIA` (and the other AWS id prefixes) + 16 "
        "upper-case letters or digits",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}\b",
        ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA"),
        gate=r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|PKA|ROA)[A-Z0-9]{16}",
    ),
    _p(
        "aws-secret-access-key",
        "the 40-character value of an `aws_secret_access_key` assignment",
        r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})"
        r"(?![A-Za-z0-9/+=])",
        ("secret",),
    ),
    _p(
        "slack-token",
        "a Slack token `xoxb-`, `xoxp-`, `xoxa-`, `xoxo-`, `xoxs-`, `xoxr-` or an app "
        "token `xapp-`",
        r"\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})",
        ("xox", "xapp"),
    ),
    _p(
        "slack-webhook",
        "the secret path of a Slack incoming webhook `hooks.slack.com/services/...`",
        r"https://hooks\.slack\.com/services/(?P<secret>[A-Za-z0-9/_-]{20,})",
        ("://",),
    ),
    _p(
        "stripe-key",
        "a Stripe secret or restricted key `sk_live_`, `sk_test_`, `rk_live_`, `rk_test_`",
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        ("_live_", "_test_"),
    ),
    _p(
        "google-api-key",
        "a Google API key `AIza` + 35 characters",
        r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",
        ("AIza",),
    ),
    _p(
        "bearer-token",
        "the token after `Bearer ` (16+ characters with at least one digit, so prose such "
        "as 'bearer authentication' stays)",
        r"\b[Bb]earer\s+(?P<secret>(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)",
        ("Bearer", "bearer"),
    ),
    _p(
        "basic-auth",
        "the credentials after `Authorization: Basic `",
        r"(?i)\bauthorization[\"']?\s*:\s*[\"']?basic\s+(?P<secret>[A-Za-z0-9+/]{8,}=*)",
        ("auth",),
        keys=("authorization",),
    ),
    _p(
        "url-password",
        "the password in a URL `scheme://user:password@host`",
        r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^\s:/@\[\]]+:(?P<secret>[^\s@/\[\]]+)(?=@)",
        ("://",),
        check=lambda value: not (value.isdigit() and len(value) <= 5),  # a port, not a password
    ),
    _p(
        "secret-assignment",
        "the value of an assignment whose key ends in password, passwd, passphrase, secret, "
        "token, api_key/apikey, access_key, secret_key, private_key, client_secret or "
        'auth_token (`KEY=value`, `key: value`, `"key": "value"`): a quoted value of 4+ '
        "characters, or a bare one of 4+ characters that is not a call, an index, a "
        "variable reference (`$X`, `process.env.X`, `camelCase`) or a type name (`str`, "
        "`string`, `null`...); placeholders (`<key>`, `your-key-here`, `****`) stay",
        rf"(?i)(?:{_KEYWORDS})[\"']?\s*[:=](?!=)\s*"
        rf"(?P<secret>\"(?!\[REDACTED){_NOT_A_VALUE}[^\"\n]{{4,}}\""
        rf"|'(?!\[REDACTED){_NOT_A_VALUE}[^'\n]{{4,}}'"
        rf"|(?!\[REDACTED|\$){_NOT_A_VALUE}{_UNQUOTED})",
        ("pass", "secret", "token", "key"),
        check=plausible_value,
        # how every one of _KEYWORDS ends
        keys=("word", "wd", "phrase", "secret", "token", "key"),
    ),
    _p(
        "credential-assignment",
        "the value of an assignment whose key ends in key, credential(s), cred(s), pwd, pass "
        "or auth (`STRIPE_KEY=...`, `encryption_key: ...`) when the value "
        "looks generated: 16+ characters, letters and digits, at least 3.5 bits of entropy "
        "a character, and not hex alone (git SHAs, digests), a UUID or a path",
        rf"(?i)(?:{_CREDENTIAL_NAMES})[\"']?\s*[:=](?!=)\s*"
        r"(?P<secret>\"[^\"\s]{16,}\"|'[^'\s]{16,}'|[A-Za-z0-9+/=_.~-]{16,}(?![^\s\"'`,;)\]}>]))",
        ("key", "cred", "pwd", "pass", "auth"),
        check=looks_random,
        # how every one of _CREDENTIAL_NAMES ends, less a plural's ``s`` (:data:`_ASSIGNS`)
        keys=("key", "cred", "credential", "pwd", "pass", "auth"),
    ),
    _p(
        "high-entropy",
        "a bare token with no key name before it: a lone run of 20-256 base62/base64 "
        "characters with a digit, an upper-case and a lower-case letter, not made of words, "
        "whose Shannon entropy is within 0.5 bits a character of a random string's of its "
        "length; never hex alone (git SHAs, digests), a UUID, anything in a URL, after a dot "
        "or in a PEM block (certificates, public keys), a `sha512-` integrity value, a `h1:` "
        "Go sum, `data:` URL base64, an SSH public key (`AAAA...`), base64 JSON (`eyJ...`) "
        "or an agent's object id (`toolu_`, `msg_`, `req_`, `call_`...)",
        CANDIDATE.pattern,
        (),
        finder=bare_tokens,
    ),
)


def _needles(patterns: tuple[SecretPattern, ...]) -> tuple[str, ...]:
    """Every pattern's needles, lower-cased, each once: one pass over them tells which
    patterns can match (most texts hold none)."""
    if patterns is PATTERNS:
        return _NEEDLES
    return tuple(dict.fromkeys(needle.lower() for p in patterns for needle in p.needles))


def _add_spans(
    text: str,
    found: Iterable[tuple[int, int]],
    pattern: SecretPattern,
    spans: list[tuple[int, int, str]],
) -> None:
    """Add to ``spans`` each of ``found`` that passes the pattern's check and lies
    outside every earlier (more specific) match."""
    for start, end in found:
        value = text[start:end]
        if value.startswith(_LABEL_START) or value[1:].startswith(_LABEL_START):
            continue  # masked already
        if pattern.check is not None and not pattern.check(value):
            continue
        if value[:1] in {'"', "'"} and value[-1:] == value[:1] and len(value) > 1:
            start, end = start + 1, end - 1  # keep the quotes
        if any(s < end and start < e for s, e, _ in spans):
            continue  # inside an earlier, more specific match
        spans.append((start, end, pattern.name))


#: what follows a key word in an assignment (``s`` first: ``keys``, ``creds``)
_ASSIGNS = re.compile(r"s?[\"']?\s*[:=](?!=)")


def _assigned(lowered: str, keys: tuple[str, ...]) -> bool:
    """Is one of ``keys`` followed by ``=`` or ``:`` (an optional ``s``, quote and spaces
    between) somewhere in ``lowered``? Every match of an assignment pattern is."""
    follows = _ASSIGNS.match
    for key in keys:
        at = lowered.find(key)
        while at >= 0:
            if follows(lowered, at + len(key)) is not None:
                return True
            at = lowered.find(key, at + 1)
    return False


def _may_match(
    pattern: SecretPattern, text: str, lowered: str, present: Collection[str], same: bool
) -> bool:
    """Can ``pattern`` match ``text``? False only when none of its needles (or its gate)
    is there. ``present``: the lower-cased needles ``lowered`` holds; ``same``: lowering
    kept the length (the case-insensitive patterns then run on ``lowered``)."""
    if pattern.finder is not None:
        return True
    if pattern.gate is not None:
        if pattern.needles and not any(needle.lower() in present for needle in pattern.needles):
            return False  # a gated pattern's needles: what its gate needs, lower-cased
        return pattern.gate.search(text if pattern.fast is None else lowered) is not None
    if pattern.fast is None:  # case-sensitive needles: the lower-cased ones were a hint
        return any(needle in text for needle in pattern.needles if needle.lower() in present)
    if not any(needle in present for needle in pattern.needles):
        return False
    return not (pattern.keys and same) or _assigned(lowered, pattern.keys)


#: finds every needle of :data:`PATTERNS` in one pass (built on first use)
_FINDER: Any = None


def _present(lowered: str, patterns: tuple[SecretPattern, ...]) -> list[str]:
    """The lower-cased needles of ``patterns`` that ``lowered`` holds.

    :data:`PATTERNS`' needles are found in one pass (an Aho-Corasick automaton,
    ``ahocorasick_rs``): a scan of the text per needle was most of what masking cost
    a build, since most texts hold none.
    """
    if patterns is not PATTERNS:
        return [needle for needle in _needles(patterns) if needle in lowered]
    global _FINDER
    if _FINDER is None:
        import ahocorasick_rs

        _FINDER = ahocorasick_rs.AhoCorasick(list(_NEEDLES))
    try:
        found = _FINDER.find_matches_as_indexes(lowered, overlapping=True)
    except UnicodeEncodeError:  # a lone surrogate (a raw line's undecodable byte)
        return [needle for needle in _NEEDLES if needle in lowered]
    if not found:
        return []
    return [_NEEDLES[i] for i in {match[0] for match in found}]


def _candidates(
    text: str, lowered: str, patterns: tuple[SecretPattern, ...], same: bool
) -> list[SecretPattern]:
    """The patterns, in order, that can match ``text``.

    A pattern without any of its needles in the lower-cased text is left out, as is
    a gated one whose gate does not match and an assignment pattern none of whose
    key words is followed by ``=`` or ``:``.
    """
    present = _present(lowered, patterns)
    if patterns is not PATTERNS:
        return [p for p in patterns if _may_match(p, text, lowered, present, same)]
    if present:
        # only the patterns a present needle stands for (and those tried on every text)
        chosen = sorted({*_ALWAYS, *(i for needle in present for i in _USERS[needle])})
    else:
        chosen = list(_ALWAYS)
    return [PATTERNS[i] for i in chosen if _may_match(PATTERNS[i], text, lowered, present, same)]


def redact(text: str, patterns: tuple[SecretPattern, ...] = PATTERNS) -> tuple[str, list[Finding]]:
    """``text`` with every secret masked as ``[REDACTED:<kind>]``, and what was masked.

    Cheap when there is nothing to find: ``redact(t)[0] is t`` then.
    """
    if len(text) < 8:
        return text, []
    lowered = text.lower()
    same = len(lowered) == len(text)  # spans in the lower-cased text are spans in ``text``
    candidates = _candidates(text, lowered, patterns, same)
    if not candidates:
        return text, []
    return masked(text, spans_of(text, lowered, candidates))


def spans_of(
    text: str, lowered: str, patterns: Iterable[SecretPattern]
) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of each secret ``patterns`` (tried in order) find in ``text``;
    a later pattern never inside an earlier one's match. ``lowered``: ``text.lower()``."""
    same = len(lowered) == len(text)  # spans in the lower-cased text are spans in ``text``
    spans: list[tuple[int, int, str]] = []
    for pattern in patterns:
        if pattern.finder is not None:
            _add_spans(text, pattern.finder(text), pattern, spans)
            continue
        grouped = "secret" in pattern.regex.groupindex
        if pattern.fast is not None and same:
            matches = pattern.fast.finditer(lowered)
        else:
            matches = pattern.regex.finditer(text)
        found = (match.span("secret") if grouped else match.span() for match in matches)
        _add_spans(text, found, pattern, spans)
    return spans


def masked(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, list[Finding]]:
    """``text`` with each span replaced by its ``[REDACTED:<kind>]`` label, and the
    findings (``text`` itself when there are no spans)."""
    if not spans:
        return text, []
    spans = sorted(spans)
    parts: list[str] = []
    findings: list[Finding] = []
    at = 0
    size = 0
    for start, end, kind in spans:
        parts.append(text[at:start])
        size += start - at
        label = LABEL.format(kind)
        findings.append(Finding(kind, size, size + len(label)))
        parts.append(label)
        size += len(label)
        at = end
    parts.append(text[at:])
    return "".join(parts), findings


_NEEDLES = tuple(dict.fromkeys(needle.lower() for p in PATTERNS for needle in p.needles))
#: the positions in :data:`PATTERNS` of those tried on every text (no needles)
_ALWAYS = tuple(i for i, p in enumerate(PATTERNS) if not p.needles)
#: the positions in :data:`PATTERNS` of the patterns each lower-cased needle stands for
_USERS: dict[str, tuple[int, ...]] = {}
for _i, _pattern in enumerate(PATTERNS):
    for _needle in _pattern.needles:
        _USERS[_needle.lower()] = (*_USERS.get(_needle.lower(), ()), _i)


#: the key words of :data:`PATTERNS`' assignment patterns (``SecretPattern.keys``)
_KEY_WORDS = tuple(dict.fromkeys(key for p in PATTERNS for key in p.keys))
#: what the batch automaton finds: the needles, then the key words that are not needles
_WORDS = _NEEDLES + tuple(key for key in _KEY_WORDS if key not in _NEEDLES)
#: by position in :data:`_WORDS`: is the word a key word (its assignment looked for)
_IS_KEY = tuple(word in _KEY_WORDS for word in _WORDS)
#: what may follow a key word in an assignment, in the lower-cased UTF-8 (at least whenever
#: :data:`_ASSIGNS` follows it in the text: any byte of a multi-byte character and the
#: C0 separators stand for ``\s``'s non-ASCII and other white space)
_ASSIGNS_BYTES = re.compile(rb"s?[\"']?[\s\x1c-\x1f\x80-\xff]*[:=](?!=)")
#: finds every word of :data:`_WORDS` in UTF-8 bytes (built on first use)
_BYTES_FINDER: Any = None
#: what separates the texts of a batch (:func:`scan`): no needle and no token holds it
SEPARATOR = "\x00"


@dataclass(slots=True)
class Scanned:
    """What :func:`scan` found in one text of a batch."""

    #: the lower-cased needles of :data:`PATTERNS` the text holds (what ``_present`` gives)
    present: set[str]
    #: it holds a run ``high-entropy``'s finder would weigh (:func:`agentdex.entropy.run_starts`)
    runs: bool = False
    #: the key words (:data:`_KEY_WORDS`) followed by what may be an assignment's ``=`` or
    #: ``:`` in the text (a superset of those :func:`_assigned` would find), None when not
    #: looked for
    assigned: set[str] | None = None


def scan(
    lower: bytes, data: bytes, lower_ends: list[int], data_ends: list[int]
) -> dict[int, Scanned]:
    """The texts of a batch that :func:`redact` might change, by position, with what
    :func:`redact_scanned` needs to mask them; every other text ``redact`` returns
    unchanged (with no findings).

    ``data`` is the UTF-8 (``surrogatepass``) of the batch's texts joined by
    :data:`SEPARATOR`, ``lower`` that of their lower-cased texts joined the same way (no
    text holds the separator); ``data_ends[i]`` and ``lower_ends[i]`` are where text
    ``i`` ends in each. A text can change only when it holds one of :data:`PATTERNS`'
    needles (lower-cased; all of them found in one pass over ``lower``: the needles are
    ASCII, so a byte match is a character match) or a run ``high-entropy``'s finder
    would weigh (one pass over ``data``); neither crosses a separator. One pass over a
    batch instead of a few calls per text, and most texts hold neither
    (``tests/test_prepare_batch.py`` checks the claim against ``redact``).
    """
    global _BYTES_FINDER
    if _BYTES_FINDER is None:
        import ahocorasick_rs

        _BYTES_FINDER = ahocorasick_rs.BytesAhoCorasick([n.encode() for n in _WORDS])
    found: dict[int, Scanned] = {}
    # the key words followed by an assignment, by text (kept for the texts found)
    assigned: dict[int, set[str]] = {}
    # matches come by where they end: one that starts before the last one's text ends is
    # in that text (or it would hold a separator)
    last = -1
    text = -1
    entry = Scanned(set())
    words, needles, is_key = _WORDS, len(_NEEDLES), _IS_KEY
    follows = _ASSIGNS_BYTES.match
    for word, at, end in _BYTES_FINDER.find_matches_as_indexes(lower, overlapping=True):
        if at >= last:
            text = bisect_left(lower_ends, at)
            last = lower_ends[text]
            entry = Scanned(set())
        if word < needles:
            if not entry.present:
                got = found.get(text)
                if got is None:
                    found[text] = entry
                else:
                    entry = got
            entry.present.add(words[word])
        if is_key[word] and follows(lower, end, last) is not None:
            keys = assigned.get(text)
            if keys is None:
                keys = assigned[text] = set()
            keys.add(words[word])
    last = -1
    for at in run_starts(data):
        if at >= last:
            text = bisect_left(data_ends, at)
            last = data_ends[text]
            got = found.get(text)
            entry = found[text] = Scanned(set()) if got is None else got
            entry.runs = True
    for text, entry in found.items():
        entry.assigned = assigned.get(text, set())
    return found


#: by lower-cased needle: the key words of its patterns when every one of them is an
#: assignment pattern :func:`redact_scanned` tries only when one of its key words is
#: followed by an assignment (``keys``, case-insensitive, needles present); else absent
_NEEDLE_KEYS: dict[str, frozenset[str]] = {
    needle: frozenset(key for i in users for key in PATTERNS[i].keys)
    for needle, users in _USERS.items()
    if all(
        PATTERNS[i].keys and PATTERNS[i].fast is not None and PATTERNS[i].finder is None
        for i in users
    )
}
#: the patterns tried on every text are all found by a finder (``high-entropy``), which
#: :func:`redact_scanned` skips when the scan found no run to weigh
_QUIET = all(PATTERNS[i].finder is not None for i in _ALWAYS)


def redact_scanned(text: str, lowered: str, scanned: Scanned) -> tuple[str, list[Finding]]:
    """:func:`redact` of a text :func:`scan` found (``lowered``: ``text.lower()``): the same
    patterns tried (from the needles it holds), and ``high-entropy`` only when it holds a
    run to weigh (without one its finder finds nothing)."""
    if len(text) < 8:
        return text, []
    present = scanned.present
    same = len(lowered) == len(text)
    assigned = scanned.assigned
    if not scanned.runs and assigned is not None and same and _QUIET:
        # most texts found: a key word in prose ("token", "auth"), none followed by an
        # assignment's ``=`` or ``:``: no pattern below would be a candidate
        for needle in present:
            keys = _NEEDLE_KEYS.get(needle)
            if keys is None or not assigned.isdisjoint(keys):
                break
        else:
            return text, []
    chosen = sorted({*_ALWAYS, *(i for needle in present for i in _USERS[needle])})
    candidates = []
    for pattern in (PATTERNS[i] for i in chosen):
        if pattern.finder is not None and not scanned.runs:
            continue
        if pattern.keys and same and assigned is not None and pattern.fast is not None:
            # _may_match with the scan's key words for its _assigned: the needles, then one
            # of the keys followed by what may be an assignment
            if any(needle in present for needle in pattern.needles) and not assigned.isdisjoint(
                pattern.keys
            ):
                candidates.append(pattern)
        elif _may_match(pattern, text, lowered, present, same):
            candidates.append(pattern)
    if not candidates:
        return text, []
    return masked(text, spans_of(text, lowered, candidates))


def suspects(texts: list[str]) -> dict[int, Scanned]:
    """:func:`scan` for a list of texts (each found, with every needle, when one holds the
    separator)."""
    joined = SEPARATOR.join(texts)
    if joined.count(SEPARATOR) != len(texts) - 1:
        return {i: Scanned(set(_NEEDLES), True) for i in range(len(texts))}
    data = joined.encode("utf-8", "surrogatepass")
    lower = joined.lower().encode("utf-8", "surrogatepass")
    return scan(lower, data, _ends(lower), _ends(data))


def _ends(data: bytes) -> list[int]:
    """Where each text of a :data:`SEPARATOR`-joined batch ends in its bytes."""
    return list(map(add, accumulate(map(len, data.split(b"\x00"))), count()))


def count_kinds(findings: list[Finding]) -> Counter[str]:
    """How many secrets of each kind ``findings`` holds."""
    return Counter(finding.kind for finding in findings)
