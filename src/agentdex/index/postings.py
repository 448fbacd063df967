"""Per-record postings in tantivy: what makes a query cost grow with its matches.

One tantivy document per record, in ``<generation>/postings``:

* ``text``: the record's lower-cased text, split by tantivy's ``simple``
  tokenizer (runs of alphanumeric characters), with positions. The text is
  lower-cased *before* tantivy sees it, so a term is exactly a token of
  ``text.lower()`` and the query side can tokenize a lower-cased substring
  the same way (:func:`analyzer`). Not stored: the text lives in the block
  store (:mod:`agentdex.index.segments`).
* ``rid`` (record id), ``file``: for deletes, ``path:`` filters and recovery.
* ``ctx``: the record's context (agent, session, paths, model: a row of the
  ``contexts`` table), ``rk``: its role and kind (:func:`role_kind`),
  ``flags``: :data:`LONG_TOKEN` when a token was too long to index. Field
  filters resolve to sets of these small numbers through SQLite.
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
file of every term, scanned with a SIMD substring search: on real-shaped history the
term dictionary holds millions of ids, hashes and paths, and a ``.*sub.*``
regex over tantivy's dictionary walks all of it on every query (measured in
docs/architecture-search.md).
"""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress, pairwise
from operator import not_
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from agentdex.index.memory import MappedPages, MemoryKeeper, release_free_memory
from agentdex.records import KINDS, ROLES

if TYPE_CHECKING:
    from agentdex.index.columns import Columns

TOKENIZER = "adx_simple"
#: tantivy refuses terms longer than this (bytes); longer tokens are left out of the index
MAX_TERM_BYTES = 65_000
#: ``flags`` bit of records holding such a token: candidates of every text query
LONG_TOKEN = 1
VOCAB_FILE = "vocab.txt"
VOCAB_DELTA = "vocab-delta.txt"
#: touched by a reader that found the term list behind the postings (a build it reads as it
#: commits): the writer rewrites the whole list at a commit only when someone asked
TERMS_WANTED = "terms-wanted"
#: the last line of a full term list whose terms are in increasing order (one section)
SORTED_MARK = b"#sorted\n"
#: the last line of a full term list in two sorted sections: ``#split <offset>``, where the
#: terms made of hex digits only (commit hashes, ids: most of a history's bytes of terms)
#: begin; a token with any other character is looked for before the offset only. Older
#: readers see no :data:`SORTED_MARK` and scan it all (still right)
SPLIT_MARK = b"#split "
#: the characters of the second section's terms
_HEX_CHARS = "0123456789abcdef"
HEX_DIGITS = frozenset(_HEX_CHARS)
#: a lookup reads the term list in windows of this many bytes, growing 4x up to the last
FIRST_WINDOW = 1 << 16
LAST_WINDOW = 1 << 22


def analyzer() -> Any:
    """The tokenizer used for ``text`` (and to tokenize query literals the same way)."""
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()


def schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=False, tokenizer_name=TOKENIZER, index_option="position")
    # rid and ts: range queries read the fast columns (no term per record id or second)
    builder.add_unsigned_field("rid", stored=False, indexed=False, fast=True)
    builder.add_unsigned_field("file", stored=False, indexed=True, fast=False)
    builder.add_unsigned_field("ctx", stored=False, indexed=True, fast=False)
    builder.add_unsigned_field("rk", stored=False, indexed=True, fast=False)
    builder.add_unsigned_field("flags", stored=False, indexed=True, fast=False)
    builder.add_integer_field("ts", stored=False, indexed=False, fast=True)
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


def role_kind(role: str, kind: str) -> int:
    """One small number for a (role, kind) pair (``role:``/``kind:`` filters are sets of them)."""
    role_index = ROLES.index(role) if role in ROLES else len(ROLES)
    kind_index = KINDS.index(kind) if kind in KINDS else len(KINDS)
    return role_index * 8 + kind_index


def role_kinds(*, role: str | None = None, kind: str | None = None) -> list[int]:
    """Every ``rk`` value with this role (or kind)."""
    return [
        role_kind(r, k)
        for r in ROLES
        for k in KINDS
        if (role is None or r == role) and (kind is None or k == kind)
    ]


