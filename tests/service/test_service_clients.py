"""Client-ID personalization end to end: a tiny real FedCLIP artifact (2 clients) under uvicorn.

Real parts only: a tiny open_clip foundation bundle and adapters written by the artifact code,
real SQLite + Redis, real HTTP. Predictions are checked against ``model_store.load_fedclip`` and
against the downloaded weights run by hand on the backbone's features.
"""

from __future__ import annotations

import hashlib
import json
import secrets

import httpx
import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load as st_load
from service_testkit import images, png
from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from model_store.adapters import adapter_logits, build_adapter, load_fedclip
from model_store.artifacts import open_artifact
from model_store.clip import load_clip
from service.core import crud, db
from service.core.models import Artifact, Client

CLIENTS = ("photo", "sketch")
CLASSES = ["cat", "dog", "horse", "bird"]
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def fed_store(taper_store, tmp_path_factory):
    """The tiny TAPER artifact (linked, not copied) plus a tiny foundation + fedclip artifact."""
    from model_store.testing import make_tiny_fedclip

    store = tmp_path_factory.mktemp("fedstore")
    (store / "taper").symlink_to(taper_store / "taper", target_is_directory=True)
    make_tiny_fedclip(store, clients=CLIENTS, class_names=CLASSES, seed=0)
    return store


