"""The request reader under ONNX Runtime on a CPU: the service reads every description with it.

Why: the tuned reader (``model_store.request_model``) runs a MiniLM-sized transformer on each
``/personalize`` description, beside the rules. The service already runs its text encoder on
ONNX Runtime with idle threads that do not spin (``model_store.text_onnx``: PyTorch's
spinning threads took the cores other requests needed). This does the same for the reader: the
whole model (encoder, pooling, both heads, sigmoid and softmax) is exported in memory at load
(about 2 s), checked against PyTorch on a few texts (at most 1e-4 apart, else PyTorch stays,
with a warning), and run with the session options ``text_onnx`` uses.
"""

from __future__ import annotations

import io
import logging
import warnings
from typing import Any

import numpy as np
import torch

log = logging.getLogger(__name__)

_PROBE = ["cats and dogs, no wait, cats and horses", "sketches of the digits 0 to 9 please",
          "hello"]
_TOLERANCE = 1e-4  # max |onnx - torch| over the probe's probabilities
_OPSET = 17


class _Probabilities(torch.nn.Module):
    """The reader's model with its outputs as probabilities (what the service reads)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        classes, domains = self.model(input_ids, attention_mask)
        return torch.sigmoid(classes), torch.softmax(domains, -1)


def _session(reader: Any):
    """An ONNX Runtime CPU session over ``reader``'s model, exported now."""
    import onnxruntime as ort

    sample = reader.batch(_PROBE[:2])
    names, axes = ["input_ids", "attention_mask"], {0: "batch", 1: "tokens"}
    buf = io.BytesIO()
    with warnings.catch_warnings():  # tracer notes on Python shape checks; the probe decides
        warnings.simplefilter("ignore")
        torch.onnx.export(_Probabilities(reader.model).eval(),
                          tuple(sample[n].cpu() for n in names), buf, input_names=names,
                          output_names=["classes", "domains"], opset_version=_OPSET,
                          dynamic_axes={n: axes for n in names}, dynamo=False)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = torch.get_num_threads(), 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # see text_onnx
    return ort.InferenceSession(buf.getvalue(), opts, providers=["CPUExecutionProvider"])


def onnx_probabilities(reader: Any):
    """A function ``texts -> (P(class), P(domain))`` that runs ``reader``'s model on ONNX
    Runtime, or None (the reason logged) when onnxruntime is missing, the export fails or the
    probe's probabilities differ from PyTorch's by more than 1e-4."""
    try:
        session = _session(reader)

        def run(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
            feed = {k: v.cpu().numpy() for k, v in reader.batch(texts).items()}
            classes, domains = session.run(None, feed)
            return classes, domains

        got, want = run(_PROBE), reader.torch_probabilities(_PROBE)
        gap = max(float(np.abs(g - w).max()) for g, w in zip(got, want, strict=True))
    except ImportError:
        log.warning("onnxruntime is not installed; the request reader runs on torch")
        return None
    except Exception:  # an operator or exporter ONNX cannot take: serve on torch
        log.warning("request reader: ONNX export failed; using torch", exc_info=True)
        return None
    if gap > _TOLERANCE:
        log.warning("request reader: ONNX differs from torch by %.2g; using torch", gap)
        return None
    return run
