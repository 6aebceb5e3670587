"""The phrase reader's file: what is saved loads back; a wrong shape or version is refused."""

from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import save_file

from model_store.phrase_model import PhraseModel, encoder_key


def _model(k: int = 3, dim: int = 4) -> PhraseModel:
    rng = np.random.default_rng(0)
    return PhraseModel([f"c{i}" for i in range(k)], rng.normal(size=(k + 1, dim)),
                       rng.normal(size=k + 1), "enc/4", {"phrases": 7})


def test_probabilities_are_a_softmax_per_phrase():
    model = _model()
    x = np.random.default_rng(1).normal(size=(5, 4))
    p = model.probabilities(x)
    logits = x @ model.weight.T + model.bias
    assert p.shape == (5, 4) and np.allclose(p.sum(1), 1)  # three classes and none
    assert (p.argmax(1) == logits.argmax(1)).all()
    assert np.isfinite(model.probabilities(1e4 * x)).all()  # large logits do not overflow


def test_a_saved_model_loads_back(tmp_path):
    model = _model()
    model.save(tmp_path / "sub" / "p.safetensors")
    back = PhraseModel.load(tmp_path / "sub" / "p.safetensors")
    assert back.classes == model.classes and back.encoder == "enc/4"
    assert back.fitted_on == {"phrases": 7} and np.array_equal(back.weight, model.weight)


def test_wrong_shapes_and_versions_are_refused(tmp_path):
    with pytest.raises(ValueError, match="needs weight"):  # no row for none of these
        PhraseModel(["a", "b"], np.zeros((2, 4)), np.zeros(2), "enc/4")
    with pytest.raises(ValueError, match="needs weight"):
        PhraseModel(["a", "b"], np.zeros((3, 4)), np.zeros(2), "enc/4")
    path = tmp_path / "old.safetensors"
    save_file({"weight": np.zeros((3, 4), np.float32), "bias": np.zeros(3, np.float32)},
              str(path), metadata={"version": "phrase-reader-0", "classes": '["a", "b"]'})
    with pytest.raises(ValueError, match="fit it again"):
        PhraseModel.load(path)


def test_encoder_key_names_the_folder_and_dimension():
    class Encoder:
        path, dim = "/models/all-MiniLM-L6-v2", 384

    assert encoder_key(Encoder()) == "all-MiniLM-L6-v2/384"
    assert encoder_key(object()) == "object/?"
