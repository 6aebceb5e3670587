"""POST /v1/personalize and GET /v1/catalogue."""

from __future__ import annotations

from fastapi import APIRouter

from model_store.kinds import TAPER
from service.api.deps import PersonalizerDep, PrincipalDep
from service.core.schemas import (
    CatalogueClass,
    CataloguePublic,
    PersonalizeCreate,
    PersonalizeResponse,
)

router = APIRouter(prefix="/v1", tags=["personalize"])


@router.post("/personalize", response_model=PersonalizeResponse)
def personalize(body: PersonalizeCreate, p: PersonalizerDep, principal: PrincipalDep):
    """Synthesize (or find) a model for a task description, class list or client id."""
    return p.personalize(body, principal)


@router.get("/catalogue", response_model=CataloguePublic)
def catalogue(p: PersonalizerDep, principal: PrincipalDep):
    """Classes, groups, domains and methods a request may name."""
    rt = p.kinds.get(TAPER)  # the catalogue is the TAPER artifact's
    classes = [
        CatalogueClass(name=c["name"], group=c.get("group"), definition=c.get("definition"))
        for c in rt.catalogue["classes"]
    ]
    return CataloguePublic.model_validate(
        {
            "artifact_version": rt.version,
            "classes": classes,
            "groups": list(rt.catalogue.get("groups", [])),
            "domains": rt.domains,
            "methods": {m: rt.method_accuracy(m) for m in ("taper", "selection")},
            "default_method": rt.default_method,
        }
    )
