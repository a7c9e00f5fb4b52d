"""`ActionKind`: everything one customer action is, in one typed value - its arguments, its
policy checks and exact effect (`plan`), and what the customer reads about it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from csagent.actions.plan import ActionPlan
from csagent.actions.policy import ActionName, PolicyRules, Violation

A = TypeVar("A")


def no_fields(args: Any, plan: ActionPlan) -> Mapping[str, str]:
    """The wording fields of an action that has none of its own."""
    del args, plan
    return {}


@dataclass(frozen=True)
class ActionKind(Generic[A]):
    """One of the customer actions, whole.

    `parse` turns the raw arguments (a mapping) into the typed, normalised `args_type` (ArgsError
    with a readable message otherwise); the arguments' `as_dict()` is their plain form, which
    the idempotency key is derived from and which `parse` reads back to the same value. `plan`
    checks the policy on the facts `queries.read_facts` returns, in the reference tools' order,
    and computes the exact effect (or the `Violation` that stops it).

    Wording: `proposal` lines are listed back before the explicit yes, `done` lines say what
    changed. Each is a `str.format` template over the fields `proposals.wording_fields` fills
    and the kind's `own_fields`; a line that is exactly "{difference_line}" becomes the line
    for the sign of the price difference (`wording.yaml`'s shared one in a proposal,
    `done_difference` afterwards). With `done_refunds`, the done lines end with one line per
    refund entry (`wording.yaml`'s `done.refund`). These lines are English; the other languages'
    are in `wording_<lang>.yaml`'s `kinds`, under the action's name. Nothing here may say more
    than the store's policy (policy.md).
    """

    name: ActionName
    args_type: type[A]
    parse: Callable[[Mapping[str, Any], PolicyRules], A]
    plan: Callable[[A, Mapping[str, Any], PolicyRules], ActionPlan | Violation]
    proposal: tuple[str, ...]
    done: tuple[str, ...]
    done_difference: Mapping[str, str] = field(default_factory=dict)
    done_refunds: bool = False
    own_fields: Callable[[A, ActionPlan], Mapping[str, str]] = no_fields
