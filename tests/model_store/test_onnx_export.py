"""ONNX export of a ResNet-18: valid graph, same logits as torch, dynamic batch, stable bytes."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from model_store.images import IMAGE_SIZE, MEAN, STD, to_batch
from model_store.onnx_export import INPUT_NAME, OUTPUT_NAME, export_onnx
from model_store.resnet import build_resnet18

CLASSES = ["cat", "dog", "zero", "bag", "horse"]


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    model = build_resnet18(len(CLASSES)).eval()
    with torch.no_grad():  # non-trivial BN statistics, so a wrong BN export would show
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
    return model


@pytest.fixture(scope="module")
def payload(net):
    return export_onnx(net, classes=CLASSES)


def _images(n: int, seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    return to_batch([rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for _ in range(n)])


def _check_same_logits(net, payload: bytes) -> None:
    session = ort.InferenceSession(payload, providers=["CPUExecutionProvider"])
    for n in (1, 3):  # the batch axis is dynamic: one graph serves both
        x = _images(n, seed=n)
        (logits,) = session.run([OUTPUT_NAME], {INPUT_NAME: x.numpy()})
        with torch.no_grad():
            ref = net(x).numpy()
        assert logits.shape == (n, len(CLASSES))
        np.testing.assert_allclose(logits, ref, atol=1e-4, rtol=1e-4)
        assert (logits.argmax(1) == ref.argmax(1)).all()


def test_graph_is_valid_and_self_describing(payload):
    model = onnx.load_from_string(payload)
    onnx.checker.check_model(model, full_check=True)
    (inp,), (out,) = model.graph.input, model.graph.output
    assert (inp.name, out.name) == (INPUT_NAME, OUTPUT_NAME)
    dims = inp.type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and [d.dim_value for d in dims[1:]] == [3, 32, 32]
    assert inp.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    meta = {p.key: json.loads(p.value) for p in model.metadata_props}
    assert meta["tailor.classes"] == CLASSES
    assert meta["tailor.mean"] == list(MEAN) and meta["tailor.std"] == list(STD)
    assert meta["tailor.image_size"] == IMAGE_SIZE and meta["tailor.layout"] == "NCHW"


def test_onnxruntime_matches_torch_at_batch_1_and_3(net, payload):
    _check_same_logits(net, payload)


def test_export_is_deterministic_and_leaves_the_module_alone(net, payload):
    net.train()
    try:
        again = export_onnx(net, classes=CLASSES)
        assert net.training  # restored after tracing in eval mode
    finally:
        net.eval()
    assert again == payload  # identical weights → identical bytes → a stable ETag
    other = export_onnx(net, classes=list(reversed(CLASSES)))
    assert other != payload  # the class list is part of the file


def test_dynamo_exporter_gives_the_same_logits(net):
    _check_same_logits(net, export_onnx(net, classes=CLASSES, exporter="dynamo"))
