"""Search by meaning: an embedding model shipped in a package, vectors beside the index.

An engine (it may import records, index and search, never api or the surfaces).
``model`` loads and runs the pinned ONNX model, ``chunks`` says what is embedded
and how long messages are cut, ``store`` keeps int8 vectors keyed by content,
``fill`` computes the missing ones, ``query`` finds the records closest to a text.
Nothing here imports numpy or onnxruntime at import time.
"""
