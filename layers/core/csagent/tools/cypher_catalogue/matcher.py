"""Which template a question asks for: the similarity gate, the template model and its margin.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from csagent.tools.cypher_catalogue.extraction import (
    ENTITY_MASK,
    canonical_question,
    entity_pattern,
    mask_slots,
)
from csagent.tools.cypher_catalogue.templates import Catalogue, QueryTemplate, load_catalogue

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.caching import IdentityCache
    from csagent.ports import Embedder


# Matching defaults, measured with all-MiniLM-L6-v2 on this catalogue (1,081 examples, 40 matchable
# templates) by 5-fold cross-validation (`python -m devstack.template_model_cv`): the similarity gate
# at 0.60 passes 91 % of held-out examples; the template model then picks right 916 times and wrong
# 73 (precision 0.926, coverage 0.915), where the closest-examples rule it replaced (margin 0.02 in
# score) picked right 814 times and wrong 83 (precision 0.907, coverage 0.830). Off-catalogue
# questions score at most 0.56; a lower threshold lets policy questions ("what is your return
# policy?") in.
#: Score the best template must reach (cosine similarity, mean of its top_k closest texts).
DEFAULT_THRESHOLD = 0.60
#: How far the chosen template must be ahead of the runner-up in the template model's probability:
#: 0.0, the margin that maximises right minus wrong picks on every fold.
DEFAULT_MARGIN = 0.0
#: A template's score is the mean similarity of its this-many closest texts.
DEFAULT_TOP_K = 2

# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TemplateMatch:
    """The chosen template, its score, and how far it beat the runner-up."""

    template: QueryTemplate
    score: float
    margin: float
    runner_up: str | None
    runner_up_score: float
    matched_text: str
    #: Parameters read while narrowing to an option template (see `narrow_by_option`).
    narrowed: Mapping[str, Any] | None = None

    @property
    def template_id(self) -> str:
        return self.template.id


@dataclass
class _Index:
    vectors: Any  # numpy array (n_texts, dim), unit rows
    owners: Any  # numpy int array: template index per text
    texts: list[str]
    kinds: list[str]  # "example" | "description"


class TemplateMatcher:
    """Matcher over the catalogue's example questions: similarity says whether a question is one
    the catalogue answers, a model trained on the examples says which.

    Texts are canonicalised before embedding: order / item / product ids become fixed tokens
    and product mentions become "product" (`[slot]` markup in the examples; in questions the
    store's product names given as `entity_terms` and any entity strings passed to `match`), so
    the intent decides, not the product. Score of a template = the mean of its `top_k` closest
    texts (examples and description; `top_k=1` is the plain max): a question whose best score is
    below `threshold` is no catalogue question. Which template it is comes from a multinomial
    logistic regression over the examples' embeddings (`model`; 5-fold cross-validated accuracy
    0.912 on the 1,081 examples against 0.846 for the closest-examples rule it replaced), and its
    probability must lead the runner-up's by `margin`; otherwise `match` returns None and the
    caller degrades (Text2Cypher, clarification). `vectors_name` names the texts' arrays (and the
    model's) built with the layer (`csagent.nlp.fixed_vectors`; `matcher_for` gives it for the
    shipped catalogue): loaded instead of computed when fresh.
    """

    def __init__(self, catalogue: Catalogue, embedder: Embedder, *, threshold: float = DEFAULT_THRESHOLD,
                 margin: float = DEFAULT_MARGIN, top_k: int = DEFAULT_TOP_K, use_descriptions: bool = True,
                 entity_terms: Sequence[str] = (), vectors_name: str | None = None) -> None:
        self.catalogue = catalogue
        self.embedder = embedder
        self._vectors_name = vectors_name  # the shipped catalogue: its vectors ship with the layer
        self.threshold = threshold
        self.margin = margin
        self.top_k = max(1, top_k)
        self.use_descriptions = use_descriptions
        self._entity_re = entity_pattern(entity_terms)
        self._index: _Index | None = None
        self._model: Any = None
        self._lock = threading.Lock()
        self._model_lock = threading.Lock()

    def _ensure_index(self) -> _Index:
        if self._index is not None:
            return self._index
        with self._lock:
            if self._index is None:
                import numpy as np

                texts: list[str] = []
                owners: list[int] = []
                kinds: list[str] = []
                for i, template in enumerate(self.catalogue.templates):
                    if not template.matchable:
                        continue
                    for example in template.examples:
                        texts.append(example)
                        owners.append(i)
                        kinds.append("example")
                    if self.use_descriptions:
                        texts.append(template.description)
                        owners.append(i)
                        kinds.append("description")
                prepared = [canonical_question(mask_slots(t)) for t in texts]
                if self._vectors_name:
                    from csagent.nlp.fixed_vectors import fixed_vectors

                    vectors = fixed_vectors(self._vectors_name, prepared, self.embedder)
                else:
                    vectors = np.asarray(self.embedder.embed(prepared), dtype=np.float32)
                vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
                self._index = _Index(vectors, np.asarray(owners), texts, kinds)
        return self._index

    def warm_up(self) -> None:
        """Load or compute the catalogue's vectors and model now (otherwise on the first `match`)."""
        self.model()

    def model(self) -> Any:
        """The template model (`nlp.intents.SoftmaxRegression`) trained on the examples' vectors:
        the layer's arrays for the shipped catalogue when they were trained on these texts, else
        trained now (about a second)."""
        if self._model is not None:
            return self._model
        index = self._ensure_index()
        with self._model_lock:
            if self._model is None:
                from csagent.nlp.intents import SoftmaxRegression

                rows = [i for i, kind in enumerate(index.kinds) if kind == "example"]
                x = index.vectors[rows]
                labels = [self.catalogue.templates[int(index.owners[i])].id for i in rows]
                model = SoftmaxRegression()
                fingerprint = None
                if self._vectors_name:
                    from csagent.nlp.fixed_vectors import fingerprint_of

                    fingerprint = fingerprint_of(self.embedder)
                if fingerprint is None:
                    self._model = model.fit(x, labels)
                else:
                    from csagent.nlp.fixed_vectors import cached_arrays, content_key

                    texts = [canonical_question(mask_slots(index.texts[i])) for i in rows]
                    key = content_key("template-model/1", fingerprint, texts, labels,
                                      f"l2={model.l2!r} steps={model.steps} rate={model.rate!r}")
                    arrays = cached_arrays(f"{self._vectors_name}_model", key,
                                           lambda: SoftmaxRegression().fit(x, labels).arrays())
                    self._model = model.with_arrays(sorted(set(labels)), arrays)
        return self._model

    def probabilities(self, question: str, entities: Sequence[str] = ()) -> dict[str, float]:
        """The model's probability of each template for `question` (canonicalised and masked)."""
        return self._probabilities(self._vector(self.prepare(question, entities)))

    def assess(self, question: str,
               entities: Sequence[str] = ()) -> tuple[dict[str, float], dict[str, float]]:
        """(each template's similarity score, the model's probability of each) for `question`, its
        `entities` (product names) masked as `match` masks them."""
        vec = self._vector(self.prepare(question, entities))
        ranked = self._rank_vector(vec, len(self.catalogue.templates))
        return {tid: score for tid, score, _ in ranked}, self._probabilities(vec)

    def _probabilities(self, vec: Any) -> dict[str, float]:
        model = self.model()
        probs = model.predict_proba(vec[None, :])[0]
        return {c: float(p) for c, p in zip(model.classes, probs, strict=True)}

    def prepare(self, question: str, entities: Sequence[str] = ()) -> str:
        """The question as it is embedded: ids canonicalised, product mentions masked."""
        text = canonical_question(question)
        extra = entity_pattern([e for e in entities if isinstance(e, str) and len(e.strip()) >= 3])
        for pattern in (extra, self._entity_re):
            if pattern is not None:
                text = pattern.sub(ENTITY_MASK, text)
        return text

    def _template_scores(self, sims: Any, exclude: int | None = None) -> tuple[Any, list[int]]:
        """Per-template score (mean of the top_k similarities) and the index of its best text."""
        import numpy as np

        index = self._ensure_index()
        n = len(self.catalogue.templates)
        scores = np.full(n, -1.0, dtype=np.float32)
        best_text = [-1] * n
        for t in range(n):
            members = np.flatnonzero(index.owners == t)
            if exclude is not None:
                members = members[members != exclude]
            if members.size == 0:
                continue
            values = sims[members]
            order = np.argsort(-values)
            scores[t] = float(values[order[:self.top_k]].mean())
            best_text[t] = int(members[order[0]])
        return scores, best_text

    def rank(self, question: str, top_n: int = 3,
             entities: Sequence[str] = ()) -> list[tuple[str, float, str]]:
        """Best templates for a question: (template id, score, closest text), best first."""
        return self._rank_prepared(self.prepare(question, entities), top_n)

    def _vector(self, prepared: str) -> Any:
        """The unit vector of a prepared question."""
        import numpy as np

        vec = np.asarray(self.embedder.embed([prepared])[0], dtype=np.float32)
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else vec

    def _rank_prepared(self, prepared: str, top_n: int) -> list[tuple[str, float, str]]:
        return self._rank_vector(self._vector(prepared), top_n)

    def _rank_vector(self, vec: Any, top_n: int) -> list[tuple[str, float, str]]:
        import numpy as np

        index = self._ensure_index()
        sims = index.vectors @ vec
        scores, best_text = self._template_scores(sims)
        order = np.argsort(-scores)[:top_n]
        return [(self.catalogue.templates[i].id, float(scores[i]), index.texts[best_text[i]]) for i in order]

    def catalogue_score(self, question: str, entities: Sequence[str] = ()) -> float:
        """How close the question comes to any catalogue-scoped template (products, variants,
        categories): low for what a product's documents answer ("how often do I descale it?")."""
        return self.scope_score(question, "catalogue", entities)

    def scope_score(self, question: str, scope: str, entities: Sequence[str] = ()) -> float:
        """How close the question comes to any template of `scope` ("catalogue": products and
        categories; "customer": the customer's account and orders)."""
        ids = {t.id for t in self.catalogue.templates if t.scope == scope}
        ranked = self.rank(question, top_n=len(self.catalogue.templates), entities=entities)
        return max((score for template_id, score, _ in ranked if template_id in ids), default=0.0)

    def _store_wide(self, template_id: str) -> bool:
        """A catalogue template that takes no parameter: about the whole store, never one product."""
        template = self.catalogue.get(template_id)
        return template is not None and template.scope == "catalogue" and not template.params

    def match(self, question: str, entities: Sequence[str] = ()) -> TemplateMatch | None:
        """The template for `question`, or None when below the threshold or too close to a rival.

        `entities`: entity strings already extracted from the question (product names ...),
        masked like the catalogue's `[slots]`.
        """
        if not question or not question.strip():
            return None
        prepared = self.prepare(question, entities)
        vec = self._vector(prepared)
        ranked = self._rank_vector(vec, len(self.catalogue.templates))
        if prepared != canonical_question(question):
            # A question that names a product is about that product: the store-wide catalogue
            # questions ("what types of products do you sell?") read alike once it is masked.
            ranked = [r for r in ranked if not self._store_wide(r[0])] or ranked
        if ranked[0][1] < self.threshold:
            return None  # close to no template: not a question the catalogue answers
        probabilities = self._probabilities(vec)
        chosen = sorted(ranked, key=lambda r: -probabilities.get(r[0], 0.0))
        (top_id, top_score, top_text), runner_up = chosen[0], (chosen[1] if len(chosen) > 1 else None)
        margin = probabilities.get(top_id, 0.0) - (probabilities.get(runner_up[0], 0.0) if runner_up else 0.0)
        if margin < self.margin:
            return None
        template = self.catalogue.get(top_id)
        assert template is not None
        return TemplateMatch(template, top_score, margin, runner_up[0] if runner_up else None,
                             runner_up[1] if runner_up else -1.0, top_text)


