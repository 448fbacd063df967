"""The embedding path's speed-ups change no vector (issue 20, item 6).

* the model runs without the attention's NaN guards (``semantic/prune.py``): the
  rewritten graph gives bit-identical hidden states, padding included, and bytes
  that are not a model of that shape are run as they are;
* ``threads=2`` runs two model calls side by side on one session
  (``Embedder.embed_groups``): the same vectors as one call at a time, errors
  raised in the caller, and a fill on two lanes stores the same bytes as on one.

Real model, real index; the rate itself is measured in bench/bench_semantic.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from semantic_support import write_history


def _session(data: bytes) -> Any:
    from agentdex.semantic.model import import_runtime

    ort = import_runtime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])


def test_the_pruned_graph_gives_the_same_hidden_states() -> None:
    import numpy as np

    from agentdex.semantic.model import read_verified
    from agentdex.semantic.prune import drop_nan_guards

    original = read_verified()
    pruned, dropped = drop_nan_guards(original)
    assert dropped == 6  # one guard per layer of MiniLM-L6
    assert len(pruned) < len(original)
    before, after = _session(original), _session(pruned)
    rng = np.random.default_rng(5)
    for batch, width in ((1, 5), (4, 128), (6, 40)):
        ids = rng.integers(1000, 20000, (batch, width)).astype(np.int64)
        mask = np.ones_like(ids)
        for row in range(1, batch):  # padded rows: what the guards were about
            mask[row, rng.integers(2, width + 1) :] = 0
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (want,) = before.run(["last_hidden_state"], feed)
        (got,) = after.run(["last_hidden_state"], feed)
        assert np.array_equal(want, got), (batch, width)


@pytest.mark.parametrize(
    "data",
    [b"", b"not a model at all", b"\x3a\xff\xff\xff\xff\x0f", bytes(range(256)) * 4],
)
def test_bytes_of_another_shape_are_left_as_they_are(data: bytes) -> None:
    from agentdex.semantic.prune import drop_nan_guards

    assert drop_nan_guards(data) == (data, 0)


def test_a_truncated_model_is_left_as_it_is() -> None:
    from agentdex.semantic.model import read_verified
    from agentdex.semantic.prune import drop_nan_guards

    cut = read_verified()[:1_000_000]
    assert drop_nan_guards(cut) == (cut, 0)


def test_two_lanes_give_the_vectors_of_one() -> None:
    import numpy as np

    from agentdex.semantic.model import Embedder

    two = Embedder(threads=2)
    assert two.lanes == 2
    texts = ["the upstream service is throttling us", "retry after " * 200, "ok", "déjà vu 🙂"]
    chunks = [c for text in two.encode(texts, max_chunks=3) for c in text]
    groups = [chunks[at : at + 2] for at in range(0, len(chunks), 2)]
    assert len(groups) >= 3
    side_by_side = two.embed_groups(groups)
    one_at_a_time = [two.embed_ids(group) for group in groups]
    assert len(side_by_side) == len(groups)
    for got, want in zip(side_by_side, one_at_a_time, strict=True):
        assert np.array_equal(got, want)


def test_an_error_in_a_lane_reaches_the_caller() -> None:
    from agentdex.semantic.model import Embedder

    two = Embedder(threads=2)
    good = two.encode(["a sentence"])[0][0]
    with pytest.raises(Exception, match=r"(?i)index|indices|gather|out of"):
        # a token id past the vocabulary: the runtime's Gather fails in whichever lane
        two.embed_groups([[good], [good], [[101, 10_000_000, 102]], [good]])


def test_a_fill_on_two_lanes_stores_what_one_lane_stores(home: Path, run_cli: Any) -> None:
    from agentdex.api.semantic import embed_missing
    from agentdex.index.store import index_root
    from agentdex.semantic import store

    write_history(home)
    assert run_cli("index").returncode == 0
    root = index_root(None)
    twin = home.parent / "twin-index"
    shutil.copytree(root, twin)
    one = embed_missing(twin, threads=1)
    two = embed_missing(root, threads=2)
    assert one.complete and two.complete
    assert one.texts_embedded == two.texts_embedded > 0
    folders = store.semantic_dir(twin), store.semantic_dir(root)
    names = [sorted(p.name for p in f.glob("vec-*/*")) for f in folders]
    assert names[0] == names[1] and names[0]
    for name in names[0]:
        found = [next(f.glob(f"vec-*/{name}")).read_bytes() for f in folders]
        assert found[0] == found[1], name
