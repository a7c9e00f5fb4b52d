"""What a task carries: one typed argument model per tool, and the planner's notes beside them.

A `Task` (`csagent.domain.models`) holds `args`, the arguments its tool reads, as the model of its
tool (`ARGS_BY_TOOL`), and `notes` (`TaskNotes`), what the planner noted for the router's own
use (the summariser, the replies, the dependency filling), which no tool reads. Both are validated
when the task is built: by the planner (`csagent.planning.plan_tasks`) and, at the Lambda edge, by
the tool event (`csagent.tools.events.ToolEvent`).

The JSON is unchanged where it was already a contract: `args` serialises to the fields that were
given, as before (Step Functions passes tasks as JSON to the tool Lambdas; `events/tools/*.json`).
A task of the earlier shape, its notes inside `args` (an older checkpoint, an older router), is
read into this one: the note keys are moved out of `args` into `notes` (`split_notes`).

Unknown keys in `args` are ignored, as the tool event ignores unknown keys, so that a newer router
can add an argument without breaking an older tool. A task for a tool no registry knows (the
dispatcher answers "No tool named ...") keeps its arguments as given (`OtherToolArgs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from csagent.domain.actions import ActionProposal

#: How many passages the knowledge search returns by default, and at most.
DEFAULT_K = 5
MAX_K = 10


class AsGiven(BaseModel):
    """Serialised as given: only the fields that were set (the defaults are the reader's), so the
    JSON of a task is the one the planner wrote (and what the planner's de-duplication compares),
    and a tool result's data the tool's own output (`tool_data`, which also keeps undeclared keys)."""

    # defer_build: validators are built at a task's first validation, not at import (cold starts).
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    @model_serializer(mode="wrap")
    def _given_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}


class ToolArgs(AsGiven):
    """What every tool's arguments share."""

    #: The previous attempt's error, set by the healer for a retry with a hint (`csagent.healing`).
    hint: str | None = None


class ProductRef(AsGiven):
    """A catalogue product as the understanding step grounded the customer's words to it
    (`PredefinedCypherArgs.product`, `.context_product`; the summariser keeps the one a turn
    answered about as the conversation's `last_product`). Whether it is usable for a query (a
    catalogue id, a name, options the query can carry) is the tool's to judge
    (`cypher_catalogue.runner.GroundedProduct.read`)."""

    product_id: str
    name: str | None = None
    #: The options the words named ({"color": "black"}).
    options: dict[str, str] = Field(default_factory=dict)
    #: The customer's word for it ("phones").
    surface: str | None = None


class PredefinedCypherArgs(ToolArgs):
    """`predefined_cypher` (`csagent.tools.cypher_catalogue.runner.run`): a template by id, or a
    question matched to one."""

    template_id: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    question: str | None = None
    #: An order or account question: the intent's own template, and the ones it may turn out to be.
    fallback_template: str | None = None
    templates: list[str] = Field(default_factory=list)
    #: The catalogue product the question's words were grounded to (`GroundedProduct.read`), else
    #: the one the conversation was last about.
    product: ProductRef | None = None
    context_product: ProductRef | None = None
    #: "not_sold": a question naming nothing the store sells answers with what it does sell.
    unmatched: Literal["not_sold"] | None = None

    @property
    def order_id(self) -> str | None:
        value = self.params.get("order_id")
        return str(value) if value else None


class KnowledgeSearchArgs(ToolArgs):
    """`knowledge_search` (`csagent.tools.knowledge_search`). The question's own checks (not
    empty, not too long) are the tool's: it is the customer's words, and failing it is data."""

    question: str = ""
    product_ids: list[str] = Field(default_factory=list)
    k: int = Field(default=DEFAULT_K, ge=1, le=MAX_K, strict=True)
    #: "keyword": search without embeddings (the healer's cheaper path).
    mode: Literal["keyword"] | None = None
    #: What the question is about ("warranty", "returns"): those hits answer first.
    topic: str | None = None
    #: With `product_ids`: the store's general pages are searched too.
    general_too: bool = False

    @field_validator("product_ids", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """One id or several; a numeric id as its digits."""
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if isinstance(value, list | tuple):
            return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        return value


class Text2CypherArgs(ToolArgs):
    """`text2cypher` (`csagent.tools.text2cypher.run`). The question's checks are the tool's."""

    question: str = ""
    #: The model chain for this task ("local", "bedrock/<id>", "openai/<model>@<url>"), else the
    #: configured one.
    model: str | None = None


class CustomerActionArgs(ToolArgs):
    """`customer_actions` (`csagent.tools.customer_actions`): propose an action, or execute the
    proposal the customer confirmed."""

    action: str = ""
    phase: Literal["propose", "execute"] = "propose"
    #: The action's own arguments (propose), validated by the action (`csagent.actions.kinds`).
    args: dict[str, Any] = Field(default_factory=dict)
    #: What the customer confirmed (execute): the proposing result's `proposal`.
    proposal: ActionProposal | None = None
    confirmation_id: str | None = None
    #: Only from the human-approval step.
    approved_by: str | None = None

    @field_validator("confirmation_id", "approved_by", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    @model_validator(mode="after")
    def _execute_needs_a_proposal(self) -> CustomerActionArgs:
        if self.phase == "execute" and self.proposal is None:
            raise ValueError("'proposal' (the confirmed action) is required to execute")
        return self

    @property
    def order_id(self) -> str | None:
        value = self.args.get("order_id")
        return str(value) if value else None


class OtherToolArgs(ToolArgs):
    """The arguments of a task for a tool no registry knows, kept as given."""

    model_config = ConfigDict(extra="allow")


AnyToolArgs = (PredefinedCypherArgs | KnowledgeSearchArgs | Text2CypherArgs | CustomerActionArgs
               | OtherToolArgs)

#: Which argument model each tool reads.
ARGS_BY_TOOL: dict[str, type[AnyToolArgs]] = {
    "predefined_cypher": PredefinedCypherArgs,
    "knowledge_search": KnowledgeSearchArgs,
    "text2cypher": Text2CypherArgs,
    "customer_actions": CustomerActionArgs,
}


def args_model(tool: str) -> type[AnyToolArgs]:
    """The argument model of `tool` (`OtherToolArgs` for a tool no registry knows)."""
    return ARGS_BY_TOOL.get(tool, OtherToolArgs)


class ProductsFrom(AsGiven):
    """Product ids to be read from an earlier task's result (an order's overview): the task it
    depends on, and the customer's words for the product ("those headphones")."""

    task: str
    hint: str | None = None


class TaskNotes(AsGiven):
    """What the planner notes about a task for the router: no tool reads these."""

    #: Said only when it answers: a miss is left unsaid while another task answered
    #: (`summarise.quiet_miss`).
    supplementary: bool = False
    #: The task this one stands in for: said only if that one did not answer, and that one's
    #: failure is moot when this one did (`summarise.unneeded_fallback`, `covered_failure`).
    fallback_for: str | None = None
    #: The knowledge search's product ids come from this task's result (`planning.resolve_args`,
    #: before the task is dispatched).
    products_from: ProductsFrom | None = None
    #: The order items whose prices the reply adds up (`replies.named_items_total`).
    named_items: list[str] = Field(default_factory=list)
    #: The order's payments read as what a cancellation would refund (`replies.cancel_refund_preview`).
    refund_preview: bool = False
    #: The order's payments read as where a return's refund would go (`replies.return_refund_preview`).
    return_preview: bool = False
    #: The order a store rule is quoted about ("Order #W1: ...").
    order_id: str | None = None
    #: The products whose lines alone an order's items are said for: the customer's own item of
    #: the product a question is about ("does the yoga mat I got have latex in it?": "Your Yoga
    #: Mat, from order #W1: material natural rubber, ..."), not the whole order.
    own_products: list[str] = Field(default_factory=list)
    #: Options a question asks of those own items ("r my hiking boots waterproof??"), each with the
    #: item's value, answered yes or no before the lines (`replies._own_options_answer`):
    #: {"product", "product_id", "key", "asked", "own"}.
    asked_options: list[dict[str, Any]] = Field(default_factory=list)
    #: The kind of payment method a change asked for that the account holds none of ("PayPal"),
    #: said missing before the methods it holds (`replies.describe_success`).
    method_not_held: str | None = None


NOTE_KEYS = frozenset(TaskNotes.model_fields)


def split_notes(raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`(args, notes)` from arguments of the earlier shape, where the planner's notes were kept
    among the tool's arguments."""
    args = {k: v for k, v in raw.items() if k not in NOTE_KEYS}
    notes = {k: v for k, v in raw.items() if k in NOTE_KEYS}
    return args, notes
