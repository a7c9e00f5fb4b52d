"""Running a template for the tool: validated parameters, the authenticated customer injected, a
READ transaction with a timeout and a row cap, rows shaped into a `ToolResult`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from csagent.domain.models import ErrorType, Task, ToolResult
from csagent.domain.task_args import PredefinedCypherArgs, ProductRef
from csagent.domain.template_rows import OPTION_KEYS_SEPARATOR, VariantRow
from csagent.domain.tool_data import CatalogueData
from csagent.grounding.comparatives import may_rank, rank_versions
from csagent.nlp.gloss import english_query
from csagent.tools.cypher_catalogue.extraction import (
    OPTION_NARROWED,
    OPTION_RANK_FLOOR,
    StoreVocabulary,
    entity_pattern,
    extract_params,
    names_option_value,
    narrow_by_option,
    sets_aside,
    store_vocabulary,
)
from csagent.tools.cypher_catalogue.matcher import TemplateMatch, TemplateMatcher, matcher_for
from csagent.tools.cypher_catalogue.templates import (
    Catalogue,
    ParamError,
    QueryTemplate,
    ResultSpec,
    load_catalogue,
    validate_params,
)
from csagent.tools.failures import failed_result

if TYPE_CHECKING:  # pragma: no cover - typing only
    from csagent.tools.context import ToolContext


logger = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------
def _shape_row(row: Mapping[str, Any], spec: ResultSpec) -> dict[str, Any]:
    shaped: dict[str, Any] = {}
    for column in spec.columns:
        value = row.get(column)
        if column in spec.json_columns and isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        shaped[column] = value
    return shaped


class _Blank(dict):  # type: ignore[type-arg]
    """format_map mapping that renders unknown placeholders as empty text."""

    def __missing__(self, key: str) -> str:
        return ""


def _display_params(template: QueryTemplate, raw: Mapping[str, Any] | None,
                    values: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter values as the customer wrote them (order ids normalised) for messages."""
    raw = raw or {}
    shown: dict[str, Any] = {}
    for spec in template.params:
        given = raw.get(spec.name)
        if isinstance(given, str) and given.strip() and spec.type not in ("order_id", "status", "int"):
            shown[spec.name] = " ".join(given.split())
        else:
            shown[spec.name] = values.get(spec.name)
    return shown


def _empty_message(template: QueryTemplate, shown: Mapping[str, Any]) -> str:
    """The readable NO_RESULTS message of a template (its `empty_message`, or a generic one)."""
    fields = _Blank({k: ("" if v is None else v) for k, v in shown.items()})
    fields["status_clause"] = f" with status '{shown['status']}'" if shown.get("status") else ""
    if template.empty_message:
        with contextlib.suppress(IndexError, ValueError, AttributeError):
            return template.empty_message.format_map(fields)
    described = template.description.rstrip(".")
    listed = ", ".join(f"{k}={v}" for k, v in shown.items() if v is not None)
    return f"Nothing found: {described}" + (f" ({listed})." if listed else ".")


