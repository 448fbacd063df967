"""Search by meaning: an embedding model shipped in a package, vectors beside the index.

An engine (it may import records, index and search, never api or the surfaces).
``model`` loads and runs the pinned ONNX model, ``chunks`` says what is embedded
and how long messages are cut, ``store`` keeps int8 vectors keyed by content,
``fill`` computes the missing ones, ``query`` finds the records closest to a text.
Nothing here imports numpy or onnxruntime at import time.
"""

import os

#: numpy's BLAS on one thread in every process that loads numpy through this package
#: (set here, before anything below imports numpy; a user's own setting wins): the scan's
#: one float matrix-vector product (4,000 x 384) took ~8 ms of both cores with
#: OpenBLAS's default threads against ~0.26 ms on one (docs/performance.md), and a server
#: (serve, ui, mcp) scans in process. The model runs in onnxruntime's own threads.
BLAS_ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
for _name, _value in BLAS_ONE_THREAD.items():
    os.environ.setdefault(_name, _value)