@pytest.fixture(scope="module")
def fed(fed_store, make_settings, redis_server, tmp_path_factory, run_live):
    """One app over the federated store, with keys for both federated clients."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fed-db') / 'tailor.db'}"
    with run_live(make_settings(url, store_dir=fed_store, redis_url=redis_server.url)) as live:
        live.as_client = {
            c: httpx.Client(base_url=live.url, timeout=60,
                            headers={"Authorization": f"Bearer {_client(live, c)}"})
            for c in CLIENTS
        }  # fmt: skip
        yield live
        for c in live.as_client.values():
            c.close()


def _client(live, client_id: str) -> str:
    made = live.admin.post("/v1/keys", json={"client_id": client_id})
    assert made.status_code == 201, made.text
    assert made.json()["client_id"] == client_id
    return made.json()["key"]


def _problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith(PROBLEM)
    return resp.json()


def _same_problem(a: dict, b: dict, a_id: str, b_id: str) -> None:
    """Two 404s that differ only in the id they echo (so existence does not leak)."""
    assert a["type"] == b["type"] and a["title"] == b["title"] and a["status"] == b["status"]
    assert a["detail"].replace(a_id, "ID") == b["detail"].replace(b_id, "ID")
    assert set(a) == set(b)


def _personalize(http, client_id: str):
    return http.post("/v1/personalize", json={"client_id": client_id})


def _predict(http, model: dict, imgs) -> list[list[dict]]:
    files = [("files", (f"{i}.png", png(im), "image/png")) for i, im in enumerate(imgs)]
    resp = http.post(model["predict_url"], files=files, data={"top_k": str(len(CLASSES))})
    assert resp.status_code == 200, resp.text
    return resp.json()["predictions"]


def test_personalize_by_client_id_then_predict_matches_the_library(fed, fed_store):
    photo = fed.as_client["photo"]
    model = _personalize(photo, "photo").json()
    assert model["kind"] == "fedclip" and model["method"] == "fedclip-personalized"
    assert model["classes"] == CLASSES and model["mixers"] is None and model["domain"] is None
    assert model["method_accuracy"] == 0.6 and model["cache"] in ("artifact", "memory")
    again = _personalize(photo, "photo").json()
    assert again["id"] == model["id"] and again["cache"] == "memory"
    by_admin = _personalize(fed.admin, "photo").json()  # the admin gets its own row
    assert by_admin["id"] != model["id"] and by_admin["cache"] == "memory"  # same adapter
    assert fed.admin.get(f"/v1/models/{model['id']}").status_code == 200  # and reads every row
    assert photo.get(f"/v1/models/{model['id']}").json()["method"] == "fedclip-personalized"

    imgs = images(12, seed=5)
    served = _predict(photo, model, imgs)
    expected = load_fedclip(fed_store, "photo", device="cpu").logits(np.stack(imgs)).softmax(1)
    for probs, preds in zip(expected, served, strict=True):
        assert preds[0]["label"] == CLASSES[int(probs.argmax())]
        by_label = {p["label"]: p["probability"] for p in preds}
        assert np.allclose([by_label[c] for c in CLASSES], probs.numpy(), atol=1e-5)
    sketch_model = _personalize(fed.as_client["sketch"], "sketch").json()
    assert sketch_model["id"] != model["id"] and sketch_model["method_accuracy"] == 0.7
    other = _predict(fed.as_client["sketch"], sketch_model, imgs)
    assert [p[0]["label"] for p in other] != [p[0]["label"] for p in served]  # own adapter
    _problem(photo.post(f"{model['predict_url'].rsplit('/', 1)[0]}/refine",
                        files=[("files", ("a.png", png(imgs[0])))]), 409)  # fmt: skip


def test_other_clients_adapters_and_models_look_like_they_do_not_exist(fed):
    photo_model = _personalize(fed.as_client["photo"], "photo").json()
    sketch = fed.as_client["sketch"]
    other = _problem(_personalize(sketch, "photo"), 404)
    unknown = _problem(_personalize(sketch, "c_nobody"), 404)
    _same_problem(other, unknown, "photo", "c_nobody")
    missing_id = "0" * 32
    for suffix in ("", "/weights"):
        theirs = _problem(sketch.get(f"/v1/models/{photo_model['id']}{suffix}"), 404)
        nobody = _problem(sketch.get(f"/v1/models/{missing_id}{suffix}"), 404)
        _same_problem(theirs, nobody, photo_model["id"], missing_id)
    files = [("files", ("a.png", png(images(1)[0])))]
    _problem(sketch.post(photo_model["predict_url"], files=files), 404)
    _problem(fed.http.get(f"/v1/models/{photo_model['id']}"), 404)  # a non-federated key
    assert fed.admin.get(f"/v1/models/{photo_model['id']}").status_code == 200
    assert _problem(fed.admin.post("/v1/personalize", json={"client_id": "c_nobody"}),
                    404)["type"].endswith("client-not-found")  # fmt: skip
    bad = fed.as_client["photo"].post("/v1/personalize",
                                      json={"client_id": "photo", "method": "taper"})
    assert "client_id" in _problem(bad, 422)["detail"]


def test_global_adapter_for_any_key_and_no_personal_adapter_points_to_it(fed, fed_store):
    outsider = _problem(_personalize(fed.http, fed.client_id), 404)  # not a federation client
    assert outsider["type"].endswith("no-personal-adapter") and '"global"' in outsider["detail"]
    models = [_personalize(h, "global").json() for h in (fed.http, fed.as_client["sketch"])]
    assert models[0]["id"] != models[1]["id"]  # each key's client owns its own row
    assert {m["method"] for m in models} == {"fedclip-global"}
    assert models[0]["method_accuracy"] == 0.4
    assert fed.as_client["photo"].get(f"/v1/models/{models[0]['id']}").status_code == 404
    imgs = images(6, seed=2)
    served = _predict(fed.http, models[0], imgs)
    expected = load_fedclip(fed_store, None, device="cpu").logits(np.stack(imgs)).argmax(1)
    assert [p[0]["label"] for p in served] == [CLASSES[int(i)] for i in expected]


def test_weights_download_runs_on_the_backbone_and_reproduces_predictions(fed, fed_store):
    photo = fed.as_client["photo"]
    model = _personalize(photo, "photo").json()
    resp = photo.get(model["weights_url"])
    assert resp.status_code == 200, resp.text
    etag = resp.headers["etag"]
    assert etag == f'"{hashlib.sha256(resp.content).hexdigest()}"'
    assert photo.get(f"/v1/models/{model['id']}").json()["weights_sha256"] == etag.strip('"')
    assert photo.get(model["weights_url"], headers={"If-None-Match": etag}).status_code == 304
    assert photo.get(model["weights_url"]).content == resp.content  # deterministic bytes

    tensors = st_load(resp.content)
    path = fed_store / "w.safetensors"
    path.write_bytes(resp.content)
    with safe_open(str(path), "pt") as f:
        meta = json.loads(f.metadata()["tailor"])
    assert meta["classes"] == CLASSES and meta["adapter_id"] == "photo"
    config = photo.get(f"/v1/models/{model['id']}/config").json()  # the same facts, config.json
    assert config["label_names"] == CLASSES and config["num_classes"] == len(CLASSES)
    assert {k: v for k, v in config["tailor"].items()
            if k not in ("kind", "model_id", "weights_sha256")} == \
        {k: v for k, v in meta.items() if k != "classes"}  # fmt: skip
    assert config["tailor"]["model_id"] == model["id"] and config["tailor"]["kind"] == "fedclip"
    adapter = build_adapter(meta["adapter"])
    adapter.load_state_dict({k.removeprefix("adapter."): v for k, v in tensors.items()
                             if k.startswith("adapter.")})  # fmt: skip
    foundation = open_artifact(fed_store, "foundation", meta["backbone"]["version"])
    backbone = load_clip(f"local-dir:{foundation.path}", device="cpu")
    assert backbone.fingerprint == meta["backbone"]["sha256"]
    imgs = images(10, seed=9)
    feats = torch.from_numpy(backbone.encode_images(np.stack(imgs)))
    with torch.no_grad():
        logits = adapter_logits(adapter.eval(), feats, tensors["text_features"],
                                meta["logit_scale"])  # fmt: skip
    served = _predict(photo, model, imgs)
    assert [p[0]["label"] for p in served] == [CLASSES[int(i)] for i in logits.argmax(1)]

    half = photo.get(model["weights_url"], params={"dtype": "fp16"})
    assert st_load(half.content)["text_features"].dtype == torch.float16
    assert _problem(photo.get(model["weights_url"], params={"format": "onnx"}), 409)


def test_clients_registered_in_sql_idempotently_across_restarts(fed_store, make_settings,
                                                               run_live, tmp_path):  # fmt: skip
    url = f"sqlite:///{tmp_path / 'tailor.db'}"
    engine = db.prepare_database(url, migrate=True)
    sessions = sessionmaker(engine, expire_on_commit=False)
    with sessions.begin() as s:  # an operator created "sketch" by hand before the federation
        crud.create_client(s, name="sketch hospital", client_id="sketch")
    settings = make_settings(url, store_dir=fed_store)
    with run_live(settings) as live:
        key = _client(live, "photo")
        with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {key}"}) as photo:
            model = _personalize(photo, "photo").json()
    with run_live(settings) as live:  # restart: nothing duplicated, nothing overwritten
        with sessions() as s:
            names = {c.id: c.name for c in s.scalars(select(Client))}
            fedclip = s.scalars(select(Artifact).where(Artifact.kind == "fedclip")).all()
        assert names["photo"] == "federated client photo" and names["sketch"] == "sketch hospital"
        assert len(fedclip) == 1
        with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {key}"}) as photo:
            assert _personalize(photo, "photo").json()["id"] == model["id"]
            assert len(_predict(photo, model, images(2))) == 2
    engine.dispose()


def test_without_an_adapter_artifact_client_ids_get_a_clear_conflict(make_settings, run_live,
                                                                     tmp_path):  # fmt: skip
    with run_live(make_settings(f"sqlite:///{tmp_path / 'tailor.db'}")) as live:
        own = _problem(_personalize(live.http, live.client_id), 409)
        assert own["type"].endswith("adapters-not-deployed") and "description" in own["detail"]
        _problem(_personalize(live.http, "global"), 409)
        _problem(_personalize(live.http, "photo"), 404)  # someone else's id: still 404


def test_federation_registration_on_postgres_is_idempotent(fed_store, make_settings,
                                                           postgres_server):  # fmt: skip
    from service.kinds.fedclip import Federation

    url = postgres_server.create_database(f"t_{secrets.token_hex(6)}")
    engine = db.prepare_database(url, migrate=True)
    sessions = sessionmaker(engine, expire_on_commit=False)
    fed = Federation.load(make_settings(url, store_dir=fed_store), torch.device("cpu"))
    assert fed is not None and fed.clients == list(CLIENTS)
    with sessions.begin() as s:
        assert fed.register(s) == 2
    with sessions.begin() as s:
        assert fed.register(s) == 0
    with sessions() as s:
        assert sorted(c.id for c in s.scalars(select(Client))) == list(CLIENTS)
        assert len(s.scalars(select(Artifact).where(Artifact.kind == "fedclip")).all()) == 1
    engine.dispose()


def test_an_explicitly_named_missing_adapter_version_fails_start_up(fed_store, make_settings):
    from model_store.artifacts import ArtifactNotFoundError
    from service.kinds.fedclip import Federation

    settings = make_settings("sqlite://", store_dir=fed_store,
                             fedclip_version="20990101T000000-deadbeef")  # fmt: skip
    with pytest.raises(ArtifactNotFoundError, match="20990101T000000-deadbeef"):
        Federation.load(settings, torch.device("cpu"))
