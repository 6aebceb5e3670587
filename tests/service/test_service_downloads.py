"""Downloads that describe themselves (issue 12 §3): safetensors ``__metadata__``, ``config.json``,
``tailor download`` and the README's app, one-shot ``POST /v1/predict``. Real uvicorn + Redis.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
from safetensors import safe_open
from service_testkit import b64, images, png
from typer.testing import CliRunner

from tailor.appcli import app as http_app

README = Path(__file__).resolve().parents[2] / "README.md"
CLASSES = ["dog", "bird", "horse"]  # not alphabetical: the order is the model's output order


def _other_client(live) -> httpx.Client:
    made = live.admin.post("/v1/keys", json={"name": "other"}).json()
    return httpx.Client(base_url=live.url, timeout=60,
                        headers={"Authorization": f"Bearer {made['key']}"})  # fmt: skip


def test_safetensors_metadata_reads_back_and_bytes_are_the_recipes(live, tmp_path):
    mine = live.http.post("/v1/personalize", json={"classes": CLASSES}).json()
    with _other_client(live) as other:
        theirs = other.post("/v1/personalize", json={"classes": CLASSES}).json()
        their_bytes = other.get(f"/v1/models/{theirs['id']}/weights").content
    assert mine["id"] != theirs["id"]
    resp = live.http.get(f"/v1/models/{mine['id']}/weights")
    assert resp.content == their_bytes, "same recipe, same bytes (shared cache, same ETag)"
    path = tmp_path / "m.safetensors"
    path.write_bytes(resp.content)
    with safe_open(str(path), "pt") as f:
        meta = f.metadata()
        assert "fc.weight" in f.keys()
    assert json.loads(meta["label_names"]) == CLASSES and meta["num_classes"] == "3"
    assert meta["architecture"] == "torchvision.models.resnet18" and meta["image_size"] == "32"
    assert json.loads(meta["mean"]) == [0.485, 0.456, 0.406] and meta["interpolation"] == "bilinear"
    assert meta["method"] == mine["method"] and meta["artifact_version"] == mine["artifact_version"]
    assert meta["dtype"] == "fp32" and "crop" in meta
    recorded = live.http.get(f"/v1/models/{mine['id']}").json()["weights_sha256"]
    assert resp.headers["etag"] == f'"{recorded}"'
    half = live.http.get(f"/v1/models/{mine['id']}/weights", params={"dtype": "fp16"})
    (tmp_path / "h.safetensors").write_bytes(half.content)
    with safe_open(str(tmp_path / "h.safetensors"), "pt") as f:
        assert f.metadata()["dtype"] == "fp16" and f.get_tensor("fc.weight").dtype.itemsize == 2


def test_config_json_follows_the_timm_convention_and_stays_private(live):
    model = live.http.post("/v1/personalize", json={"classes": CLASSES, "domain": "sketch"}).json()
    cfg = live.http.get(f"/v1/models/{model['id']}/config").json()
    assert cfg["architecture"] == "resnet18" and cfg["num_classes"] == 3
    assert cfg["label_names"] == CLASSES and cfg["num_features"] == 512
    pre = cfg["pretrained_cfg"]
    assert pre["input_size"] == [3, 32, 32] and pre["interpolation"] == "bilinear"
    assert pre["mean"] == [0.485, 0.456, 0.406] and pre["std"] == [0.229, 0.224, 0.225]
    assert pre["crop_pct"] == 1.0 and pre["classifier"] == "fc"
    assert cfg["tailor"]["model_id"] == model["id"] and cfg["tailor"]["domain"] == "sketch"
    with _other_client(live) as other:
        assert other.get(f"/v1/models/{model['id']}/config").status_code == 404


def _readme_app() -> str:
    block = re.search(r"```python\n(# app\.py.*?)```", README.read_text(), re.S)
    assert block, "README lost its app"
    code = block.group(1)
    assert len(code.strip().splitlines()) <= 11
    return code


def test_tailor_download_then_the_readme_app_agrees_with_predict(live, tmp_path):
    model = live.http.post("/v1/personalize", json={"classes": CLASSES}).json()
    out = tmp_path / "mymodel"
    result = CliRunner().invoke(http_app, ["download", model["id"], "--out", str(out),
                                           "--url", live.url, "--key", live.key])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["config"].endswith("config.json")
    assert {p.name for p in out.iterdir()} == {"model.safetensors", "config.json"}
    app = tmp_path / "app.py"
    app.write_text(_readme_app())
    rng = np.random.default_rng(21)  # non-square photos: the app must crop like /predict
    shapes = [(48, 48), (40, 75), (90, 33), (64, 50)]
    for i, (h, w) in enumerate(shapes):
        im = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        photo = tmp_path / f"p{i}.png"
        photo.write_bytes(png(im))
        ran = subprocess.run([sys.executable, str(app), str(out), str(photo)], check=True,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        files = [("files", (photo.name, photo.read_bytes()))]
        served = live.http.post(f"/v1/models/{model['id']}/predict", files=files).json()
        assert ran.stdout.strip() == served["predictions"][0][0]["label"]
    missing = CliRunner().invoke(http_app, ["download", "0" * 32, "--out", str(tmp_path / "x"),
                                            "--url", live.url, "--key", live.key])  # fmt: skip
    assert missing.exit_code == 1 and "not-found" in missing.output


def test_one_shot_predict_personalizes_and_classifies_in_one_call(live):
    shots = [b64(png(im)) for im in images(3, seed=5)]
    once = live.http.post("/v1/predict", json={"classes": CLASSES, "images": shots, "top_k": 2})
    assert once.status_code == 200, once.text
    body = once.json()
    made = live.http.post("/v1/personalize", json={"classes": CLASSES}).json()
    assert body["model_id"] == made["id"] == body["model"]["id"]
    assert body["model"]["cache"] in {"memory", "redis", "synthesized"}
    again = live.http.post(f"/v1/models/{made['id']}/predict", json={"images": shots, "top_k": 2})
    assert body["predictions"] == again.json()["predictions"]
    described = live.http.post("/v1/predict", json={"description": "classify cats and dogs",
                                                   "images": shots[:1]})  # fmt: skip
    assert described.status_code == 200 and described.json()["model"]["classes"] == ["cat", "dog"]
    for bad, status in (({"classes": CLASSES}, 422), ({"images": shots}, 422),
                        ({"classes": CLASSES, "images": ["%%%"]}, 400),
                        ({"classes": ["zzqx-unknown"], "images": shots}, 422)):  # fmt: skip
        resp = live.http.post("/v1/predict", json=bad)
        assert resp.status_code == status, (bad, resp.text)
        assert resp.headers["content-type"].startswith("application/problem+json")
    anonymous = live.anon.post("/v1/predict", json={"classes": CLASSES, "images": shots})
    assert anonymous.status_code == 401
