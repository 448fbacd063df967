"""Find bare high-entropy tokens: generated keys pasted with no key name before them.

The rule behind :mod:`agentdex.secrets`' last pattern, ``high-entropy``
(documented in ``docs/resume-and-export.md``; a bottom-layer module, it
imports nothing from agentdex). Other patterns find a secret by its shape
(``ghp_``, ``AKIA``) or by the name it is assigned to (``password=``); this
one finds a lone run of base62/base64 characters that is as random as a
generated key: ``blob 8fK2xQ...`` or a token pasted alone in a prompt.

A candidate is a maximal run of ``[A-Za-z0-9+/_-]`` (``=`` padding after it
allowed) of 20 to :data:`BARE_MAX` characters. It is masked when it holds a
digit, an upper-case and a lower-case letter, is not made of words (paths,
camelCase, ``model-3-8B-Instruct``), and its Shannon entropy is within
:data:`ENTROPY_SLACK` bits a character of the entropy a random string of its
length over its alphabet holds on average (:func:`expected_bits`). What
only looks random in transcripts is left on purpose: hex alone (git SHAs,
digests: indistinguishable from a hex key, and everywhere), UUIDs, anything
inside a URL or after a dot (domains, ``module.attr``), the lines of a PEM
block (certificates, public keys), ``sha512-`` integrity
values, ``h1:`` Go sums, ``data:...;base64,`` bodies, SSH public keys
(``AAAA...``), base64 JSON (``eyJ...``) and the ids agents and model APIs
give their objects (``toolu_``, ``msg_``, ``req_``, ``call_``...).

Speed: an ASCII text's runs are found by ``bytes.translate`` and ``find``
(most texts have few runs of 20); each run is first rejected by cheap tests
(one case only, a context), and only the rest are counted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

#: the longest token masked; longer runs are data (images, signatures, blobs)
BARE_MAX = 256
#: the shortest
BARE_MIN = 20
#: how far below a random string's expected entropy a token may fall, in bits a character
ENTROPY_SLACK = 0.5
#: chunks of letters or digits average at most this (+ 10 / length) in a random string
CHUNK_MAX = 2.5

_CLASS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
#: a candidate run, for texts that are not ASCII (the one before it is a non-class character)
CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}")
_AFTER = re.compile(r"[^A-Za-z0-9+/_-][A-Za-z0-9+/_-]{20,}")
_RUN = re.compile(r"[A-Za-z0-9+/_-]*")
_MARKED = bytes.maketrans(_CLASS.encode() + b"\x01", b"\x01" * len(_CLASS) + b"\x02")
_NEEDLE = b"\x01" * BARE_MIN
_SPACE = re.compile(r"\s")
_DIGIT = re.compile(r"[0-9]")
_PEM = re.compile(r"-----BEGIN[A-Z0-9 ]*-----[\s\S]*?(?:-----END[A-Z0-9 ]*-----|\Z)")
#: token starts that are not secrets: integrity values, SSH public keys, base64 JSON, and
#: the ids agents and model APIs give their objects
NOT_SECRET_STARTS = (
    "sha1-",
    "sha256-",
    "sha384-",
    "sha512-",
    "AAAA",
    "eyJ",
    *(
        f"{prefix}{sep}"
        for prefix in (
            "toolu",
            "srvtoolu",
            "msg",
            "req",
            "call",
            "fc",
            "rs",
            "resp",
            "run",
            "thread",
            "asst",
            "file",
            "batch",
            "ses",
            "prt",
        )
        for sep in "_-"
    ),
)
#: what may stand right before a token that is data, not a secret
NOT_SECRET_AFTER = ("base64,", "h1:", "sha256:", "sha512:")
_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_PART_SEPARATORS = re.compile(r"[/+_-]+")
#: a chunk of a name: a capitalised or lower-case word, an upper-case run, a number
_CHUNK = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def shannon_bits(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    counts = Counter(value)
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


@lru_cache(maxsize=1024)
def expected_bits(size: int, alphabet: int) -> float:
    """The expected :func:`shannon_bits` of ``size`` characters drawn uniformly from
    ``alphabet`` symbols (each symbol's count is binomial).

    Below ``log2(alphabet)`` for short strings: 20 random base62 characters
    hold ~4.03 bits a character on average, 40 ~4.76, 100 ~5.44.
    """
    p = 1.0 / alphabet
    prob = (1 - p) ** size  # P(count == 0)
    total = 0.0
    for j in range(1, size + 1):
        prob *= (size - j + 1) / j * p / (1 - p)
        total += prob * j * math.log2(j)
    return math.log2(size) - alphabet * total / size


def _chunk_length(value: str) -> float:
    chunks = _CHUNK.findall(value)
    return sum(map(len, chunks)) / max(1, len(chunks))


def looks_generated(value: str) -> bool:
    """Is this run of base62/base64 characters (``=`` padding allowed) a generated token?

    :data:`BARE_MIN` to :data:`BARE_MAX` characters with a digit, an upper-case
    and a lower-case letter; not hex alone or a UUID; not words joined
    (``hermes-M4-agent-panel-20260508``: every part short or wordy) or a name
    (``getUserAccountByIdentifier2``: chunks of letters or digits averaging
    more than ``CHUNK_MAX + 10 / length`` characters, where a random string's
    average ~1.9); and its entropy within :data:`ENTROPY_SLACK` of a random
    string's of its length over its alphabet (62; 64 with ``+/_-``).
    """
    value = value.rstrip("=")
    size = len(value)
    if size < BARE_MIN or size > BARE_MAX or value.islower() or value.isupper():
        return False
    if _DIGIT.search(value) is None or _HEX.fullmatch(value) or _UUID.fullmatch(value):
        return False
    parts = [part for part in _PART_SEPARATORS.split(value) if part]
    if len(parts) > 1 and all(len(part) <= 3 or _chunk_length(part) >= CHUNK_MAX for part in parts):
        return False
    if _chunk_length(value) > CHUNK_MAX + 10 / size:
        return False
    alphabet = 64 if any(c in value for c in "+/_-") else 62
    return shannon_bits(value) >= expected_bits(size, alphabet) - ENTROPY_SLACK


def _runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of every maximal run of 20+ candidate characters, in order."""
    if text.isascii():
        runs = []
        marked = text.encode("ascii").translate(_MARKED)
        at = marked.find(_NEEDLE)
        while at >= 0:
            end = _RUN.match(text, at).end()  # type: ignore[union-attr]
            runs.append((at, end))
            at = marked.find(_NEEDLE, end)
        return runs
    first = CANDIDATE.match(text)
    runs = [] if first is None else [first.span()]
    return runs + [(match.start() + 1, match.end()) for match in _AFTER.finditer(text)]


#: candidate characters -> 1, every other byte -> 0 (:func:`run_starts`)
_CLASS_BYTES = bytes(1 if chr(b) in _CLASS else 0 for b in range(256))
_DIGITS = b"0123456789"


def run_starts(data: bytes) -> list[int]:
    """Where each run :func:`bare_tokens` would weigh starts in UTF-8 ``data``: a maximal
    run of :data:`BARE_MIN`+ candidate characters with a digit, an upper-case and a
    lower-case letter (every other run it skips before any other test). Candidate
    characters are ASCII, so runs of bytes are runs of characters."""
    starts = []
    marked = data.translate(_CLASS_BYTES)
    find = marked.find
    at = find(_NEEDLE)
    while at >= 0:
        end = find(b"\x00", at)
        if end < 0:
            end = len(marked)
        value = data[at:end]
        # the case first (most runs are paths and ids, all lower-case), then a digit in
        # the run itself: no second map of the whole batch for its digits (~1 us a record)
        mixed_case = not (value.islower() or value.isupper())
        if mixed_case and len(value.translate(None, _DIGITS)) < len(value):
            starts.append(at)
        at = find(_NEEDLE, end)
    return starts


def _in_url(text: str, start: int) -> bool:
    """Is ``start`` inside a URL (``scheme://`` before it, no space between)?"""
    scheme = text.rfind("://", 0, start)
    return scheme >= 0 and _SPACE.search(text, scheme, start) is None


def _pem_blocks(text: str) -> list[tuple[int, int]]:
    """Where the PEM blocks of ``text`` are (certificates, public keys: their base64 lines
    are not secrets; a private key block is ``private-key``'s, masked before)."""
    if "-----BEGIN" not in text:
        return []
    return [match.span() for match in _PEM.finditer(text)]


def bare_tokens(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each bare generated token in ``text`` (padding included)."""
    size = len(text)
    blocks: list[tuple[int, int]] | None = None  # found at the first token
    for start, end in _runs(text):
        if end - start > BARE_MAX:
            continue
        value = text[start:end]
        if value.islower() or value.isupper() or _DIGIT.search(value) is None:
            continue  # most runs: paths, UUIDs, hex, constants, names
        before = text[start - 1] if start else ""
        if before == "." or value.startswith(NOT_SECRET_STARTS):
            continue
        if text.endswith(NOT_SECRET_AFTER, max(0, start - 7), start) or _in_url(text, start):
            continue
        stop = end
        while stop < size and stop - end < 2 and text[stop] == "=":
            stop += 1
        after = text[stop : stop + 2]
        if after[:1] == "=" or (stop > end and after[:1] and after[:1] in _CLASS):
            continue  # ``NAME=value``: a name, not padding
        if after[:1] == "." and after[1:2].isalnum():
            continue  # a dotted name goes on (``token.example.com``)
        if looks_generated(value):
            if blocks is None:
                blocks = _pem_blocks(text)
            if not any(first <= start < last for first, last in blocks):
                yield start, stop
