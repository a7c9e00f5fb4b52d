"""The formats of the ids the services mint and check, which the OpenAPI document also publishes
(`csagent.http.contract`); here, apart from their models, so that building the HTTP app does not
import the handoff and approval packages (a cold start pays for them at their first use)."""

from __future__ import annotations

HANDOFF_ID_PATTERN = r"^[0-9a-f]{32}$"
APPROVAL_ID_PATTERN = r"^[0-9a-f]{32}$"
#: A knowledge-base document (`csagent.knowledge.service`): the admin's, or made from the file name.
DOCUMENT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
#: A catalogue product or variant (`csagent.knowledge.catalogue`); the store's are ten digits.
CATALOGUE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
