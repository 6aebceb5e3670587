"""Admin-only routes: client keys."""

from __future__ import annotations

from fastapi import APIRouter, Request

from service.api.deps import AdminDep
from service.core import crud
from service.core.problems import Problem
from service.core.schemas import KeyCreate, KeyPublic

router = APIRouter(prefix="/v1/keys", tags=["admin"])


@router.post("", response_model=KeyPublic, status_code=201)
def create_key(body: KeyCreate, request: Request, admin: AdminDep):
    """Create a client key (and the client, unless ``client_id`` names an existing one)."""
    with request.app.state.sessions.begin() as s:
        if body.client_id is None:
            client = crud.create_client(s, name=body.name)
        else:
            found = crud.get_client(s, client_id=body.client_id)
            if found is None:
                raise Problem(404, "client-not-found", f"no client with id {body.client_id!r}")
            client = found
        row, plaintext = crud.create_api_key(s, client_id=client.id)
        return KeyPublic(client_id=client.id, key_id=row.key_id, key=plaintext)
