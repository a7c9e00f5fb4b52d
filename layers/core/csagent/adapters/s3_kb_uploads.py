"""`UploadStore` on S3: presigned POSTs for admins' uploads and the ingest function's reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from csagent.ports import StoredObject


class S3KnowledgeUploads:
    def __init__(self, client: Any, bucket: str) -> None:
        self._client = client
        self.bucket = bucket

    def presign_post(self, key: str, *, max_bytes: int, expires_in: int,
                     metadata: Mapping[str, str]) -> tuple[str, dict[str, str]]:
        fields = {f"x-amz-meta-{k}": v for k, v in metadata.items()}
        conditions: list[Any] = [["content-length-range", 1, max_bytes], {"key": key}]
        conditions.extend({k: v} for k, v in fields.items())
        post = self._client.generate_presigned_post(self.bucket, key, Fields=fields or None,
                                                    Conditions=conditions, ExpiresIn=expires_in)
        return str(post["url"]), {str(k): str(v) for k, v in post["fields"].items()}

    def fetch(self, key: str, *, max_bytes: int) -> StoredObject:
        response = self._client.get_object(Bucket=self.bucket, Key=key)
        size = int(response.get("ContentLength") or 0)
        body = response["Body"]
        kind, metadata = response.get("ContentType"), response.get("Metadata") or {}
        try:
            if size > max_bytes:  # never read into memory: refused by size alone
                return StoredObject(b"", size, kind, metadata, too_large=True)
            return StoredObject(body.read(), size, kind, metadata)
        finally:
            body.close()
