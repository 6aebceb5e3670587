"""``Annotated`` dependency aliases: routes read app state and the caller through these."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service import crud
from service.auth import Principal, is_admin_key
from service.personalization import Personalizer
from service.problems import Problem
from service.settings import Settings

_bearer = HTTPBearer(auto_error=False, description="API key: `Authorization: Bearer tlr_...`")


def get_settings(request: Request) -> Settings:
    """The settings the app was created with."""
    return request.app.state.settings


def get_personalizer(request: Request) -> Personalizer:
    """The orchestration object built in the lifespan."""
    return request.app.state.personalizer


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
        return Principal(client_id=None, is_admin=True)
    with request.app.state.sessions() as session:
        principal = crud.authenticate(session, plaintext=creds.credentials)
    if principal is None:
        raise Problem(401, "invalid-key", "the API key is unknown or revoked", headers=challenge)
    return principal


def require_admin(principal: Annotated[Principal, Depends(get_principal)]) -> Principal:
    """Only the admin key passes."""
    if not principal.is_admin:
        raise Problem(403, "admin-only", "this route needs the admin key")
    return principal


SettingsDep = Annotated[Settings, Depends(get_settings)]
PersonalizerDep = Annotated[Personalizer, Depends(get_personalizer)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
AdminDep = Annotated[Principal, Depends(require_admin)]