def run_template(template_id: str, params: Mapping[str, Any] | None, ctx: ToolContext, task: Task, *,
                 catalogue: Catalogue | None = None, match: TemplateMatch | None = None) -> ToolResult:
    """Validate, scope, run and shape one catalogue query. Never raises."""
    started = time.perf_counter()

    def elapsed() -> float:
        return round((time.perf_counter() - started) * 1000.0, 3)

    try:
        catalogue = catalogue or load_catalogue()
        template = catalogue.get(template_id)
        if template is None:
            return ToolResult.failed(task, ErrorType.VALIDATION, f"Unknown query template '{template_id}'.",
                                     latency_ms=elapsed())
        try:
            values = validate_params(template, params)
        except ParamError as exc:
            return ToolResult.failed(task, ErrorType.VALIDATION, str(exc), latency_ms=elapsed())
        query_params = dict(values)
        if template.scope == "customer":
            if not ctx.customer_id:
                return ToolResult.failed(task, ErrorType.PERMISSION_DENIED,
                                         "This question is about a customer account; sign in to ask it.",
                                         latency_ms=elapsed())
            query_params["customer_id"] = ctx.customer_id
        spec = template.result
        try:
            rows = ctx.graph.read(template.cypher, query_params, timeout_s=catalogue.timeout_for(template),
                                  max_rows=spec.max_rows + 1)
        except Exception as exc:  # noqa: BLE001 - failures become typed results, in one place
            logger.warning("cypher template %s failed", template.id)
            return failed_result(task, exc, latency_ms=elapsed())
        if not rows:
            return ToolResult.failed(task, ErrorType.NO_RESULTS,
                                     _empty_message(template, _display_params(template, params, values)),
                                     latency_ms=elapsed())
        data: dict[str, Any] = {"template_id": template.id, "description": template.description,
                                "scope": template.scope, "params": values}
        if match is not None:
            data["match"] = {"score": round(match.score, 4), "margin": round(match.margin, 4),
                             "runner_up": match.runner_up}
        if spec.shape == "one":
            data["row"] = _shape_row(rows[0], spec)
        else:
            data["rows"] = [_shape_row(r, spec) for r in rows[:spec.max_rows]]
            data["row_count"] = len(data["rows"])
            data["truncated"] = len(rows) > spec.max_rows
        return ToolResult.ok(task, data, latency_ms=elapsed())
    except Exception as exc:  # noqa: BLE001 - the tool contract: never raise
        logger.exception("cypher template %s crashed", template_id)
        return ToolResult.failed(task, ErrorType.UNKNOWN,
                                 f"The predefined query failed unexpectedly ({type(exc).__name__}).",
                                 latency_ms=elapsed())


def _lacks_required(template: QueryTemplate, params: Mapping[str, Any]) -> bool:
    """Does the template need a parameter the question and the given parameters do not supply?"""
    return any(spec.required and spec.default is None and params.get(spec.name) in (None, "")
               for spec in template.params)



def _narrowed(matched: TemplateMatch | None, question: str, vocabulary: StoreVocabulary,
              params: Mapping[str, Any], matcher: TemplateMatcher,
              own: Mapping[str, str] | None = None) -> TemplateMatch | None:
    """The match, narrowed to an option template when the question names one of the product's
    options (`narrow_by_option`). Also answers a product question that ranked a product template
    first but fell short of the threshold ("which sensor types can I choose from?")."""
    if matched is not None and matched.template.id not in OPTION_NARROWED | {"variants_by_option"}:
        return matched
    if matched is None:
        ranked = matcher.rank(question, top_n=1, entities=vocabulary.names)
        top_id, top_score, top_text = ranked[0]
        if top_id not in OPTION_NARROWED | {"product_option_values", "variants_by_option"} or \
                top_score < OPTION_RANK_FLOOR:
            return None
        base = TemplateMatch(matcher.catalogue.get(top_id), top_score, 0.0, None, -1.0, top_text)  # type: ignore[arg-type]
    else:
        base = matched
    narrowed = narrow_by_option(question, vocabulary, given=params, own=(own or {}).values())
    if narrowed is None:
        return matched
    if matched is not None and matched.template.id == "variants_by_option" \
            and narrowed[0] != "product_option_values":
        # "does the black backpack come in other colors?": a match of the versions in black is
        # re-read only when the value is set aside, and the option's values are asked.
        return matched
    template = matcher.catalogue.get(narrowed[0])
    if template is None:
        return matched
    return TemplateMatch(template, base.score, base.margin, base.template.id, base.score, base.matched_text,
                         narrowed=narrowed[1])


def _names_a_product(question: str, vocabulary: StoreVocabulary) -> bool:
    pattern = entity_pattern(vocabulary.names)
    return bool(pattern and pattern.search(question))


