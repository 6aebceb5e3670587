"""Export a personalized ResNet-18 to ONNX bytes (for runtimes without PyTorch).

The graph takes the SAME input as the safetensors download loaded into torchvision: ``images``,
float32 ``[N, 3, S, S]`` already preprocessed by ``model_store.images`` (RGB, shorter side
bilinearly resized to S, centre S×S crop, ``/255``, ``(x - MEAN) / STD``), and returns ``logits``
``[N, k]`` in the task's class order. The batch axis is dynamic. Normalisation is deliberately
NOT baked into the graph, so one preprocessing contract holds for every download format; it is
recorded in the model's ``metadata_props`` so the file describes itself.

Exporter choice (measured here, 2 CPU cores, ResNet-18): the TorchScript exporter takes ~0.25 s
per model once warm and produces byte-identical output for identical weights (so the ETag is
stable across replicas); the torch.export-based ("dynamo") exporter, torch's default since 2.9,
takes ~7 s and needs onnxscript. Both give the same logits to ~1e-6. We default to TorchScript
and keep ``exporter="dynamo"`` for when the legacy path is removed from torch.
"""

from __future__ import annotations

import io
import json
import threading
import warnings
from collections.abc import Mapping
from typing import Literal

import torch
from torch import nn

from model_store.images import IMAGE_SIZE, MEAN, STD

INPUT_NAME = "images"
OUTPUT_NAME = "logits"
OPSET = 17
Exporter = Literal["torchscript", "dynamo"]

# torch.onnx keeps exporter state in module globals (opset, export mode): one export at a time.
_EXPORT_LOCK = threading.Lock()


def preprocessing_contract(image_size: int = IMAGE_SIZE) -> dict[str, object]:
    """The input contract of exported graphs (also sent as response headers / metadata)."""
    return {
        "input": INPUT_NAME,
        "output": OUTPUT_NAME,
        "layout": "NCHW",
        "dtype": "float32",
        "image_size": image_size,
        "color": "RGB",
        "resize": "shorter side to image_size, bilinear",
        "crop": "center image_size x image_size",
        "scale": "1/255",
        "mean": list(MEAN),
        "std": list(STD),
    }


def _torchscript(module: nn.Module, dummy: torch.Tensor, opset: int) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():  # the legacy exporter warns that it is legacy, every call
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            module, (dummy,), buf, input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
            dynamic_axes={INPUT_NAME: {0: "batch"}, OUTPUT_NAME: {0: "batch"}},
            opset_version=opset, do_constant_folding=True, dynamo=False,
        )  # fmt: skip
    return buf.getvalue()


def _dynamo(module: nn.Module, dummy: torch.Tensor) -> bytes:
    batch = torch.export.Dim("batch", min=1)
    program = torch.onnx.export(
        module, (dummy,), input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
        dynamic_shapes=({0: batch},), dynamo=True, optimize=True, verbose=False,
    )  # fmt: skip
    return program.model_proto.SerializeToString()


def _with_metadata(payload: bytes, metadata: Mapping[str, str]) -> bytes:
    import onnx

    model = onnx.load_from_string(payload)
    for key, value in sorted(metadata.items()):
        model.metadata_props.add(key=key, value=value)
    return model.SerializeToString()


def export_onnx(
    module: nn.Module,
    *,
    image_size: int = IMAGE_SIZE,
    classes: list[str] | None = None,
    metadata: Mapping[str, str] | None = None,
    exporter: Exporter = "torchscript",
    opset: int = OPSET,
) -> bytes:
    """Serialise an image classifier (eval mode) as ONNX bytes with a dynamic batch axis.

    Args:
        module: e.g. ``torchvision.models.resnet18(num_classes=k)`` with the personalized weights;
            it is traced in eval mode and not modified (its train/eval flag is restored).
        image_size: spatial size of the ``images`` input.
        classes: label of each logit, recorded in ``metadata_props`` as JSON.
        metadata: extra ``metadata_props`` (string → string).
        exporter: ``torchscript`` (fast, deterministic; default) or ``dynamo``.
        opset: ONNX opset for the TorchScript exporter.

    Returns:
        The serialised ``onnx.ModelProto``; identical weights give identical bytes.
    """
    device = next(module.parameters()).device
    dummy = torch.zeros(1, 3, image_size, image_size, device=device)
    props = {f"tailor.{k}": json.dumps(v) for k, v in preprocessing_contract(image_size).items()}
    if classes is not None:
        props["tailor.classes"] = json.dumps(list(classes))
    props.update(metadata or {})
    was_training = module.training
    with _EXPORT_LOCK:
        try:
            module.eval()
            if exporter == "dynamo":
                raw = _dynamo(module, dummy)
            else:
                raw = _torchscript(module, dummy, opset)
        finally:
            module.train(was_training)
    return _with_metadata(raw, props)
