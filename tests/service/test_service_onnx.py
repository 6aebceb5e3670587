"""ONNX downloads end to end: real uvicorn, real Redis, onnxruntime on the downloaded bytes."""

from __future__ import annotations

import hashlib

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
import torchvision
from safetensors.torch import load as st_load
from service_testkit import images, png

from model_store.images import to_batch
from service.core.models import PersonalizedModel

PROBLEM = "application/problem+json"
CLASSES = ["bag", "cat", "zero", "one", "dog"]


@pytest.fixture(scope="module")
def model(live):
    resp = live.http.post("/v1/personalize", json={"classes": CLASSES})
    assert resp.status_code == 200, resp.text
    return resp.json()


def _onnx(live, model, **headers):
    return live.http.get(model["weights_url"], params={"format": "onnx"}, headers=headers)


def _problem(resp, status: int, slug: str) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith(PROBLEM)
    body = resp.json()
    assert body["type"].endswith(slug) and body["detail"]
    return body


def test_onnx_logits_match_torch_and_predict(live, model):
    resp = _onnx(live, model)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "application/octet-stream"
    assert f'filename="{model["id"]}.onnx"' in resp.headers["content-disposition"]
    assert resp.headers["etag"] == f'"{hashlib.sha256(resp.content).hexdigest()}"'
    assert "float32[N,3,32,32]" in resp.headers["x-tailor-input"]
    onnx.checker.check_model(onnx.load_from_string(resp.content), full_check=True)
    session = ort.InferenceSession(resp.content, providers=["CPUExecutionProvider"])
    net = torchvision.models.resnet18(num_classes=len(CLASSES))
    net.load_state_dict(st_load(live.http.get(model["weights_url"]).content), strict=True)
    net.eval()
    for n in (1, 3):  # dynamic batch axis
        imgs = images(n, seed=10 + n)
        x = to_batch(imgs)
        (logits,) = session.run(["logits"], {"images": x.numpy()})
        with torch.no_grad():
            ref = net(x).numpy()
        np.testing.assert_allclose(logits, ref, atol=1e-4, rtol=1e-4)
        files = [("files", (f"{i}.png", png(im), "image/png")) for i, im in enumerate(imgs)]
        pred = live.http.post(model["predict_url"], files=files, data={"top_k": "1"})
        assert pred.status_code == 200, pred.text
        probs = torch.from_numpy(logits).softmax(1)
        for row, (top,) in zip(probs, pred.json()["predictions"], strict=True):
            assert top["label"] == model["classes"][int(row.argmax())]
            assert abs(top["probability"] - float(row.max())) < 1e-4


def test_onnx_is_exported_once_then_cached_with_etag(live, model):
    exports = live.personalizer.exports
    first = _onnx(live, model)
    count = exports.exports
    second = _onnx(live, model)
    assert second.content == first.content and second.headers["etag"] == first.headers["etag"]
    assert exports.exports == count  # served from Redis, not re-exported
    not_modified = _onnx(live, model, **{"If-None-Match": first.headers["etag"]})
    assert not_modified.status_code == 304 and not not_modified.content
    assert not_modified.headers["etag"] == first.headers["etag"]
    redis = live.personalizer.redis
    onnx_key = live.personalizer.get(model["id"]).recipe_key + ":onnx"
    redis.client.set(redis.key(onnx_key), b"garbage" * 9)
    rebuilt = _onnx(live, model)  # corrupt entry detected by its sha256, re-exported
    assert exports.exports == count + 1
    assert rebuilt.content == first.content  # deterministic export: same bytes, same ETag


def test_onnx_refusals_are_problems(live, model):
    _problem(live.http.get(model["weights_url"], params={"format": "onnx", "dtype": "fp16"}),
             422, "onnx-fp32-only")  # fmt: skip
    row = PersonalizedModel(
        id="ab" * 16, recipe_key="ab" * 32, kind="fedclip", method="fedclip",
        artifact_version="test", recipe={"classes": ["a", "b"]}, mixers=None,
        created_by=live.client_id, owner=live.client_id,
    )  # fmt: skip
    with live.personalizer.sessions.begin() as s:
        s.add(row)
    url = f"/v1/models/{row.id}/weights"
    body = _problem(live.admin.get(url, params={"format": "onnx"}), 409, "onnx-unsupported-kind")
    assert body["kind"] == "fedclip"


def test_onnx_without_redis_uses_the_in_process_tier(run_live, make_settings, tmp_path):
    with run_live(make_settings(f"sqlite:///{tmp_path / 'db.sqlite'}")) as live:
        model = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()
        first, second = _onnx(live, model), _onnx(live, model)
        assert first.status_code == second.status_code == 200, first.text
        assert first.content == second.content
        assert live.personalizer.exports.exports == 1
