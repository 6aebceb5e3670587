"""Personalized models: metadata, weight download, prediction, refinement."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Path, Request, Response
from starlette.concurrency import run_in_threadpool

from service.api.deps import PersonalizerDep, PrincipalDep, SettingsDep
from service.api.inputs import IMAGES_BODY, decode_batch, decode_to_batch, read_images
from service.downloads import etag_matches, immutable_download, not_modified
from service.export import onnx_response
from service.federation import decode_images
from service.schemas import ModelPublic, PredictResponse, RefineResponse

router = APIRouter(prefix="/v1/models", tags=["models"])
ModelId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$", description="model id (32 hex)")]


@router.get("/{model_id}", response_model=ModelPublic)
def get_model(model_id: ModelId, p: PersonalizerDep, principal: PrincipalDep):
    """Metadata of a personalized model."""
    return p.public(p.get(model_id, principal))


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
        return onnx_response(p, row, dtype, if_none_match)
    if (
        dtype == "fp32"
        and row.weights_sha256
        and etag_matches(if_none_match, f'"{row.weights_sha256}"')
    ):
        return not_modified(f'"{row.weights_sha256}"')
    payload = p.weights(row, dtype)
    return immutable_download(payload, f"tailor-{model_id}-{dtype}.safetensors", if_none_match)


async def _image_batch(request: Request, settings, p, row=None):
    """Read and decode the request's images (multipart or base64 JSON) onto the runtime device."""
    raw, names, top_k = await read_images(request, settings)
    if row is not None and row.kind == "fedclip":  # uint8 NHWC: the backbone preprocesses
        return await run_in_threadpool(decode_images, raw, names, settings), top_k
    return await decode_batch(raw, names, settings, p.runtime.device), top_k


@router.post("/{model_id}/predict", response_model=PredictResponse, openapi_extra=IMAGES_BODY)
async def predict(
    model_id: ModelId, request: Request, p: PersonalizerDep, principal: PrincipalDep,
    settings: SettingsDep,
):  # fmt: skip
    """Top-k labels among the model's classes for a batch of images.

    The body is read on the event loop; lookup, decoding, the forward pass and the JSON
    encoding then run in ONE worker thread (one threadpool hop, not three), and the response
    is the model's own ``model_dump_json`` (FastAPI would re-validate and re-encode 64×k
    predictions). A missing model still answers 404 before a bad body's 4xx, as before.
    """
    try:
        images = await read_images(request, settings)
    except Exception as exc:  # noqa: BLE001 - re-raised after the model lookup
        images = exc

    def work() -> bytes:
        row = p.get(model_id, principal)
        if isinstance(images, Exception):
            raise images
        raw, names, top_k = images
        if row.kind == "fedclip":  # uint8 NHWC: the backbone preprocesses
            batch = decode_images(raw, names, settings)
        else:
            batch = decode_to_batch(raw, names, settings, p.runtime.device)
        predictions = p.predict(row, batch, top_k)
        return PredictResponse(model_id=model_id, predictions=predictions).model_dump_json()

    return Response(await run_in_threadpool(work), media_type="application/json")


@router.post("/{model_id}/refine", response_model=RefineResponse, openapi_extra=IMAGES_BODY)
async def refine(
    model_id: ModelId, request: Request, p: PersonalizerDep, principal: PrincipalDep,
    settings: SettingsDep,
):  # fmt: skip
    """Self-improvement from unlabeled images: pseudo-labels define a new model."""
    row = await run_in_threadpool(p.get, model_id, principal)
    batch, _ = await _image_batch(request, settings, p)
    return await run_in_threadpool(p.refine, row, batch, principal)
