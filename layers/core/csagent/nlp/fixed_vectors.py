"""Vectors of fixed texts, computed when the layer is built and shipped as arrays.

Every set of texts the code embeds that changes only with a release (intent examples, injection
and scope anchors, the Cypher catalogue's examples and descriptions, the Text2Cypher few-shot
bank's questions, the knowledge base's chunks, the consent replies and cancellation reasons) and
what is trained on them (the intent, consent and reason models)
is computed once by `python -m csagent.nlp.fixed_vectors` (`make vectors`, which `make setup` and
`make build` run) into `csagent/nlp/data/vectors/`, shipped in the core layer, and loaded at run
time instead of running the model over a thousand texts on the first request.

Each entry is one `.npy` file per array beside a JSON manifest (`<name>.json`) holding its key:
a SHA-256 of what decides the arrays (the embedder's fingerprint, i.e. the model file, the
tokenizer file and the truncation length, and the exact texts in order, plus whatever else the
caller names, e.g. the intent labels and training settings). A shipped file whose key differs
from the one computed now is stale and never used: it is logged as a warning and the arrays are
recomputed (and kept, content-addressed, in the cache directory, `VECTORS_CACHE_DIR`, so the
next process loads them). An embedder without a `fingerprint()` (a test fake) is simply run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from csagent.ports import Embedder

logger = logging.getLogger(__name__)

#: Where the build writes and the layer ships the arrays (`/opt/python/csagent/nlp/data/vectors`).
SHIPPED_DIR = Path(__file__).resolve().parent / "data" / "vectors"
FORMAT = "csagent-fixed-arrays/1"


class VectorSettings(BaseSettings):
    """`VECTORS_DIR` (the shipped arrays; default the package's `nlp/data/vectors`) and
    `VECTORS_CACHE_DIR` (arrays computed at run time; Lambda's /tmp is its only writable place)."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    vectors_dir: Path = SHIPPED_DIR
    vectors_cache_dir: Path = Path(tempfile.gettempdir()) / "csagent-vectors"


@lru_cache(maxsize=1)
def get_vector_settings() -> VectorSettings:
    """The process-wide settings (cached; tests call `.cache_clear()`)."""
    return VectorSettings()


_build_dir: Path | None = None  # set by `building()`: misses are written there, under their name
_lock = threading.Lock()


@contextmanager
def building(out_dir: Path) -> Iterator[None]:
    """While inside, arrays not found fresh are computed and written to `out_dir` as the shipped
    files (`<name>.json` + `<name>.<array>.npy`), not to the cache: the build step."""
    global _build_dir
    previous, _build_dir = _build_dir, out_dir
    try:
        yield
    finally:
        _build_dir = previous


def content_key(*parts: str | Sequence[str]) -> str:
    """SHA-256 (hex) of the parts, each a string or a sequence of strings, unambiguously framed."""
    digest = hashlib.sha256()
    for part in parts:
        items = [part] if isinstance(part, str) else list(part)
        digest.update(f"{len(items)}\n".encode())
        for item in items:
            raw = item.encode("utf-8")
            digest.update(f"{len(raw)}:".encode())
            digest.update(raw)
    return digest.hexdigest()


def fingerprint_of(embedder: Any) -> str | None:
    """The embedder's fingerprint (what decides its vectors), or None when it has none."""
    method = getattr(embedder, "fingerprint", None)
    return str(method()) if callable(method) else None


def embed_all(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """`texts` through the embedder as a float32 matrix (MiniLM's array path when it has one)."""
    import numpy as np

    any_embedder: Any = embedder
    if hasattr(any_embedder, "embed_np"):
        return np.asarray(any_embedder.embed_np(list(texts)), dtype=np.float32)
    return np.asarray(embedder.embed(list(texts)), dtype=np.float32).reshape(len(texts), -1)


#: How fixed vectors are kept on disk: half precision halves the layer's bytes for them (the largest,
#: the intent examples, 6.9 MB to 3.5 MB), and a cosine between two unit vectors moves by well under
#: 1e-3 (`tests/unit/nlp/test_fixed_vectors.py` measures it). They are used as float32.
STORED_DTYPE = "float16"


def fixed_vectors(name: str, texts: Sequence[str], embedder: Embedder) -> np.ndarray:
    """Vectors of `texts` (a fixed set: the same in every process of a release), shape
    (len(texts), dimension), float32: loaded when a shipped or cached file has this exact key,
    otherwise embedded now and kept for the next process. Vectors embedded now are rounded to the
    stored precision first, so a process that loads them and one that computed them see the same
    numbers."""
    import numpy as np

    fingerprint = fingerprint_of(embedder)
    if fingerprint is None:
        return embed_all(embedder, texts)
    key = content_key(f"vectors/{STORED_DTYPE}", fingerprint, texts)
    arrays = cached_arrays(name, key, lambda: {"vectors": embed_all(embedder, texts).astype(STORED_DTYPE)})
    return np.asarray(arrays["vectors"], dtype=np.float32)


def cached_arrays(name: str, key: str,
                  compute: Callable[[], Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The arrays stored under `name` with this `key`, or `compute()`'s (then stored).

    Looked up in the shipped directory (`<name>.json`), then in the cache directory
    (`<name>-<key>.json`). A shipped manifest with another key is stale: a warning, then the
    cache or `compute()`. Writing is best effort (a read-only disk only costs the next process).
    """
    settings = get_vector_settings()
    found = _load(_build_dir or settings.vectors_dir, name, key)
    if found is not None:
        return found
    # At run time a miss is kept content-addressed in the cache; the build writes the shipped file.
    target, stem = ((_build_dir, name) if _build_dir is not None
                    else (settings.vectors_cache_dir, f"{name}-{key[:24]}"))
    if _build_dir is None:
        found = _load(target, stem, key)
        if found is not None:
            return found
    arrays = dict(compute())
    try:
        _save(target, stem, key, arrays)
    except OSError as exc:
        logger.info("fixed arrays %s not kept (%s): the next process computes them again", name, exc)
    return arrays


def _manifest_path(directory: Path, stem: str) -> Path:
    return directory / f"{stem}.json"


def _load(directory: Path, stem: str, key: str) -> dict[str, np.ndarray] | None:
    """The arrays of `<stem>.json` when its key is `key`; None when missing or stale (warned)."""
    import numpy as np

    path = _manifest_path(directory, stem)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        logger.warning("fixed arrays %s unreadable (%s): recomputing", path, exc)
        return None
    if manifest.get("format") != FORMAT or manifest.get("key") != key:
        logger.warning("fixed arrays %s are stale (built from other texts or another model file): "
                       "recomputing; `make vectors` rebuilds them", path)
        return None
    try:
        arrays = {array: np.load(directory / meta["file"], allow_pickle=False)
                  for array, meta in manifest["arrays"].items()}
    except (OSError, KeyError, ValueError) as exc:
        logger.warning("fixed arrays %s unreadable (%s): recomputing", path, exc)
        return None
    if any(list(arrays[a].shape) != meta["shape"] for a, meta in manifest["arrays"].items()):
        logger.warning("fixed arrays %s do not have the manifest's shapes: recomputing", path)
        return None
    return arrays


def _save(directory: Path, stem: str, key: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Write the arrays, then the manifest (atomically: a reader never sees half a file)."""
    import numpy as np

    directory.mkdir(parents=True, exist_ok=True)
    meta = {}
    for array, value in arrays.items():
        file = f"{stem}.{array}.npy"
        _atomic(directory / file, partial(np.save, arr=value, allow_pickle=False))
        meta[array] = {"file": file, "shape": list(value.shape), "dtype": str(value.dtype)}
    manifest = {"format": FORMAT, "name": stem, "key": key, "arrays": meta}
    _atomic(_manifest_path(directory, stem),
            lambda handle: handle.write(json.dumps(manifest, indent=1).encode("utf-8")))


def _atomic(path: Path, write: Callable[[Any], Any]) -> None:
    with _lock:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                write(handle)
            os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep Lambda's runtime user out
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def build(out_dir: Path = SHIPPED_DIR) -> list[str]:
    """Compute every fixed set into `out_dir` (fresh ones are kept as they are); their names."""
    from csagent.knowledge import asked
    from csagent.knowledge.ingest import default_chunk_texts
    from csagent.nlp.embeddings import get_embedder
    from csagent.tools.text2cypher.examples import default_bank_vectors
    from csagent.warmup import warm_fixed_texts

    out_dir.mkdir(parents=True, exist_ok=True)
    with building(out_dir):
        warm_fixed_texts()
        default_bank_vectors(get_embedder())
        fixed_vectors("knowledge_chunks", default_chunk_texts(), get_embedder())
        asked.build(get_embedder(), asked.load_rows(), name=asked.ARRAYS)
    return sorted(p.stem for p in out_dir.glob("*.json"))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m csagent.nlp.fixed_vectors [--out DIR]`: the build step (`make vectors`)."""
    import argparse
    import time

    parser = argparse.ArgumentParser(prog="python -m csagent.nlp.fixed_vectors",
                                     description="Embed every fixed text set into arrays the layer ships.")
    parser.add_argument("--out", type=Path, default=SHIPPED_DIR, help="where the arrays go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    # Run as `-m`, this file is `__main__`; the code that looks arrays up imports the package's
    # module, whose `building()` state is the one that counts.
    from csagent.nlp import fixed_vectors as module

    started = time.perf_counter()
    names = module.build(args.out)
    print(f"fixed arrays in {args.out}: {', '.join(names)} ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
