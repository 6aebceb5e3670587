"""End-to-end API tests: real uvicorn, real Redis, real SQLite, a tiny real TAPER artifact."""

from __future__ import annotations

import hashlib
import re
import threading

import pytest
import torch
import torchvision
from safetensors.torch import load as st_load
from service_testkit import Q, b64, declared_bomb, images, png

from model_store.images import to_batch

PROBLEM = "application/problem+json"
ID = "0" * 32


def _problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith(PROBLEM)
    body = resp.json()
    assert body["status"] == status and body["type"].startswith("https://") and body["title"]
    return body


def test_health_ready_metrics_need_no_key(live):
    assert live.anon.get("/healthz").json() == {"status": "ok"}
    ready = live.anon.get("/readyz").json()
    assert ready["status"] == "ready" and ready["checks"]["redis"] == "ok"
    assert "tailor_request_seconds_bucket" in live.anon.get("/metrics").text


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/v1/personalize"), ("GET", "/v1/catalogue"), ("GET", f"/v1/models/{ID}"),
     ("GET", f"/v1/models/{ID}/weights"), ("POST", f"/v1/models/{ID}/predict"),
     ("POST", f"/v1/models/{ID}/refine"), ("POST", "/v1/keys")],
)  # fmt: skip
def test_every_api_route_requires_a_key(live, method, path):
    body = _problem(live.anon.request(method, path, json={}), 401)
    assert body["type"].endswith("missing-key")
    bad = live.anon.request(method, path, json={}, headers={"Authorization": "Bearer tlr_x_y"})
    assert _problem(bad, 401)["type"].endswith("invalid-key")
    assert bad.headers["www-authenticate"].startswith("Bearer")


def test_client_keys_cannot_use_admin_routes(live):
    _problem(live.http.post("/v1/keys", json={"name": "x"}), 403)


def test_catalogue(live):
    cat = live.http.get("/v1/catalogue").json()
    assert [c["name"] for c in cat["classes"]][:3] == ["cat", "zero", "sneaker"]
    assert cat["domains"] == ["photo", "art_painting", "cartoon", "sketch"]
    assert cat["default_method"] == "taper" and cat["methods"]["taper"] == 0.5


def test_personalize_is_deterministic_and_reports_resolution(live):
    first = live.http.post("/v1/personalize", json={"classes": ["cat", "dog", "horse"]})
    assert first.status_code == 200, first.text
    model = first.json()
    assert re.fullmatch(r"[0-9a-f]{32}", model["id"])
    assert model["classes"] == ["cat", "dog", "horse"] and model["kind"] == "taper"
    assert model["method"] == "taper" and model["method_accuracy"] == 0.5
    assert len(model["mixers"]) == 4 and all(len(r) == Q for r in model["mixers"])
    assert all(abs(sum(r) - 1) < 1e-4 for r in model["mixers"])
    assert model["weights_url"].endswith(f"/v1/models/{model['id']}/weights")
    again = live.http.post("/v1/personalize", json={"classes": ["cat", "dog", "horse"]}).json()
    assert again["id"] == model["id"] and again["cache"] == "memory"
    described = live.http.post("/v1/personalize", json={"description": "kittens and puppies"})
    res = described.json()["resolution"]
    assert [r["name"] for r in res] == ["cat", "dog"] and all(r["score"] < 1 for r in res)
    assert res[0]["did_you_mean"]
    dup = live.http.post("/v1/personalize", json={"classes": ["dog", "cat", "dogs", "horse"]})
    assert dup.json()["classes"] == ["dog", "cat", "horse"]
    sel = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"], "method": "selection"})
    assert sel.json()["mixers"] is None and sel.json()["method_accuracy"] == 0.4
    sketch = live.http.post("/v1/personalize", json={"description": "sketches of cats and dogs"})
    assert sketch.json()["domain"] == "sketch"
    context = live.http.post("/v1/personalize", json={
        "description": "For our shelter volunteers: they scan the kennel door by hand, and we "
                       "report cats or dogs"}).json()  # fmt: skip
    assert context.get("classes") == ["cat", "dog"], context
    assert any("context" in n and "scan kennel door" in n for n in context["notes"])
    assert (
        sketch.json()["mixers"]
        != live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()["mixers"]
    )


