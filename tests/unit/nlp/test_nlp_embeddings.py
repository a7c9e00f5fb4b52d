"""MiniLM embeddings on onnxruntime: shape, normalisation, semantic sanity, laziness, caching; the
model files' hashes taken from pip's install record when the file is as recorded."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from csagent.nlp.embeddings import (
    MiniLMEmbedder,
    default_model_path,
    default_tokenizer_path,
    file_sha256,
    get_embedder,
    installed_sha256,
)


def cosine(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cosine similarity of two vectors (not assumed normalised): the tests' measure."""
    va, vb = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / denom if denom else 0.0


def test_vectors_have_384_dimensions_and_unit_length(embedder: MiniLMEmbedder) -> None:
    # Given two short texts
    texts = ["where is my order", "hello"]
    # When they are embedded
    vectors = embedder.embed(texts)
    # Then there is one 384-dimensional unit vector per text
    assert len(vectors) == 2
    assert all(len(v) == embedder.dimension == 384 for v in vectors)
    assert np.allclose(np.linalg.norm(np.asarray(vectors), axis=1), 1.0, atol=1e-5)


def test_related_questions_are_closer_than_unrelated_ones(embedder: MiniLMEmbedder) -> None:
    # Given an order question, a paraphrase and an unrelated sentence
    order, paraphrase, unrelated = embedder.embed(["where is my order", "track my package", "I love pizza"])
    # When their similarities are compared
    # Then the paraphrase is clearly closer than the unrelated sentence
    assert cosine(order, paraphrase) > cosine(order, unrelated) + 0.1


def test_batch_and_single_embeddings_agree(embedder: MiniLMEmbedder) -> None:
    # Given a long and a short text embedded together (the short one is padded in the batch)
    batch = embedder.embed_np(["what is the warranty on the noise cancelling headphones I bought", "hi"])
    # When the short text is embedded alone with a fresh embedder (no cache)
    alone = MiniLMEmbedder().embed_np(["hi"])[0]
    # Then padding did not change its vector (mean pooling honours the attention mask)
    assert cosine(batch[1], alone) > 0.999


def test_repeated_texts_are_served_from_the_cache(embedder: MiniLMEmbedder) -> None:
    # Given a text embedded once
    first = embedder.embed_np(["cache me please"])[0]
    # When the same text is embedded again alongside a duplicate
    again = embedder.embed_np(["cache me please", "cache me please"])
    # Then both copies equal the first vector exactly
    assert np.array_equal(again[0], first) and np.array_equal(again[1], first)


def test_empty_input_gives_no_vectors(embedder: MiniLMEmbedder) -> None:
    # Given no texts / When embedded / Then the result is empty (and no model call is needed)
    assert embedder.embed([]) == []


def test_a_bare_string_is_rejected(embedder: MiniLMEmbedder) -> None:
    # Given a single string instead of a list (a common mistake that would embed characters)
    # When / Then it is refused
    with pytest.raises(TypeError):
        embedder.embed_np("where is my order")  # type: ignore[arg-type]


def test_very_long_text_is_truncated_not_rejected(embedder: MiniLMEmbedder) -> None:
    # Given a text far longer than 256 tokens
    long_text = "where is my order " * 300
    # When it is embedded
    vector = embedder.embed_np([long_text])[0]
    # Then a valid unit vector comes back
    assert vector.shape == (384,) and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_model_loads_on_first_use_not_on_construction() -> None:
    # Given a freshly constructed embedder
    fresh = MiniLMEmbedder()
    # When nothing has been embedded yet
    # Then no session exists; after the first call it does
    assert not fresh.loaded
    fresh.embed(["hello"])
    assert fresh.loaded


def test_importing_the_nlp_tier_loads_no_model_runtime() -> None:
    # Given a clean interpreter
    code = ("import sys; import csagent.nlp.embeddings, csagent.nlp.intents, csagent.nlp.clauses, "
            "csagent.nlp.entities.extract, csagent.nlp.entities.questions, csagent.nlp.replies; "
            "print(any(m in sys.modules for m in ('onnxruntime', 'tokenizers', 'numpy')))")
    # When the whole local tier is imported
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # Then neither onnxruntime, tokenizers nor numpy was imported (cold starts stay cheap)
    assert out.stdout.strip() == "False"


def test_the_factory_returns_one_shared_embedder() -> None:
    # Given the cached factory / When called twice / Then the same instance comes back
    assert get_embedder() is get_embedder()


def _installed(tmp_path: Path, content: bytes, recorded: bytes, size: int | None = None) -> Path:
    """A package file as pip leaves it: the file, and its dist-info RECORD naming a hash and size."""
    site = tmp_path / "site-packages"
    model = site / "some_model" / "model.onnx"
    model.parent.mkdir(parents=True)
    model.write_bytes(content)
    encoded = base64.urlsafe_b64encode(hashlib.sha256(recorded).digest()).rstrip(b"=").decode()
    record = site / "some_model-1.0.0.dist-info" / "RECORD"
    record.parent.mkdir()
    record.write_text(f"some_model/__init__.py,,\nsome_model/model.onnx,sha256={encoded},"
                      f"{len(content) if size is None else size}\n", encoding="utf-8")
    return model


def test_a_model_file_hash_recorded_at_install_is_used_without_reading_the_file(tmp_path: Path) -> None:
    # Given an installed file whose RECORD holds a hash (here another content's, to tell them apart)
    model = _installed(tmp_path, b"weights", recorded=b"what pip hashed")

    # When the file's hash is asked for, Then the recorded one is the answer
    assert file_sha256(model) == hashlib.sha256(b"what pip hashed").digest()


def test_a_file_not_of_its_recorded_size_is_hashed_again(tmp_path: Path) -> None:
    # Given an installed file replaced since by one of another size
    model = _installed(tmp_path, b"other weights", recorded=b"weights", size=len(b"weights"))

    # When its hash is asked for, Then the record is not trusted: the file is read and hashed
    assert installed_sha256(model) is None
    assert file_sha256(model) == hashlib.sha256(b"other weights").digest()


def test_a_file_without_a_record_is_hashed(tmp_path: Path) -> None:
    # Given a model file no installer recorded
    model = tmp_path / "model.onnx"
    model.write_bytes(b"weights")

    # When its hash is asked for, Then it is read and hashed
    assert file_sha256(model) == hashlib.sha256(b"weights").digest()


def test_the_installed_model_files_records_match_their_content() -> None:
    # Given the model and tokenizer files as installed (the venv; the deps layer alike)
    for path in (default_model_path(), default_tokenizer_path()):
        # Then pip's record of each is its SHA-256, so the embedder's fingerprint is unchanged
        assert installed_sha256(path) == hashlib.sha256(path.read_bytes()).digest()
