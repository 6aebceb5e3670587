"""TAPER artifact: save/load round trip, personalize (taper and selection), validation, tamper."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torchvision.models import resnet18

from model_store.artifacts import ArtifactIntegrityError, open_artifact
from model_store.mixer import MixerPredictor
from model_store.synthesis import synthesize
from model_store.taper import load_taper, save_taper
from model_store.testing import make_tiny_taper, random_resnet_state, tiny_catalogue

TASK = [4, 0, 2]


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory):
    store = tmp_path_factory.mktemp("store")
    make_tiny_taper(store, num_classes=6, Q=3, seed=0, use_encoder=False)
    return store


@pytest.fixture(scope="module")
def bundle(tiny_store):
    return load_taper(tiny_store, device="cpu")


def test_layout_and_config(tiny_store, bundle):
    art = open_artifact(tiny_store, "taper")
    names = set(art.manifest["files"])
    assert names == {"bases.safetensors", "generic.safetensors", "mixer.safetensors",
                     "class_text.safetensors", "catalogue.json", "config.json"}  # fmt: skip
    assert "3.conv1.weight" not in art.tensors("bases") and "2.fc.bias" in art.tensors("bases")
    cfg = bundle.config
    assert (cfg["arch"], cfg["num_classes"], cfg["num_bases"], cfg["num_blocks"]) == (
        "resnet18", 6, 3, 4)  # fmt: skip
    assert cfg["embed_dim"] == 384 and cfg["image_size"] == 32 and cfg["mixer"]["num_bases"] == 3
    assert bundle.bases["layer1.0.conv1.weight"].shape == (3, 64, 64, 3, 3)
    assert bundle.class_names == ["cat", "zero", "sneaker", "dog", "one", "trouser"]
    assert bundle.domains == ["photo", "art_painting", "cartoon", "sketch"]
    assert bundle.default_method == "taper" and bundle.metrics["selection"]["acc"] == 0.4
    assert not bundle.mixer.training


def test_same_seed_same_artifact_different_seed_differs(tmp_path, bundle):
    make_tiny_taper(tmp_path / "a", num_classes=6, Q=3, seed=0, use_encoder=False)
    make_tiny_taper(tmp_path / "b", num_classes=6, Q=3, seed=1, use_encoder=False)
    same, other = load_taper(tmp_path / "a", device="cpu"), load_taper(tmp_path / "b", device="cpu")
    for key in ("conv1.weight", "layer3.0.bn1.running_var", "fc.bias"):
        assert torch.equal(same.bases[key], bundle.bases[key])
        assert not torch.equal(other.bases[key], bundle.bases[key])
    assert not torch.equal(bundle.bases["conv1.weight"][0], bundle.bases["conv1.weight"][1])


def test_personalize_taper_matches_synthesis_and_loads_into_torchvision(bundle):
    state, mixers = bundle.personalize(TASK)
    assert mixers.shape == (4, 3)
    torch.testing.assert_close(mixers.sum(-1), torch.ones(4))
    emb = bundle.task_embedding(TASK)
    torch.testing.assert_close(mixers, bundle.mixers_for(emb))
    bases = [{k: v[q] for k, v in bundle.bases.items()} for q in range(3)]
    expected = synthesize(bases, mixers, TASK)
    for key in expected:
        torch.testing.assert_close(state[key], expected[key])
    model = resnet18(num_classes=len(TASK))
    model.load_state_dict(state, strict=True)
    assert model.eval()(torch.zeros(1, 3, 32, 32)).shape == (1, 3)


def test_task_embedding_uses_prompts_and_domains(bundle):
    prompts = bundle.class_text["prompts"]
    unit = prompts.mean(1)[TASK].mean(0)
    np.testing.assert_allclose(
        bundle.task_embedding(TASK), (unit / unit.norm()).numpy(), rtol=1e-5, atol=1e-6
    )
    sketch = bundle.task_embedding(TASK, domain="sketch")
    assert np.linalg.norm(sketch) == pytest.approx(1.0, rel=1e-5)
    assert not np.allclose(sketch, bundle.task_embedding(TASK))
    assert not torch.allclose(bundle.personalize(TASK, "sketch")[1], bundle.personalize(TASK)[1])
    with pytest.raises(ValueError, match="unknown domain"):
        bundle.task_embedding(TASK, domain="watercolour")
    with pytest.raises(ValueError, match="within"):
        bundle.task_embedding([6])


def test_selection_method_is_the_generic_model_with_task_rows(bundle):
    state, mixers = bundle.personalize(TASK, method="selection")
    assert mixers is None
    assert torch.equal(state["fc.weight"], bundle.generic["fc.weight"][TASK])
    assert torch.equal(state["layer2.1.conv2.weight"], bundle.generic["layer2.1.conv2.weight"])
    resnet18(num_classes=3).load_state_dict(state, strict=True)
    with pytest.raises(ValueError, match="method"):
        bundle.personalize(TASK, method="average")
    with pytest.raises(ValueError, match="unknown domain"):
        bundle.personalize(TASK, domain="watercolour", method="selection")


def test_embedding_override_and_explicit_mixers(bundle):
    emb = bundle.task_embedding([1, 5])
    state, mixers = bundle.personalize(TASK, embedding=emb)
    torch.testing.assert_close(mixers, bundle.mixers_for(emb))
    torch.testing.assert_close(mixers, bundle.mixers_for(torch.from_numpy(emb)))
    again = bundle.synthesize_from_mixers(mixers, TASK)
    assert all(torch.equal(state[k], again[k]) for k in state)
    with pytest.raises(ValueError, match="embedding must have shape"):
        bundle.mixers_for(np.ones(5, np.float32))


def test_tampered_bases_are_refused(tmp_path):
    ref = make_tiny_taper(tmp_path, num_classes=3, Q=2, seed=3, use_encoder=False)
    path = ref.path / "bases.safetensors"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ArtifactIntegrityError, match="bases.safetensors"):
        load_taper(tmp_path, device="cpu")


def _parts(n=4, q=2):
    gen = torch.Generator().manual_seed(0)
    with torch.random.fork_rng(devices=[]):
        bases = [random_resnet_state(n, gen) for _ in range(q)]
        generic = random_resnet_state(n, gen)
    mixer = MixerPredictor(8, q, hidden=8)
    text = {"prompts": torch.ones(n, 2, 8) / 8**0.5, "names": torch.ones(n, 8) / 8**0.5}
    return dict(bases=bases, generic=generic, mixer_state=mixer.state_dict(),
                mixer_cfg=mixer.config, catalogue=tiny_catalogue(n), class_text=text)  # fmt: skip


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda p: p.update(catalogue=tiny_catalogue(3)), "ResNet-18|classifier"),
        (lambda p: p.update(mixer_cfg={**p["mixer_cfg"], "num_bases": 3}), "size mismatch|fit"),
        (lambda p: p["class_text"].update(names=torch.ones(4, 7)), "class_text"),
        (lambda p: p["class_text"].update(domain_prompts=torch.ones(2, 4, 2, 8)), "domain_prompts"),
        (lambda p: p.update(config={"num_bases": 5}), "contradict"),
        (lambda p: p["generic"].pop("fc.bias"), "generic"),
        (lambda p: p.update(catalogue=[{"name": "a"}, {"name": "a"}]), "unique"),
    ],
)
def test_save_taper_validates_inputs(tmp_path, change, match):
    parts = _parts()
    change(parts)
    with pytest.raises((ValueError, RuntimeError), match=match):
        save_taper(tmp_path, **parts)
    assert not (tmp_path / "taper").exists() or not any((tmp_path / "taper").iterdir())


def test_save_taper_accepts_stacked_bases_and_definitions(tmp_path):
    parts = _parts()
    parts["bases"] = {k: torch.stack([b[k] for b in parts["bases"]]) for k in parts["generic"]}
    parts["class_text"]["definitions"] = torch.ones(4, 8) / 8**0.5
    save_taper(tmp_path, **parts, metrics={"default_method": "selection"}, metadata={"data": "x"})
    loaded = load_taper(tmp_path, device="cpu")
    assert loaded.default_method == "selection" and "definitions" in loaded.class_text
    assert open_artifact(tmp_path, "taper").metadata["data"] == "x"


def test_tiny_taper_with_the_real_encoder(tmp_path, text_encoder):
    make_tiny_taper(tmp_path, num_classes=4, Q=2, encoder=text_encoder)
    loaded = load_taper(tmp_path, device="cpu")
    np.testing.assert_allclose(
        loaded.class_text["names"].numpy(), text_encoder.encode(loaded.class_names), atol=1e-5
    )
    custom = make_tiny_taper(tmp_path / "c", class_names=["apple", "pear"], use_encoder=False)
    assert open_artifact(tmp_path / "c", "taper").config["num_classes"] == 2 and custom.version


def test_save_taper_refuses_empty_bases(tmp_path):
    parts = _parts()
    for empty in ([], {}):
        parts["bases"] = empty
        with pytest.raises(ValueError, match="at least one|non-empty"):
            save_taper(tmp_path, **parts)


def test_non_stock_shapes_need_an_explicit_width(tmp_path):
    parts = _parts()
    for sd in [*parts["bases"], parts["generic"]]:
        sd["conv1.weight"] = torch.zeros(32, 3, 7, 7)
    with pytest.raises(ValueError, match="conv1.weight.*stock resnet18"):
        save_taper(tmp_path, **parts)
    parts["generic"]["conv1.weight"] = torch.zeros(16, 3, 7, 7)
    with pytest.raises(ValueError, match="differ in shape at conv1.weight"):
        save_taper(tmp_path, **parts, config={"width": 32})
    parts["generic"]["conv1.weight"] = torch.zeros(32, 3, 7, 7)
    save_taper(tmp_path, **parts, config={"width": 32})
    cfg = open_artifact(tmp_path, "taper").config
    assert cfg["torchvision_compatible"] is False and cfg["width"] == 32


def test_stock_artifacts_are_marked_torchvision_compatible(bundle):
    assert bundle.config["torchvision_compatible"] is True


@pytest.mark.parametrize("name", ["generic.safetensors", "mixer.safetensors", "catalogue.json"])
def test_every_file_is_verified_on_load(tmp_path, name):
    ref = make_tiny_taper(tmp_path, num_classes=3, Q=1, seed=4, use_encoder=False)
    path = ref.path / name
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ArtifactIntegrityError, match=name):
        load_taper(tmp_path, device="cpu")


def test_nbytes_counts_the_bases(bundle):
    stacked = sum(v.numel() * v.element_size() for v in bundle.bases.values())
    assert stacked > 3 * 44e6 and bundle.nbytes > stacked + 44e6
