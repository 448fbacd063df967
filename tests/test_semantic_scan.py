"""The vector scan's sign-bit prefilter: counted by words or by bytes, the same distances."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from agentdex.semantic import query, store  # noqa: E402
from agentdex.semantic.signs import query_signs, sign_bits  # noqa: E402


def _rows(n: int, dim: int, seed: int) -> store.Rows:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    q4, scale = store.quantize4(vectors)
    ckey = rng.integers(-(2**62), 2**62, size=n, dtype=np.int64)
    ckey[1::7] = ckey[0::7][: len(ckey[1::7])]  # some contents under one key twice
    return store.Rows(n=n, q4=q4, scale=scale, ckey=ckey)


def _unit(dim: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.mark.parametrize("dim", [384, 40])
def test_hamming_is_the_count_of_differing_sign_bits(dim: int) -> None:
    """384 dimensions: 48 bytes, counted as six 64-bit words; 40: 5 bytes, by bytes; a
    view that is not contiguous (every other row) too."""
    rows = _rows(70_000, dim, seed=dim)  # past one SLICE of 65,536 rows
    signs = sign_bits(rows.q4)
    qbits = query_signs(_unit(dim, 1))
    expected = np.unpackbits(signs ^ qbits, axis=1).sum(axis=1)
    assert query._hamming(signs, qbits).tolist() == expected.tolist()
    assert query._hamming(signs[::2], qbits).tolist() == expected[::2].tolist()


def test_best_rows_after_the_prefilter_is_the_exact_best(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past EXACT_MAX the prefilter picks the candidates: best first, one cosine per
    content key, and the best of them is the one an exact scan of every row finds."""
    rows = _rows(3_000, 384, seed=5)
    monkeypatch.setattr(query, "EXACT_MAX", 500)
    monkeypatch.setattr(query, "PREFILTER", 2_000)
    for seed in range(5):
        vector = _unit(384, 100 + seed)
        best = query.best_rows(rows, vector, 20)
        assert len(best) == 20 and list(best.values()) == sorted(best.values(), reverse=True)
        exact = query._exact(rows, vector, np.arange(len(rows), dtype=np.int64))
        top = int(np.argmax(exact))
        assert next(iter(best)) == int(rows.ckey[top])
        assert next(iter(best.values())) == pytest.approx(float(exact[top]), abs=1e-6)


@pytest.mark.parametrize("dim", [384, 40])
def test_the_scan_by_word_columns_counts_the_same_distances(dim: int) -> None:
    """384 dimensions: six 64-bit words a row, counted a column at a time from
    ``Rows.sign_words`` (kept); 40: 6 bytes a row, not whole words: no columns, and
    ``_candidates`` counts the rows by bytes instead."""
    rows = _rows(70_000, dim, seed=dim + 1)
    vector = _unit(dim, 2)
    qbits = query_signs(vector)
    signs = sign_bits(rows.q4)
    expected = np.unpackbits(signs ^ qbits, axis=1).sum(axis=1)
    words = rows.sign_words()
    if dim % 64:
        assert words is None
    else:
        assert words is not None and words.shape == (dim // 64, len(rows))
        assert rows.sign_words() is words  # derived once per rows
        assert query._hamming_words(words, qbits).tolist() == expected.tolist()
    keep = query.PREFILTER
    nearest = np.sort(np.argpartition(expected, keep - 1)[:keep])
    assert (
        np.sort(expected[query._candidates(rows, vector)]).tolist()
        == np.sort(expected[nearest]).tolist()
    )


def test_the_resident_runs_numpy_on_one_blas_thread(tmp_path: Path) -> None:
    """The resident's scan is one small matrix-vector product: OpenBLAS's threads
    spun on the core the search process needs (~8 ms of two cores a scan). ``main``
    sets one thread before anything imports numpy."""
    code = (
        "import os\n"
        "from agentdex.semantic import resident_server\n"
        "try:\n"
        "    resident_server.main(['--socket', 'no/such'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "import numpy\n"
        "numpy.ones((400, 40), dtype=numpy.float32) @ numpy.ones(40, dtype=numpy.float32)\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["HOME"] = str(tmp_path)
    env["PYTHONPATH"] = str(Path(query.__file__).parents[2])  # this checkout's src
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["1", "1"]


def _blas_threads_after_a_product(tmp_path: Path, **env_extra: str) -> list[str]:
    """Import the semantic package as a server does, run one float product, report
    ``OPENBLAS_NUM_THREADS`` and the process's thread count."""
    code = (
        "import os\n"
        "import agentdex.semantic.query\n"
        "import numpy\n"
        "numpy.ones((400, 40), dtype=numpy.float32) @ numpy.ones(40, dtype=numpy.float32)\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env.update(env_extra, HOME=str(tmp_path))
    env["PYTHONPATH"] = str(Path(query.__file__).parents[2])  # this checkout's src
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def test_a_process_scanning_in_itself_runs_numpy_on_one_blas_thread(tmp_path: Path) -> None:
    """serve, ui and mcp scan in process: the package sets one BLAS thread before
    numpy loads (the product spun both cores with OpenBLAS's default threads)."""
    assert _blas_threads_after_a_product(tmp_path) == ["1", "1"]


def test_a_users_blas_setting_wins(tmp_path: Path) -> None:
    assert _blas_threads_after_a_product(tmp_path, OPENBLAS_NUM_THREADS="2")[0] == "2"
