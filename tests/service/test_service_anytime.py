"""Anytime models served by client ID (issue 15 §5), end to end under uvicorn.

One store holds a tiny TAPER artifact, a tiny FedCLIP federation (clients photo, sketch) and a
tiny anytime federation (clients photo, c_any; tiers 3 and 2) with random trained tensors, so
exits and clients predict differently. Predictions are checked against the library
(``model_store.anytime_artifact``) and against the downloaded weights rebuilt by hand.
"""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load as st_load
from service_testkit import b64, images, png

from model_store.anytime_artifact import load_anytime
from model_store.anytime_card import anytime_from_download
from tailor.client import TailorClient

CLASSES = ["cat", "dog", "horse", "bird"]
TIERS = {"photo": 3, "c_any": 2}
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def any_store(taper_store, tmp_path_factory):
    from model_store.testing import make_tiny_anytime, make_tiny_fedclip

    store = tmp_path_factory.mktemp("anystore")
    (store / "taper").symlink_to(taper_store / "taper", target_is_directory=True)
    make_tiny_fedclip(store, clients=("photo", "sketch"), class_names=CLASSES, seed=0)
    make_tiny_anytime(store, clients=tuple(TIERS), class_names=CLASSES, layers=3,
                      tiers=tuple(TIERS.values()), seed=1)  # fmt: skip
    return store


@pytest.fixture(scope="module")
def srv(any_store, make_settings, redis_server, tmp_path_factory, run_live):
    url = f"sqlite:///{tmp_path_factory.mktemp('any-db') / 'tailor.db'}"
    with run_live(make_settings(url, store_dir=any_store, redis_url=redis_server.url)) as live:
        live.as_client = {}
        for c in ("photo", "c_any"):
            made = live.admin.post("/v1/keys", json={"client_id": c})
            assert made.status_code == 201, made.text
            live.as_client[c] = httpx.Client(base_url=live.url, timeout=60, headers={
                "Authorization": f"Bearer {made.json()['key']}"})  # fmt: skip
        yield live
        for c in live.as_client.values():
            c.close()


def _problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith(PROBLEM)
    return resp.json()


def _model(http, client_id: str, kind: str | None = None) -> dict:
    body = {"client_id": client_id, **({"kind": kind} if kind else {})}
    resp = http.post("/v1/personalize", json=body)
    assert resp.status_code == 200, resp.text
    return resp.json()


def _predict(http, model: dict, imgs, **options) -> httpx.Response:
    body = {"images": [b64(png(im)) for im in imgs], "top_k": len(CLASSES), **options}
    return http.post(model["predict_url"], json=body)


def _probs(resp) -> np.ndarray:
    assert resp.status_code == 200, resp.text
    rows = resp.json()["predictions"]
    return np.array([[{p["label"]: p["probability"] for p in r}[c] for c in CLASSES]
                     for r in rows])  # fmt: skip


