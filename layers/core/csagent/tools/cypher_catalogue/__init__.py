"""The predefined Cypher tool: a catalogue of parameterised READ queries, chosen by a model trained
on their example questions and run with validated parameters - the no-model path for frequent
questions.

Pieces, one module each (every public name is importable from this package, as before the
split):
- **Catalogue** (`templates`: `load_catalogue`, `validate_params`): templates read from
  `catalogue/templates.yaml` (data, not code) and checked on load: read-only Cypher, every
  declared parameter used, every `$name` declared, customer-scoped templates anchored on
  `(:Customer {customer_id: $customer_id})`, catalogue-scoped ones never touching customer data,
  and no template ever declaring `customer_id`.
- **Extraction** (`extraction`): identifiers and product mentions in a question, the store's
  vocabulary (`store_vocabulary`, cached in `ToolCaches.vocabulary`), parameters read from the
  question (`extract_params`), and narrowing to an option template (`narrow_by_option`).
- **Matcher** (`matcher`: `TemplateMatcher`, `matcher_for`; one per embedder and catalogue, kept
  in the composition root's `ToolCaches.matchers`): embeds each template's examples and
  description once (lazily); a question whose closest template (by similarity) does not clear a
  threshold is no catalogue question; otherwise a logistic regression trained on the examples
  picks the template, if its probability leads the runner-up's by a margin. Defaults measured on
  the catalogue by 5-fold cross-validation (`python -m devstack.template_model_cv`);
  `evaluate_leave_one_out` reports the similarity rule alone.
- **Runner** (`runner`: `run_template`, `run`): normalises and validates parameters, injects
  `customer_id` from the authenticated session (`ToolContext.customer_id`, never from the
  message), runs the query in a READ transaction with a timeout and a row cap, shapes the rows
  and returns a `ToolResult`. It never raises: every failure is a typed `ToolError`.

Security invariant: customer data is reachable only through customer-scoped templates, whose
Cypher starts at the authenticated customer and follows PLACED / HAS_DEFAULT_ADDRESS /
HAS_PAYMENT_METHOD. Another customer's order id simply matches nothing (NO_RESULTS).
"""

from csagent.nlp.gloss import english_query
from csagent.tools.cypher_catalogue.extraction import (
    _VOCABULARY_CYPHER,
    ENTITY_MASK,
    OPTION_NARROWED,
    OPTION_RANK_FLOOR,
    StoreVocabulary,
    canonical_question,
    entity_pattern,
    extract_params,
    mask_slots,
    narrow_by_option,
    store_vocabulary,
)
from csagent.tools.cypher_catalogue.matcher import (
    DEFAULT_MARGIN,
    DEFAULT_THRESHOLD,
    DEFAULT_TOP_K,
    LeaveOneOutReport,
    TemplateMatch,
    TemplateMatcher,
    evaluate_leave_one_out,
    matcher_for,
)
from csagent.tools.cypher_catalogue.runner import (
    CATALOGUE_QUESTION_MIN_SCORE,
    GROUNDED_FALLBACK,
    OPTION_AWARE,
    ORDER_QUESTION_MARGIN,
    ORDER_QUESTION_MIN_SCORE,
    RANKED_VERSIONS,
    SAME_ANSWER,
    GroundedProduct,
    group_probability,
    run,
    run_template,
)
from csagent.tools.cypher_catalogue.templates import (
    CATALOGUE_PATH,
    ORDER_STATUSES,
    TOOL_NAME,
    Catalogue,
    ParamError,
    ParamSpec,
    ParamType,
    QueryTemplate,
    ResultSpec,
    Scope,
    load_catalogue,
    normalise_param,
    parse_catalogue,
    validate_params,
)

__all__ = [
    "CATALOGUE_PATH", "CATALOGUE_QUESTION_MIN_SCORE", "DEFAULT_MARGIN", "DEFAULT_THRESHOLD", "DEFAULT_TOP_K",
    "ENTITY_MASK", "GROUNDED_FALLBACK", "OPTION_AWARE", "OPTION_NARROWED", "OPTION_RANK_FLOOR",
    "ORDER_QUESTION_MARGIN", "ORDER_QUESTION_MIN_SCORE", "ORDER_STATUSES", "RANKED_VERSIONS", "SAME_ANSWER",
    "TOOL_NAME", "_VOCABULARY_CYPHER", "Catalogue", "GroundedProduct", "LeaveOneOutReport", "ParamError",
    "ParamSpec", "ParamType", "QueryTemplate", "ResultSpec", "Scope", "StoreVocabulary", "TemplateMatch",
    "TemplateMatcher", "canonical_question", "english_query", "entity_pattern", "evaluate_leave_one_out",
    "extract_params", "group_probability", "load_catalogue", "mask_slots", "matcher_for", "narrow_by_option",
    "normalise_param", "parse_catalogue", "run", "run_template", "store_vocabulary", "validate_params",
]
