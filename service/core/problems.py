"""RFC 7807 problem details for every error the service returns.

Handlers cover our own :class:`Problem`, Starlette's HTTP errors (unknown routes, 405s),
FastAPI's request validation and anything unexpected (500 without internals), so a client only
ever has to parse ``application/problem+json``.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)
MEDIA_TYPE = "application/problem+json"
TYPE_BASE = "https://tailor.dev/problems/"

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    408: "Request timeout",
    409: "Conflict",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Unprocessable request",
    429: "Too many requests",
    500: "Internal server error",
    501: "Not implemented",
    503: "Service unavailable",
}
_SLUGS = {404: "not-found", 405: "method-not-allowed", 408: "request-timeout",
          413: "payload-too-large"}


class Problem(Exception):
    """An error to report as problem JSON.

    Args:
        status: HTTP status code.
        slug: short machine-readable type, appended to ``TYPE_BASE``.
        detail: human-readable explanation specific to this occurrence.
        title: short summary; defaults to the status phrase.
        headers: extra response headers (``WWW-Authenticate``, ``Retry-After``).
        extra: RFC 7807 extension members (e.g. ``suggestions``).
    """

    def __init__(
        self,
        status: int,
        slug: str,
        detail: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status, self.slug, self.detail = status, slug, detail
        self.title = title or _TITLES.get(status, "Error")
        self.headers = headers or {}
        self.extra = extra


def problem_response(request: Request, problem: Problem) -> JSONResponse:
    """Render a :class:`Problem` as ``application/problem+json``."""
    body = {
        "type": TYPE_BASE + problem.slug,
        "title": problem.title,
        "status": problem.status,
        "detail": problem.detail,
        "instance": request.url.path,
        **jsonable_encoder(problem.extra),
    }
    return JSONResponse(body, problem.status, headers=problem.headers, media_type=MEDIA_TYPE)


async def _on_problem(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Problem)
    return problem_response(request, exc)


def for_status(status: int, detail: str, headers: dict[str, str] | None = None) -> Problem:
    """The problem for a plain HTTP status (framework errors, middleware refusals)."""
    return Problem(status, _SLUGS.get(status, "http-error"), detail, headers=headers)


async def _on_http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if isinstance(exc.detail, str) else _TITLES.get(exc.status_code, "")
    if exc.status_code == 404 and detail == "Not Found":
        detail = f"no route matches {request.method} {request.url.path}"
    return problem_response(request, for_status(exc.status_code, detail, dict(exc.headers or {})))


async def _on_validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": e.get("type", "")}
        for e in exc.errors()
    ]
    detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)
    return problem_response(request, Problem(422, "validation-error", detail, errors=errors))


def is_database_outage(exc: BaseException) -> bool:
    """True for errors that mean "the database is unreachable right now", not "the query is wrong".

    A restart or failover surfaces as OperationalError (refused, shutting down, admin shutdown),
    InterfaceError (a connection closed under us), any DBAPI error that invalidated its
    connection, or a pool timeout when every connection is stuck. All are worth a retry.
    """
    if isinstance(exc, OperationalError | InterfaceError | PoolTimeoutError):
        return True
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


async def _on_database(request: Request, exc: Exception) -> JSONResponse:
    if not is_database_outage(exc):  # e.g. an IntegrityError: a bug, not an outage
        return await _on_unexpected(request, exc)
    log.warning("database unavailable on %s %s: %s", request.method, request.url.path, exc)
    return problem_response(
        request,
        Problem(503, "database-unavailable", "the registry database is unreachable; retry shortly",
                headers={"Retry-After": "2"}),
    )  # fmt: skip


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem_response(
        request, Problem(500, "internal-error", "an unexpected error occurred; it has been logged")
    )


PROBLEM_SCHEMA = {
    "type": "object",
    "title": "Problem",
    "description": "RFC 7807 problem details; extension members (e.g. suggestions) may follow.",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
    },
    "additionalProperties": True,
}


def openapi_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` declaring problem+json bodies for ``statuses``, so generated clients
    and schema fuzzers (benchmarks/fuzz.py) know every error shape. Declaring 422 here also
    replaces FastAPI's default ``HTTPValidationError`` body, which this service never sends."""
    content = {MEDIA_TYPE: {"schema": PROBLEM_SCHEMA}}
    return {s: {"description": _TITLES.get(s, "Error"), "content": content} for s in statuses}


# Any authenticated route may answer these (auth, body limit, rate limit, database, bugs).
API_ERRORS = (400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 501, 503)


def install(app: FastAPI) -> None:
    """Register every handler on ``app``."""
    app.add_exception_handler(Problem, _on_problem)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(DBAPIError, _on_database)
    app.add_exception_handler(PoolTimeoutError, _on_database)
    app.add_exception_handler(Exception, _on_unexpected)
