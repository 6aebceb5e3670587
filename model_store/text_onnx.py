"""The sentence encoder's transformer under ONNX Runtime, for request-time embeddings on CPU.

Why: a task description is embedded on every ``/personalize`` request that needs the encoder,
and on a CPU core MiniLM's PyTorch eager forward is most of a definition request's latency
(issue 13 asks for ≤ 20 ms p50). ONNX Runtime runs the same fp32 graph 1.6–2.3× faster for
the 2–3 short phrases a request holds (a definition request as a whole: 1.35×), with
embeddings equal to PyTorch's within 1e-6, so no resolver decision moves. int8 dynamic
quantisation was faster still, but even per-channel (cosine ≥ 0.991 to fp32) it moved 743 of
4,673 benchmark answers, 6 more of them wrong at 200: the thresholds are calibrated on fp32.

Why not sentence-transformers' own ``backend="onnx"``: it needs ``optimum-onnx``, whose only
release pins ``transformers<5`` and would downgrade the stack. So this module exports the one
supported pipeline itself: Transformer → mean pooling → (Normalize), checked against the
PyTorch path at load; anything else stays on PyTorch.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import logging
import os
import warnings
from pathlib import Path

import numpy as np
import torch

log = logging.getLogger(__name__)

# Short on purpose: the check runs in every process that loads the encoder (a 256-token probe
# cost 0.45 s more); truncation is covered by tests/model_store/test_ms_text_onnx.py.
_PROBE = ["a dog", "the animal that barks at the postman", "handwritten sevens, in pencil"]
_TOLERANCE = 1e-4  # max |onnx - torch| over the probe's unit embeddings; seen: ~2e-7
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_OPSET = 17


class _LastHidden(torch.nn.Module):
    """Keyword call of a Hugging Face encoder with the named inputs only (DistilBERT-style
    models take no ``token_type_ids``), so the export has plain positional tensor inputs."""

    def __init__(self, model: torch.nn.Module, names: list[str]):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *tensors):
        return self.model(**dict(zip(self.names, tensors, strict=True))).last_hidden_state


def supported(st) -> bool:
    """Whether ``st`` is Transformer → mean pooling → optional Normalize (MiniLM's shape)."""
    names = [type(m).__name__ for m in st]
    if names[:2] != ["Transformer", "Pooling"] or any(n != "Normalize" for n in names[2:]):
        return False
    cfg = st[1].get_config_dict()
    if "pooling_mode" in cfg:  # sentence-transformers >= 6
        return cfg["pooling_mode"] == "mean"
    modes = [k for k, v in cfg.items() if k.startswith("pooling_mode_") and v]
    return modes == ["pooling_mode_mean_tokens"]


def _export(st):
    """A CPU session (torch's thread count) over ``st``'s transformer as ONNX: read from the
    cache (:func:`_cached_graph`) or exported now. The TorchScript exporter, as the dynamo one
    needs more packages and takes longer; onnxruntime's BERT fusion pass was tried and gained
    nothing measurable at these sizes."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = torch.get_num_threads(), 1
    # Idle intra-op threads otherwise spin for a while after each run, taking the cores the
    # rest of the request (and other requests) need: with spinning on, the PyTorch resolver
    # run alongside in benchmarks/text_runtime.py went from 29 to 44 ms p50.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    path = _cached_graph(st)
    if path is None:  # no writable cache: export in memory, as every process would
        return ort.InferenceSession(_graph_bytes(st), opts, providers=["CPUExecutionProvider"])
    try:
        return ort.InferenceSession(path.read_bytes(), opts, providers=["CPUExecutionProvider"])
    except Exception:  # a truncated or foreign cache file: export again, in memory
        log.warning("text encoder: unreadable cached ONNX graph %s; exporting again", path)
        path.unlink(missing_ok=True)
        return ort.InferenceSession(_graph_bytes(st), opts, providers=["CPUExecutionProvider"])


def _cached_graph(st) -> Path | None:
    """The exported graph's file, written on first use (~1.4 s, paid once per machine rather
    than once per worker process); None where the cache cannot be written. Keyed by the
    weights' bytes and the torch, onnxruntime and opset versions, so a changed model or an
    upgrade never reads a stale graph; written to a temporary file and renamed, so
    concurrent workers never read half a file."""
    import onnxruntime as ort

    model = st[0].auto_model
    key = hashlib.sha256(f"{torch.__version__} {ort.__version__} {_OPSET}".encode())
    for name, tensor in model.state_dict().items():
        key.update(name.encode())
        key.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    path = cache_dir() / f"{key.hexdigest()[:32]}.onnx"
    if path.is_file():
        return path
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(_graph_bytes(st))
        os.replace(tmp, path)
    except OSError as exc:  # a read-only home in a container, a full disk
        log.info("text encoder: no ONNX cache at %s (%s)", path.parent, exc)
        if tmp.parent.is_dir():
            tmp.unlink(missing_ok=True)  # no half-written file left behind
        return None
    return path


def cache_dir() -> Path:
    """``TAILOR_CACHE_DIR/text-onnx``, else ``~/.cache/tailor/text-onnx``."""
    root = os.environ.get("TAILOR_CACHE_DIR") or Path.home() / ".cache" / "tailor"
    return Path(root) / "text-onnx"


def _graph_bytes(st) -> bytes:
    """``st``'s transformer exported to ONNX, with only the inputs its ``forward`` takes."""
    model = st[0].auto_model
    sample = _features(st, _PROBE[:2])
    params = inspect.signature(model.forward).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    names = [n for n in _INPUTS if n in sample and (n in params or takes_any)]
    buf, axes = io.BytesIO(), {0: "batch", 1: "tokens"}
    with warnings.catch_warnings(record=True) as caught:  # tracer notes on Python shape checks
        warnings.simplefilter("always")
        torch.onnx.export(_LastHidden(model, names).eval(), tuple(sample[n] for n in names),
                          buf, input_names=names, output_names=["hidden"], opset_version=_OPSET,
                          dynamic_axes={n: axes for n in [*names, "hidden"]}, dynamo=False)
    for w in caught:  # kept for whoever debugs a new model; the probe check is the real guard
        log.debug("onnx export: %s: %s", w.category.__name__, w.message)
    return buf.getvalue()


