"""Small trained readers of a whole customer message: one label of a few, with its probability.

Used where word lists know the short, common phrasings and customers write the rest in their own
words: whether a reply to "shall I go ahead?" is a yes, a no or something else (`nlp.consent`),
which of the store's cancellation reasons a message gives (`nlp.reasons`). Each is a multinomial
logistic regression (`intents.SoftmaxRegression`) over the message's MiniLM embedding beside its
word and character n-grams (TF-IDF, `nlp.ngrams`: the words carry negation and Chinese, which
MiniLM-L6 does not read), trained on a labelled file of `nlp/data/` written by a helper who had
read neither the code nor any evaluation set. The vectors of the shipped examples and the trained
weights are computed when the layer is built (`fixed_vectors`), keyed by their content.

Each caller trusts a reading only at a probability chosen by cross-validation over its file
(`python -m devstack.text_model_cv <name>`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from csagent.nlp.fixed_vectors import cached_arrays, content_key, embed_all, fingerprint_of, fixed_vectors
from csagent.nlp.intents import SoftmaxRegression, mask_entities
from csagent.nlp.ngrams import MAX_N, NgramVectoriser

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from csagent.ports import Embedder

logger = logging.getLogger(__name__)

#: The models' settings (`SoftmaxRegression`): the intent model's. In the consent model's 5-fold
#: cross-validation more steps, a higher rate or a lower L2 scored no better.
SETTINGS: dict[str, Any] = {"l2": 1e-4, "steps": 600, "rate": 4.0}
#: An n-gram is in a model's vocabulary when at least this many of its examples have it.
MIN_DF = 2
#: The suffix of the arrays holding a model's training examples' vectors (`<name>_training_examples`):
#: needed only to fit, so the layer's build leaves them out (infra/build/Makefile).
TRAINING_VECTORS = "_training_examples"


@dataclass(frozen=True)
class LabelledText:
    text: str
    label: str
    lang: str = "en"


@lru_cache(maxsize=8)
def training_examples(*filenames: str) -> tuple[LabelledText, ...]:
    """The labelled messages of `nlp/data/<filename>` for each file named, in order (JSON lines:
    text, label, lang)."""
    out: list[LabelledText] = []
    for filename in filenames:
        raw = resources.files("csagent.nlp").joinpath("data", filename).read_text("utf-8")
        out += [LabelledText(o["text"], o["label"], o.get("lang", "en"))
                for o in (json.loads(line) for line in raw.splitlines() if line.strip())]
    return tuple(out)


def features(vectors: np.ndarray, grams: NgramVectoriser, texts: Sequence[str]) -> np.ndarray:
    """Each message's feature row: its MiniLM vector beside its n-gram vector (both unit length)."""
    import numpy as np

    return np.hstack([vectors, grams.transform(texts)]).astype(np.float32)


@dataclass(frozen=True)
class TextModel:
    """A trained model and the n-gram vocabulary it was trained with."""

    embedder: Embedder
    grams: NgramVectoriser
    model: SoftmaxRegression

    @classmethod
    def train(cls, embedder: Embedder, examples: Sequence[LabelledText], *, name: str = "",
              vectors: np.ndarray | None = None) -> TextModel:
        """A model on `examples` (`vectors`: their MiniLM vectors when already computed). With a
        `name`, the examples are the layer's own: the n-gram vocabulary and the weights are the
        arrays the build computed (`<name>_model`), so a process that finds them embeds no example
        and fits nothing; otherwise they are fitted now (on the examples' vectors,
        `<name>_training_examples`, which the layer does not ship) and kept."""
        texts = [mask_entities(e.text) for e in examples]
        labels = [e.label for e in examples]

        def fit(example_vectors: np.ndarray) -> tuple[NgramVectoriser, SoftmaxRegression]:
            grams = NgramVectoriser.fit(texts, min_df=MIN_DF)
            return grams, SoftmaxRegression(**SETTINGS).fit(features(example_vectors, grams, texts), labels)

        fingerprint = fingerprint_of(embedder) if name else None
        if fingerprint is None:
            return cls(embedder, *fit(vectors if vectors is not None else embed_all(embedder, texts)))

        def fitted_arrays() -> dict[str, np.ndarray]:
            grams, model = fit(vectors if vectors is not None
                               else fixed_vectors(f"{name}{TRAINING_VECTORS}", texts, embedder))
            return {**model.arrays(), **grams.arrays()}

        key = content_key(f"{name}-model", fingerprint, texts, labels, json.dumps(SETTINGS, sort_keys=True),
                          f"ngrams min_df={MIN_DF} max_n={MAX_N}")
        arrays = cached_arrays(f"{name}_model", key, fitted_arrays)
        return cls(embedder, NgramVectoriser.from_arrays(arrays),
                   SoftmaxRegression(**SETTINGS).with_arrays(sorted(set(labels)), arrays))

    def read(self, texts: Sequence[str]) -> list[tuple[str, float]]:
        """Per message, the likeliest label and its probability."""
        masked = [mask_entities(t) or t for t in texts]
        probs = self.model.predict_proba(features(embed_all(self.embedder, masked), self.grams, masked))
        return [(self.model.classes[int(row.argmax())], float(row.max())) for row in probs]


class TextModelReader:
    """One shipped model (`name`, trained on the files `nlp/data/<filename>`), built on first use."""

    def __init__(self, name: str, *filenames: str, embedder: Embedder | None = None) -> None:
        self.name, self.filenames = name, filenames
        self._embedder = embedder
        self._model: TextModel | None = None
        self._lock = threading.Lock()

    def model(self) -> TextModel:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    from csagent.nlp.embeddings import get_embedder

                    self._model = TextModel.train(self._embedder or get_embedder(),
                                                  training_examples(*self.filenames), name=self.name)
        return self._model

    def warm_up(self) -> None:
        self.model()

    def read(self, text: str) -> tuple[str, float]:
        """The message's likeliest label and its probability."""
        return self.model().read([text])[0]

    def read_or_none(self, text: str) -> tuple[str, float] | None:
        """`read`, or None when the model cannot be built or run: the caller's word lists still
        answer without it."""
        try:
            return self.read(text)
        except Exception as exc:  # noqa: BLE001 - a reader is a refinement, never a dependency
            logger.warning("%s model unavailable (%s)", self.name, type(exc).__name__)
            return None

    def reads_as(self, text: str, label: str, min_probability: float) -> bool | None:
        """For a two-label reader: True when it reads `label` at `min_probability` or above, False
        when it reads the other label there; None when it reads below it or cannot read (the
        caller's rules decide then)."""
        reading = self.read_or_none(text)
        if reading is None or reading[1] < min_probability:
            return None
        return reading[0] == label
