"""The text encoder under ONNX Runtime: the same embeddings as PyTorch, or PyTorch itself."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

from model_store import text_onnx
from model_store.text import TextEncoder

# Lengths from one word to past the encoder's 256-token limit (truncated alike), and more rows
# than one batch (of 8 below), so that the length sort and the restored order are exercised.
TEXTS = [
    "cat", "a photo of a cat", "trainers", "the handwritten digit zero",
    "the animal that barks at the postman and guards the house at night",
    "summer footwear that leaves the toes bare, held on by a strap around the ankle",
] * 3 + ["an oil painting of a horse", "a very long request about cats " * 80]  # > 256 tokens


def test_onnx_runtime_matches_torch(text_encoder):
    enc = TextEncoder(device="cpu", runtime="onnx")
    assert enc.runtime == "onnx" and text_encoder.runtime == "torch"
    got, want = enc.encode(TEXTS, batch_size=8), text_encoder.encode(TEXTS, batch_size=8)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(enc.encode(TEXTS[-2:-1]), want[-2:-1], atol=1e-5)  # a batch of 1
    assert enc.encode([]).shape == (0, 384)
    words = TEXTS[-1].split() + ["dogs"]  # the last word past the limit: zeros on both
    np.testing.assert_allclose(enc.word_vectors(words), text_encoder.word_vectors(words),
                               atol=1e-4)  # fmt: skip


def test_unsupported_pipeline_stays_on_torch(text_encoder, caplog):
    """CLS pooling is not the exported pipeline: no ONNX encoder, and the log says why."""
    st = text_encoder.model
    pooling = type(st[1])  # the installed version's Pooling class, wherever it lives
    cls_pooled = SentenceTransformer(modules=[st[0], pooling(384, pooling_mode="cls")],
                                     device="cpu")  # fmt: skip
    assert text_onnx.supported(st) and not text_onnx.supported(cls_pooled)
    with caplog.at_level(logging.WARNING, logger="model_store.text_onnx"):
        assert text_onnx.onnx_encoder(cls_pooled, "cls-pooled", text_encoder.encode) is None
    assert "mean pooling" in caplog.text


def test_disagreement_with_torch_falls_back(text_encoder, monkeypatch, caplog):
    """Where the exported graph and PyTorch differ beyond the tolerance, PyTorch serves (a
    negative tolerance makes any gap, even none, a disagreement)."""
    monkeypatch.setattr(text_onnx, "_TOLERANCE", -1.0)
    with caplog.at_level(logging.WARNING, logger="model_store.text_onnx"):
        assert text_onnx.onnx_encoder(text_encoder.model, "minilm", text_encoder.encode) is None
    assert "differs from torch" in caplog.text


@pytest.mark.parametrize("error", [ImportError("no onnxruntime"), RuntimeError("bad operator")])
def test_export_failure_stays_on_torch(text_encoder, monkeypatch, caplog, error):
    """A missing onnxruntime or an export the exporter or runtime cannot take (an operator, a
    model over 2 GB) must not stop the service: it serves on PyTorch and says why."""
    def fail(st):
        raise error

    monkeypatch.setattr(text_onnx, "_export", fail)
    with caplog.at_level(logging.WARNING, logger="model_store.text_onnx"):
        assert text_onnx.onnx_encoder(text_encoder.model, "minilm", text_encoder.encode) is None
    assert "onnxruntime is not installed" in caplog.text or "export failed" in caplog.text
    if isinstance(error, RuntimeError):  # and the encoder itself serves on torch
        enc = TextEncoder(device="cpu", runtime="onnx")
        assert enc.runtime == "torch"
        np.testing.assert_allclose(enc.encode(TEXTS[:2]), text_encoder.encode(TEXTS[:2]),
                                   atol=1e-6)  # fmt: skip


def test_runtime_must_be_known():
    with pytest.raises(ValueError, match="runtime must be"):
        TextEncoder(device="cpu", runtime="tensorrt")


def test_exported_graph_is_cached_per_model(tmp_path, monkeypatch, text_encoder, caplog):
    """The export is paid once per machine: a second load reads the file (exporting again
    would fail here); a damaged file is exported again; a cache that cannot be written leaves
    an in-memory export; a model with other weights gets its own file."""
    monkeypatch.setenv("TAILOR_CACHE_DIR", str(tmp_path / "cache"))
    st, ref = text_encoder.model, text_encoder.encode
    assert text_onnx.onnx_encoder(st, "minilm", ref) is not None
    (graph,) = text_onnx.cache_dir().glob("*.onnx")
    with monkeypatch.context() as m:
        m.setattr(text_onnx, "_graph_bytes", lambda st: (_ for _ in ()).throw(AssertionError()))
        assert text_onnx.onnx_encoder(st, "minilm", ref) is not None  # read, not exported
    graph.write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING, logger="model_store.text_onnx"):
        assert text_onnx.onnx_encoder(st, "minilm", ref) is not None
    assert "unreadable cached ONNX graph" in caplog.text and not graph.exists()
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("TAILOR_CACHE_DIR", str(tmp_path / "a-file"))  # mkdir fails under it
    assert text_onnx._cached_graph(st) is None
    assert text_onnx.onnx_encoder(st, "minilm", ref) is not None
    monkeypatch.setenv("TAILOR_CACHE_DIR", str(tmp_path / "cache"))
    first = text_onnx._cached_graph(st)
    monkeypatch.setattr(text_onnx, "_graph_bytes", lambda st: b"other weights")
    weight = st[0].auto_model.embeddings.word_embeddings.weight
    kept = weight[0, 0].item()
    with torch.no_grad():
        try:
            weight[0, 0] = kept + 1.0
            other = text_onnx._cached_graph(st)
        finally:
            weight[0, 0] = kept  # the session-wide encoder, restored bit for bit
    assert other != first and other.read_bytes() == b"other weights"
    assert text_onnx._cached_graph(st) == first


def test_half_precision_weights_run_in_float32_on_cpu(tmp_path, monkeypatch, text_encoder):
    """A model stored in fp16 (as a GPU box's copy may be) runs in float32 on a CPU, so the
    ONNX export takes it (with fp16 parameters it failed on a LayerNorm's mixed types) and its
    embeddings stay those of the fp32 model up to the weights' rounding."""
    monkeypatch.setenv("TAILOR_CACHE_DIR", str(tmp_path / "cache"))
    half = tmp_path / "minilm-fp16"
    copy.deepcopy(text_encoder.model).half().save(str(half))  # the session's stays fp32
    enc = TextEncoder(half, device="cpu", runtime="onnx")
    assert enc.runtime == "onnx"
    assert all(p.dtype == torch.float32 for p in enc.model.parameters())
    np.testing.assert_allclose(enc.encode(TEXTS[:6]), text_encoder.encode(TEXTS[:6]), atol=3e-3)
