"""Fill an index's vector store to its full size with random vectors, for timing only.

    AGENTDEX_DATA_DIR=... HOME=<corpus> python bench/fill_random_vectors.py [--threads 2]

Embedding the whole 1 GB generated corpus takes hours (docs/performance.md), but what a
search by meaning costs depends on how many vectors it scans, not on their values.
This runs the real fill (``agentdex.semantic.fill.fill``: the texts it reads, the
tokenizer, chunking, the store's files and rows, the links to the records) with an
embedder whose model is replaced by random unit vectors, so a timing of hybrid search
afterwards scans a store of the full size. The answers of such a store by meaning
are noise: never use it for recall, only for speed and size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-records", type=int, default=None)
    args = parser.parse_args()

    import numpy as np

    from agentdex.index.store import index_root
    from agentdex.semantic import fill as fill_module
    from agentdex.semantic.model import DEFAULT, VOCAB, Embedder

    class RandomEmbedder(Embedder):
        """The real tokenizer; random unit vectors where the model would run."""

        def __init__(self) -> None:  # no model: nothing to load or check
            from tokenizers import BertWordPieceTokenizer

            self.spec = DEFAULT
            self.tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True)
            self.tokenizer.enable_truncation(DEFAULT.max_tokens)
            self.rng = np.random.default_rng(27)
            self.lanes = 1  # one call at a time (the fill asks; there is no model to share)

        def embed_ids(self, batch: list[list[int]], *, locked: bool = True) -> np.ndarray:
            vectors = self.rng.standard_normal((len(batch), self.spec.dim)).astype(np.float32)
            return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    root = index_root(None, home=Path(os.environ["HOME"]))
    started = time.perf_counter()
    stats = fill_module.fill(root, embedder=RandomEmbedder(), max_records=args.max_records)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": round(seconds, 1), **stats.to_json()}, indent=1))
    print(json.dumps(fill_module.coverage(root), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