def test_bad_personalize_requests_are_problems(live):
    post = lambda body: live.http.post("/v1/personalize", json=body)  # noqa: E731
    body = _problem(post({"classes": ["cat"], "description": "dogs"}), 422)
    assert "exactly one" in body["detail"]
    _problem(post({}), 422)
    unknown = _problem(post({"description": "cats and quantum physics"}), 422)
    assert unknown["unknown"][0]["phrase"] == "quantum physics"
    assert len(unknown["unknown"][0]["did_you_mean"]) == 3
    _problem(post({"classes": ["cat", "cat"]}), 422)  # one distinct class is not a task
    _problem(post({"classes": ["cat", "dog"], "domain": "x-ray"}), 422)
    _problem(post({"classes": ["cat", "dog"], "method": "magic"}), 422)
    _problem(live.http.post("/v1/personalize", content=b"{not json", headers={
        "content-type": "application/json"}), 422)  # fmt: skip
    _problem(post({"client_id": "c_nobody"}), 404)
    assert _problem(post({"client_id": live.client_id}), 409)["client_id"] == live.client_id
    _problem(live.http.get("/v1/nowhere"), 404)
    _problem(live.http.delete("/v1/catalogue"), 405)
    _problem(live.http.get("/v1/models/" + "f" * 32), 404)
    _problem(live.http.get("/v1/models/not-an-id"), 422)
    _problem(live.http.get("/v1/models/..%2Fetc"), 404)


def test_download_matches_predict_in_stock_torchvision(live):
    model = live.http.post(
        "/v1/personalize", json={"classes": ["bag", "cat", "zero", "one"]}
    ).json()
    resp = live.http.get(model["weights_url"])
    assert resp.status_code == 200
    etag = resp.headers["etag"]
    assert etag == f'"{hashlib.sha256(resp.content).hexdigest()}"'
    assert f"tailor-{model['id']}-fp32.safetensors" in resp.headers["content-disposition"]
    net = torchvision.models.resnet18(num_classes=4)
    net.load_state_dict(st_load(resp.content), strict=True)
    net.eval()
    imgs = images(8, seed=3)
    with torch.no_grad():
        probs = net(to_batch(imgs)).softmax(1)
    files = [("files", (f"{i}.png", png(im), "image/png")) for i, im in enumerate(imgs)]
    multi = live.http.post(f"/v1/models/{model['id']}/predict", files=files, data={"top_k": "2"})
    as_json = live.http.post(model["predict_url"], json={"images": [b64(png(i)) for i in imgs]})
    assert multi.status_code == as_json.status_code == 200, multi.text
    names = model["classes"]
    for row, preds, single in zip(probs, multi.json()["predictions"], as_json.json()["predictions"],
                                  strict=True):  # fmt: skip
        assert len(preds) == 2 and len(single) == 1
        assert preds[0]["label"] == names[int(row.argmax())] == single[0]["label"]
        assert abs(preds[0]["probability"] - float(row.max())) < 1e-4
    not_modified = live.http.get(model["weights_url"], headers={"If-None-Match": etag})
    assert not_modified.status_code == 304 and not not_modified.content
    assert not_modified.headers["etag"] == etag and "immutable" in not_modified.headers[
        "cache-control"]  # fmt: skip
    half = live.http.get(model["weights_url"], params={"dtype": "fp16"})
    assert (
        half.headers["etag"] != etag and st_load(half.content)["fc.weight"].dtype == torch.float16
    )
    _problem(live.http.get(model["weights_url"], params={"format": "onnx", "dtype": "fp16"}), 422)
    _problem(live.http.get(model["weights_url"], params={"dtype": "int3"}), 422)


