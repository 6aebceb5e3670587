"""A small httpx client for apps: personalize, download weights, predict.

    from tailor.client import TailorClient
    with TailorClient("http://127.0.0.1:8000", api_key) as tailor:
        model = tailor.personalize(description="classify cats and dogs")
        tailor.download_weights(model["id"], "model.safetensors")
        print(tailor.predict(model["id"], ["cat.png"], top_k=2))

Errors raise :class:`TailorError` carrying the server's RFC 7807 problem document.

Requests that are safe to repeat are retried on connection errors and 502/503/504 with
exponential backoff (honouring ``Retry-After``): GETs, ``/personalize`` (idempotent by design:
the same request always names the same model id) and ``/predict`` (no side effects). ``refine``
is not retried. These also retry a 429 after its ``Retry-After``: the rate limiter refused the
request before doing anything. So an app rides through a restarted worker, replica or database
without its own loop.
"""

from __future__ import annotations

import base64
import email.utils
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import httpx

RETRY_STATUSES = frozenset({429, 502, 503, 504})


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
        retries: extra attempts for a safe request after a connection error or a 429/502/503/504.
        backoff_s: first wait between attempts; doubles each time (with jitter).
        max_wait_s: cap on any one wait, including a server's ``Retry-After``.

    Attributes:
        retried: how many retries this client has made (apps may export it as a metric).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        *,
        retries: int = 4,
        backoff_s: float = 0.2,
        max_wait_s: float = 5.0,
    ) -> None:
        base_url = base_url or os.environ.get("TAILOR_URL", "http://127.0.0.1:8000")
        api_key = api_key or os.environ.get("TAILOR_API_KEY", "")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout)
        self.retries, self.backoff_s, self.max_wait_s = retries, backoff_s, max_wait_s
        self.retried = 0

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

    def _safe(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send a request that may be repeated, retrying transient failures; checked response."""
        return self._check(self._retrying(lambda: self.http.request(method, url, **kwargs)))

    def _retrying(self, attempt: Any) -> httpx.Response:
        """Call ``attempt`` until it returns a non-transient response or retries run out.

        A connection error means the request may or may not have reached a worker that then died;
        repeating is fine only because every caller here is idempotent or side-effect free.
        """
        for n in range(self.retries + 1):
            last = n == self.retries
            try:
                response = attempt()
            except httpx.TransportError:
                if last:
                    raise
                self._pause(n, None)
                continue
            if last or response.status_code not in RETRY_STATUSES:
                return response
            self._pause(n, response.headers.get("retry-after"))
        raise AssertionError("unreachable")  # pragma: no cover

    def _pause(self, attempt: int, retry_after: str | None) -> None:
        self.retried += 1
        wait = self.backoff_s * 2**attempt * random.uniform(0.5, 1.0)  # jitter: no herds
        hinted = _retry_after_seconds(retry_after)
        if hinted is not None:
            wait = max(wait, hinted)
        time.sleep(min(wait, self.max_wait_s))

    def personalize(self, **request: Any) -> dict[str, Any]:
        """POST /v1/personalize with ``description=``, ``classes=``, ``client_id=`` or
        ``images=`` (unlabeled image files or bytes; optional ``k=``, ``domain=``)."""
        body = {k: v for k, v in request.items() if v is not None}
        if "images" in body:
            body["images"] = [_encode(im) for im in body["images"]]
        return self._safe("POST", "/v1/personalize", json=body).json()

    def model(self, model_id: str) -> dict[str, Any]:
        """GET /v1/models/{id}."""
        return self._safe("GET", f"/v1/models/{model_id}").json()

    def catalogue(self) -> dict[str, Any]:
        """GET /v1/catalogue."""
        return self._safe("GET", "/v1/catalogue").json()

    def config(self, model_id: str) -> dict[str, Any]:
        """GET /v1/models/{id}/config: ``config.json`` (timm / Hugging Face convention)."""
        return self._safe("GET", f"/v1/models/{model_id}/config").json()

    def download(self, model_id: str, out: str | Path, dtype: str = "fp32") -> dict[str, Path]:
        """``model.safetensors`` + ``config.json`` of a model in directory ``out``."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        weights = self.download_weights(model_id, out / "model.safetensors", dtype)
        config = out / "config.json"  # after the weights: their digest is recorded by then
        config.write_text(json.dumps(self.config(model_id), indent=2) + "\n")
        return {"weights": weights, "config": config}

    def predict_once(
        self, images: list[str | Path | bytes], top_k: int = 1, **request: Any
    ) -> dict[str, Any]:
        """POST /v1/predict: personalize (``classes=`` / ``description=`` / ``client_id=``) and
        classify in one call; the answer names the model for later calls."""
        body = {k: v for k, v in request.items() if v is not None}
        body.update(images=[_encode(im) for im in images], top_k=top_k)
        return self._safe("POST", "/v1/predict", json=body).json()

    def weights(self, model_id: str, dtype: str = "fp32") -> bytes:
        """The model's safetensors bytes."""
        url = f"/v1/models/{model_id}/weights"
        return self._safe("GET", url, params={"dtype": dtype}).content

    def download_weights(self, model_id: str, path: str | Path, dtype: str = "fp32") -> Path:
        """Stream the weights to ``path`` (returns it); a broken stream starts the file over."""
        path = Path(path)
        url = f"/v1/models/{model_id}/weights"

        def attempt() -> httpx.Response:
            with self.http.stream("GET", url, params={"dtype": dtype}) as response:
                if response.is_success:
                    with path.open("wb") as fh:
                        for chunk in response.iter_bytes():
                            fh.write(chunk)
                else:
                    response.read()
            return response

        self._check(self._retrying(attempt))
        return path

    def predict(self, model_id: str, images: list[str | Path | bytes], top_k: int = 1,
                exit: int | None = None, max_layers: int | None = None):  # noqa: A002 - API name
        """Predictions for image files or encoded image bytes (sent as base64 JSON); anytime
        models also take ``exit`` or ``max_layers`` and answer with the ``exit`` they used."""
        payload = [_encode(im) for im in images]
        body = {"images": payload, "top_k": top_k}
        body.update({k: v for k, v in (("exit", exit), ("max_layers", max_layers)) if v})
        return self._safe("POST", f"/v1/models/{model_id}/predict", json=body).json()

    def refine(self, model_id: str, images: list[str | Path | bytes]) -> dict[str, Any]:
        """The model improved by unlabeled images of its task (or itself, ``changed: false``)."""
        body = {"images": [_encode(im) for im in images]}
        return self._check(self.http.post(f"/v1/models/{model_id}/refine", json=body)).json()

    def observe(self, model_id: str, images: list[str | Path | bytes]) -> dict[str, Any]:
        """Add images the app saw to the model's stream; use the answer's ``model_id`` next
        (a new model when the task changed). Not retried: a retry would count images twice."""
        body = {"images": [_encode(im) for im in images]}
        return self._check(self.http.post(f"/v1/models/{model_id}/observe", json=body)).json()

    def observations(self, model_id: str) -> dict[str, Any]:
        """GET /v1/models/{id}/observations: the stream's current estimate."""
        return self._safe("GET", f"/v1/models/{model_id}/observations").json()


def _retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date (None if absent or garbled)."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _encode(image: str | Path | bytes) -> str:
    data = image if isinstance(image, bytes) else Path(image).read_bytes()
    return base64.b64encode(data).decode()
