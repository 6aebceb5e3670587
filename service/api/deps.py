"""``Annotated`` dependency aliases: routes read app state and the caller through these."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.core import crud
from service.core.auth import Principal, is_admin_key, split_key
from service.core.problems import Problem
from service.core.settings import Settings
from service.observing import Observer
from service.personalization import Personalizer

_bearer = HTTPBearer(auto_error=False, description="API key: `Authorization: Bearer tlr_...`")


async def get_settings(request: Request) -> Settings:
    """The settings the app was created with (async: a sync dependency costs a threadpool hop)."""
    return request.app.state.settings


async def get_personalizer(request: Request) -> Personalizer:
    """The orchestration object built in the lifespan (async: no threadpool hop)."""
    return request.app.state.personalizer


async def get_observer(request: Request) -> Observer:
    """The streams of unlabeled images (``/observe``), built in the lifespan."""
    return request.app.state.observer


def get_principal(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """Authenticate the bearer key: the admin key from settings, or a stored client key."""
    challenge = {"WWW-Authenticate": 'Bearer realm="tailor"'}
    if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
        raise Problem(401, "missing-key", "send an API key: Authorization: Bearer <key>",
                      headers=challenge)  # fmt: skip
    settings: Settings = request.app.state.settings
    admin = settings.admin_key.get_secret_value() if settings.admin_key else None
    if is_admin_key(creds.credentials, admin):
        _rate_limit(request, "admin", "admin")
        return Principal(client_id=None, is_admin=True)
    with request.app.state.sessions() as session:
        principal = crud.authenticate(session, plaintext=creds.credentials)
    if principal is None:
        raise Problem(401, "invalid-key", "the API key is unknown or revoked", headers=challenge)
    key_id = split_key(creds.credentials)[0]  # type: ignore[index]  # authenticated => well-formed
    _rate_limit(request, f"key:{key_id}", "client")
    return principal


def _rate_limit(request: Request, bucket: str, kind: str) -> None:
    """Charge one request to ``bucket`` (a key id, or the admin's own bucket) or raise 429.

    Runs after authentication so unknown keys cannot create buckets (or fill Redis), and only
    here, so health, readiness and metrics (which take no key) are never limited.
    """
    limiter = getattr(request.app.state, "ratelimiter", None)
    if limiter is None:
        return
    decision = limiter.check(bucket)
    if decision.allowed:
        return
    settings: Settings = request.app.state.settings
    request.app.state.metrics.rate_limited.labels(kind).inc()
    wait = decision.retry_after_header
    raise Problem(
        429, "rate-limited",
        f"this API key exceeded its rate limit of {settings.rate_limit_per_minute} requests/min "
        f"(burst {settings.rate_limit_burst}); retry after {wait} s, spread requests out, or "
        "ask the operator for a higher TAILOR_RATE_LIMIT_PER_MINUTE",
        headers={"Retry-After": wait}, retry_after=int(wait),
    )  # fmt: skip


def require_admin(principal: Annotated[Principal, Depends(get_principal)]) -> Principal:
    """Only the admin key passes."""
    if not principal.is_admin:
        raise Problem(403, "admin-only", "this route needs the admin key")
    return principal


def operational(what: str):
    """A dependency guarding an operational route (``metrics``, ``openapi``) by its setting:
    ``public`` lets anyone in, ``admin`` needs the admin key (401 without one, 403 for a client
    key), ``off`` answers 404 as if the route did not exist."""

    def check(
        request: Request,
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> None:
        access = request.app.state.settings.access(what)
        if access == "off":
            raise Problem(404, "not-found", f"{request.url.path} is disabled on this server")
        if access == "admin":
            require_admin(get_principal(request, creds))

    return Depends(check)


SettingsDep = Annotated[Settings, Depends(get_settings)]
PersonalizerDep = Annotated[Personalizer, Depends(get_personalizer)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
AdminDep = Annotated[Principal, Depends(require_admin)]
ObserverDep = Annotated[Observer, Depends(get_observer)]
