"""Character n-gram vectors for Chinese text: the features of the Chinese intent examples.

MiniLM-L6 reads English only, and Chinese has no spaces to split words on, so a Chinese clause is
compared with the labelled Chinese examples (`data/intents_zh.jsonl` and the `zh` rows of the
other example files) by the characters it shares with them: runs of ideographs give their single
characters and the pairs and triples of neighbours ("退货", "到哪了"), other text its lower-cased
words ("paypal", "size"), identifiers their kind (`intents.mask_entities`). Each n-gram is weighted
by how rare it is among the examples (TF-IDF, smoothed) and vectors are unit length, so a dot
product is a cosine similarity.

    vectoriser = NgramVectoriser.fit(texts, min_df=2)  # the examples' vocabulary and weights
    NgramVectoriser.from_arrays(vectoriser.arrays())  # the same, as a build ships it
    vectoriser.transform(texts) -> np.ndarray  # (n, vocabulary), unit rows
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from csagent.nlp.script import CJK_IDEOGRAPH

if TYPE_CHECKING:
    import numpy as np

_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[a-z][a-z0-9]*|\d+", re.IGNORECASE)
#: The longest character n-gram (1 to 3: single characters, pairs and triples).
MAX_N = 3


def ngrams(text: str) -> list[str]:
    """The n-grams of a text, in order, with repeats (`mask_entities` is applied first)."""
    from csagent.nlp.intents import mask_entities

    grams: list[str] = []
    for run in _RUN.findall(mask_entities(text).lower()):
        if CJK_IDEOGRAPH.match(run):
            for n in range(1, MAX_N + 1):
                grams.extend(run[i:i + n] for i in range(len(run) - n + 1))
        elif run.isdigit():
            grams.append("<num>")
        else:
            grams.append(run)
    return grams


@dataclass(frozen=True)
class NgramVectoriser:
    """TF-IDF over the n-grams of a fixed set of texts (n-grams it never saw are ignored)."""

    vocabulary: dict[str, int]
    idf: tuple[float, ...]

    @classmethod
    def fit(cls, texts: Sequence[str], min_df: int = 1) -> NgramVectoriser:
        """The vocabulary of the n-grams found in at least `min_df` of the texts, with their weights."""
        documents = Counter(gram for text in texts for gram in set(ngrams(text)))
        kept = sorted(gram for gram, count in documents.items() if count >= min_df)
        vocabulary = {gram: i for i, gram in enumerate(kept)}
        total = len(texts)
        idf = tuple(math.log((1 + total) / (1 + documents[gram])) + 1.0 for gram in kept)
        return cls(vocabulary, idf)

    def arrays(self) -> dict[str, np.ndarray]:
        """The vocabulary (in column order) and its weights, as arrays a build can ship."""
        import numpy as np

        return {"ngram_vocabulary": np.array(list(self.vocabulary), dtype=str),
                "ngram_idf": np.array(self.idf, dtype=np.float64)}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> NgramVectoriser:
        """The vectoriser `arrays()` described."""
        return cls({str(gram): i for i, gram in enumerate(arrays["ngram_vocabulary"].tolist())},
                   tuple(float(w) for w in arrays["ngram_idf"].tolist()))

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        matrix = np.zeros((len(texts), max(len(self.vocabulary), 1)), dtype=np.float32)
        for row, text in enumerate(texts):
            for gram, count in Counter(ngrams(text)).items():
                column = self.vocabulary.get(gram)
                if column is not None:
                    matrix[row, column] = (1.0 + math.log(count)) * self.idf[column]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.clip(norms, 1e-12, None)
