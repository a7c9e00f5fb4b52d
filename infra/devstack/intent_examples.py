"""Labelled intent examples from the development message set (issue 12): `make intent-examples`.

The development set (`infra/eval/understanding/dev/`, written by helpers who never read the code)
labels each conversation with request types. A conversation whose first turn asks for exactly one
request type, mapped to a local-tier intent by `REQUEST_TO_INTENT`, gives one labelled example
(its first message) in `layers/core/csagent/nlp/data/intents_dev.jsonl`, which the intent
classifier learns from beside `intents.jsonl`. The sealed set is never read here.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "infra" / "eval" / "understanding" / "dev"
OUT = ROOT / "layers" / "core" / "csagent" / "nlp" / "data" / "intents_dev.jsonl"
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
# Request types with no single intent of their own (amounts, consent): a conversation tagged with
# one gives no example. Complaints are one intent whatever went wrong.
UNMAPPED_PREFIXES = ("consent", "refund_amount")


def examples() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for path in sorted(DEV.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("lang", "en") != "en":
                continue  # Chinese goes through the lexicon, not the embeddings
            types = [
                c for c in row["categories"] if c in REQUEST_TO_INTENT or c.startswith(UNMAPPED_PREFIXES)
            ]
            if len(types) != 1 or types[0] not in REQUEST_TO_INTENT:
                continue
            out.append(
                {
                    "text": row["turns"][0]["text"],
                    "intent": REQUEST_TO_INTENT[types[0]],
                    "lang": "en",
                    "source": row["id"],
                }
            )
    return out


def main() -> int:
    rows = examples()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} examples -> {OUT.relative_to(ROOT)}")
    for intent, n in Counter(r["intent"] for r in rows).most_common():
        print(f"  {intent:24} {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
