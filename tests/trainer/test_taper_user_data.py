"""``tailor train taper --data PATH --catalogue FILE`` (issue 14 §1): a user's image tree with
class definitions trains a servable artifact; bad input fails naming the file or class and
leaves the store untouched."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
from PIL import Image

from model_store.taper import load_taper
from trainer.taper.train import main

CLASSES = ("red_apple", "banana", "lime", "plum", "orange", "blueberry")
COLOURS = ((200, 30, 30), (230, 220, 40), (60, 200, 40), (110, 30, 120), (240, 140, 20),
           (40, 60, 200))
CATALOGUE = """
classes:
  red_apple:
    name: apple
    definition: A round fruit with red skin and crisp white flesh.
    aliases: [pippin, crab apple]
  banana: {definition: A long curved fruit with a yellow peel., aliases: [plantain]}
  lime: {definition: A small sour green citrus fruit.}
  plum:
    definition: A small purple stone fruit with juicy flesh.
    descriptions: [dried it becomes a prune]
  orange: {definition: A round citrus fruit with a thick orange rind.}
  blueberry: {definition: A tiny round blue berry that grows on shrubs.}
domains:
  sketch: pencil drawings of fruit on paper
subgroups:
  citrus: [lime, orange]
"""


def _tree(root, per_cell: int = 14):
    """6 classes x 2 domains, PNG and JPEG of mixed non-square sizes, one corrupt file."""
    rng = np.random.default_rng(0)
    for d, domain in enumerate(("studio", "sketch")):
        for name, colour in zip(CLASSES, COLOURS, strict=True):
            folder = root / domain / name
            folder.mkdir(parents=True)
            for i in range(per_cell):
                w, h = int(rng.integers(30, 90)), int(rng.integers(30, 90))
                img = np.clip(np.array(colour) * (0.6 + 0.4 * rng.random((h, w, 1)))
                              + (rng.normal(0, 40, (h, w, 3)) if d else 0), 0, 255)
                ext = ".png" if i % 2 else ".jpg"
                Image.fromarray(img.astype(np.uint8)).save(folder / f"{i}{ext}")
    (root / "studio" / "plum" / "broken.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    return root


def _run(tmp_path, *extra: str) -> dict:
    return main(["--config", "tiny", "--data", str(tmp_path / "fruit"), "--store-dir",
                 str(tmp_path / "store"), "--out", str(tmp_path / "run"), "--groups", "2",
                 *extra])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("user")
    _tree(tmp / "fruit")
    (tmp / "fruit.yaml").write_text(CATALOGUE)
    summary = _run(tmp, "--catalogue", str(tmp / "fruit.yaml"), "--bad-images", "skip",
                   "--image-size", "48")
    return tmp, summary


def test_the_artifact_carries_the_users_catalogue(trained):
    tmp, summary = trained
    bundle = load_taper(tmp / "store", device="cpu")
    assert bundle.version == summary["artifact"]["version"]
    cat = bundle.catalogue
    names = [c["name"] for c in cat["classes"]]
    assert set(names) == {"apple", "banana", "lime", "plum", "orange", "blueberry"}
    apple = cat["classes"][names.index("apple")]
    assert apple["definition"].startswith("A round fruit") and "pippin" in apple["aliases"]
    assert cat["classes"][names.index("plum")]["descriptions"] == ["dried it becomes a prune"]
    assert cat["domains"] == ["sketch", "studio"]
    assert cat["domain_descriptions"]["sketch"] == "pencil drawings of fruit on paper"
    assert cat["subgroups"] == {"citrus": ["lime", "orange"]}
    assert len(cat["groups"]) == 2 and {c["group"] for c in cat["classes"]} == set(cat["groups"])
    assert bundle.class_text["domain_prompts"].shape[:3] == (2, 6, 4)
    assert bundle.domain_head is not None and bundle.domain_head["weight"].shape == (2, 512)
    assert bundle.config["image_size"] == 48 and bundle.manifest["training"]["image_size"] == 48


@contextlib.contextmanager
def _client(tmp, db: str, **settings_fields):
    """A TestClient of the service over the trained store, with a fresh key."""
    from fastapi.testclient import TestClient

    from service.core.settings import Settings
    from service.main import create_app

    admin = "tests-admin-Qm7vX2pL9sK4wR8nT3yZ6bH1"
    settings = Settings(store_dir=tmp / "store", database_url=f"sqlite:///{tmp}/{db}",
                        admin_key=admin, device="cpu", **settings_fields)
    with TestClient(create_app(settings)) as client:
        key = client.post("/v1/keys", json={"name": "u"},
                          headers={"Authorization": f"Bearer {admin}"}).json()["key"]
        client.headers["Authorization"] = f"Bearer {key}"
        yield client


@pytest.fixture(scope="module")
def client(trained):
    with _client(trained[0], "t.db") as client:
        yield client


def test_the_service_resolves_the_users_aliases_and_definitions(client):
    made = client.post("/v1/personalize", json={"description": "pippins, plantains and "
                                                "limes in sketches"})
    assert made.status_code == 200, made.text
    assert made.json()["classes"] == ["apple", "banana", "lime"]
    assert made.json()["domain"] == "sketch"
    described = client.post("/v1/personalize", json={"classes": [
        "the fruit that is dried into prunes", "banana", "lime"]})  # the file's descriptions
    assert described.status_code == 200, described.text
    assert described.json()["classes"] == ["plum", "banana", "lime"]
    grouped = client.post("/v1/personalize", json={"description": "citrus only, in sketches"})
    assert grouped.status_code == 200, grouped.text  # the file's sub-group, spelt out
    assert grouped.json()["classes"] == ["lime", "orange"]


def test_the_described_threshold_setting_reaches_the_service(trained):
    """TAILOR_MATCH_DESCRIBED_THRESHOLD governs definitions, not names: at 0.99 the file's
    description no longer resolves, while aliases still do."""
    with _client(trained[0], "strict.db", match_described_threshold=0.99) as strict:
        refused = strict.post("/v1/personalize", json={"classes": [
            "the fruit that is dried into prunes", "banana", "lime"]})
        assert refused.status_code == 422, refused.text
        named = strict.post("/v1/personalize", json={"description": "pippins and plantains"})
        assert named.status_code == 200, named.text


def test_non_square_photos_give_the_same_answer_through_predict_onnx_and_torchvision(
        client, tmp_path):
    """One preprocessing at the artifact's 48 px: /predict = the ONNX file = stock torchvision
    with the documented steps (shorter side, centre crop), on photos of odd shapes."""
    import io

    import onnxruntime as ort
    import torch
    import torchvision
    from safetensors.torch import load
    from torchvision import transforms as T

    made = client.post("/v1/personalize", json={"classes": ["plum", "lime", "orange"]}).json()
    url = f"/v1/models/{made['id']}"
    cfg = client.get(f"{url}/config").json()
    pre = cfg["pretrained_cfg"]
    assert pre["input_size"] == [3, 48, 48] and pre["crop_mode"] == "center"
    model = torchvision.models.resnet18(num_classes=3).eval()
    model.load_state_dict(load(client.get(f"{url}/weights").content))
    graph = ort.InferenceSession(client.get(f"{url}/weights", params={"format": "onnx"}).content)
    prep = T.Compose([T.Resize(48, interpolation=T.InterpolationMode.BILINEAR),
                      T.CenterCrop(48), T.ToTensor(), T.Normalize(pre["mean"], pre["std"])])
    rng = np.random.default_rng(3)
    for h, w in ((37, 90), (120, 61), (48, 48), (300, 200)):
        photo = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
        buf = io.BytesIO()
        photo.save(buf, format="PNG")
        served = client.post(f"{url}/predict", files=[("files", ("p.png", buf.getvalue()))],
                             data={"top_k": "3"}).json()["predictions"][0]
        x = prep(photo)[None]
        with torch.no_grad():
            ref = model(x).softmax(1)[0]
        onnx = torch.from_numpy(graph.run(None, {"images": x.numpy()})[0]).softmax(1)[0]
        torch.testing.assert_close(onnx, ref, atol=1e-4, rtol=0)
        by_label = {p["label"]: p["probability"] for p in served}
        mine = torch.tensor([by_label[n] for n in cfg["label_names"]])
        torch.testing.assert_close(mine, ref, atol=1e-4, rtol=0)
        assert served[0]["label"] == cfg["label_names"][int(ref.argmax())]


def test_bad_input_names_the_file_or_class_and_leaves_the_store_alone(trained, tmp_path):
    tmp, _ = trained
    before = sorted(p.name for p in (tmp / "store" / "taper").iterdir())
    with pytest.raises(ValueError, match="broken.jpg"):  # --bad-images fail is the default
        main(["--config", "tiny", "--data", str(tmp / "fruit"), "--store-dir",
              str(tmp / "store"), "--out", str(tmp_path / "run")])
    (tmp_path / "extra.json").write_text(json.dumps({"classes": {"kiwi": {}}}))
    with pytest.raises(ValueError, match="kiwi"):
        main(["--config", "tiny", "--data", str(tmp / "fruit"), "--catalogue",
              str(tmp_path / "extra.json"), "--bad-images", "skip", "--store-dir",
              str(tmp / "store"), "--out", str(tmp_path / "run2")])
    dup = tmp_path / "dup.yaml"
    dup.write_text("classes:\n  lime: {name: banana}\n")
    with pytest.raises(ValueError, match="banana"):
        main(["--config", "tiny", "--data", str(tmp / "fruit"), "--catalogue", str(dup),
              "--bad-images", "skip", "--store-dir", str(tmp / "store"), "--out",
              str(tmp_path / "run3")])
    (tmp_path / "sub.json").write_text(json.dumps({"subgroups": {"stone": ["plum", "kiwi"]}}))
    with pytest.raises(ValueError, match="stone"):  # a sub-group of a class with no folder
        main(["--config", "tiny", "--data", str(tmp / "fruit"), "--catalogue",
              str(tmp_path / "sub.json"), "--bad-images", "skip", "--store-dir",
              str(tmp / "store"), "--out", str(tmp_path / "run4")])
    with pytest.raises(SystemExit, match="plain_prob"):  # no Tailor-PACS sources to swap in
        main(["--config", "tiny", "--data", str(tmp / "fruit"), "--set", "plain_prob=0.2",
              "--bad-images", "skip", "--store-dir", str(tmp / "store"), "--out",
              str(tmp_path / "run4")])
    assert sorted(p.name for p in (tmp / "store" / "taper").iterdir()) == before
