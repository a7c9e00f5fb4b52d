"""Labelled examples from the development message set (issue 12): `make intent-examples`.

The development set (`infra/eval/understanding/dev/`, written by helpers who never read the code)
labels each conversation with request types and each turn with the outcome it expects. Three files
of `layers/core/csagent/nlp/data/` are written from the first messages:

- `intents_dev.jsonl`: a conversation whose first turn asks for exactly one request type, mapped
  to a local-tier intent by `REQUEST_TO_INTENT`, gives one labelled example, which the intent
  classifier learns from beside `intents.jsonl`;
- `staff_processes_dev.jsonl`: every first message, `staff` when its writer expects a handoff for
  a warranty claim or a complaint (`STAFF_CATEGORIES`: a claim, a replacement or an
  investigation the store's team runs), `other` when they expect no handoff (a handoff for
  anything else is left out). The staff-process model learns from it beside
  `staff_processes.jsonl`, whose own look-alikes come from one writer only;
- `purchase_questions_dev.jsonl`: a first message that names one of the catalogue's products and
  asks for exactly one request type, `product` when that is a question about products
  (`PRODUCT_REQUESTS`: what it is, does, suits or comes in) and `order` when it is a read of an
  order (`ORDER_REQUESTS`: where it is, what it held, where it goes). The purchase-question model
  (`nlp.purchase_question`) learns from it beside `purchase_questions.jsonl`: that file's writer
  put what customers ask about a thing they bought in their own words, and a model on it alone
  read the product questions of parts it did not learn from as order questions one time in four.

The sealed set is never read here.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from devstack.understanding_eval import load

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "layers" / "core" / "csagent" / "nlp" / "data"
OUT = DATA / "intents_dev.jsonl"
STAFF_OUT = DATA / "staff_processes_dev.jsonl"
PURCHASE_OUT = DATA / "purchase_questions_dev.jsonl"
#: The request types whose expected handoff is a process the store's team runs.
STAFF_CATEGORIES = frozenset({"warranty", "complaint_damaged", "complaint_wrong_item", "complaint_missing",
                              "complaint_late"})
REQUEST_TO_INTENT = {
    "order_status": "order_status",
    "tracking": "tracking",
    "order_details": "order_items",
    "shipping_address_lookup": "order_status",
    "order_list": "order_list",
    "cancel": "cancel_order",
    "return": "return_request",
    "exchange": "change_items",
    "modify_items": "change_items",
    "modify_payment": "change_payment",
    "change_order_address": "change_order_address",
    "update_default_address": "update_default_address",
    "product_info": "product_info",
    "product_types": "product_info",
    "policy_question": "policy_question",
    "warranty": "warranty",
    "human_request": "human_handoff",
    "out_of_scope": "out_of_scope",
    "smalltalk": "smalltalk",
    "account_info": "account_info",
    "complaint_damaged": "complaint",
    "complaint_wrong_item": "complaint",
    "complaint_missing": "complaint",
    "complaint_late": "complaint",
    "complaint_double_charge": "complaint",
}
#: The development parts the intent model learns from: parts 1 to 40. Newer parts stay unseen by
#: it, so their first run measures the understanding step as a sealed set would. Parts 19 and 20
#: alone were tried (2026-12-06) and left out (the unseen parts 21 and 22 read exactly as before,
#: held-out accuracy down one message). With twelve parts more the gain shows (2026-12-07): the
#: first messages of parts 31 to 40 read right 0.8426 with parts 1 to 18 and 0.8651 with parts 1
#: to 30 added; those of parts 19 to 28, 0.8728 and 0.8933 with parts 29 to 40 added.
INTENT_PARTS = frozenset(f"part{n}" for n in range(1, 41))
#: The request types a purchase question's first message asks, as the purchase-question model's labels.
PRODUCT_REQUESTS = frozenset({"product_info", "product_types"})
ORDER_REQUESTS = frozenset({"order_status", "tracking", "order_details", "shipping_address_lookup"})
#: The purchase-question model learns from the same parts as the intent model. Held out, trained
#: on `purchase_questions.jsonl` with parts 1 to 30 (or 11 to 40) and read at its threshold 0.6,
#: the messages of parts 31 to 40 (or 1 to 10) read right 211 of 231 (343 of 372), against 185
#: (272) on that file alone, which read a product question as an order question 22 times (78);
#: parts 41 to 44, trained with parts 1 to 40: 89 of 98 against 82 (2026-12-07;
#: `python -m devstack.intent_examples --purchase-held-out`).
PURCHASE_PARTS = INTENT_PARTS
PRODUCTS = ROOT.parent / "shared" / "data" / "tau-retail" / "products.json"
#: The staff-process model keeps parts 1 to 18: with parts 19 and 20 its readings of replacement
#: requests ("i just want the one i actually paid for, can u get that sorted") fell under its
#: cross-validated 0.85.
STAFF_PARTS = frozenset(f"part{n}" for n in range(1, 19))

# Request types with no single intent of their own (amounts, consent): a conversation tagged with
# one gives no example. Complaints are one intent whatever went wrong.
UNMAPPED_PREFIXES = ("consent", "refund_amount")


def _one_request_type(row: dict[str, Any]) -> str | None:
    """The one request type a conversation asks for (amounts and consent count as types of their
    own, so a conversation tagged with one beside another gives none), or None."""
    types = [c for c in row["categories"] if c in REQUEST_TO_INTENT or c.startswith(UNMAPPED_PREFIXES)]
    return types[0] if len(types) == 1 else None


def examples() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for row in load("dev"):
        if row["_file"] not in INTENT_PARTS:
            continue
        if row.get("lang", "en") != "en":
            continue  # Chinese goes through the lexicon, not the embeddings
        asked = _one_request_type(row)
        if asked not in REQUEST_TO_INTENT:
            continue
        out.append({"text": row["turns"][0]["text"], "intent": REQUEST_TO_INTENT[asked], "lang": "en",
                    "source": row["id"]})
    return out


def staff_examples() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for row in load("dev"):
        if row["_file"] not in STAFF_PARTS:
            continue
        handoff = ((row["turns"][0].get("expect") or {}).get("outcome")) == "handoff"
        if handoff and not STAFF_CATEGORIES & set(row["categories"]):
            continue  # a person asked for, or a rule insisted on: not a process of the team's
        out.append({"text": row["turns"][0]["text"], "label": "staff" if handoff else "other",
                    "lang": row.get("lang", "en"), "source": row["id"]})
    return out


def purchase_examples(parts: frozenset[str] = PURCHASE_PARTS) -> list[dict[str, str]]:
    """The purchase-question model's examples from the first messages of the development `parts`."""
    from csagent.grounding.resolve import product_mentions

    catalogue = [{"product_id": k, "name": v["name"]} for k, v in json.loads(PRODUCTS.read_text()).items()]
    out: list[dict[str, str]] = []
    for row in load("dev"):
        if row["_file"] not in parts:
            continue
        asked = _one_request_type(row)
        if asked not in PRODUCT_REQUESTS | ORDER_REQUESTS:
            continue
        text = row["turns"][0]["text"]
        if not product_mentions(text, catalogue):
            continue  # the model reads only clauses that name a product
        out.append({"text": text, "label": "product" if asked in PRODUCT_REQUESTS else "order",
                    "lang": row.get("lang", "en"), "source": row["id"]})
    return out


