"""Pure-ASGI middleware: request body limit (413) and per-route latency metrics.

Pure ASGI (not ``BaseHTTPMiddleware``) so streaming responses stay streamed and the body limit
is enforced while bytes arrive, before anything buffers a huge upload.
"""

from __future__ import annotations

import json
import time

from starlette.exceptions import HTTPException

from service.core.metrics import Metrics
from service.core.problems import MEDIA_TYPE, TYPE_BASE


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` when a streamed body passes the limit.

    An ``HTTPException`` so FastAPI's body parsing re-raises it unchanged (it wraps other
    errors into a 400) and the problem handler renders a 413.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body exceeds the limit of {limit} bytes")


async def _send_413(scope, send, limit: int) -> None:
    body = json.dumps(
        {
            "type": TYPE_BASE + "payload-too-large",
            "title": "Payload too large",
            "status": 413,
            "detail": f"request body exceeds the limit of {limit} bytes",
            "instance": scope.get("path", ""),
        }
    ).encode()
    headers = [(b"content-type", MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())]
    headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """Refuse bodies over ``limit`` bytes with a 413 problem (declared or streamed)."""

    def __init__(self, app, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await _send_413(scope, send, self.limit)
        seen, started = 0, False

        async def limited_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        async def tracking_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await _send_413(scope, send, self.limit)


class MetricsMiddleware:
    """Observe request latency by route *template* (bounded label cardinality)."""

    def __init__(self, app, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        status = 500
        t0 = time.perf_counter()

        async def tracking_send(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.request_seconds.labels(route, scope["method"], str(status)).observe(
                time.perf_counter() - t0
            )
