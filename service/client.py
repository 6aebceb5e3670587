"""A small httpx client for apps: personalize, download weights, predict.

    from service.client import TailorClient
    with TailorClient("http://127.0.0.1:8000", api_key) as tailor:
        model = tailor.personalize(description="classify cats and dogs")
        tailor.download_weights(model["id"], "model.safetensors")
        print(tailor.predict(model["id"], ["cat.png"], top_k=2))

Errors raise :class:`TailorError` carrying the server's RFC 7807 problem document.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import httpx


class TailorError(RuntimeError):
    """A non-2xx answer; ``problem`` is the parsed problem JSON (or a stub)."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(f"{status} {problem.get('title', '')}: {problem.get('detail', '')}")
        self.status, self.problem = status, problem


class TailorClient:
    """Thin synchronous client.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000`` (default ``$TAILOR_URL``).
        api_key: bearer key (default ``$TAILOR_API_KEY``).
        timeout: seconds per request.
    """

    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, timeout: float = 60.0
    ) -> None:
        base_url = base_url or os.environ.get("TAILOR_URL", "http://127.0.0.1:8000")
        api_key = api_key or os.environ.get("TAILOR_API_KEY", "")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout)

    def __enter__(self) -> TailorClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def _check(self, response: httpx.Response) -> httpx.Response:
        if response.is_success or response.status_code == 304:
            return response
        try:
            problem = response.json()
        except ValueError:
            problem = {"title": response.reason_phrase, "detail": response.text[:500]}
        raise TailorError(response.status_code, problem)

    def personalize(self, **request: Any) -> dict[str, Any]:
        """POST /v1/personalize with ``description=``, ``classes=`` or ``client_id=``."""
        body = {k: v for k, v in request.items() if v is not None}
        return self._check(self.http.post("/v1/personalize", json=body)).json()

    def model(self, model_id: str) -> dict[str, Any]:
        """GET /v1/models/{id}."""
        return self._check(self.http.get(f"/v1/models/{model_id}")).json()

    def catalogue(self) -> dict[str, Any]:
        """GET /v1/catalogue."""
        return self._check(self.http.get("/v1/catalogue")).json()

    def weights(self, model_id: str, dtype: str = "fp32") -> bytes:
        """The model's safetensors bytes."""
        url = f"/v1/models/{model_id}/weights"
        return self._check(self.http.get(url, params={"dtype": dtype})).content

    def download_weights(self, model_id: str, path: str | Path, dtype: str = "fp32") -> Path:
        """Stream the weights to ``path`` (returns it)."""
        path = Path(path)
        url = f"/v1/models/{model_id}/weights"
        with self.http.stream("GET", url, params={"dtype": dtype}) as response:
            if not response.is_success:
                response.read()
                self._check(response)
            with path.open("wb") as fh:
                for chunk in response.iter_bytes():
                    fh.write(chunk)
        return path

    def predict(self, model_id: str, images: list[str | Path | bytes], top_k: int = 1):
        """Predictions for image files or encoded image bytes (sent as base64 JSON)."""
        payload = [_encode(im) for im in images]
        body = {"images": payload, "top_k": top_k}
        return self._check(self.http.post(f"/v1/models/{model_id}/predict", json=body)).json()

    def refine(self, model_id: str, images: list[str | Path | bytes]) -> dict[str, Any]:
        """Self-improvement from unlabeled images → a new model."""
        body = {"images": [_encode(im) for im in images]}
        return self._check(self.http.post(f"/v1/models/{model_id}/refine", json=body)).json()


def _encode(image: str | Path | bytes) -> str:
    data = image if isinstance(image, bytes) else Path(image).read_bytes()
    return base64.b64encode(data).decode()