def _write(path: Path, rows: list[dict[str, str]], key: str) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} examples -> {path.relative_to(ROOT)}")
    for label, n in Counter(r[key] for r in rows).most_common():
        print(f"  {label:24} {n}")


def purchase_held_out() -> None:
    """The purchase-question model trained on `purchase_questions.jsonl` alone, and with the
    development parts named, read at its threshold on parts it did not learn from (the figures of
    `PURCHASE_PARTS`' comment): `python -m devstack.intent_examples --purchase-held-out`."""
    from csagent.nlp.embeddings import get_embedder
    from csagent.nlp.purchase_question import MIN_PROBABILITY
    from csagent.nlp.text_models import LabelledText, TextModel, training_examples

    def parts(first: int, last: int) -> frozenset[str]:
        return frozenset(f"part{n}" for n in range(first, last + 1))

    def labelled(chosen: frozenset[str]) -> list[LabelledText]:
        return [LabelledText(r["text"], r["label"], r["lang"]) for r in purchase_examples(chosen)]

    embedder, helper = get_embedder(), list(training_examples("purchase_questions.jsonl"))
    for learnt, (first, last) in ((parts(1, 30), (31, 40)), (parts(11, 40), (1, 10)),
                                  (parts(1, 40), (41, 44))):
        test = labelled(parts(first, last))
        for name, train in (("helper file", helper), ("with the parts", helper + labelled(learnt))):
            reads = TextModel.train(embedder, train).read([e.text for e in test])
            sure = [(e.label, got) for e, (got, p) in zip(test, reads, strict=True) if p >= MIN_PROBABILITY]
            right = sum(1 for gold, got in sure if gold == got)
            as_order = sum(1 for gold, got in sure if gold == "product" and got == "order")
            print(f"parts {first}-{last} held out, {name}: {right} of {len(test)} right, "
                  f"{as_order} product questions read as order questions")


def main(argv: list[str] | None = None) -> int:
    if "--purchase-held-out" in (argv if argv is not None else sys.argv[1:]):
        purchase_held_out()
        return 0
    _write(OUT, examples(), "intent")
    _write(STAFF_OUT, staff_examples(), "label")
    _write(PURCHASE_OUT, purchase_examples(), "label")
    return 0


if __name__ == "__main__":
    sys.exit(main())
