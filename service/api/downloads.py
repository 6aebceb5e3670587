"""Immutable, ETag'd byte downloads (weights and ONNX graphs), streamed without copies.

A personalized model never changes once built, so its bytes are served with their sha256 as a
strong ETag and ``Cache-Control: immutable``; a client that already holds them gets a 304.
The payload is streamed as 1 MB ``memoryview`` slices (Starlette >= 0.38 and uvicorn accept
them), so a 45 MB download is not copied again into ``bytes`` chunks.
"""

from __future__ import annotations

import hashlib

from fastapi import Response
from fastapi.responses import StreamingResponse

CHUNK = 1 << 20


def etag_matches(header: str | None, etag: str) -> bool:
    """RFC 9110 ``If-None-Match``: a list of (possibly weak) tags, or ``*``."""
    tags = [t.strip().removeprefix("W/") for t in (header or "").split(",")]
    return bool(header) and ("*" in tags or etag in tags)


def not_modified(etag: str) -> Response:
    """The 304 for a client that already holds the bytes tagged ``etag``."""
    return Response(status_code=304, headers=_validators(etag))


def _validators(etag: str) -> dict[str, str]:
    return {"ETag": etag, "Cache-Control": "private, max-age=31536000, immutable"}


def immutable_download(
    payload: bytes | memoryview,
    filename: str,
    if_none_match: str | None,
    headers: dict[str, str] | None = None,
) -> Response:
    """200 streaming ``payload`` as an attachment, or 304 when the client's ETag matches.

    ``headers`` are added to the 200 only (a 304 carries the validators alone).
    """
    etag = f'"{hashlib.sha256(payload).hexdigest()}"'
    if etag_matches(if_none_match, etag):
        return not_modified(etag)
    view = memoryview(payload).cast("B")  # byte units for len() and slicing
    full = _validators(etag) | dict(headers or {}) | {
        "Content-Disposition": f'attachment; filename="{filename}"',
        "Content-Length": str(len(view)),
    }  # fmt: skip
    chunks = (view[i : i + CHUNK] for i in range(0, len(view), CHUNK))
    return StreamingResponse(chunks, media_type="application/octet-stream", headers=full)