#: tantivy's indexing memory of a postings writer (all its threads'). 80 MB: a 1 GB first
#: build then flushes ~6 segments of ~170,000 records beside the smaller ones its commits
#: cut, no eight of them share a level of tantivy's merge policy, and tantivy merges nothing
#: in the writer (with 36 MB, ~16 flushes: it merged ~900,000 records, ~21 CPU-s;
#: docs/performance.md, s12-tantivy, s14-merge, s15-merge). 96 MB merged nothing either but
#: took the peak RSS past 250 MB; below ~76 MB a quiet build's flushes may put eight in
#: one level again
HEAP_BYTES = 80 << 20


#: text (characters) of the records :meth:`PostingsWriter.add_many` keeps while a commit runs on
#: its thread; past it the caller waits for the commit (16 MB: what the writer's main thread
#: reads in ~2 s of a cold build, about one commit of tantivy's heap)
WAITING_BYTES = 16 << 20


def _indexing_threads(setting: str) -> int:
    return int(setting) if setting.isdigit() and int(setting) > 0 else 1


#: tantivy indexing threads of a postings writer (``AGENTDEX_INDEXING_THREADS``; anything
#: but a positive number: the default). One: each thread writes a segment whenever its
#: share of the heap fills, and those segments are what tantivy merges during a build and
#: the merge child again at its end; one thread writes larger ones, keeps up (two used
#: ~0.3 cores of a 1 GB cold build) and halves that work (docs/performance.md, s12-tantivy)
INDEXING_THREADS = _indexing_threads(os.environ.get("AGENTDEX_INDEXING_THREADS", ""))


class PostingsWriter:
    """Adds records' postings and applies deletes; one per writer process (holds tantivy's lock)."""

    def __init__(
        self, path: Path, *, heap_bytes: int = HEAP_BYTES, threads: int = INDEXING_THREADS
    ) -> None:
        import tantivy

        self._tantivy = tantivy
        self._document = tantivy.Document
        index = open_index(path, create=True)
        self.schema = index.schema
        self.writer: Any = index.writer(heap_size=heap_bytes, num_threads=threads)
        # only the writer is kept: an Index object also holds a reader of the segments as
        # they were when it opened, which kept every segment merged away since mapped, and
        # the pages the merges had read resident (~50 MB of a 1 GB build's peak RSS)
        del index
        #: the merges' mapped pages, kept out of this process's resident set
        self.mapped = MappedPages(str(path))
        #: hands freed memory back and runs ``mapped``'s check, on a thread of its own
        self.keeper = MemoryKeeper(self.mapped)
        self.keeper.start()
        self.added = 0
        #: a commit running on a thread of its own (:meth:`start_commit`), and what was added
        #: meanwhile: ``add_many``'s arguments, added to tantivy once the commit is done
        self._committing: threading.Thread | None = None
        self._commit_error: BaseException | None = None
        self._waiting: list[tuple[int, int, Sequence[int], tuple[Sequence[Any], ...]]] = []
        self._waiting_bytes = 0

    def add(
        self,
        rid: int,
        file_id: int,
        context_id: int,
        rk: int,
        flags: int,
        lower: str,
        ts: float | None,
        level: int,
    ) -> None:
        self.settle()
        # a Document filled field by field: the same document as a JSON one (add_json), for
        # less of this thread's CPU in all (7.4 against 10.4 us a record, docs/performance.md
        # s10-writer: the JSON's escaping here and parsing in tantivy cost more than the calls).
        # add_many fills the same fields inline (no call a record): keep the two in step
        doc = self._document()
        doc.add_text("text", lower)
        doc.add_unsigned("rid", rid)
        doc.add_unsigned("file", file_id)
        doc.add_unsigned("ctx", context_id)
        doc.add_unsigned("rk", rk)
        doc.add_integer("ts", int(ts) if ts is not None else -1)
        doc.add_unsigned("level", level)
        if flags:
            doc.add_unsigned("flags", flags)
        self.writer.add_document(doc)
        self.added += 1

    def add_many(
        self, first: int, file_id: int, context_ids: Sequence[int], items: Columns
    ) -> None:
        """:meth:`add` for each record of ``items`` (ids from ``first`` on, their contexts'
        ids ``context_ids``): the same documents, in one loop with no call a record but
        tantivy's (a Python call with eight arguments a record, ~1 us, on the writer's
        main thread).

        While a commit runs on its thread, the records wait here (their columns only, at
        most ``WAITING_BYTES`` of text) and go to tantivy, in order, once it is done."""
        columns = (items.rks, items.flags, items.postings, items.times, items.levels)
        if self._committing is not None:
            if self._committing.is_alive() and self._waiting_bytes < WAITING_BYTES:
                self._waiting.append((first, file_id, context_ids, columns))
                self._waiting_bytes += sum(map(len, items.postings))
                return
            self.settle()
        self._add_columns(first, file_id, context_ids, columns)

    def _add_columns(
        self,
        first: int,
        file_id: int,
        context_ids: Sequence[int],
        columns: tuple[Sequence[Any], ...],
    ) -> None:
        new = self._document
        add_document = self.writer.add_document
        rid = first
        rks, flagss, postings, times, levels = columns
        for context_id, rk, flags, lower, ts, level in zip(
            context_ids, rks, flagss, postings, times, levels, strict=True
        ):
            doc = new()
            doc.add_text("text", lower)
            doc.add_unsigned("rid", rid)
            doc.add_unsigned("file", file_id)
            doc.add_unsigned("ctx", context_id)
            doc.add_unsigned("rk", rk)
            doc.add_integer("ts", int(ts) if isinstance(ts, float | int) else -1)
            doc.add_unsigned("level", level)
            if flags:
                doc.add_unsigned("flags", flags)
            add_document(doc)
            rid += 1
        self.added += rid - first

    def delete_file(self, file_id: int, from_rid: int | None = None) -> None:
        """Delete a file's records (only those with ids >= ``from_rid`` when given)."""
        self.settle()
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
        self.settle()
        tail = self._tantivy.Query.range_query(
            self.schema, "rid", self._tantivy.FieldType.Unsigned, rid, 2**63, True, True
        )
        self.writer.delete_documents_by_query(tail)

    def commit(self) -> None:
        self.settle()
        self.writer.commit()

    def start_commit(self) -> None:
        """Commit on a thread of its own: tantivy writes the segment its heap holds (it
        releases the GIL) while the caller goes on; records it adds meanwhile wait in
        :meth:`add_many` (tantivy's writer is borrowed by the commit). :meth:`settle`
        waits for it; every other call here does first."""
        self.settle()

        def run() -> None:
            try:
                self.writer.commit()
                release_free_memory()
            except BaseException as exc:  # raised by settle()
                self._commit_error = exc

        self._committing = threading.Thread(target=run, name="agentdex-commit", daemon=True)
        self._committing.start()

    def settle(self, *, drop: bool = False) -> bool:
        """Wait for a commit :meth:`start_commit` began, then add the records that waited
        (``drop``: forget them, the batch is rolled back); say whether one was running."""
        thread, self._committing = self._committing, None
        if thread is None:
            return False
        thread.join()
        waiting, self._waiting, self._waiting_bytes = self._waiting, [], 0
        error, self._commit_error = self._commit_error, None
        if error is not None and not drop:
            raise error
        if not drop:
            for args in waiting:
                self._add_columns(*args)
        return True

    def rollback(self) -> None:
        self.settle(drop=True)
        self.writer.rollback()

    def close(self, *, wait_merges: bool) -> None:
        """Release tantivy's writer lock; ``wait_merges`` lets background merges finish first."""
        try:
            self.settle(drop=not wait_merges)
            if wait_merges:
                self.writer.wait_merging_threads()
        finally:
            self.writer = None
            self.keeper.stop()


