"""Reading image batches from a request: multipart files or base64 JSON, with limits."""

from __future__ import annotations

from typing import NamedTuple

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from service.core import imaging
from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate, PredictJSON
from service.core.settings import Settings

# OpenAPI description of the two accepted bodies (the handler parses them itself).
IMAGES_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                        "top_k": {"type": "integer", "minimum": 1, "default": 1},
                        "exit": {"type": "integer", "minimum": 1},
                        "max_layers": {"type": "integer", "minimum": 1},
                    },
                    "required": ["files"],
                }
            },
            "application/json": {"schema": PredictJSON.model_json_schema()},
        },
    }
}


PERSONALIZE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": PersonalizeCreate.model_json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                        "k": {"type": "integer", "minimum": 2},
                        "domain": {"type": "string"},
                        "method": {"type": "string", "enum": ["taper", "selection"]},
                    },
                    "required": ["files"],
                }
            },
        },
    }
}


class ImageBatch(NamedTuple):
    """A prediction request's images (still encoded) and options."""

    raw: list[bytes]
    names: list[str]
    top_k: int
    exit: int | None = None  # anytime models: this exit exactly
    max_layers: int | None = None  # anytime models: the deepest exit within this budget


async def read_images(request: Request, settings: Settings) -> ImageBatch:
    """Raw encoded images, their names, ``top_k`` and the exit options from either body."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "multipart/form-data":
        return await _from_multipart(request, settings)
    if ctype in ("application/json", ""):
        try:
            body = PredictJSON.model_validate_json(await request.body())
        except ValidationError as exc:
            errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
            raise Problem(
                422, "validation-error", "invalid JSON image batch", errors=errors
            ) from None
        return ImageBatch(*base64_images(body.images, settings), body.top_k, body.exit,
                          body.max_layers)  # fmt: skip
    raise Problem(415, "unsupported-media-type",
                  "send images as multipart/form-data (field 'files') or JSON base64")  # fmt: skip


async def _multipart_files(request: Request, settings: Settings):
    """``(form, encoded images, names)`` of a multipart body: its 'files' parts, within the
    batch, part-size and field limits (both /predict and /personalize read them so)."""
    form = await request.form(
        max_files=settings.max_batch + 1, max_fields=16, max_part_size=settings.max_image_bytes
    )
    files = [f for f in form.getlist("files") if not isinstance(f, str)]
    if not files:
        raise Problem(422, "validation-error", "multipart body needs one or more 'files' parts")
    _check_count(len(files), settings)
    names = [f.filename or f"files[{i}]" for i, f in enumerate(files)]
    return form, [await f.read() for f in files], names


async def _from_multipart(request: Request, settings: Settings) -> ImageBatch:
    form, raw, names = await _multipart_files(request, settings)
    top_k = _form_int(form, request, "top_k", 100) or 1
    exit_, max_layers = _form_int(form, request, "exit"), _form_int(form, request, "max_layers")
    return ImageBatch(raw, names, top_k, exit_, max_layers)


async def read_personalize(
    request: Request, settings: Settings
) -> tuple[PersonalizeCreate, list[bytes] | None, list[str] | None]:
    """A /personalize body (JSON, or multipart unlabeled images) and its images' bytes (None
    for requests without images). JSON errors answer exactly as FastAPI's own validation."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "multipart/form-data":
        form, raw, names = await _multipart_files(request, settings)
        fields = {n: form.get(n) for n in ("domain", "method") if form.get(n) is not None}
        k = _form_int(form, request, "k")
        try:
            body = PersonalizeCreate.model_validate({**fields, "k": k, "images": ["-"]})
        except ValidationError as exc:
            raise RequestValidationError(exc.errors(include_url=False)) from None
        return body, raw, names
    if ctype not in ("application/json", ""):
        raise Problem(415, "unsupported-media-type", "send JSON, or multipart/form-data "
                      "unlabeled images (field 'files')")  # fmt: skip
    try:
        body = PersonalizeCreate.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        raise RequestValidationError(errors) from None
    if body.images is None:
        return body, None, None
    raw, names = base64_images(body.images, settings)
    return body, raw, names


def _form_int(form, request: Request, name: str, upper: int = 1000) -> int | None:
    """An optional integer option of a multipart body (form field, else query), 1..upper."""
    value = form.get(name, request.query_params.get(name))
    if value is None:
        return None
    ok = isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 6
    if not ok or not 1 <= int(value) <= upper:  # ascii: int() refuses '²'; short: int('9'*5000)
        raise Problem(422, "validation-error", f"{name} must be an integer in 1..{upper}")
    return int(value)


def base64_images(images: list[str], settings: Settings) -> tuple[list[bytes], list[str]]:
    """Encoded image bytes and names of a JSON body's ``images`` (batch limit, strict base64)."""
    _check_count(len(images), settings)
    names = [f"images[{i}]" for i in range(len(images))]
    return [imaging.decode_base64(t, name=n) for t, n in zip(images, names, strict=True)], names


def _check_count(n: int, settings: Settings) -> None:
    if n > settings.max_batch:
        raise Problem(413, "batch-too-large", f"{n} images > batch limit {settings.max_batch}")
