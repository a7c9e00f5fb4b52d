"""The questions customers ask that a sentence of the store's own documents answers (doc2query).

MiniLM puts a question nearer to another way of asking it than to the statement that answers it:
"do returns cost me anything?" is far from "return labels are prepaid" and close to "do I have to
pay to send something back?". So each answering sentence of the shipped documents carries
questions a customer might ask of it (`data/asked.jsonl`: about 1,500, written by a helper who
read only the documents, never the code or an evaluation set), and a question asked is compared
with those: a sentence's *closeness* is the highest cosine between the question and the questions
it answers. `KnowledgeSearch.answer` uses it to choose the hit and the sentences that answer;
the planner asks `documents_know` (through the graph's dependencies) whether a question about a
change is one the documents answer.

A document uploaded through the knowledge-base service has no such questions: its sentences have
no closeness and are chosen by the question alone, as before. A question whose answer is no
longer a sentence of a shipped document is simply never matched (sentences are compared by their
text, whitespace and case aside). The questions' vectors are computed when the layer is built
(`fixed_vectors("asked_questions")`), keyed by their content.

    asked = ShippedQuestions().on(embedder)  # None without an embedder or a readable file
    asked.closeness(question_vector)(sentences) -> [0.83, 0.0, ...]
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING

from csagent.caching import IdentityCache

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from csagent.ports import Embedder

logger = logging.getLogger(__name__)

DATA_FILE = "asked.jsonl"
#: The name of the questions' vectors among the layer's arrays (`nlp.fixed_vectors`).
ARRAYS = "asked_questions"
#: The fewest words of a sentence that finds its chunk: "No." opens many of the FAQ's answers.
MIN_FINDING_WORDS = 4
#: For each sentence, how close a question it answers is to the one asked (`AskedQuestions.closeness`).
Closeness = Callable[[Sequence[str]], list[float]]


def sentence_key(text: str) -> str:
    """How a sentence is recognised: its words, lower-cased, single-spaced."""
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class AskedQuestions:
    """Per question: the key of each sentence its answer holds, and the question's unit vector."""

    keys: tuple[tuple[str, ...], ...]
    vectors: np.ndarray
    #: Per question, the sentences of its answer as the documents write them (for finding the
    #: chunks that hold them: `answering`).
    sentences: tuple[tuple[str, ...], ...] = ()

    def nearest(self, query: Sequence[float]) -> float:
        """The highest cosine between `query` and any of the questions (0.0 without any)."""
        similarities = self._similarities(query)
        return max(0.0, float(similarities.max())) if similarities is not None else 0.0

    def closeness(self, query: Sequence[float]) -> Closeness:
        """For the asked question's vector `query`: a function giving, for each sentence, the
        highest cosine between `query` and a question that sentence answers (0.0 for a sentence
        no question is about)."""
        similarities = self._similarities(query)
        best: dict[str, float] = {}
        if similarities is not None:
            for keys, similarity in zip(self.keys, similarities.tolist(), strict=True):
                for key in keys:
                    if similarity > best.get(key, 0.0):
                        best[key] = similarity
        return lambda sentences: [best.get(sentence_key(s), 0.0) for s in sentences]

    def answering(self, query: Sequence[float], floor: float, limit: int) -> list[str]:
        """The sentences (as written) that answer the questions at least `floor` close to `query`,
        the closest question's first, each once, at most `limit`: where the search looks besides
        the chunks near the question's own words ("do returns cost anything?" is far from "return
        labels are prepaid" but close to "will sending back the shoes cost me postage?")."""
        similarities = self._similarities(query)
        if similarities is None or not self.sentences:
            return []
        found: dict[str, None] = {}
        for index in similarities.argsort()[::-1].tolist():
            if float(similarities[index]) < floor or len(found) >= limit:
                break
            for sentence in self.sentences[index]:
                if len(found) < limit and len(sentence.split()) >= MIN_FINDING_WORDS:
                    found.setdefault(sentence, None)
        return list(found)

    def _similarities(self, query: Sequence[float]) -> np.ndarray | None:
        """The cosine between `query` and each question; None for a zero vector or no questions."""
        import numpy as np

        vector = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        return self.vectors @ (vector / norm) if norm and len(self.keys) else None


