"""Uploads through S3: the presigned form an admin's browser posts a file with, and the ingest
of an object the bucket reports as created (the ingest function's one service call).

    POST /v1/kb/uploads {filename, document_id?, title?}
        -> {document_id, key, upload: {url, fields}, expires_in}     (presigned POST)
    browser -> S3: POST url with fields + file  (S3 enforces the size range and the key)
    S3 Object Created (EventBridge rule, prefix kb/uploads/) -> functions/kb_ingest -> ingest_object(...)

Keys are `<prefix><document_id>/<file name>`: the document id travels in the key, the title in
the object's `x-amz-meta-title`. The ingest is the same `KnowledgeBase.upload` the API's direct
upload calls (mode upsert: a second upload under one id replaces the document). A file the
parsers refuse is reported (`rejected`, with the 4xx code) and indexes nothing; the function
does not raise for it, so S3's asynchronous invoke does not retry a file that will never parse.
A store outage does raise, and the invoke is retried.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from csagent.domain.errors import InvalidInput
from csagent.knowledge.parsing import DocumentRejected, detect_format
from csagent.knowledge.service import DOC_ID, doc_id_from

if TYPE_CHECKING:
    from csagent.knowledge.service import KnowledgeBase
    from csagent.ports import UploadStore

MAX_FILENAME = 200


def upload_key(prefix: str, document_id: str, filename: str) -> str:
    name = PurePath(filename).name.strip()
    if not name or len(name) > MAX_FILENAME or any(ch in name for ch in "\x00\r\n"):
        raise InvalidInput(f"filename must be a plain file name of 1-{MAX_FILENAME} characters")
    return f"{prefix}{document_id}/{name}"


def parse_key(prefix: str, key: str) -> tuple[str, str]:
    """`(document_id, file name)` of an upload key; `InvalidInput` for any other key."""
    if not key.startswith(prefix):
        raise InvalidInput(f"'{key}' is not under {prefix}")
    document_id, sep, filename = key[len(prefix):].partition("/")
    if not sep or not DOC_ID.match(document_id) or not filename or "/" in filename:
        raise InvalidInput(f"'{key}' is not {prefix}<document_id>/<file name>")
    return document_id, filename


@dataclass(frozen=True)
class PresignedUpload:
    document_id: str
    key: str
    url: str
    fields: dict[str, str]
    expires_in: int

    def as_dict(self) -> dict[str, Any]:
        return {"document_id": self.document_id, "key": self.key,
                "upload": {"url": self.url, "fields": self.fields}, "expires_in": self.expires_in}


def presign_upload(store: UploadStore, prefix: str, filename: str, *, document_id: str | None = None,
                   title: str | None = None, max_bytes: int, expires_in: int) -> PresignedUpload:
    """A presigned POST for one document: 415 before anything is signed when the type is not one
    the parsers read; S3 itself refuses a body outside 1..`max_bytes`."""
    detect_format(filename)
    doc_id = document_id or doc_id_from(filename)
    if not DOC_ID.match(doc_id):
        raise InvalidInput(f"document_id '{doc_id}' must be 1-64 lower-case letters, digits, '-' or '_'")
    key = upload_key(prefix, doc_id, filename)
    metadata = {"title": " ".join(title.split())[:200]} if title else {}
    url, fields = store.presign_post(key, max_bytes=max_bytes, expires_in=expires_in, metadata=metadata)
    return PresignedUpload(doc_id, key, url, fields, expires_in)


def ingest_object(kb: KnowledgeBase, store: UploadStore, prefix: str, key: str, *,
                  max_bytes: int) -> dict[str, Any]:
    """Ingest the object at `key` (decoded): the ingest result, or `{"rejected": {status, code,
    message}}` for a file that cannot be indexed."""
    document_id, filename = parse_key(prefix, key)
    try:
        obj = store.fetch(key, max_bytes=max_bytes)
        if obj.too_large:
            raise DocumentRejected(413, "document_too_large",
                                   f"the object is {obj.size} bytes; at most {max_bytes} bytes are accepted")
        result = kb.upload(obj.data, filename, obj.content_type, title=obj.metadata.get("title"),
                           document_id=document_id, mode="upsert", actor=f"s3:{key}", source=key)
    except DocumentRejected as exc:
        return {"key": key, "document_id": document_id,
                "rejected": {"status": exc.status_code, "code": exc.code, "message": exc.message}}
    return {"key": key, **result.as_dict()}