def test_client_model_with_exits_matches_the_library_at_every_exit(srv, any_store):
    me = srv.as_client["c_any"]
    model = _model(me, "c_any")  # no kind: only the anytime federation has c_any
    assert model["kind"] == "anytime" and model["method"] == "anytime-personalized"
    assert model["classes"] == CLASSES and model["default_exit"] == TIERS["c_any"]
    assert [e["exit"] for e in model["exits"]] == [1, 2, 3]
    assert [e["flops"] for e in model["exits"]] == [1000, 2000, 3000]
    assert [e["val_accuracy"] for e in model["exits"]] == [0.4, 0.5, None]  # past its tier
    assert model["method_accuracy"] == 0.5  # at its default exit
    imgs = images(8, seed=3)
    library = load_anytime(any_store, "c_any", device="cpu")
    answers = {}
    for options, used in (({}, 2), ({"exit": 1}, 1), ({"exit": 3}, 3), ({"max_layers": 9}, 3),
                          ({"max_layers": 1}, 1)):  # fmt: skip
        resp = _predict(me, model, imgs, **options)
        assert resp.json()["exit"] == used, options
        expected = library.logits(np.stack(imgs), used).softmax(1).numpy()
        np.testing.assert_allclose(_probs(resp), expected, atol=1e-5)
        answers[used] = _probs(resp)
    assert not np.allclose(answers[1], answers[3], atol=1e-3)  # the exits differ
    files = [("files", (f"{i}.png", png(im), "image/png")) for i, im in enumerate(imgs)]
    multipart = me.post(model["predict_url"], files=files, data={"top_k": "4", "exit": "1"})
    np.testing.assert_allclose(_probs(multipart), answers[1], atol=1e-6)
    once = me.post("/v1/predict", json={"client_id": "c_any", "images": [b64(png(imgs[0]))],
                                        "max_layers": 2})  # fmt: skip
    assert once.status_code == 200 and once.json()["exit"] == 2
    assert once.json()["model_id"] == model["id"]
    key = me.headers["Authorization"].removeprefix("Bearer ")
    with TailorClient(srv.url, key) as client:  # the Python client passes the options through
        assert client.predict(model["id"], [png(imgs[0])], exit=3)["exit"] == 3
        assert client.personalize(client_id="c_any", kind="anytime")["id"] == model["id"]


def test_kind_chooses_the_federation_and_fedclip_keeps_its_clients(srv, any_store):
    photo = srv.as_client["photo"]
    fedclip = _model(photo, "photo")  # both federations have photo: FedCLIP's, as before
    assert fedclip["kind"] == "fedclip" and fedclip.get("exits") is None
    anytime = _model(photo, "photo", kind="anytime")
    assert anytime["kind"] == "anytime" and anytime["default_exit"] == 3
    assert anytime["id"] != fedclip["id"]
    assert _model(photo, "photo", kind="fedclip")["id"] == fedclip["id"]
    glob = _model(srv.http, "global", kind="anytime")  # any key, the global model
    assert glob["method"] == "anytime-global" and glob["default_exit"] == 3
    assert [e["val_accuracy"] for e in glob["exits"]] == [0.35, 0.45, 0.55]
    imgs = images(6, seed=4)
    expected = load_anytime(any_store, None, device="cpu").logits(np.stack(imgs)).softmax(1)
    np.testing.assert_allclose(_probs(_predict(srv.http, glob, imgs)), expected.numpy(),
                               atol=1e-5)  # fmt: skip
    assert _model(srv.http, "global")["kind"] == "fedclip"  # unchanged default
    bad = photo.post("/v1/personalize", json={"classes": ["cat"], "kind": "anytime"})
    assert "client_id" in _problem(bad, 422)["detail"]


def test_bad_exits_are_422_and_single_output_models_refuse_them(srv):
    me = srv.as_client["c_any"]
    model, img = _model(me, "c_any"), images(1)
    for options in ({"exit": 0}, {"exit": -1}, {"exit": "two"}, {"max_layers": 0},
                    {"exit": 1.5}, {"exit": 10**9}):  # fmt: skip
        _problem(_predict(me, model, img, **options), 422)
    too_deep = _problem(_predict(me, model, img, exit=4), 422)
    assert too_deep["type"].endswith("invalid-exit") and "1..3" in too_deep["detail"]
    _problem(_predict(me, model, img, exit=1, max_layers=2), 422)
    files = [("files", ("a.png", png(img[0]), "image/png"))]
    for value in ("abc", "0", "²", "9" * 5000):
        _problem(me.post(model["predict_url"], files=files, data={"exit": value}), 422)
    fedclip = _model(srv.as_client["photo"], "photo")
    refused = _problem(_predict(srv.as_client["photo"], fedclip, img, exit=1), 422)
    assert refused["type"].endswith("exit-not-supported")
    taper = srv.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()
    _problem(_predict(srv.http, taper, img, max_layers=2), 422)
    plain = _predict(srv.http, taper, img)
    assert plain.status_code == 200 and plain.json()["exit"] is None