def asked_closeness(text: str, embedder: Embedder, asked: AskedQuestions | None) -> float:
    """How close the closest of `asked`'s questions is to `text` (cosine; 0.0 without the questions,
    for an empty text, or when the text cannot be embedded)."""
    if asked is None or not text.strip() or not len(asked.keys):
        return 0.0
    try:
        vector = embedder.embed([text])[0]
    except Exception as exc:  # noqa: BLE001 - a refinement, never a dependency
        logger.warning("asked questions unavailable (%s)", type(exc).__name__)
        return 0.0
    return asked.nearest(vector)


def documents_know(text: str, embedder: Embedder, asked: AskedQuestions | None) -> bool:
    """Does a sentence of the shipped documents answer a question asked almost in these words (one
    of `asked`'s questions at least `ASKED_MIN` close: the bar at which it answers instead of the
    best-ranked hit, chosen by cross-validation)? False without the questions."""
    from csagent.knowledge.search import ASKED_MIN

    return asked_closeness(text, embedder, asked) >= ASKED_MIN


def load_rows(text: str | None = None) -> list[tuple[str, str]]:
    """(question, answer) per line of `data/asked.jsonl` (or of `text`)."""
    raw = text if text is not None else (
        resources.files("csagent.knowledge").joinpath("data", DATA_FILE).read_text("utf-8"))
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    return [(str(row["question"]), str(row["answer"])) for row in rows]


def build(embedder: Embedder, rows: Sequence[tuple[str, str]], *, name: str = "") -> AskedQuestions:
    """The questions of `rows` embedded (with a `name`: the build's arrays, `fixed_vectors`)."""
    import numpy as np

    from csagent.knowledge.search import split_sentences
    from csagent.nlp.fixed_vectors import embed_all, fixed_vectors

    questions = [q for q, _ in rows]
    vectors = fixed_vectors(name, questions, embedder) if name else embed_all(embedder, questions)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    sentences = tuple(tuple(split_sentences(answer)) for _, answer in rows)
    keys = tuple(tuple(sentence_key(s) for s in answer) for answer in sentences)
    return AskedQuestions(keys, (vectors / np.clip(norms, 1e-12, None)).astype(np.float32), sentences)


def shipped(embedder: Embedder) -> AskedQuestions | None:
    """The shipped questions on `embedder`; None when they cannot be read or embedded (the answer
    is then chosen without them)."""
    try:
        return build(embedder, load_rows(), name=ARRAYS)
    except Exception as exc:  # noqa: BLE001 - a refinement, never a dependency
        logger.warning("asked questions unavailable (%s)", type(exc).__name__)
        return None


class ShippedQuestions:
    """The shipped questions built once per embedder, on first use. The composition root keeps one
    per process in its `ToolCaches` (`runtime.tool_caches`), which the knowledge tool and the
    planner's `documents_know` read. Kept in a `caching.IdentityCache` by the embedder itself
    (compared by identity), built under its lock: concurrent first calls wait for the one build
    instead of embedding the questions twice. A process has one embedder, tests build a few more
    (the oldest goes past `max_entries`)."""

    def __init__(self, max_entries: int = 4) -> None:
        self._built: IdentityCache[AskedQuestions | None] = IdentityCache(max_entries)

    def on(self, embedder: Embedder | None) -> AskedQuestions | None:
        """The shipped questions on `embedder` (None without one, or when they are unavailable:
        kept as such, not tried again)."""
        if embedder is None:
            return None
        return self._built.get_or_build((embedder,), partial(shipped, embedder))

    def documents_know(self, embedder: Embedder, text: str) -> bool:
        """`documents_know(text)` with the shipped questions on `embedder`."""
        return documents_know(text, embedder, self.on(embedder))

    def closeness(self, embedder: Embedder, text: str) -> float:
        """`asked_closeness(text)` with the shipped questions on `embedder`."""
        return asked_closeness(text, embedder, self.on(embedder))
