"""Pure-ASGI middleware: body limit (413) and deadline (408), no credentials in URLs, metrics.

Pure ASGI (not ``BaseHTTPMiddleware``) so streaming responses stay streamed and the body limit
is enforced while bytes arrive, before anything buffers a huge upload.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from urllib.parse import parse_qsl, unquote_plus

from starlette.exceptions import HTTPException

from service.cache.writebehind import RESPONSE_GATE, ResponseGate
from service.core.metrics import Metrics
from service.core.problems import MEDIA_TYPE, TYPE_BASE, Problem, for_status


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` when a streamed body passes the limit.

    An ``HTTPException`` so FastAPI's body parsing re-raises it unchanged (it wraps other
    errors into a 400) and the problem handler renders a 413.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body exceeds the limit of {limit} bytes")


class BodyTimedOut(HTTPException):
    """Raised from ``receive`` when the body has not fully arrived by the request's deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(408, f"the request body did not arrive within {seconds:g} s")


async def _send_problem(scope, send, problem: Problem) -> None:
    """A problem response sent by middleware (no app below to render it); closes the
    connection, since the request body may not have been read."""
    body = json.dumps(
        {
            "type": TYPE_BASE + problem.slug,
            "title": problem.title,
            "status": problem.status,
            "detail": problem.detail,
            "instance": scope.get("path", ""),
        }
    ).encode()
    headers = [(b"content-type", MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())]
    headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": problem.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """Refuse bodies over ``limit`` bytes (413) or still arriving ``timeout_s`` after the request
    started (408: a slow client would otherwise hold a connection and a worker's memory)."""

    def __init__(self, app, limit: int, timeout_s: float = 30.0) -> None:
        self.app, self.limit, self.timeout_s = app, limit, timeout_s

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await _send_problem(scope, send, for_status(
                413, f"request body exceeds the limit of {self.limit} bytes"))
        seen, started, complete = 0, False, False
        deadline = time.monotonic() + self.timeout_s

        async def limited_receive():
            nonlocal seen, complete
            if complete:  # after the body: a streaming response listening for a disconnect
                return await receive()
            try:  # the floor: a body uvicorn already holds is never refused for a late read
                left = max(deadline - time.monotonic(), 0.1)
                message = await asyncio.wait_for(receive(), left)
            except TimeoutError:
                raise BodyTimedOut(self.timeout_s) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(self.limit)
                complete = not message.get("more_body", False)
            else:
                complete = True  # http.disconnect
            return message

        async def tracking_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except (BodyTooLarge, BodyTimedOut) as exc:
            if not started:
                await _send_problem(scope, send, for_status(exc.status_code, exc.detail))


CREDENTIAL_PARAM = re.compile(r"key|token|secret|passw|auth|bearer|signature", re.IGNORECASE)


def redact(path: str) -> str:
    """``path?query`` with the value of every credential-like parameter replaced."""
    base, sep, query = path.partition("?")
    if not sep:
        return path
    pairs = []
    for pair in query.split("&"):
        name, eq, _ = pair.partition("=")
        secret = CREDENTIAL_PARAM.search(unquote_plus(name))
        pairs.append(f"{name}{eq}[redacted]" if secret and eq else pair)
    return f"{base}?{'&'.join(pairs)}"


class NoCredentialsInUrlMiddleware:
    """Refuse (400) a query string that carries something named like a credential.

    Keys are read only from the ``Authorization`` header; one sent as ``?api_key=`` would end
    up in access logs, proxy logs and browser history, so it is refused before it is used and
    the caller is told where keys go (the access log redacts it too: :class:`RedactQuery`).
    """

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope.get("query_string"):
            query = scope["query_string"].decode("latin-1")
            names = [k for k, _ in parse_qsl(query, keep_blank_values=True)]
            if any(CREDENTIAL_PARAM.search(n) for n in names):
                return await _send_problem(scope, send, Problem(
                    400, "credentials-in-url", "API keys are accepted only in the Authorization "
                    "header (Authorization: Bearer <key>), never in the query string"))
        return await self.app(scope, receive, send)


class RedactQuery(logging.Filter):
    """Blank the values of credential-like query parameters in uvicorn's access log lines
    (names compared URL-decoded, as the application reads them: ``k%65y`` is ``key``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact(args[2]), *args[3:])
        return True

    @classmethod
    def install(cls, logger_name: str = "uvicorn.access") -> None:
        """Add the filter once per process (every app of a test run shares the logger)."""
        logger = logging.getLogger(logger_name)
        if not any(isinstance(f, cls) for f in logger.filters):
            logger.addFilter(cls())


class ResponseGateMiddleware:
    """Hold this request's write-behind jobs until its response has been sent
    (:data:`service.cache.writebehind.RESPONSE_GATE`); the gate opens on the last body chunk, or
    when the request ends however it ends."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        gate = ResponseGate()
        token = RESPONSE_GATE.set(gate)

        async def opening_send(message):
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                gate.open()

        try:
            await self.app(scope, receive, opening_send)
        finally:
            gate.open()
            RESPONSE_GATE.reset(token)


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