#: every character an ASCII term can start with (the tokenizer keeps alphanumerics only)
_ASCII_STARTS = "0123456789abcdefghijklmnopqrstuvwxyz"


def all_terms(path: Path, non_ascii: Iterable[str]) -> Iterator[tuple[str, int]]:
    """Every term of the ``text`` field with its record count (after a commit), in order.

    Read one first character at a time, so memory holds one bucket, not the
    whole dictionary: the ASCII alphanumerics, then each non-ASCII character
    the indexed text holds (``non_ascii``; a term starts with one of them).
    Each bucket is sorted here (tantivy hands it over unordered), which makes
    the whole list sorted by UTF-8 bytes: :class:`Vocabulary` bisects it.
    """
    for bucket in term_buckets(path, non_ascii):
        yield from bucket


def term_buckets(path: Path, non_ascii: Iterable[str]) -> Iterator[list[tuple[str, int]]]:
    """:func:`all_terms` a first character at a time: each list sorted, all of its terms
    starting with that character, the lists in increasing order of it (what
    :func:`write_term_buckets` takes)."""
    searcher = open_index(path, create=False).searcher()
    for first in (*_ASCII_STARTS, *sorted(set(non_ascii))):
        yield sorted(searcher.terms_with_prefix("text", first))


class Vocabulary:
    """The term list of ``text``: a full file written after big builds plus an appended delta.

    One line per term, ``<records holding it>\t<term>`` (0 when unknown: terms
    appended by small refreshes). Lookups scan the bytes (:func:`_occurrences`),
    about a millisecond per ten megabytes of terms plus a few microseconds per
    term found, and need no index of their own (no bytes on disk). A full list
    that ends with :data:`SPLIT_MARK` holds the hex-digit terms in a second
    section, which only a token of hex digits needs scanned; each section, or a
    list that ends with :data:`SORTED_MARK`, is sorted by term: a token that
    must start a term (``starts``) is then found by bisection, in microseconds.
    A term listed twice or no longer in the index is harmless (it only widens a
    candidate query).
    """

    def __init__(self, gen: Path) -> None:
        self.blobs: list[Any] = []
        #: the full list when it is sorted (bisected for prefixes)
        self.sorted_blob: Any = None
        #: per blob: where its terms end, and where those holding a non-hex character end
        self._ends: list[tuple[int, int]] = []
        self._handles = []
        for name in (VOCAB_FILE, VOCAB_DELTA):
            path = gen / name
            try:
                handle = open(path, "rb")  # noqa: SIM115 - closed in close()
            except FileNotFoundError:
                continue
            size = os.fstat(handle.fileno()).st_size
            if size:
                blob = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                self.blobs.append(blob)
                ends = (size, size)
                if name == VOCAB_FILE and blob[-len(SORTED_MARK) :] == SORTED_MARK:
                    self.sorted_blob = blob
                    ends = (size - len(SORTED_MARK), size - len(SORTED_MARK))
                elif name == VOCAB_FILE:
                    ends = _split_ends(blob, size) or ends
                    self.sorted_blob = blob if ends[0] < size else None
                self._ends.append(ends)
            self._handles.append(handle)

    def close(self) -> None:
        for blob in self.blobs:
            blob.close()
        for handle in self._handles:
            handle.close()

    def lookup(
        self, token: str, *, starts: bool, ends: bool, limit: int
    ) -> tuple[list[str] | None, int]:
        """Terms that contain ``token`` (``starts``/``ends``: as their start/end).

        Returns ``(terms, most)``: ``terms`` is None when more than ``limit``
        match (too unselective to be worth a term-set query); ``most`` is the
        largest record count among the terms seen, a lower bound on how many
        records hold the token.
        """
        found = self.expand(token, starts=starts, ends=ends, limit=limit)
        return found.terms, found.most

    def expand(self, token: str, *, starts: bool, ends: bool, limit: int) -> Expansion:
        """:meth:`lookup`, with the sum of the terms' record counts (see :class:`Expansion`)."""
        found: dict[str, int] = {}
        most = 0
        # a token with a character other than a hex digit is in no term of the hex section
        hexlike = HEX_DIGITS.issuperset(token)
        scans = [
            (blob, ends[0] if hexlike else ends[1])
            for blob, ends in zip(self.blobs, self._ends, strict=True)
        ]
        if starts and not ends and self.sorted_blob is not None:
            scans = [(blob, stop) for blob, stop in scans if blob is not self.sorted_blob]
            full, others = self._ends[self.blobs.index(self.sorted_blob)]
            prefix = token.encode("utf-8")
            _prefixed(self.sorted_blob, prefix, found, limit, 0, others)
            if hexlike and others < full:
                _prefixed(self.sorted_blob, prefix, found, limit, others, full)
            most = max(found.values(), default=0)
            if len(found) > limit:
                return Expansion(None, most, sum(found.values()))
        needle = token.encode("utf-8")
        skip = 1 if starts else 0  # a hit from the line's tab on is in the term
        if starts:
            needle = b"\t" + needle
        if ends:
            needle = needle + b"\n"
        for blob, stop in scans:
            after = 0  # hits before this (in a line already taken) are skipped
            # per hit: its line cut once and split at its tab (a lookup's cost is mostly
            # this loop: thousands of hits for a common word at 1 GB)
            rfind, find, size = blob.rfind, blob.find, len(blob)
            for pos in _occurrences(blob, needle, stop):
                if pos < after:
                    continue
                begin = rfind(b"\n", 0, pos) + 1
                end = find(b"\n", pos + 1)
                if end == -1:
                    end = size
                count, tab, raw = blob[begin:end].partition(b"\t")
                if not tab or pos + skip - begin <= len(count):  # a hit in the count
                    continue
                term = raw.decode("utf-8", "replace")
                records = int(count) if count.isdigit() else 0
                known = found.get(term)
                if known is None or records > known:
                    found[term] = records
                if records > most:
                    most = records
                if len(found) > limit:
                    return Expansion(None, most, sum(found.values()))
                after = end
        return Expansion(sorted(found), most, sum(max(c, 1) for c in found.values()))