def test_a_client_key_reaches_only_its_own_anytime_model(srv):
    photo, other = srv.as_client["photo"], srv.as_client["c_any"]
    theirs = _problem(other.post("/v1/personalize",
                                 json={"client_id": "photo", "kind": "anytime"}), 404)
    nobody = _problem(other.post("/v1/personalize",
                                 json={"client_id": "c_nobody", "kind": "anytime"}), 404)
    assert theirs["type"] == nobody["type"] and set(theirs) == set(nobody)
    assert theirs["detail"].replace("photo", "X") == nobody["detail"].replace("c_nobody", "X")
    model = _model(photo, "photo", kind="anytime")
    for suffix in ("", "/weights", "/config"):
        _problem(other.get(f"/v1/models/{model['id']}{suffix}"), 404)
    _problem(_predict(other, model, images(1)), 404)
    _problem(srv.http.get(f"/v1/models/{model['id']}"), 404)  # a non-federated key
    assert srv.admin.get(f"/v1/models/{model['id']}").status_code == 200
    outsider = _problem(srv.http.post("/v1/personalize",
                                      json={"client_id": srv.client_id, "kind": "anytime"}), 404)
    assert outsider["type"].endswith("no-personal-model") and '"global"' in outsider["detail"]


def test_download_rebuilds_the_served_model_with_its_config(srv, any_store):
    me = srv.as_client["c_any"]
    model = _model(me, "c_any")
    resp = me.get(model["weights_url"])
    assert resp.status_code == 200, resp.text
    assert me.get(model["weights_url"]).content == resp.content  # deterministic bytes
    config = me.get(f"/v1/models/{model['id']}/config").json()
    assert config["architecture"] == "tailor-anytime-vit" and config["label_names"] == CLASSES
    assert config["pretrained_cfg"]["input_size"] == [3, 32, 32]
    t = config["tailor"]
    assert t["model_id"] == model["id"] and t["client_id"] == "c_any"
    assert t["default_exit"] == 2 and t["exits"] == model["exits"]
    path = any_store / "anytime-download.safetensors"
    path.write_bytes(resp.content)
    with safe_open(str(path), "pt") as f:
        meta = json.loads(f.metadata()["tailor"])
    assert meta == {**config, "tailor": {k: v for k, v in t.items()
                                         if k not in ("model_id", "weights_sha256")}}
    rebuilt = anytime_from_download(st_load(resp.content), config)
    assert any(k.startswith("visual.") for k in rebuilt.state_dict())  # self-contained
    imgs = images(5, seed=8)
    x = load_anytime(any_store, "c_any", device="cpu").backbone.preprocess(np.stack(imgs))
    for e in (1, 2):
        with torch.no_grad():
            expected = rebuilt(x, e).softmax(1).numpy()
        np.testing.assert_allclose(_probs(_predict(me, model, imgs, exit=e)), expected,
                                   atol=1e-5)  # fmt: skip
    half = me.get(model["weights_url"], params={"dtype": "fp16"})
    assert all(v.dtype == torch.float16 for v in st_load(half.content).values())
    _problem(me.get(model["weights_url"], params={"format": "onnx"}), 409)


def test_without_an_anytime_artifact_kind_anytime_is_a_clear_conflict(make_settings, run_live,
                                                                       tmp_path):  # fmt: skip
    with run_live(make_settings(f"sqlite:///{tmp_path / 'tailor.db'}")) as live:
        own = _problem(live.http.post("/v1/personalize", json={
            "client_id": live.client_id, "kind": "anytime"}), 409)  # fmt: skip
        assert own["type"].endswith("anytime-not-deployed")
        no_kind = _problem(live.http.post("/v1/personalize", json={"client_id": "global"}), 409)
        assert no_kind["type"].endswith("adapters-not-deployed")  # FedCLIP's answer, unchanged