def _allowed_match(args: PredefinedCypherArgs, ctx: ToolContext) -> str:
    """The allowed template (`args.templates`) the template model finds likeliest for the
    question, when its probability (with the templates that answer the same, `SAME_ANSWER`)
    beats that of the intent's own answer (`args.fallback_template`, likewise) by
    `ORDER_QUESTION_MARGIN` and the question is close to its examples (`ORDER_QUESTION_MIN_SCORE`:
    the examples name the order by its id, so a question that names it otherwise, "is my water
    bottle order shipped?", is far from them all and keeps the intent's own answer); else the
    fallback. "where will #W1 ship to?" is the shipping address; "where is #W1?" the overview."""
    allowed = set(args.templates)
    fallback = str(args.fallback_template)
    if not allowed or ctx.embedder is None:
        return fallback
    question = english_query(str(args.question))  # the templates' examples are English
    # The products it names are masked as in the examples: "did my power bank ship?" asks whether
    # it shipped, not about a payment ("bank").
    names = store_vocabulary(ctx.graph, ctx.caches.vocabulary).names
    scores, probabilities = matcher_for(ctx.embedder, load_catalogue(), ctx.caches.matchers).assess(
        question, entities=names)
    best = max(allowed, key=lambda t: group_probability(probabilities, t))
    similarity = max(scores.get(t, 0.0) for t in {best, *SAME_ANSWER.get(best, ())})
    own = group_probability(probabilities, fallback)
    if similarity >= ORDER_QUESTION_MIN_SCORE \
            and group_probability(probabilities, best) >= own + ORDER_QUESTION_MARGIN:
        return best
    return fallback


def group_probability(probabilities: Mapping[str, float], template: str) -> float:
    """The probability of `template` with the templates that give the same answer (`SAME_ANSWER`)."""
    return sum(probabilities.get(t, 0.0) for t in {template, *SAME_ANSWER.get(template, ())})


#: How close a question must be to an order template's examples to be a question about one order
#: (cosine, MiniLM: `understanding_local.asks_about_an_order`), and to a specific order template's
#: to be answered by it instead of the intent's own (`_allowed_match`).
ORDER_QUESTION_MIN_SCORE = 0.55
#: By how much the template model's probability for a specific question about an order must beat
#: the intent's own answer's; chosen by 5-fold cross-validation (`python -m
#: devstack.order_question_margin`).
ORDER_QUESTION_MARGIN = 0.05
#: Below this `TemplateMatcher.catalogue_score`, a question about one product asks what the product's
#: documents say (use, care, limits, troubleshooting), not what the catalogue lists: the rule the
#: trained reader `nlp.product_question` replaced, kept for when that reader is not available. Chosen
#: by 5-fold cross-validation on the knowledge eval's manual questions against the English catalogue
#: intent examples (`python -m devstack.aspect_threshold`; at 2026-12-04 the folds chose 0.34 to
#: 0.42, held-out balanced accuracy 0.763, catalogue examples 0.50 at the median, manual questions
#: 0.28).
CATALOGUE_QUESTION_MIN_SCORE = 0.42
#: Product templates whose answer the options a customer named narrow to the versions having them.
OPTION_AWARE = OPTION_NARROWED | {"product_price", "variants_by_option", "cheapest_variant",
                                  "most_expensive_variant"}
#: The answer naming the versions of one product a superlative or a "than" ranks ("the largest
#: kettle", "mats thicker than 5mm"): built from `product_variants`, not a template of its own.
RANKED_VERSIONS = "ranked_versions"
#: The answer to a question about one grounded product that no template matches closely enough:
#: the product's versions, price range and the options it comes in.
GROUNDED_FALLBACK = "products_named"


@dataclass(frozen=True)
class GroundedProduct:
    """The catalogue product (and options) the understanding step grounded a question to, as the
    planner passes it in `args.product` (or the conversation's last one, `args.context_product`)."""

    product_id: str
    name: str
    options: Mapping[str, str]
    #: The customer's word for it ("phones"), when known.
    surface: str | None = None

    @classmethod
    def read(cls, raw: ProductRef | None) -> GroundedProduct | None:
        """The product the planner grounded (`args.product`), or None when it cannot be queried:
        no catalogue id (ten digits), no name."""
        if raw is None:
            return None
        name = raw.name
        if not (re.fullmatch(r"\d{10}", raw.product_id) and name and name.strip()):
            return None
        kept = {k: v for k, v in raw.options.items() if "|" not in k + v and ":" not in k + v}
        surface = raw.surface
        return cls(raw.product_id, name.strip(), kept, surface if surface and surface.strip() else None)

    def filter_params(self) -> dict[str, str]:
        """The parameters of `variants_with_options`."""
        return {"product_id": self.product_id,
                "options": "|".join(f"{k}: {v}" for k, v in sorted(self.options.items()))}