def _features(st, texts: list[str]) -> dict[str, torch.Tensor]:
    """The pipeline's own tokenisation (same truncation, same special tokens)."""
    prep = getattr(st, "preprocess", None) or st.tokenize
    return {k: v for k, v in prep(texts).items() if isinstance(v, torch.Tensor)}


class OnnxSentenceEncoder:
    """Unit embeddings of ``st``'s pipeline, with the transformer run by ONNX Runtime."""

    def __init__(self, st):
        self.st = st
        self.session = _export(st)
        self.inputs = [i.name for i in self.session.get_inputs()]
        dim = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
        self.dim = int(dim())

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """``(n, dim)`` float32 unit rows; batches hold texts of similar length (less padding),
        as sentence-transformers' own ``encode`` does."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = [None] * len(texts)
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            for i, row in zip(idx, self._batch([texts[i] for i in idx]), strict=True):
                out[i] = row
        return np.stack(out).astype(np.float32)

    def last_hidden(self, feats: dict[str, torch.Tensor]) -> np.ndarray:
        """The transformer's last layer ``(batch, tokens, hidden)`` for tokenised ``feats``."""
        return self.session.run(None, {n: feats[n].numpy() for n in self.inputs})[0]

    def _batch(self, texts: list[str]) -> np.ndarray:
        feats = _features(self.st, texts)
        hidden = self.last_hidden(feats)
        mask = feats["attention_mask"].numpy()[..., None].astype(np.float32)
        mean = (hidden * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
        return mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)


def onnx_encoder(st, folder: str, reference) -> OnnxSentenceEncoder | None:
    """An ONNX Runtime encoder for ``st`` when its pipeline is supported, ``onnxruntime`` is
    installed and the probe embeddings match ``reference`` (the PyTorch encode); else None,
    with the reason logged, and the caller stays on PyTorch."""
    if not supported(st):
        log.warning("text encoder %s: pipeline %s is not Transformer+mean pooling; using torch",
                    folder, [type(m).__name__ for m in st])  # fmt: skip
        return None
    try:
        enc = OnnxSentenceEncoder(st)
        gap = float(np.abs(enc.encode(_PROBE) - reference(_PROBE)).max())
    except ImportError:
        log.warning("onnxruntime is not installed; the text encoder runs on torch")
        return None
    except Exception:  # an operator, model size or exporter ONNX cannot take: serve on torch
        log.warning("text encoder %s: ONNX export failed; using torch", folder, exc_info=True)
        return None
    if gap > _TOLERANCE:
        log.warning("text encoder %s: ONNX differs from torch by %.2g; using torch", folder, gap)
        return None
    return enc