@dataclass
class LeaveOneOutReport:
    """Leave-one-out over all example questions: each is matched against all other texts."""

    total: int
    correct: int
    errors: list[tuple[str, str, str]] = field(default_factory=list)  # (question, expected, got)
    scores: list[tuple[float, float, bool]] = field(default_factory=list)  # (score, margin, correct)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def at(self, threshold: float, margin: float) -> tuple[float, float]:
        """(coverage, precision) if only matches with score >= threshold and margin >= margin count."""
        accepted = [ok for s, m, ok in self.scores if s >= threshold and m >= margin]
        coverage = len(accepted) / self.total if self.total else 0.0
        precision = sum(accepted) / len(accepted) if accepted else 0.0
        return coverage, precision


def evaluate_leave_one_out(matcher: TemplateMatcher) -> LeaveOneOutReport:
    """Hold out each example in turn and match it against every other text of the catalogue."""
    import numpy as np

    index = matcher._ensure_index()
    sims_all = index.vectors @ index.vectors.T
    report = LeaveOneOutReport(total=0, correct=0)
    for i, kind in enumerate(index.kinds):
        if kind != "example":
            continue
        scores, _ = matcher._template_scores(sims_all[i], exclude=i)
        order = np.argsort(-scores)
        got, second = int(order[0]), int(order[1])
        ok = got == int(index.owners[i])
        report.total += 1
        report.correct += int(ok)
        report.scores.append((float(scores[got]), float(scores[got] - scores[second]), ok))
        if not ok:
            report.errors.append((index.texts[i], matcher.catalogue.templates[int(index.owners[i])].id,
                                  matcher.catalogue.templates[got].id))
    return report



def matcher_for(embedder: Embedder, catalogue: Catalogue | None = None,
                matchers: IdentityCache[TemplateMatcher] | None = None) -> TemplateMatcher:
    """The matcher of (embedder, catalogue), kept in `matchers` (the composition root's
    `ToolCaches.matchers`) so the examples are embedded and the model trained only once; the
    shipped catalogue's vectors are loaded from the layer's arrays (`csagent.nlp.fixed_vectors`).
    Without `matchers` a new matcher is built on every call (scripts that match once)."""
    catalogue = catalogue or load_catalogue()
    shipped = "cypher_catalogue" if catalogue is load_catalogue() else None

    def build() -> TemplateMatcher:
        return TemplateMatcher(catalogue, embedder, vectors_name=shipped)

    return matchers.get_or_build((embedder, catalogue), build) if matchers is not None else build()