def test_predict_input_limits(live):
    model = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()
    url = model["predict_url"]
    huge = {"images": [b64(b"\0" * (3 * 1024 * 1024))]}
    assert _problem(live.http.post(url, json=huge), 413)["type"].endswith("payload-too-large")
    chunks = (b"x" * 65536 for _ in range(64))  # 4 MiB, chunked: no Content-Length to check
    streamed = live.http.post(url, content=chunks, headers={"content-type": "application/json"})
    assert _problem(streamed, 413)["type"].endswith("payload-too-large")
    big_json = live.http.post("/v1/personalize", json={"description": "cat " * 600_000})
    _problem(big_json, 413)
    bomb = live.http.post(url, files=[("files", ("b.png", declared_bomb(60_000, 60_000)))])
    assert _problem(bomb, 400)["type"].endswith("decompression-bomb")
    _problem(live.http.post(url, files=[("files", ("x.png", b"garbage"))]), 400)
    _problem(live.http.post(url, json={"images": ["@@notbase64@@"]}), 400)
    _problem(live.http.post(url, json={"images": []}), 422)
    _problem(live.http.post(url, json={"images": [b64(png(images(1)[0]))] * 65}), 413)
    _problem(live.http.post(url, content=b"x", headers={"content-type": "text/plain"}), 415)
    _problem(live.http.post(url, files=[("other", ("a.png", b"x"))]), 422)


def test_refine_without_anything_to_improve_returns_the_parent(live):
    """The tiny artifact has no domain head: unlabeled images cannot tell anything the model
    lacks, so /refine answers with the parent itself (issue 18: never worse), saying why."""
    model = live.http.post("/v1/personalize", json={"classes": ["cat", "sneaker", "one"]}).json()
    body = {"images": [b64(png(im)) for im in images(12, seed=5)]}
    refined = live.http.post(f"/v1/models/{model['id']}/refine", json=body)
    assert refined.status_code == 200, refined.text
    same = refined.json()
    assert same["id"] == model["id"] and same["changed"] is False
    assert same["classes"] == model["classes"] and sum(same["pseudo_labels"].values()) == 12
    assert any("nothing" in note for note in same["notes"])


def test_concurrent_identical_requests_synthesize_once(live):
    before = live.metric("tailor_syntheses_total")
    results = []

    def call():
        body = {"classes": ["bird", "horse", "coat"]}
        results.append(live.http.post("/v1/personalize", json=body).json()["id"])

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1 and len(results) == 6
    assert live.metric("tailor_syntheses_total") == before + 1


def test_evicted_and_corrupted_weights_come_back_bit_identical(live):
    model = live.http.post("/v1/personalize", json={"classes": ["two", "three", "cat"]}).json()
    original = live.http.get(model["weights_url"]).content
    p = live.personalizer
    row = p.get(model["id"])
    p.lru.clear()
    p.redis.delete(row.recipe_key)  # evicted from every tier: only the SQL recipe remains
    assert live.http.get(model["weights_url"]).content == original
    p.lru.clear()
    key = p.redis.key(row.recipe_key)
    blob = bytearray(p.redis.client.get(key))
    blob[100] ^= 1
    p.redis.client.set(key, bytes(blob))
    corrupt_before = live.metric("tailor_cache_requests_total", tier="redis", result="corrupt")
    again = live.http.post("/v1/personalize", json={"classes": ["two", "three", "cat"]}).json()
    assert again["cache"] == "synthesized"
    assert live.metric("tailor_cache_requests_total", tier="redis", result="corrupt") == (
        corrupt_before + 1
    )
    assert live.http.get(model["weights_url"]).content == original
    p.flush()
    p.lru.clear()
    hit = live.http.post("/v1/personalize", json={"classes": ["two", "three", "cat"]}).json()
    assert hit["cache"] == "redis"


def test_metrics_report_routes_synthesis_and_tiers(live):
    text = live.anon.get("/metrics").text
    route = {"route": "/v1/personalize", "method": "POST", "status": "200"}
    assert live.metric("tailor_request_seconds_count", **route) > 0
    assert live.metric("tailor_cache_requests_total", tier="memory", result="hit") > 0
    assert live.metric("tailor_cache_requests_total", tier="redis", result="hit") > 0
    assert live.metric("tailor_synthesis_seconds_count", method="taper") > 0
    assert live.metric("tailor_memory_cache_bytes") > 40e6  # at least one ResNet-18 held
    assert "tailor_cache_errors_total" in text


def test_openapi_documents_both_image_body_formats(live):
    spec = live.anon.get("/openapi.json").json()
    body = spec["paths"]["/v1/models/{model_id}/predict"]["post"]["requestBody"]["content"]
    assert {"multipart/form-data", "application/json"} <= set(body)
    assert "/v1/personalize" in spec["paths"] and "HTTPBearer" in str(spec["components"])
