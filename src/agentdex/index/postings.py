"""Per-record postings in tantivy: what makes a query cost grow with its matches.

One tantivy document per record, in ``<generation>/postings``:

* ``text``: the record's lower-cased text, split by tantivy's ``simple``
  tokenizer (runs of alphanumeric characters), with positions. The text is
  lower-cased *before* tantivy sees it, so a term is exactly a token of
  ``text.lower()`` and the query side can tokenize a lower-cased substring
  the same way (:func:`analyzer`). Not stored: the text lives in the block
  store (:mod:`agentdex.index.segments`).
* ``rid`` (record id), ``file``: for deletes, ``path:`` filters and recovery.
* ``meta``: one raw term per filterable value (``agent:codex``,
  ``cwd:/home/x``, ...), see :func:`meta_terms`.
* ``ts`` (epoch seconds, -1 when unknown) and ``level`` (the record's
  quantized cheap score, :mod:`agentdex.search.ranking`): fast fields that
  order candidates for the first page.

SQLite stays the source of truth. The postings may lag it (a writer killed
between its SQLite commit and its tantivy commit); ``meta.postings_rid``
records the first record id not yet known to be in tantivy, and
``postings_deletes`` the deletes not yet applied. The next writer replays
both (:meth:`PostingsWriter.recover`); readers treat records past
``postings_rid`` as candidates of every query, so they stay exact meanwhile.

Substrings of words come from the term list (:class:`Vocabulary`), a plain
file of every term, scanned with ``bytes.find``: on real-shaped history the
term dictionary holds millions of ids, hashes and paths, and a ``.*sub.*``
regex over tantivy's dictionary walks all of it on every query (measured in
docs/architecture-search.md).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

TOKENIZER = "adx_simple"
#: raw-term prefixes of the ``meta`` field, one per filterable column
META_FIELDS = ("agent", "role", "kind", "session", "cwd", "project", "worktree", "branch")
META_EXTRA = ("model", "host")
#: tantivy refuses terms longer than this (bytes); longer tokens are left out of the index
MAX_TERM_BYTES = 65_000
#: the ``meta`` term of records holding such a token: candidates of every text query
LONG_TOKEN_FLAG = "flag:long-token"
VOCAB_FILE = "vocab.txt"
VOCAB_DELTA = "vocab-delta.txt"


def analyzer() -> Any:
    """The tokenizer used for ``text`` (and to tokenize query literals the same way)."""
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()


def schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=False, tokenizer_name=TOKENIZER, index_option="position")
    builder.add_unsigned_field("rid", stored=False, indexed=True, fast=True)
    builder.add_unsigned_field("file", stored=False, indexed=True, fast=False)
    builder.add_text_field("meta", stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("ts", stored=False, indexed=True, fast=True)
    builder.add_unsigned_field("level", stored=False, indexed=True, fast=True)
    return builder.build()


def open_index(path: Path, *, create: bool, memory: bool = False) -> Any:
    """Open (or create) the postings index at ``path`` with agentdex's tokenizer registered.

    ``memory``: an empty index in memory instead (nothing is written to ``path``).
    """
    import tantivy

    if memory:
        index = tantivy.Index(schema())
        index.register_tokenizer(TOKENIZER, analyzer())
        return index
    if create:
        path.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(schema(), path=str(path), reuse=True)
    index.register_tokenizer(TOKENIZER, analyzer())
    return index


def rust_safe(text: str, encoded: bytes | None = None) -> str:
    """``text`` without lone surrogates (tantivy takes only valid UTF-8); ``?`` replaces them.

    ``encoded`` (the ``surrogatepass`` UTF-8 of ``text``) makes the common case
    a single byte search: surrogates encode as ``ED A0..BF ..``.
    """
    if encoded is not None and b"\xed" not in encoded:
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def meta_terms(values: dict[str, object]) -> list[str]:
    """``name:value`` raw terms for the non-empty filterable values of one record."""
    out = []
    for name in (*META_FIELDS, *META_EXTRA):
        value = values.get(name)
        if isinstance(value, str) and value:
            out.append(rust_safe(f"{name}:{value}"))
    return out


class PostingsWriter:
    """Adds records' postings and applies deletes; one per writer process (holds tantivy's lock)."""

    def __init__(self, path: Path, *, heap_bytes: int = 64 << 20, threads: int = 2) -> None:
        import tantivy

        self._tantivy = tantivy
        self.index = open_index(path, create=True)
        self.schema = self.index.schema
        self.writer: Any = self.index.writer(heap_size=heap_bytes, num_threads=threads)
        self.added = 0

    def add(
        self,
        rid: int,
        file_id: int,
        lower: str,
        terms: Iterable[str],
        ts: float | None,
        level: int,
    ) -> None:
        doc = self._tantivy.Document()
        doc.add_text("text", lower)
        doc.add_unsigned("rid", rid)
        doc.add_unsigned("file", file_id)
        for term in terms:
            doc.add_text("meta", term)
        doc.add_integer("ts", int(ts) if ts is not None else -1)
        doc.add_unsigned("level", level)
        self.writer.add_document(doc)
        self.added += 1

    def delete_file(self, file_id: int, from_rid: int | None = None) -> None:
        """Delete a file's records (only those with ids >= ``from_rid`` when given)."""
        q = self._tantivy.Query
        by_file = q.term_query(self.schema, "file", file_id)
        if from_rid is None:
            self.writer.delete_documents_by_query(by_file)
            return
        tail = q.range_query(
            self.schema, "rid", self._tantivy.FieldType.Unsigned, from_rid, 2**63, True, True
        )
        self.writer.delete_documents_by_query(
            q.boolean_query([(self._tantivy.Occur.Must, by_file), (self._tantivy.Occur.Must, tail)])
        )

    def delete_from_rid(self, rid: int) -> None:
        """Delete every document with a record id >= ``rid`` (recovery of an unfinished batch)."""
        tail = self._tantivy.Query.range_query(
            self.schema, "rid", self._tantivy.FieldType.Unsigned, rid, 2**63, True, True
        )
        self.writer.delete_documents_by_query(tail)

    def commit(self) -> None:
        self.writer.commit()

    def rollback(self) -> None:
        self.writer.rollback()

    def close(self, *, wait_merges: bool) -> None:
        """Release tantivy's writer lock; ``wait_merges`` lets background merges finish first."""
        if wait_merges:
            self.writer.wait_merging_threads()
        self.writer = None


