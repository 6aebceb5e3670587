"""FedPerfix models served by client ID (issue 16 §4), end to end under uvicorn: a tiny ViT
foundation and a ``perfix`` artifact (clients c_pf0, c_pf1) with random tensors, beside the
tiny TAPER artifact. Predictions are checked against the library and the downloaded weights."""

from __future__ import annotations

import httpx
import numpy as np
import pytest
import torch
from safetensors.torch import load as st_load
from service_testkit import b64, images, png

from model_store.perfix_artifact import open_perfix
from model_store.perfix_card import perfix_from_download

CLASSES = ["cat", "dog", "horse", "bird"]
CLIENTS = ("c_pf0", "c_pf1")
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def pf_store(taper_store, tmp_path_factory):
    from model_store.testing import make_tiny_perfix

    store = tmp_path_factory.mktemp("pfstore")
    (store / "taper").symlink_to(taper_store / "taper", target_is_directory=True)
    make_tiny_perfix(store, clients=CLIENTS, class_names=CLASSES, seed=2)
    return store


@pytest.fixture(scope="module")
def srv(pf_store, make_settings, redis_server, tmp_path_factory, run_live):
    url = f"sqlite:///{tmp_path_factory.mktemp('pf-db') / 'tailor.db'}"
    with run_live(make_settings(url, store_dir=pf_store, redis_url=redis_server.url)) as live:
        live.as_client = {}
        for c in CLIENTS:
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


def _probs(http, model: dict, imgs) -> np.ndarray:
    resp = http.post(model["predict_url"], json={"images": [b64(png(im)) for im in imgs],
                                                 "top_k": len(CLASSES)})  # fmt: skip
    assert resp.status_code == 200, resp.text
    assert resp.json()["exit"] is None
    return np.array([[{p["label"]: p["probability"] for p in r}[c] for c in CLASSES]
                     for r in resp.json()["predictions"]])  # fmt: skip


def test_each_client_gets_its_own_vit_and_predictions_match_the_library(srv, pf_store):
    fed, imgs = open_perfix(pf_store, device="cpu"), images(6, seed=1)
    seen = []
    for i, c in enumerate(CLIENTS):
        resp = srv.as_client[c].post("/v1/personalize", json={"client_id": c})
        assert resp.status_code == 200, resp.text
        model = resp.json()
        assert model["kind"] == "perfix" and model["method"] == "perfix-personalized"
        assert model["method_accuracy"] == pytest.approx(0.5 + 0.1 * i)
        expected = fed.classifier(c).logits(np.stack(imgs)).softmax(1).numpy()
        got = _probs(srv.as_client[c], model, imgs)
        np.testing.assert_allclose(got, expected, atol=1e-5)
        seen.append(got)
    assert not np.allclose(seen[0], seen[1], atol=1e-3)  # their own heads and prefixes
    again = srv.as_client["c_pf0"].post("/v1/personalize",
                                        json={"client_id": "c_pf0", "kind": "perfix"})
    assert again.json()["cache"] == "memory"


def test_isolation_no_global_model_and_no_exits(srv):
    me, other = srv.as_client["c_pf0"], srv.as_client["c_pf1"]
    theirs = _problem(me.post("/v1/personalize", json={"client_id": "c_pf1"}), 404)
    nobody = _problem(me.post("/v1/personalize", json={"client_id": "c_none"}), 404)
    assert theirs["type"] == nobody["type"] and set(theirs) == set(nobody)
    model = other.post("/v1/personalize", json={"client_id": "c_pf1"}).json()
    for suffix in ("", "/weights", "/config"):
        _problem(me.get(f"/v1/models/{model['id']}{suffix}"), 404)
    glob = _problem(me.post("/v1/personalize", json={"client_id": "global", "kind": "perfix"}),
                    404)  # fmt: skip
    assert glob["type"].endswith("no-global-model")
    one = {"images": [b64(png(images(1)[0]))], "exit": 1}
    assert _problem(other.post(model["predict_url"], json=one), 422)["type"].endswith(
        "exit-not-supported")


def test_download_loads_back_into_the_same_vit_with_the_same_logits(srv, pf_store):
    me = srv.as_client["c_pf1"]
    model = me.post("/v1/personalize", json={"client_id": "c_pf1"}).json()
    weights = me.get(model["weights_url"])
    assert weights.status_code == 200 and me.get(model["weights_url"]).content == weights.content
    config = me.get(f"/v1/models/{model['id']}/config").json()
    assert config["architecture"] == "tailor-perfix-vit" and config["label_names"] == CLASSES
    assert config["tailor"]["client_id"] == "c_pf1" and config["tailor"]["method"] == "fedperfix"
    rebuilt = perfix_from_download(st_load(weights.content), config)
    assert any(".attn.prefix." in k for k in rebuilt.state_dict())
    imgs = images(4, seed=6)
    x = open_perfix(pf_store, device="cpu").backbone.preprocess(np.stack(imgs))
    with torch.no_grad():
        expected = rebuilt(x).softmax(1).numpy()
    np.testing.assert_allclose(_probs(me, model, imgs), expected, atol=1e-5)
