"""Fixed texts' vectors built ahead and shipped: a fresh file is loaded without running the
model, a stale one (other texts, another model file) is never used."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from csagent.nlp import fixed_vectors as fv
from csagent.nlp.embeddings import MiniLMEmbedder
from csagent.nlp.intents import Example, IntentClassifier, get_intent_classifier, training_examples


class CountingEmbedder:
    """The real MiniLM embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: MiniLMEmbedder, fingerprint: str | None = None) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self.texts_embedded = 0
        self._fingerprint = fingerprint

    def fingerprint(self) -> str:
        return self._fingerprint or self.inner.fingerprint()

    def embed_np(self, texts: Sequence[str]) -> np.ndarray:
        self.texts_embedded += len(texts)
        return self.inner.embed_np(texts)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_np(texts).tolist()

    def load(self) -> None:
        self.inner.load()


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """(shipped directory, cache directory), both empty, in the settings."""
    shipped, cache = tmp_path / "shipped", tmp_path / "cache"
    monkeypatch.setenv("VECTORS_DIR", str(shipped))
    monkeypatch.setenv("VECTORS_CACHE_DIR", str(cache))
    fv.get_vector_settings.cache_clear()
    yield shipped, cache
    fv.get_vector_settings.cache_clear()


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder(cache_size=0)  # no text cache: every embed call runs the model


TEXTS = ["where is my order", "cancel my order", "what is your return policy"]


def stored(vectors: np.ndarray) -> np.ndarray:
    """The model's float32 vectors as kept on disk and given back (rounded to the stored precision)."""
    return vectors.astype(fv.STORED_DTYPE).astype(np.float32)


def test_a_fresh_shipped_file_is_loaded_without_running_the_model(dirs, minilm) -> None:
    # Given the build step wrote the vectors of three texts
    shipped, _ = dirs
    with fv.building(shipped):
        built = fv.fixed_vectors("phrases", TEXTS, CountingEmbedder(minilm))
    # When a new process asks for the same texts with the same model
    counting = CountingEmbedder(minilm)
    loaded = fv.fixed_vectors("phrases", TEXTS, counting)
    # Then they come from the file: the model embedded nothing, and they are the model's vectors
    # at the stored precision, as float32
    assert counting.texts_embedded == 0
    assert loaded.shape == (3, 384) and loaded.dtype == np.float32 and np.array_equal(loaded, built)
    assert np.array_equal(loaded, stored(minilm.embed_np(TEXTS)))


def test_changed_texts_make_the_shipped_file_stale_and_are_embedded(dirs, minilm, caplog) -> None:
    # Given the build step wrote the vectors of three texts
    shipped, _ = dirs
    with fv.building(shipped):
        fv.fixed_vectors("phrases", TEXTS, CountingEmbedder(minilm))
    # When one text was edited since
    edited = [*TEXTS[:2], "how long do refunds take"]
    counting = CountingEmbedder(minilm)
    with caplog.at_level(logging.WARNING, logger="csagent.nlp.fixed_vectors"):
        vectors = fv.fixed_vectors("phrases", edited, counting)
    # Then the file is reported stale and the edited texts are embedded, not read from it
    assert any("stale" in r.getMessage() for r in caplog.records)
    assert counting.texts_embedded == 3
    assert np.array_equal(vectors, stored(minilm.embed_np(edited)))


def test_another_model_file_makes_the_shipped_file_stale(dirs, minilm, caplog) -> None:
    # Given vectors built with the installed model
    shipped, _ = dirs
    with fv.building(shipped):
        fv.fixed_vectors("phrases", TEXTS, CountingEmbedder(minilm))
    # When the model file is another one (its fingerprint differs)
    other = CountingEmbedder(minilm, fingerprint="0" * 64)
    with caplog.at_level(logging.WARNING, logger="csagent.nlp.fixed_vectors"):
        fv.fixed_vectors("phrases", TEXTS, other)
    # Then the shipped vectors are not used
    assert any("stale" in r.getMessage() for r in caplog.records)
    assert other.texts_embedded == 3


