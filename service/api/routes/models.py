"""Personalized models: listing, metadata, deletion, weight download, prediction, refinement,
streams of unlabeled images.

Every route reads the row through ``Personalizer.get(id, principal)``: another owner's model
answers exactly like a missing one (404), and whatever differs between kinds is dispatched
through the kind registry, not here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from service.api.deps import ObserverDep, PersonalizerDep, PrincipalDep, SettingsDep
from service.api.downloads import etag_matches, immutable_download, not_modified
from service.api.inputs import IMAGES_BODY, read_images
from service.core.problems import Problem
from service.core.schemas import (
    ModelList,
    ModelPublic,
    ObservationsResponse,
    ObserveResponse,
    PredictResponse,
    RefineResponse,
)
from service.personalization import Personalizer

router = APIRouter(prefix="/v1/models", tags=["models"])
ModelId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$", description="model id (32 hex)")]


@router.get("", response_model=ModelList)
def list_models(
    p: PersonalizerDep,
    principal: PrincipalDep,
    kind: Annotated[str | None, Query(max_length=32, pattern=r"^[a-z0-9_-]+$")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512, pattern=r"^[A-Za-z0-9_-]+$")] = None,
):
    """The caller's models, newest first (the admin key: everyone's). Pass ``next_cursor``
    back as ``cursor`` for the next page; it is null on the last page."""
    try:
        rows, nxt = p.list(principal, kind=kind, limit=limit, cursor=cursor)
    except ValueError as exc:
        raise Problem(422, "invalid-cursor", str(exc)) from None
    return ModelList(items=[p.public(r) for r in rows], next_cursor=nxt)


@router.get("/{model_id}", response_model=ModelPublic)
def get_model(model_id: ModelId, p: PersonalizerDep, principal: PrincipalDep):
    """Metadata of a personalized model."""
    return p.public(p.get(model_id, principal))


@router.get("/{model_id}/config")
def get_config(model_id: ModelId, p: PersonalizerDep, principal: PrincipalDep) -> dict[str, Any]:
    """``config.json`` in the timm / Hugging Face convention: ``architecture``, ``num_classes``,
    ``label_names`` (output order), ``pretrained_cfg`` (``input_size``, ``mean``, ``std``,
    ``interpolation``, ``crop_pct``, ``crop_mode``), plus a ``tailor`` block (model id, method,
    artifact). Save it next to the weights: ``tailor download ID --out DIR`` does both."""
    return p.config(p.get(model_id, principal))


@router.delete("/{model_id}", status_code=204)
def delete_model(model_id: ModelId, p: PersonalizerDep, principal: PrincipalDep):
    """Delete one of the caller's models (its cached bytes go when no other owner's model
    uses the same recipe)."""
    p.delete(p.get(model_id, principal))
    return Response(status_code=204)


@router.get("/{model_id}/weights", responses={200: {"content": {"application/octet-stream": {}}}})
def get_weights(
    model_id: ModelId,
    p: PersonalizerDep,
    principal: PrincipalDep,
    dtype: Literal["fp32", "fp16"] = "fp32",
    format: Literal["safetensors", "onnx"] = "safetensors",
    if_none_match: Annotated[str | None, Header()] = None,
):
    """Download weights: safetensors (loads into torchvision resnet18(num_classes=k)) or ONNX."""
    row = p.get(model_id, principal)
    if format == "onnx":  # fp32 graph, input "images" NCHW normalised as for safetensors
        return _onnx(p, row, dtype, if_none_match)
    if (
        dtype == "fp32"
        and row.weights_sha256
        and etag_matches(if_none_match, f'"{row.weights_sha256}"')
    ):
        return not_modified(f'"{row.weights_sha256}"')
    payload = p.weights(row, dtype)
    return immutable_download(payload, f"tailor-{model_id}-{dtype}.safetensors", if_none_match)


def _onnx(p: Personalizer, row, dtype: str, if_none_match: str | None) -> Response:
    """The ``format=onnx`` download: 200 with the graph, or 304 when the ETag matches."""
    if dtype != "fp32":
        raise Problem(422, "onnx-fp32-only",
                      "ONNX downloads are fp32 only; use format=onnx&dtype=fp32, or "
                      "format=safetensors&dtype=fp16 for half-precision weights")  # fmt: skip
    payload = p.onnx(row)
    headers = p.kinds.of(row).onnx_headers()
    return immutable_download(payload, f"{row.id}.onnx", if_none_match, headers)


@router.post("/{model_id}/predict", response_model=PredictResponse, openapi_extra=IMAGES_BODY)
async def predict(
    model_id: ModelId, request: Request, p: PersonalizerDep, principal: PrincipalDep,
    settings: SettingsDep,
):  # fmt: skip
    """Top-k labels among the model's classes for a batch of images. Anytime models also take
    ``exit`` (1…L) or ``max_layers`` (a depth budget) and answer with the ``exit`` they used.

    The body is read on the event loop; lookup, decoding, the forward pass and the JSON
    encoding then run in ONE worker thread (one threadpool hop, not three), and the response
    is the model's own ``model_dump_json`` (FastAPI would re-validate and re-encode 64×k
    predictions). A missing model still answers 404 before a bad body's 4xx.
    """
    try:
        images = await read_images(request, settings)
    except Exception as exc:  # noqa: BLE001 - re-raised after the model lookup
        images = exc

    def work() -> bytes:
        row = p.get(model_id, principal)
        if isinstance(images, Exception):
            raise images
        predictions, used = p.predict(row, p.preprocess(row, images.raw, images.names, settings),
                                      images.top_k, images.exit, images.max_layers)
        return PredictResponse(model_id=model_id, predictions=predictions,
                               exit=used).model_dump_json()  # fmt: skip

    return Response(await run_in_threadpool(work), media_type="application/json")


@router.post("/{model_id}/refine", response_model=RefineResponse, openapi_extra=IMAGES_BODY)
async def refine(
    model_id: ModelId, request: Request, p: PersonalizerDep, principal: PrincipalDep,
    settings: SettingsDep, observer: ObserverDep,
):  # fmt: skip
    """Improve a model with unlabeled images of its task, never making it worse: the classes
    and method stay; what the images add (the domain, when the model has none and its method
    uses it) makes a new model (``parent_id``). When nothing would improve, the answer is the
    model itself with ``changed: false``; ``notes`` say why either way."""
    row = await run_in_threadpool(p.get, model_id, principal)
    images = await read_images(request, settings)
    batch = await run_in_threadpool(p.preprocess, row, images.raw, images.names, settings)
    return await run_in_threadpool(observer.refine, row, batch, principal)


@router.post("/{model_id}/observe", response_model=ObserveResponse, openapi_extra=IMAGES_BODY)
async def observe(
    model_id: ModelId, request: Request, p: PersonalizerDep, principal: PrincipalDep,
    settings: SettingsDep, observer: ObserverDep,
):  # fmt: skip
    """Add unlabeled images the app saw to this model's stream. The task is re-estimated from
    the stream (older images weigh less); when it changes, the answer names a new model
    (``changed: true``, its ``parent_id`` this one) to use from now on."""
    row = await run_in_threadpool(p.get, model_id, principal)
    images = await read_images(request, settings)

    def work():
        return observer.observe(row, p.preprocess(row, images.raw, images.names, settings),
                                principal)  # fmt: skip

    return await run_in_threadpool(work)


@router.get("/{model_id}/observations", response_model=ObservationsResponse)
def observations(model_id: ModelId, p: PersonalizerDep, principal: PrincipalDep,
                 observer: ObserverDep):  # fmt: skip
    """The model's stream: images seen and kept, and the task they point to now."""
    return observer.observations(p.get(model_id, principal))
