"""POST /v1/personalize, one-shot POST /v1/predict, and GET /v1/catalogue."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from model_store.kinds import TAPER
from service.api.deps import ObserverDep, PersonalizerDep, PrincipalDep, SettingsDep
from service.api.inputs import PERSONALIZE_BODY, base64_images, read_personalize
from service.core.schemas import (
    CatalogueClass,
    CataloguePublic,
    PersonalizeResponse,
    PredictOnce,
    PredictOnceResponse,
)

router = APIRouter(prefix="/v1", tags=["personalize"])


@router.post("/personalize", response_model=PersonalizeResponse, openapi_extra=PERSONALIZE_BODY)
async def personalize(request: Request, p: PersonalizerDep, principal: PrincipalDep,
                      settings: SettingsDep, observer: ObserverDep):  # fmt: skip
    """Synthesize (or find) a model for a task description, class list or client id, or for
    unlabeled ``images`` alone (JSON base64, or multipart ``files`` with optional ``k``,
    ``domain``, ``method`` fields): the classes and domain are inferred from the images and
    reported under ``inferred``; the model's stream (``/observe``) starts with them."""
    body, raw, names = await read_personalize(request, settings)
    if raw is None:
        return await run_in_threadpool(p.personalize, body, principal)

    return await run_in_threadpool(observer.personalize_images, body, raw, names, principal)


@router.post("/predict", response_model=PredictOnceResponse)
async def predict_once(
    body: PredictOnce, p: PersonalizerDep, principal: PrincipalDep, settings: SettingsDep
):  # fmt: skip
    """Personalize (or find the caller's model for) ``classes`` / ``description`` /
    ``client_id`` and classify ``images`` with it, in one call: for apps that choose the task
    on the inference call. The answer names the model (``model_id``) for later calls."""

    def work() -> bytes:
        raw, names = base64_images(body.images, settings)  # 4xx before anything is built
        made = p.personalize(body.request(), principal)
        row = p.get(made["id"], principal)
        predictions, used = p.predict(row, p.preprocess(row, raw, names, settings), body.top_k,
                                      body.exit, body.max_layers)
        return PredictOnceResponse(model_id=row.id, predictions=predictions, exit=used,
                                   model=made).model_dump_json()  # fmt: skip

    return Response(await run_in_threadpool(work), media_type="application/json")


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
