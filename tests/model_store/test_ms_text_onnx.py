"""The text encoder under ONNX Runtime: the same embeddings as PyTorch, or PyTorch itself."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from model_store import text_onnx
from model_store.text import TextEncoder

# Lengths from one word to past the encoder's 256-token limit (truncated alike), and more rows
# than one batch of 64, so that the length sort and the restored order are both exercised.
TEXTS = [
    "cat", "a photo of a cat", "trainers", "the handwritten digit zero",
    "the animal that barks at the postman and guards the house at night",
    "summer footwear that leaves the toes bare, held on by a strap around the ankle",
] * 12 + ["an oil painting of a horse", "a very long request about cats " * 80]  # > 256 tokens


def test_onnx_runtime_matches_torch(text_encoder):
    enc = TextEncoder(device="cpu", runtime="onnx")
    assert enc.runtime == "onnx" and text_encoder.runtime == "torch"
    got, want = enc.encode(TEXTS), text_encoder.encode(TEXTS)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(enc.encode(TEXTS[-2:-1]), want[-2:-1], atol=1e-5)  # a batch of 1
    assert enc.encode([]).shape == (0, 384)


def test_unsupported_pipeline_stays_on_torch(tmp_path, text_encoder, caplog):
    """CLS pooling is not the exported pipeline: the encoder falls back, still encodes, and
    says why in the log."""
    folder = tmp_path / "cls-pooled"
    text_encoder.model.save(str(folder))
    cfg_path = folder / "1_Pooling" / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["pooling_mode"] = "cls"
    cfg_path.write_text(json.dumps(cfg))
    with caplog.at_level(logging.WARNING, logger="model_store.text_onnx"):
        enc = TextEncoder(folder, device="cpu", runtime="onnx")
    assert enc.runtime == "torch" and "mean pooling" in caplog.text
    assert not text_onnx.supported(enc.model)
    emb = enc.encode(TEXTS[:3])
    assert np.abs(emb - text_encoder.encode(TEXTS[:3])).max() > 1e-3  # CLS, not the mean


def test_disagreement_with_torch_falls_back(tmp_path, text_encoder, monkeypatch, caplog):
    """Where the exported graph and PyTorch differ beyond the tolerance, PyTorch serves (a
    negative tolerance makes any gap, even none, a disagreement)."""
    folder = tmp_path / "copy"
    text_encoder.model.save(str(folder))
    monkeypatch.setattr(text_onnx, "_TOLERANCE", -1.0)
    with caplog.at_level(logging.WARNING, logger="model_store.text_onnx"):
        enc = TextEncoder(folder, device="cpu", runtime="onnx")
    assert enc.runtime == "torch" and "differs from torch" in caplog.text


def test_runtime_must_be_known():
    with pytest.raises(ValueError, match="runtime must be"):
        TextEncoder(device="cpu", runtime="tensorrt")


@pytest.mark.parametrize("error", [ImportError("no onnxruntime"), RuntimeError("bad operator")])
def test_export_failure_stays_on_torch(tmp_path, text_encoder, monkeypatch, caplog, error):
    """A missing onnxruntime or an export the exporter or runtime cannot take (an operator, a
    model over 2 GB) must not stop the service: it serves on PyTorch and says why."""
    def fail(st):
        raise error

    monkeypatch.setattr(text_onnx, "_export", fail)
    with caplog.at_level(logging.WARNING, logger="model_store.text_onnx"):
        enc = TextEncoder(device="cpu", runtime="onnx")
    assert enc.runtime == "torch" and ("onnxruntime" in caplog.text or "failed" in caplog.text)
    np.testing.assert_allclose(enc.encode(TEXTS[:2]), text_encoder.encode(TEXTS[:2]), atol=1e-6)
