"""Search by meaning for the library API: modes, fusion, ``why``, embedding fills, ``similar``.

``search(..., mode=)`` in :mod:`agentdex.api.search` calls :func:`semantic_hits`
and :func:`fuse` here. ``hybrid`` (the default) fuses the exact lexical ranking
with the semantic one by reciprocal rank fusion when the index has embeddings,
and is plain lexical search when it has none (nothing heavy is imported then:
one ``stat`` of ``semantic/vectors.db``). Every result says ``why`` it matched.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    import numpy as np

    from agentdex.search.engine import Engine
    from agentdex.semantic.fill import FillStats
    from agentdex.semantic.query import Near, VectorIndex

#: reciprocal rank fusion: score = sum of weight / (RRF_K + rank)
RRF_K = 60
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 1.0
#: semantic candidates read per search (records, after dedup)
SEMANTIC_TOP = 100
#: below this cosine a record is not a match by meaning (search). Chosen on the labelled
#: set (bench/semantic_eval.py --floors): its 48 queries' conversations score 0.287 at
#: the least, 10 queries that mean nothing (``zzqqxx``...) 0.258 at the most; at 0.15,
#: 9 of those 10 got "results"; at 0.27, none, and hit@1/hit@5/MRR are unchanged
MIN_SIMILARITY = 0.27
#: the same floor for ``similar`` (a conversation's mean vector against messages)
SIMILAR_MIN = 0.15


def check_mode(mode: str, *, regex: bool) -> None:
    from agentdex.api.search import MODES

    if mode not in MODES:
        raise UsageError(f"unknown search mode {mode!r}; valid: {', '.join(MODES)}")


def has_embeddings(index_root: Path) -> bool:
    """Cheap: does this index have a vector store at all (one ``stat``)?"""
    return (index_root / "semantic" / "vectors.db").is_file()


_RESIDENT = False


def use_resident_embedder(on: bool = True) -> None:
    """Embed queries through the resident embedder (:mod:`agentdex.semantic.resident`),
    starting it when none runs: the CLI's choice, where every search is a fresh process.
    ``AGENTDEX_RESIDENT_EMBEDDER=0`` overrides it."""
    global _RESIDENT
    _RESIDENT = on


class QueryVector:
    """The query's embedding, computed on a thread while the lexical search runs.

    Through the resident embedder (the CLI), and given the index's ``root`` and
    ``generation``, the thread asks the resident for the nearest records
    outright (:func:`agentdex.semantic.resident.records`): the resident embeds,
    scans and reads the vector store's rows on its own core while this process
    runs the lexical half, and this process never imports numpy nor opens the
    vector store. ``near`` then holds the records (and
    ``vector`` stays None); otherwise ``vector`` is the query's embedding and
    the caller scans.
    """

    def __init__(
        self,
        text: str,
        root: Path | None = None,
        generation: str | None = None,
        top: int = SEMANTIC_TOP * 3,
    ) -> None:
        self.text = text
        self.root = root
        self.generation = generation
        self.top = top
        self.vector: np.ndarray | None = None
        #: the nearest records, when the resident scanned (None otherwise)
        self.near: list[Near] | None = None
        #: embedded records of the store it scanned (with ``near``)
        self.searched = 0
        self.error: str | None = None
        self.seconds = 0.0
        #: who embedded it: ``resident`` (a resident embedder answered) or ``process``
        self.via = "process"
        self._thread = threading.Thread(target=self._run, name="agentdex-embed", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            from agentdex.semantic.model import ModelUnavailable, embedder

            try:
                if _RESIDENT:
                    from agentdex.semantic import resident

                    if resident.enabled() and self._near_by_resident():
                        return
                    found = resident.embed([self.text]) if resident.enabled() else None
                    if found is not None:
                        self.vector, self.via = found[0], "resident"
                        return
                self.vector = embedder().embed([self.text])[0]
            except ModelUnavailable as exc:
                self.error = exc.message
        except Exception as exc:  # a broken runtime must never take lexical search down
            self.error = f"semantic search unavailable: {type(exc).__name__}: {exc}"
        finally:
            self.seconds = time.perf_counter() - started

    def _near_by_resident(self) -> bool:
        """Ask the resident to embed, scan and read the records found
        (:func:`agentdex.semantic.resident.records`: this process opens no vector store);
        False when it cannot (no store linked to this generation yet, or no resident: the
        caller embeds, relinks, scans)."""
        if self.root is None or self.generation is None:
            return False
        from agentdex.semantic import resident

        folder = self.root / "semantic"
        if not (folder / "vectors.db").is_file():
            return False
        found = resident.records(self.text, folder, self.generation, self.top)
        if found is None:
            return False
        self.near, self.searched = found
        self.via = "resident"
        return True

    def result(self) -> np.ndarray | None:
        self._thread.join()
        return self.vector

    def ready(self) -> bool:
        """Whether there is something to search with (a vector, or the records found)."""
        self._thread.join()
        return self.vector is not None or self.near is not None


def query_text(node: Any) -> str:
    """What is embedded for a query: its positive words and phrases, without fields."""
    from agentdex.search.query import positive_terms

    return " ".join(t.text for t in positive_terms(node)).strip()


def filter_node(node: Any) -> Any:
    """The parts of a query that still filter semantic results: fields and NOT terms."""
    from agentdex.search.query import And, Field, Not

    if isinstance(node, Field | Not):
        return node
    if isinstance(node, And):
        kept = tuple(c for c in node.children if isinstance(c, Field | Not))
        if kept:
            return And(kept) if len(kept) > 1 else kept[0]
    return None


def open_vectors(index_root: Path, generation: str) -> VectorIndex | None:
    """The vector store's view of ``generation``; a store still linked to an older
    generation (a rebuild whose event it missed) is relinked first (no text read)."""
    from agentdex.semantic.query import VectorIndex

    vectors = VectorIndex.open(index_root, generation)
    if vectors is None and has_embeddings(index_root):
        from agentdex.semantic.link import relink
        from agentdex.semantic.model import DEFAULT

        if relink(index_root, DEFAULT.id) is not None:
            vectors = VectorIndex.open(index_root, generation)
    return vectors


def semantic_hits(
    engine: Engine,
    index_root: Path,
    generation: str,
    vector: np.ndarray | None,
    *,
    node: Any,
    regex: bool,
    word: bool,
    case: str,
    dedup: bool,
    here: Callable[[tuple[Any, ...]], bool] | None,
    only_here: bool,
    top: int = SEMANTIC_TOP,
    near: list[Near] | None = None,
    searched: int = 0,
) -> tuple[list[tuple[Any, float, str | None]], int]:
    """(hit, similarity, title) of the records closest to ``vector``, best first; and
    the number of embedded records searched. Only live records whose text is the text
    that was embedded count (``thash``); the query's fields and NOT terms filter.

    A conversation whose *title* is close is reported as its first prompt, reply or
    summary (its first record when it has none), with ``title`` set: a title belongs
    to the whole conversation, and its opening record is the one hit that stands for
    it without inventing a record that does not exist (``ref``, filters, ``--here``
    and ``show`` all work on it unchanged). The title counts only while the index
    still holds that title for that conversation (a forgotten conversation's title
    is gone from the index, so never returns). A record already reported (by its
    own text or by its conversation's title) is reported once, at its best rank.

    ``near`` (with ``searched``): the nearest records already found (by the
    resident embedder, :class:`QueryVector`); ``vector`` is not used then."""

    if near is None:
        assert vector is not None
        vectors = open_vectors(index_root, generation)
        if vectors is None:
            return [], 0
        try:
            searched = vectors.members_count()
            near = vectors.nearest(vector, top=top * 3)
        finally:
            vectors.close()
    from agentdex.search.engine import THASH

    near = [n for n in near if n.similarity >= MIN_SIMILARITY]
    titles = _title_records(engine, [n.title for n in near if n.title is not None])
    flt = filter_node(node) if node is not None else None
    if flt is not None:
        engine.prepare(flt, regex=regex, word=word, case=case)
    rids = [n.rid if n.title is None else titles.get(n.title, (0, -1))[1] for n in near]
    rows = {row[0]: row for row in engine.light(rids)}

    def pick(without: set[int]) -> list[tuple[int, float, str | None]]:
        """(record id, similarity, title) of the first ``top`` that count, by their light
        rows (the full metadata is read for those alone)."""
        picked: list[tuple[int, float, str | None]] = []
        seen: set[int] = set()
        reported: set[int] = set()
        for n, rid in zip(near, rids, strict=True):
            row = rows.get(rid)
            if row is None or rid in without or rid in reported:
                continue
            title = None
            if n.title is not None:
                ckey, _ = titles.get(n.title, (None, 0))
                if ckey != n.ckey:
                    continue  # the title changed or went (forget) since it was embedded
                title = titles_text(engine, n.title)
            else:
                if row[THASH] != n.thash:
                    continue  # forgotten, pruned or rewritten since it was embedded
                if dedup and n.ckey in seen:
                    continue
            if only_here and here is not None and not here(row):
                continue
            if flt is not None and not engine.matches(flt, row):
                continue
            if n.title is None:
                seen.add(n.ckey)
            reported.add(rid)
            picked.append((rid, n.similarity, title))
            if len(picked) >= top:
                break
        return picked

    without: set[int] = set()
    hits: dict[int, Any] = {}
    while True:
        picked = pick(without)
        wanted = [rid for rid, _, _ in picked if rid not in hits]
        hits.update((h.id, h) for h in engine.hits(wanted))
        gone = {rid for rid in wanted if rid not in hits}
        if not gone:  # a record without its metadata row (never, in one snapshot) is skipped
            break
        without |= gone
    out: list[tuple[Any, float, str | None]] = [
        (hits[rid], similarity, title) for rid, similarity, title in picked
    ]
    return out, searched


def titles_text(engine: Engine, key: tuple[str, str]) -> str | None:
    row = engine.db.execute(
        "SELECT title FROM titles WHERE agent = ? AND session_id = ?", key
    ).fetchone()
    return None if row is None else str(row[0])


def _title_records(
    engine: Engine, keys: list[tuple[str, str]]
) -> dict[tuple[str, str], tuple[int, int]]:
    """(agent, session id) -> (content key of its title now, the record that stands for
    it): conversations with no title or no record any more are left out."""
    if not keys:
        return {}  # nothing to import for it either
    from agentdex.semantic.link import ELIGIBLE
    from agentdex.semantic.model import DEFAULT
    from agentdex.semantic.store import title_key

    out: dict[tuple[str, str], tuple[int, int]] = {}
    for key in dict.fromkeys(keys):
        title = titles_text(engine, key)
        if title is None:
            continue
        first = engine.db.execute(
            "SELECT coalesce((SELECT min(id) FROM records WHERE agent = ?1 AND session_id = ?2"
            f" AND {ELIGIBLE}), (SELECT min(id) FROM records WHERE agent = ?1"
            " AND session_id = ?2))",
            key,
        ).fetchone()[0]
        if first is not None:
            out[key] = (title_key(DEFAULT.id, title), int(first))
    return out


def why_terms(text: str, needles: list[str], *, sensitive: bool, regex: bool) -> list[str]:
    """The query terms this record's text holds (what an exact match matched on)."""
    if regex:
        return list(needles)
    hay = text if sensitive else text.lower()
    return [n for n in needles if (n if sensitive else n.lower()) in hay]


def fuse(
    lexical: list[dict[str, Any]],
    semantic: list[dict[str, Any]],
    *,
    limit: int | None,
) -> list[dict[str, Any]]:
    """Reciprocal rank fusion of two ranked result lists (JSON results, keyed by ``ref``).

    A record found both ways adds both contributions; ties keep the lexical
    order first, so an exact match never falls behind an equal semantic one.
    """
    scores: dict[str, float] = {}
    first: dict[str, dict[str, Any]] = {}
    order: dict[str, tuple[int, int]] = {}
    for rank, result in enumerate(lexical, 1):
        ref = result["ref"]
        scores[ref] = scores.get(ref, 0.0) + LEXICAL_WEIGHT / (RRF_K + rank)
        first[ref] = result
        order[ref] = (0, rank)
    for rank, result in enumerate(semantic, 1):
        ref = result["ref"]
        scores[ref] = scores.get(ref, 0.0) + SEMANTIC_WEIGHT / (RRF_K + rank)
        if ref in first:
            mine = first[ref]["why"]
            mine["similarity"] = result["why"]["similarity"]
            mine["match"] = "both"
        else:
            first[ref] = result
            order[ref] = (1, rank)
    ranked = sorted(scores, key=lambda ref: (-scores[ref], order[ref]))
    out = []
    for ref in ranked[:limit] if limit is not None else ranked:
        result = first[ref]
        result["score"] = round(scores[ref], 6)
        out.append(result)
    return out


# -- filling, status, similar --------------------------------------------------------------


def embed_missing(
    root: str | os.PathLike[str] | None = None,
    *,
    home: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    wait: bool = True,
    max_records: int | None = None,
    batch: int | None = None,
    threads: int | None = None,
) -> FillStats:
    """Embed every prompt, reply and summary of the index that has no vectors yet.

    ``threads``: CPU threads for the model (default: every core, up to 4; the
    background fill passes 1)."""
    from agentdex.index.store import index_root
    from agentdex.semantic.fill import fill
    from agentdex.semantic.model import fill_threads

    return fill(
        index_root(root, home=home),
        progress=progress,
        should_stop=should_stop,
        wait=wait,
        max_records=max_records,
        batch=batch,
        threads=threads or fill_threads(),
    )


def semantic_status(
    root: str | os.PathLike[str] | None = None, *, home: str | None = None
) -> dict[str, Any]:
    """How much is embedded, with which model, and whether the model can run (``problem``)."""
    from agentdex.index.store import index_root
    from agentdex.semantic.fill import coverage
    from agentdex.semantic.model import DEFAULT, check, model_file

    info: dict[str, Any] = {"model": DEFAULT.id, "model_file": str(model_file())}
    info.update(coverage(index_root(root, home=home)))
    info["problem"] = check()
    eligible = info.get("eligible") or 0
    info["fraction"] = round(info["embedded"] / eligible, 4) if eligible else None
    return info


def similar(
    ref: str,
    *,
    root: str | os.PathLike[str] | None = None,
    home: str | None = None,
    limit: int = 10,
) -> dict[str, Any]:
    """The conversations closest in meaning to the one ``ref`` names (a session or a record ref)."""
    import numpy as np

    from agentdex.api.index import reader
    from agentdex.api.search import hit_json
    from agentdex.index.store import index_root

    session = ref.split("@", 1)[0]
    root_path = index_root(root, home=home)
    with reader(root, home) as engine:
        if engine is None:
            raise NotFoundError("no index yet: run `agentdex index` first")
        rids = [
            rid
            for (rid,) in engine.db.execute(
                "SELECT id FROM records WHERE session_id = ?", (session,)
            )
        ]
        if not rids:
            raise NotFoundError(f"no conversation {session!r} in the index")
        vectors = open_vectors(root_path, _generation(root_path))
        if vectors is None:
            raise NotFoundError("no embeddings yet: run `agentdex index --semantic` first")
        try:
            own = vectors.vectors_of(rids)
            if not len(own):
                raise NotFoundError(
                    f"conversation {session!r} has no embeddings yet:"
                    " run `agentdex index --semantic`"
                )
            centre = own.mean(axis=0)
            centre /= max(float(np.linalg.norm(centre)), 1e-12)
            near = vectors.nearest(centre.astype(np.float32), top=SEMANTIC_TOP * 5)
        finally:
            vectors.close()
        hits = {h.id: h for h in engine.hits(n.rid for n in near)}
        best: dict[str, tuple[float, Any]] = {}
        for n in near:
            hit = hits.get(n.rid)
            if hit is None or hit.thash != n.thash or hit.session_id == session:
                continue
            if n.similarity < SIMILAR_MIN:
                continue
            if hit.session_id not in best or best[hit.session_id][0] < n.similarity:
                best[hit.session_id] = (n.similarity, hit)
        ranked = sorted(best.values(), key=lambda item: -item[0])[:limit]
        titles = {}
        for _sim, hit in ranked:
            row = engine.db.execute(
                "SELECT title FROM titles WHERE agent = ? AND session_id = ?",
                (hit.agent, hit.session_id),
            ).fetchone()
            titles[hit.session_id] = row[0] if row else None
        out = []
        from agentdex.search.snippets import make_snippet

        for sim, hit in ranked:
            hit.text = engine.original_text(hit)
            hit.snippet, _ = make_snippet(hit.text, [], kind=hit.kind)
            item = hit_json(hit, home)
            item["title"] = titles.get(hit.session_id)
            item["similarity"] = round(sim, 4)
            item["why"] = {"match": "semantic", "terms": [], "similarity": round(sim, 4)}
            out.append(item)
    return {"ref": ref, "session_id": session, "results": out}


def _generation(root_path: Path) -> str:
    from agentdex.index.store import Location

    gen = Location(root_path).current()
    return gen.name if gen is not None else ""
