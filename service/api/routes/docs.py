"""The OpenAPI schema and its two viewers (Swagger UI, ReDoc), served without a CDN.

FastAPI's own ``/docs`` loads Swagger UI's JavaScript and CSS from a public CDN, so on an
offline or air-gapped deployment (where federated clients such as hospitals run Tailor) the
page is blank. The assets come from the ``fastapi-offline`` package instead (we use only its
static files, with FastAPI's own page templates), mounted under ``/static/docs``. Who may read
the schema is a setting (``TAILOR_OPENAPI_ACCESS``); the viewers exist only when it is public,
since a browser cannot send the admin key when it fetches the schema.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from service.api.deps import operational

ASSETS = Path(fastapi_offline.__file__).parent / "static"
STATIC = "/static/docs"


def install(app: FastAPI, access: str) -> None:
    """Add ``/openapi.json`` (unless ``access`` is ``off``) and, when public, the viewers."""
    if access == "off":
        return
    router = APIRouter(include_in_schema=False)

    @router.get("/openapi.json", dependencies=[operational("openapi")])
    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(request.app.openapi())

    if access == "public":
        app.mount(STATIC, StaticFiles(directory=ASSETS), name="docs-assets")

        @router.get("/docs")
        async def swagger():
            return get_swagger_ui_html(
                openapi_url="/openapi.json", title=f"{app.title} API",
                swagger_js_url=f"{STATIC}/swagger-ui-bundle.js",
                swagger_css_url=f"{STATIC}/swagger-ui.css",
                swagger_favicon_url=f"{STATIC}/favicon.png",
            )  # fmt: skip

        @router.get("/redoc")
        async def redoc():
            return get_redoc_html(
                openapi_url="/openapi.json", title=f"{app.title} API",
                redoc_js_url=f"{STATIC}/redoc.standalone.js",
                redoc_favicon_url=f"{STATIC}/favicon.png", with_google_fonts=False,
            )  # fmt: skip

    app.include_router(router)
