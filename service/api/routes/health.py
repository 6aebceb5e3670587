"""Operational routes: liveness and readiness (no key), Prometheus metrics (by setting)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from model_store.kinds import TAPER
from service.api.deps import operational
from service.core.problems import Problem

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz():
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(request: Request):
    """Readiness: artifact loaded and the database reachable (Redis is optional: reported)."""
    state = request.app.state

    def check() -> dict:
        kinds = state.personalizer.kinds
        checks: dict[str, str] = {"artifact": kinds.get(TAPER).version}
        checks.update({f"kind:{k.name}": k.version or "not deployed" for k in kinds})
        try:
            with state.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            checks["database"] = "ok"
        except Exception as exc:  # noqa: BLE001 - any DB failure means not ready
            checks["database"] = f"error: {type(exc).__name__}"
        link = state.redis_link
        checks["redis"] = "disabled" if link is None else ("ok" if link.ping() else "down")
        return checks

    checks = await run_in_threadpool(check)
    if checks["database"] != "ok":
        raise Problem(503, "not-ready", "the database is unreachable", checks=checks,
                      headers={"Retry-After": "5"})  # fmt: skip
    return {"status": "ready", "checks": checks}


@router.get("/metrics", response_class=PlainTextResponse,  # documents text/plain, not JSON
            dependencies=[operational("metrics")])  # fmt: skip
def metrics(request: Request):
    """Prometheus exposition (public, admin key only, or off: ``TAILOR_METRICS_ACCESS``)."""
    return Response(request.app.state.metrics.render(), media_type=CONTENT_TYPE_LATEST)