def _product_question(question: str, vocabulary: StoreVocabulary,
                      matcher: TemplateMatcher) -> TemplateMatch | None:
    """The best-ranked template when it is a question about one product scoring at least
    `OPTION_RANK_FLOOR`, for a question whose product is known without the words naming it."""
    top_id, top_score, top_text = matcher.rank(question, top_n=1, entities=vocabulary.names)[0]
    template = matcher.catalogue.get(top_id)
    if template is None or top_score < OPTION_RANK_FLOOR or not _takes_product(template):
        return None
    return TemplateMatch(template, top_score, 0.0, None, -1.0, top_text)


def _takes_product(template: QueryTemplate) -> bool:
    """Is the template about one product (it takes a `product_name`)?"""
    return any(spec.name == "product_name" for spec in template.params)


def _versions_with_options(product: GroundedProduct, ctx: ToolContext, task: Task,
                           catalogue: Catalogue) -> ToolResult:
    """The versions of a grounded product with every option named. None of them is an answer too
    ("we don't have the action camera in 5K"), so it succeeds with no rows; the product and the
    options as the catalogue spells them travel with the rows for the reply."""
    params = product.filter_params()
    result = run_template("variants_with_options", params, ctx, task, catalogue=catalogue)
    rows = result.data.rows_as(VariantRow) if isinstance(result.data, CatalogueData) else []
    spelt = {str(v).lower(): str(v) for row in rows[:1] for v in (row.options or {}).values()}
    grounded = {"name": product.name,
                "options": {k: spelt.get(v.lower(), v) for k, v in product.options.items()}}
    if result.error is not None and result.error.type == ErrorType.NO_RESULTS:
        return ToolResult.ok(task, {"template_id": "variants_with_options", "scope": "catalogue",
                                    "params": params, "rows": [], "row_count": 0,
                                    "truncated": False, "product": grounded})
    return result.with_data(product=grounded) if result.data is not None else result


def _holding(params: Mapping[str, Any], subject: GroundedProduct, question: str) -> dict[str, Any]:
    """The option values asked (`product_option_values`) among the versions keeping the grounded
    product's other options the question's words name ("does the fleece bed come in other colours?":
    the fleece ones'), with those the question named. Options carried from what was said before
    ("I ordered the gray canvas sneakers in an 8 ... If not what sizes are there?") keep nothing."""
    asked = set(str(params.get("option_key") or "").lower().split(OPTION_KEYS_SEPARATOR))
    held = dict(pair.split(": ", 1) for pair in str(params.get("held") or "").split("|") if ": " in pair)
    held.update({k.lower(): v.lower() for k, v in subject.options.items()
                 if k.lower() not in asked and k.lower() not in held and names_option_value(question, v)})
    return {**params, "held": "|".join(f"{k}: {v}" for k, v in held.items())}


#: Templates whose answer the fallback already gives (the overview holds status, carrier, tracking).
SAME_ANSWER: dict[str, tuple[str, ...]] = {
    "order_overview": ("order_status", "order_tracking", "delivery_estimate"),
}


def _ranked_versions(question: str, name: Any, subject: GroundedProduct | None, ctx: ToolContext,
                     task: Task, catalogue: Catalogue) -> ToolResult | None:
    """The versions of one product a superlative or a "than" ranks (`comparatives.rank_versions`),
    among those with the options the customer named; None when the words rank nothing or the name
    holds several products."""
    if not may_rank(question):
        return None  # no superlative, no "than": nothing to fetch the versions for
    result = run_template("product_variants", {"product_name": str(name)}, ctx, task, catalogue=catalogue)
    versions = result.data.rows_as(VariantRow) if isinstance(result.data, CatalogueData) else []
    if subject is not None:
        versions = [v for v in versions if v.product_id == subject.product_id]
    if not versions or len({v.product_id for v in versions}) != 1:
        return None
    ranked = rank_versions(question, [v.model_dump(mode="json") for v in versions],
                           subject.options if subject is not None else None)
    if ranked is None:
        return None
    move = ranked.move
    return ToolResult.ok(task, {
        "template_id": RANKED_VERSIONS, "scope": "catalogue", "params": {"product_name": str(name)},
        "rows": ranked.versions, "row_count": len(ranked.versions), "truncated": False,
        "product": {"name": versions[0].product_name or str(name),
                    "options": dict(subject.options) if subject is not None else {}},
        "ranking": {"key": move.key, "direction": move.direction, "to_end": move.to_end,
                    "value": ranked.value, "beyond": move.beyond}})