def all_terms(path: Path) -> list[str]:
    """Every term of the ``text`` field (after a commit), for the vocabulary file."""
    index = open_index(path, create=False)
    return [term for term, _ in index.searcher().terms_with_prefix("text", "")]


class Vocabulary:
    """The term list of ``text``: a full file written after big builds plus an appended delta.

    Lookups scan the bytes (``mmap.find``), so they cost a few milliseconds per
    ten megabytes of terms and need no index of their own. A term listed twice
    or no longer in the index is harmless (it only widens a candidate query).
    """

    def __init__(self, gen: Path) -> None:
        self.blobs: list[Any] = []
        self._handles = []
        for name in (VOCAB_FILE, VOCAB_DELTA):
            path = gen / name
            try:
                handle = open(path, "rb")  # noqa: SIM115 - closed in close()
            except FileNotFoundError:
                continue
            size = os.fstat(handle.fileno()).st_size
            if size:
                self.blobs.append(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))
            self._handles.append(handle)

    def close(self) -> None:
        for blob in self.blobs:
            blob.close()
        for handle in self._handles:
            handle.close()

    def lookup(self, token: str, *, starts: bool, ends: bool, limit: int) -> list[str] | None:
        """Terms that contain ``token`` (``starts``/``ends``: as their start/end).

        None when more than ``limit`` terms match (too unselective to be worth
        a term-set query).
        """
        needle = token.encode("utf-8")
        if starts:
            needle = b"\n" + needle
        if ends:
            needle = needle + b"\n"
        lead = 1 if starts else 0
        found: set[str] = set()
        for blob in self.blobs:
            pos = blob.find(needle)
            while pos != -1:
                begin = blob.rfind(b"\n", 0, pos + lead) + 1
                end = blob.find(b"\n", pos + lead)
                found.add(blob[begin:end].decode("utf-8", "replace"))
                if len(found) > limit:
                    return None
                pos = blob.find(needle, end)
        return sorted(found)


def write_vocabulary(gen: Path, terms: Iterable[str]) -> None:
    """Replace the full term list (and drop the delta it now covers), atomically."""
    tmp = gen / f".{VOCAB_FILE}.tmp"
    with open(tmp, "wb") as out:
        out.write(b"\n")
        for chunk in _chunks(terms, 65_536):
            out.write("\n".join(chunk).encode("utf-8", "replace") + b"\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, gen / VOCAB_FILE)
    (gen / VOCAB_DELTA).unlink(missing_ok=True)


def append_vocabulary(gen: Path, terms: Iterable[str]) -> None:
    """Append new terms to the delta (the caller commits the covered record range after)."""
    data = "\n".join(terms).encode("utf-8", "replace")
    if not data:
        return
    path = gen / VOCAB_DELTA
    with open(path, "ab") as out:
        if out.tell() == 0:
            out.write(b"\n")
        out.write(data + b"\n")
        out.flush()
        os.fsync(out.fileno())


def _chunks(items: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
