"""Reading image batches from a request: multipart files or base64 JSON, with limits."""

from __future__ import annotations

from fastapi import Request
from pydantic import ValidationError

from service.core import imaging
from service.core.problems import Problem
from service.core.schemas import PredictJSON
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
                    },
                    "required": ["files"],
                }
            },
            "application/json": {"schema": PredictJSON.model_json_schema()},
        },
    }
}


async def read_images(request: Request, settings: Settings) -> tuple[list[bytes], list[str], int]:
    """Raw encoded images, their names, and ``top_k`` from either body format."""
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
        return (*base64_images(body.images, settings), body.top_k)
    raise Problem(415, "unsupported-media-type",
                  "send images as multipart/form-data (field 'files') or JSON base64")  # fmt: skip


async def _from_multipart(request: Request, settings: Settings):
    form = await request.form(
        max_files=settings.max_batch + 1, max_fields=16, max_part_size=settings.max_image_bytes
    )
    files = [f for f in form.getlist("files") if not isinstance(f, str)]
    if not files:
        raise Problem(422, "validation-error", "multipart body needs one or more 'files' parts")
    _check_count(len(files), settings)
    top_k = form.get("top_k", request.query_params.get("top_k", "1"))
    if not isinstance(top_k, str) or not top_k.isdigit() or not 1 <= int(top_k) <= 100:
        raise Problem(422, "validation-error", "top_k must be an integer in 1..100")
    raw = [await f.read() for f in files]
    return raw, [f.filename or f"files[{i}]" for i, f in enumerate(files)], int(top_k)


def base64_images(images: list[str], settings: Settings) -> tuple[list[bytes], list[str]]:
    """Encoded image bytes and names of a JSON body's ``images`` (batch limit, strict base64)."""
    _check_count(len(images), settings)
    names = [f"images[{i}]" for i in range(len(images))]
    return [imaging.decode_base64(t, name=n) for t, n in zip(images, names, strict=True)], names


def _check_count(n: int, settings: Settings) -> None:
    if n > settings.max_batch:
        raise Problem(413, "batch-too-large", f"{n} images > batch limit {settings.max_batch}")