def run(task: Task, ctx: ToolContext) -> ToolResult:
    """The tool entry point.

    `task.args` (`PredefinedCypherArgs`) names either a template (`template_id`, with `params`) or
    a question (with `params`); a question is matched to a template (LOW_CONFIDENCE when nothing
    matches well enough) and identifier-like parameters missing from `params` are read from it.
    """
    started = time.perf_counter()
    try:
        try:
            args = task.args_as(PredefinedCypherArgs)  # another tool's arguments: validated as these
        except ValueError as exc:
            return ToolResult.failed(task, ErrorType.VALIDATION, str(exc))
        params: Mapping[str, Any] = args.params
        if args.template_id:
            return run_template(args.template_id, params, ctx, task)
        if args.fallback_template and args.question and ctx.embedder is not None:
            # An order question: the closest of the templates the planner allows for it ("where will
            # #W1 ship to?" -> order_shipping_address), else the intent's own template.
            return run_template(_allowed_match(args, ctx), params, ctx, task)
        question = english_query((args.question or "").strip())  # English examples
        if not question:
            return ToolResult.failed(task, ErrorType.VALIDATION, "Give either 'template_id' or 'question'.")
        if ctx.embedder is None:
            return ToolResult.failed(task, ErrorType.UNKNOWN,
                                     "Template matching needs an embedder and none is configured.")
        catalogue = load_catalogue()
        vocabulary = store_vocabulary(ctx.graph, ctx.caches.vocabulary)
        product = GroundedProduct.read(args.product)
        if product is not None and product.surface and vocabulary.names_several(product.surface):
            product = None  # "what cameras do you carry": a word of several products means them all
        if product is not None and not params.get("product_name"):
            # The words were grounded to this product ("phones" is the Smartphone, not every name
            # holding "phone"): it is the product the question is about.
            params = {**params, "product_name": product.name}
        given_entities = [v for v in params.values() if isinstance(v, str)]
        matcher = matcher_for(ctx.embedder, catalogue, ctx.caches.matchers)
        matched = matcher.match(question, entities=[*given_entities, *vocabulary.names])
        context = GroundedProduct.read(args.context_product)
        narrowing = params
        if context is not None and not params.get("product_name") \
                and not _names_a_product(question, vocabulary):
            # "is that size in stock in stainless steel?": the option is one of the product the
            # conversation is about.
            narrowing = {**params, "product_name": context.name}
        narrowed = _narrowed(matched, question, vocabulary, narrowing, matcher,
                             own=product.options if product is not None else None)
        key = narrowed.narrowed.get("option_key") if narrowed is not None and narrowed.narrowed else None
        fixed = str(product.options.get(key) or "").lower() if key and product is not None else ""
        asked = narrowed.narrowed if narrowed is not None and narrowed.template.id == "variants_by_option" \
            else None
        wished = str((asked or {}).get("option_value") or "")
        if product is not None and key and fixed and wished and wished.lower() != fixed:
            # "the alexa thermostat - does it come in a homekit version?": the version asked is
            # theirs with the other value (the versions with its options, below).
            product = replace(product, options={**product.options, str(key): wished})
            fixed = wished.lower()
        sets_its_value_aside = narrowed is not None and narrowed.template.id == "product_option_values" \
            and bool(fixed) and sets_aside(question, fixed)
        if fixed in {"", "yes", "no"} or sets_its_value_aside:
            # (a dimension the grounded product's options already fix is named with its value, not
            # asked about: "the e-reader with cellular connectivity" is that version; a yes-or-no
            # dimension's word is its name too: "which waterproof options" asks its values; nor is
            # one set aside: "does the black backpack come in other colors?" asks the others)
            matched = narrowed
        if matched is None and (product or context) is not None:
            # The product (named here, or the one the conversation is about) is the evidence the
            # similarity lacks: a product question that ranks first above the floor answers ("what
            # does it cost?"); else a named product's versions, prices and options (below: those
            # with the options named), rather than "say it another way".
            matched = _product_question(question, vocabulary, matcher)
            if matched is None and product is not None:
                matched = TemplateMatch(catalogue.get(GROUNDED_FALLBACK), 0.0, 0.0, None, -1.0, "")  # type: ignore[arg-type]
        if matched is None and args.unmatched == "not_sold":
            # "do you carry sofas?" about nothing the store sells: not found, and what it does sell.
            result = run_template("categories", {}, ctx, task, catalogue=catalogue)
            if result.data is not None:
                result = result.with_data(not_sold=True)
            result.latency_ms = round((time.perf_counter() - started) * 1000.0, 3)
            return result
        if matched is None:
            return ToolResult.failed(task, ErrorType.LOW_CONFIDENCE,
                                     "No predefined query matches this question closely enough.",
                                     latency_ms=round((time.perf_counter() - started) * 1000.0, 3))
        extracted = extract_params(matched.template, question, vocabulary=vocabulary, given=params)
        if matched.narrowed:
            extracted = {**extracted, **matched.narrowed}
        # A product question whose words name no product: the one the conversation is about.
        unnamed = _takes_product(matched.template) and not extracted.get("product_name") \
            and not params.get("product_name")
        subject = product or (context if unnamed else None)
        if _takes_product(matched.template):
            # "the largest kettle", "the most cheap bulb", "mats thicker than 5mm": the versions the
            # words rank, whichever product template the question resembles.
            named = subject.name if subject is not None else (params.get("product_name")
                                                              or extracted.get("product_name"))
            ranked = _ranked_versions(question, named, subject, ctx, task, catalogue) if named else None
            if ranked is not None:
                ranked.latency_ms = round((time.perf_counter() - started) * 1000.0, 3)
                return ranked
        if subject is not None and subject.options and matched.template.id in OPTION_AWARE:
            # "the price of the 20000mAh charger": the versions with every option named, not the
            # price range of every charger (nor one option of several).
            result = _versions_with_options(subject, ctx, task, catalogue)
            result.latency_ms = round((time.perf_counter() - started) * 1000.0, 3)
            return result
        if subject is not None and unnamed:
            # Read the rest ("which colour?") against that product's own options.
            params = {**params, "product_name": subject.name}
            extracted = extract_params(matched.template, question, vocabulary=vocabulary, given=params)
        merged = {**extracted, **{k: v for k, v in params.items() if v is not None}}
        if matched.template.id == "product_option_values" and subject is not None:
            merged = _holding(merged, subject, question)
        if _lacks_required(matched.template, merged) and matched.runner_up:
            # "which product has the most variants?" reads like the per-product variants question but
            # names no product: the runner-up, when it is close enough and answerable, fits better.
            rival = catalogue.get(matched.runner_up)
            threshold = matcher.threshold
            if rival is not None and matched.runner_up_score >= threshold:
                rival_params = {**extract_params(rival, question, vocabulary=vocabulary, given=params),
                                **{k: v for k, v in params.items() if v is not None}}
                if not _lacks_required(rival, rival_params):
                    matched = TemplateMatch(rival, matched.runner_up_score, 0.0, matched.template.id,
                                            matched.score, matched.matched_text)
                    merged = rival_params
        result = run_template(matched.template.id, merged, ctx, task, catalogue=catalogue, match=matched)
        result.latency_ms = round((time.perf_counter() - started) * 1000.0, 3)
        return result
    except Exception as exc:  # noqa: BLE001 - the tool contract: never raise
        logger.exception("cypher catalogue tool crashed")
        return ToolResult.failed(task, ErrorType.UNKNOWN,
                                 f"The predefined query tool failed unexpectedly ({type(exc).__name__}).")