class Expansion(NamedTuple):
    """The terms holding a token (None: more than the lookup's limit), the largest record
    count among them, and the sum of their counts: how many records hold one of them at
    most (a term appended by a small refresh, whose count is unknown, counts 1; when
    ``terms`` is None, the sum of the terms seen before the limit)."""

    terms: list[str] | None
    most: int
    total: int


def write_vocabulary(gen: Path, terms: Iterable[tuple[str, int]]) -> None:
    """Replace the full term list (and drop the delta it now covers), atomically."""
    write_vocabulary_file(vocabulary_temp(gen), terms)
    install_vocabulary(gen)


def want_terms(gen: Path) -> None:
    """Ask the generation's writer for a whole term list at its next due commit (a reader
    that verifies records the list does not cover yet). Best effort: a reader that may not
    write there just goes on verifying them."""
    try:
        fd = os.open(gen / TERMS_WANTED, os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        os.utime(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def terms_wanted_since(gen: Path, since: float) -> bool:
    """Has a reader asked for the term list (:func:`want_terms`) at or after ``since``
    (``time.time()``)?"""
    try:
        # (a file's time trails time.time() by up to a clock tick: an ask in that moment after
        # a rewrite began may be missed; the reader's next search asks again)
        return os.stat(gen / TERMS_WANTED).st_mtime >= since
    except OSError:
        return False


def vocabulary_temp(gen: Path) -> Path:
    """Where a new full term list is written before :func:`install_vocabulary`."""
    return gen / f".{VOCAB_FILE}.tmp"


def install_vocabulary(gen: Path) -> None:
    """Put the list written to :func:`vocabulary_temp` in place; drop the delta it covers."""
    os.replace(vocabulary_temp(gen), gen / VOCAB_FILE)
    (gen / VOCAB_DELTA).unlink(missing_ok=True)


def write_vocabulary_file(tmp: Path, terms: Iterable[tuple[str, int]]) -> None:
    """Write a full term list to ``tmp`` (durably).

    The terms made of hex digits only come after the others (each part keeps
    the order it was given); the list ends with ``#split <where they begin>``
    (:data:`SPLIT_MARK`) when the terms came in strictly increasing order (as
    :func:`all_terms` gives them): both parts are sorted then.
    """
    ordered = True
    last = ""
    aside = tmp.with_name(tmp.name + ".hex")
    with open(tmp, "wb") as out, open(aside, "w+b") as hexes:
        for chunk in _chunks(terms, 65_536):
            ordered = ordered and last < chunk[0][0] and _increasing(chunk)
            last = chunk[-1][0]
            hexed = [_hex_term(term) for term, _ in chunk]
            lines = "".join(f"{c}\t{t}\n" for (t, c), h in zip(chunk, hexed, strict=True) if not h)
            out.write(lines.encode("utf-8", "replace"))
            hexes.write(
                "".join(f"{c}\t{t}\n" for (t, c), h in zip(chunk, hexed, strict=True) if h).encode()
            )
        _end_term_list(out, hexes, ordered)
    aside.unlink()


def write_term_buckets(tmp: Path, buckets: Iterable[list[tuple[str, int]]]) -> None:
    """:func:`write_vocabulary_file` of the terms of :func:`term_buckets`: the same bytes
    for about half its CPU (the term list's child, in a cold build's tail).

    A bucket whose first character is no hex digit holds no hex term, so only the 16
    others are tested; each bucket is sorted and starts with its own character, so the
    order is checked where two buckets meet, not term by term (tantivy's terms are
    distinct: a list sorted is then strictly increasing)."""
    ordered = True
    last = ""
    aside = tmp.with_name(tmp.name + ".hex")
    with open(tmp, "wb") as out, open(aside, "w+b") as hexes:
        for bucket in buckets:
            if not bucket:
                continue
            ordered = ordered and last < bucket[0][0]
            last = bucket[-1][0]
            lines = [f"{c}\t{t}\n" for t, c in bucket]
            if last[0] in HEX_DIGITS:
                hexed = [not t.lstrip(_HEX_CHARS) for t, _ in bucket]
                out.write("".join(compress(lines, map(not_, hexed))).encode("utf-8", "replace"))
                hexes.write("".join(compress(lines, hexed)).encode())
            else:
                out.write("".join(lines).encode("utf-8", "replace"))
        _end_term_list(out, hexes, ordered)
    aside.unlink()


def _end_term_list(out: BinaryIO, hexes: BinaryIO, ordered: bool) -> None:
    """Append the hex section (``hexes``, written aside) to the list ``out``, then its
    :data:`SPLIT_MARK` line when its terms came in increasing order; make it durable."""
    split = out.tell()
    hexes.seek(0)
    import shutil  # here: a search never writes a term list (shutil pulls bz2, lzma)

    shutil.copyfileobj(hexes, out)
    if ordered:
        out.write(SPLIT_MARK + b"%d\n" % split)
    out.flush()
    os.fsync(out.fileno())


def _hex_term(term: str) -> bool:
    """Is ``term`` made of hex digits only (the term list's second section)? (A strip, not
    a regex match: 60% of a 1 GB build's 1.37 million terms are hex, and the match was
    ~1.2 of the term list's child's ~5 CPU-s: docs/performance.md, s15-tail.)"""
    return bool(term) and not term.lstrip(_HEX_CHARS)


def _occurrences(blob: Any, needle: bytes, stop: int) -> Iterator[int]:
    """Every position of ``needle`` in ``blob[:stop]``, in order (overlapping ones too).

    Found by ``ahocorasick_rs`` given this one pattern (a vectorized substring
    search): 10-20x faster than ``mmap.find`` over a term list of megabytes,
    which was most of a lookup's cost (docs/performance.md, s7-hyb). Read in windows
    that grow from :data:`FIRST_WINDOW` (a token in most terms, which stops its
    lookup at its limit, never collects every position of the list); a window
    reads ``len(needle) - 1`` bytes past its end so that no hit across two is
    lost, and keeps only the hits that start inside it.
    """
    import ahocorasick_rs

    finder = ahocorasick_rs.BytesAhoCorasick([needle])
    reach = len(needle) - 1
    window = FIRST_WINDOW
    begin = 0
    while begin < stop:
        end = min(stop, begin + window)
        with memoryview(blob) as whole, whole[begin : min(stop, end + reach)] as part:
            hits = finder.find_matches_as_indexes(part, overlapping=True)
        for _, at, _ in hits:
            if begin + at < end:
                yield begin + at
        begin = end
        window = min(window * 4, LAST_WINDOW)


def _split_ends(blob: Any, size: int) -> tuple[int, int] | None:
    """(where the terms end, where the non-hex ones end) of a list that ends with a
    :data:`SPLIT_MARK` line; None for any other list."""
    start = blob.rfind(b"\n", 0, size - 1) + 1
    line = blob[start:size]
    if not line.startswith(SPLIT_MARK) or not line.endswith(b"\n"):
        return None
    number = line[len(SPLIT_MARK) : -1]
    if not number.isdigit() or int(number) > start:
        return None
    return start, int(number)


def append_vocabulary(gen: Path, terms: Iterable[str]) -> None:
    """Append new terms to the delta (the caller commits the covered record range after)."""
    data = "".join(f"0\t{term}\n" for term in terms).encode("utf-8", "replace")
    if not data:
        return
    with open(gen / VOCAB_DELTA, "ab") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _increasing(chunk: list[tuple[str, int]]) -> bool:
    """Strictly increasing terms (code point order, which is UTF-8 byte order)."""
    return all(a[0] < b[0] for a, b in pairwise(chunk))


def _prefixed(
    blob: Any, prefix: bytes, found: dict[str, int], limit: int, begin: int, end: int
) -> None:
    """Add the terms of the sorted lines ``blob[begin:end]`` that start with ``prefix`` to
    ``found`` with their record counts (at most ``limit + 1`` terms)."""
    lo, hi = begin, end  # lo is always a line start; the first term >= prefix starts in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        start = blob.rfind(b"\n", 0, mid) + 1
        stop = blob.find(b"\n", start, end)
        stop = end if stop == -1 else stop
        tab = blob.find(b"\t", start, stop)
        if blob[tab + 1 : stop] < prefix:
            lo = stop + 1
        else:
            hi = start
    while lo < end and len(found) <= limit:
        stop = blob.find(b"\n", lo, end)
        stop = end if stop == -1 else stop
        tab = blob.find(b"\t", lo, stop)
        term = blob[tab + 1 : stop]
        if not term.startswith(prefix):
            break
        count = blob[lo:tab]
        found[term.decode("utf-8", "replace")] = int(count) if count.isdigit() else 0
        lo = stop + 1


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
