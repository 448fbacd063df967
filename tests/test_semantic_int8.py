"""The model's products run as int8 (``semantic/quantize.py``; issue 20, item 6).

* the rewrite finds every int8-weight product of MiniLM-L6 (6 layers x 6) and its
  6 GELUs, and bytes of any other shape are run as they are;
* what it changes is small: vectors of real-looking texts stay within cosine
  0.97 of the float32 graph's; a text's vector does not depend on the chunks it
  is batched with (the activations are quantized per call: one chunk a call);
* it is its own model: a store filled by the float32 graph is embedded again,
  never mixed.

Real model, real index; the rate is measured in bench/bench_embed_rate.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from semantic_support import write_history

TEXTS = [
    "the upstream service is throttling our requests, add retry-after and backoff",
    "ok",
    "déjà vu 🙂 — 日本語のテキストも",
    "def handler(event):\n    return {'statusCode': 429, 'headers': {'Retry-After': '30'}}",
    "the migration locked the orders table for twenty minutes during the deploy " * 6,
    "memory grows until the worker is killed by the oom killer; heap snapshots show caches",
]


def _pooled(embedder: Any, texts: list[str]) -> Any:
    return [embedder.embed_ids([ids]) for ids in (e[0] for e in embedder.encode(texts))]


def test_every_product_and_gelu_is_rewritten() -> None:
    from agentdex.semantic.model import read_verified
    from agentdex.semantic.prune import drop_nan_guards
    from agentdex.semantic.quantize import dynamic_int8

    pruned, _ = drop_nan_guards(read_verified())
    rewritten, products, gelus = dynamic_int8(pruned)
    assert (products, gelus) == (36, 6)
    assert b"DynamicQuantizeMatMul" in rewritten and b"DynamicQuantizeMatMul" not in pruned
    # the weights themselves are the file's: same int8 bytes, nothing added beside them
    assert abs(len(rewritten) - len(pruned)) < 64_000


@pytest.mark.parametrize(
    "data",
    [b"", b"not a model at all", b"\x3a\xff\xff\xff\xff\x0f", bytes(range(256)) * 4],
)
def test_bytes_of_another_shape_are_left_as_they_are(data: bytes) -> None:
    from agentdex.semantic.quantize import dynamic_int8

    assert dynamic_int8(data) == (data, 0, 0)


def test_a_truncated_model_is_left_as_it_is() -> None:
    from agentdex.semantic.model import read_verified
    from agentdex.semantic.quantize import dynamic_int8

    cut = read_verified()[:1_000_000]
    assert dynamic_int8(cut) == (cut, 0, 0)


def test_int8_vectors_stay_close_to_the_float32_graphs() -> None:
    import numpy as np

    from agentdex.semantic.model import MINILM_L6_DQ, MINILM_L6_INT8, Embedder

    fast, exact = Embedder(MINILM_L6_DQ), Embedder(MINILM_L6_INT8)
    assert fast.int8_products == 36 and exact.int8_products == 0
    got = np.vstack(_pooled(fast, TEXTS))
    want = np.vstack(_pooled(exact, TEXTS))
    cosines = (got * want).sum(axis=1)
    # 400 texts sampled from the 1 GB corpus: min 0.982, mean 0.992; "ok" alone 0.977
    assert cosines.min() >= 0.97 and cosines.mean() >= 0.985, cosines
    assert not np.array_equal(got, want)  # it is another graph: the id must differ
    assert MINILM_L6_DQ.id != MINILM_L6_INT8.id
    # the nearest text of each is still itself
    assert list((got @ want.T).argmax(axis=1)) == list(range(len(TEXTS)))


def test_a_vector_does_not_depend_on_its_batch() -> None:
    import numpy as np

    from agentdex.semantic.model import Embedder

    embedder = Embedder()
    chunks = [e[0] for e in embedder.encode(TEXTS)]
    together = embedder.embed_ids(chunks)
    alone = np.vstack([embedder.embed_ids([c]) for c in chunks])
    # quantized per call, a short chunk batched with long ones came out at cosine 0.96
    # to itself alone: int8 products run one chunk a call
    assert np.array_equal(together, alone)
    assert np.array_equal(embedder.embed(TEXTS[:2])[1], embedder.embed([TEXTS[1]])[0])


def test_a_store_of_the_float32_graph_is_embedded_again(home: Path, run_cli: Any) -> None:
    from agentdex.index.store import index_root
    from agentdex.semantic import store
    from agentdex.semantic.fill import fill
    from agentdex.semantic.model import DEFAULT, MINILM_L6_INT8

    write_history(home)
    assert run_cli("index").returncode == 0
    root = index_root(None)
    old = fill(root, spec=MINILM_L6_INT8)
    assert old.complete and old.texts_embedded > 0
    db = store.connect(store.semantic_dir(root), create=False)
    assert db is not None
    try:
        assert store.get_meta(db, "model") == MINILM_L6_INT8.id
        old_file = store.vfile(db)
    finally:
        db.close()
    new = fill(root)
    assert new.complete
    assert new.texts_embedded == old.texts_embedded and new.reused == 0
    db = store.connect(store.semantic_dir(root), create=False)
    assert db is not None
    try:
        assert store.get_meta(db, "model") == DEFAULT.id
        assert store.vfile(db) != old_file
        assert db.execute("SELECT count(*) FROM keys").fetchone()[0] == new.vectors
    finally:
        db.close()