def test_vectors_are_kept_at_half_precision_and_move_cosines_by_under_a_thousandth(dirs, minilm) -> None:
    # Given the build step wrote the vectors of forty varied store sentences
    shipped, _ = dirs
    texts = [f"{verb} my {thing}" for verb in ("where is", "cancel", "return", "exchange", "track")
             for thing in ("order", "kettle", "yoga mat", "headphones", "gift card", "laptop",
                           "grey backpack", "refund")]
    with fv.building(shipped):
        fv.fixed_vectors("phrases", texts, CountingEmbedder(minilm))
    # Then the file holds half-precision numbers (half the bytes of float32)
    on_disk = np.load(shipped / "phrases.vectors.npy")
    assert on_disk.dtype == np.float16 and on_disk.shape == (40, 384)
    # And every cosine between two of them is within 1e-3 of the model's own
    exact = minilm.embed_np(texts)
    loaded = fv.fixed_vectors("phrases", texts, CountingEmbedder(minilm))
    assert np.abs(loaded @ loaded.T - exact @ exact.T).max() < 1e-3


def test_what_was_recomputed_is_kept_for_the_next_process(dirs, minilm) -> None:
    # Given no shipped file: a first process embeds the texts
    first = CountingEmbedder(minilm)
    fv.fixed_vectors("phrases", TEXTS, first)
    assert first.texts_embedded == 3
    # When a second process asks for them
    second = CountingEmbedder(minilm)
    vectors = fv.fixed_vectors("phrases", TEXTS, second)
    # Then it loads them from the cache directory
    assert second.texts_embedded == 0 and vectors.shape == (3, 384)
    assert list(dirs[1].glob("phrases-*.json"))


def test_a_corrupt_array_is_recomputed(dirs, minilm) -> None:
    # Given a shipped file whose array was truncated after the build
    shipped, _ = dirs
    with fv.building(shipped):
        fv.fixed_vectors("phrases", TEXTS, CountingEmbedder(minilm))
    (shipped / "phrases.vectors.npy").write_bytes(b"\x93NUMPY")
    # When the texts are asked for
    counting = CountingEmbedder(minilm)
    vectors = fv.fixed_vectors("phrases", TEXTS, counting)
    # Then they are embedded again
    assert counting.texts_embedded == 3 and vectors.shape == (3, 384)


def test_an_embedder_without_a_fingerprint_is_simply_run(dirs) -> None:
    # Given a fake embedder (no model file to key on)
    class Fake:
        dimension = 2

        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0, 0.0] for _ in texts]

    # When its vectors are asked for
    vectors = fv.fixed_vectors("phrases", TEXTS, Fake())
    # Then they are its own, and nothing is written
    assert vectors.tolist() == [[1.0, 0.0]] * 3
    assert not dirs[0].exists() and not dirs[1].exists()


def test_the_intent_classifier_loads_its_examples_and_model_from_the_arrays(dirs, minilm) -> None:
    # Given the arrays of the shipped intent examples and model, built by a first classifier
    shipped, _ = dirs
    with fv.building(shipped):
        IntentClassifier(CountingEmbedder(minilm)).warm_up()  # type: ignore[arg-type]
    # When a fresh process's classifier reads a clause
    counting = CountingEmbedder(minilm)
    prediction = IntentClassifier(counting).classify("where is my order #W2611340")  # type: ignore[arg-type]
    # Then only the clause was embedded, and it is understood exactly as by a classifier that
    # embeds the same examples and trains on them itself
    assert counting.texts_embedded == 1
    assert prediction.intent == "order_status"
    trained_here = IntentClassifier(minilm, training_examples())
    assert prediction == trained_here.classify("where is my order #W2611340")
    get_intent_classifier.cache_clear()


def test_custom_examples_are_embedded_not_looked_up(dirs, minilm) -> None:
    # Given a classifier over examples of the caller's own
    examples = [Example("hello there", "greeting", "en"), Example("where is my parcel", "tracking", "en")]
    counting = CountingEmbedder(minilm)
    # When it classifies
    IntentClassifier(counting, examples).classify("hi")  # type: ignore[arg-type]
    # Then its examples were embedded and nothing was written under the shipped sets' names
    assert counting.texts_embedded == 3
    assert not dirs[0].exists() and not dirs[1].exists()
