"""Schemathesis hooks for `test_openapi_fuzz.py` (loaded through SCHEMATHESIS_HOOKS): how to
generate the API's custom string formats. Only data generation: no check is changed here.

A page cursor is opaque to clients; the listing accepts back only what its own `next_cursor`
has the shape of (`csagent.handoff.codec`): the index key of an item in the listed status.
"""

from __future__ import annotations

from datetime import UTC, datetime

import schemathesis
from hypothesis import strategies as st

from csagent.handoff.codec import encode_cursor


def _cursor(status: str) -> st.SearchStrategy[str]:
    def build(item_id: str, created: datetime) -> str:
        key = {"handoff_id": {"S": item_id}, "status": {"S": status},
               "created_at": {"S": created.isoformat()}}
        cursor = encode_cursor(key)
        assert cursor is not None
        return cursor

    when = st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2030, 1, 1),
                        timezones=st.just(UTC))
    return st.builds(build, st.from_regex(r"\A[0-9a-f]{32}\Z"), when)


schemathesis.openapi.format("open-handoffs-cursor", _cursor("open"))
schemathesis.openapi.format("pending-approvals-cursor", _cursor("pending"))
# A model chain the debugger runs Text2Cypher with. Only the local tier is generated: any other
# valid spec names a model endpoint the server would then call (a fuzzed base URL, Bedrock).
schemathesis.openapi.format("model-spec", st.sampled_from(["local", "LOCAL", " local ", "local|local"]))
