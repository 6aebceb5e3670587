"""TAPER mixing: synthesis, classifier selection, the gradient fold, BN re-estimation."""

from __future__ import annotations

import pytest
import torch
import torchvision
from torch.func import functional_call

from model_store.mixer import MixerPredictor
from model_store.resnet import block_of
from model_store.synthesis import synthesize
from trainer.taper.mixing import (
    Bases,
    TaskBatch,
    accumulate_task_grads,
    local_labels,
    recalibrate_bn,
    stage3_loss,
)
from trainer.taper.nets import build_net


def _bases(q: int, classes: int = 6, width: int = 4, seed: int = 0) -> Bases:
    torch.manual_seed(seed)
    states = []
    for _ in range(q):
        net = build_net(classes, width)
        for name, buf in net.named_buffers():  # distinct BN statistics per basis
            if name.endswith("running_mean"):
                buf.normal_()
            elif name.endswith("running_var"):
                buf.uniform_(0.5, 2.0)
        states.append(net.state_dict())
    return Bases(states, build_net(classes, width))


def test_mixed_state_is_the_blockwise_weighted_sum_with_selected_rows():
    bases = _bases(3)
    alpha = torch.softmax(torch.randn(4, 3), -1)
    classes = [4, 0, 2]
    state = bases.mixed_state(alpha, classes)
    for name, stacked in bases.stacked_state().items():
        if name.endswith("num_batches_tracked"):
            continue
        manual = sum(alpha[block_of(name), q] * stacked[q] for q in range(3))
        if name.startswith("fc."):
            manual = manual[classes]
        torch.testing.assert_close(state[name], manual)
    # identical to the service's synthesis on the same bases and mixers
    ref = synthesize([bases.state(q) for q in range(3)], alpha, classes)
    for name in ref:
        torch.testing.assert_close(state[name].float(), ref[name].float())


def test_classifier_selection_keeps_exactly_the_task_rows_in_task_order():
    bases = _bases(2)
    classes = [5, 1, 3]
    state = bases.mixed_state(torch.full((4, 2), 0.5), classes)
    full = bases.mixed_state(torch.full((4, 2), 0.5))
    assert state["fc.weight"].shape[0] == 3
    for row, c in enumerate(classes):
        torch.testing.assert_close(state["fc.weight"][row], full["fc.weight"][c])
        torch.testing.assert_close(state["fc.bias"][row], full["fc.bias"][c])


def test_synthesized_stock_model_loads_strictly_into_torchvision_with_same_logits():
    torch.manual_seed(1)
    states = [build_net(7).state_dict() for _ in range(2)]
    bases = Bases(states, build_net(7))
    alpha = torch.softmax(torch.randn(4, 2), -1)
    classes = [6, 2, 0]
    state = bases.mixed_state(alpha, classes)
    model = torchvision.models.resnet18(num_classes=len(classes))
    model.load_state_dict(state, strict=True)
    x = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        ours = functional_call(bases.template.eval(), bases.mixed_state(alpha), (x,))[:, classes]
        theirs = model.eval()(x)
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4)


def test_mixer_coefficients_sum_to_one_per_block():
    mixer = MixerPredictor(16, 3, hidden=8, norm="layer").eval()
    alpha = mixer(torch.randn(5, 16))
    assert alpha.shape == (5, 4, 3)
    torch.testing.assert_close(alpha.sum(-1), torch.ones(5, 4))
    assert (alpha >= 0).all()


def test_gradient_fold_matches_autograd_through_the_mixing():
    bases = _bases(3)
    bases.template.train()
    alpha = torch.softmax(torch.randn(2, 4, 3), -1)
    tasks = [
        TaskBatch(torch.randn(4, 3, 32, 32), torch.tensor([1, 2, 1, 4]), torch.tensor([4, 1, 2]))
        for _ in range(2)
    ]
    grad_alpha, loss = accumulate_task_grads(bases, alpha, tasks, aux_weight=0.5)
    params = {n: p.detach().clone().requires_grad_() for n, p in bases.params.items()}
    a = alpha.clone().requires_grad_()
    total = 0.0
    for t, task in enumerate(tasks):
        mixed = {n: torch.tensordot(a[t, bases.block[n]], p, 1) for n, p in params.items()}
        _, buffers = bases.mix(alpha[t])
        logits = functional_call(bases.template, {**mixed, **buffers}, (task.x,))
        total = total + stage3_loss(logits, task, 0.5) / len(tasks)
    total.backward()
    assert loss == pytest.approx(float(total.detach()), rel=1e-5)
    torch.testing.assert_close(grad_alpha, a.grad, rtol=1e-4, atol=1e-5)
    for name, p in params.items():
        torch.testing.assert_close(bases.grad(name), p.grad, rtol=1e-4, atol=1e-6)


def test_local_labels_refuses_labels_outside_the_task():
    assert local_labels(torch.tensor([7, 3]), torch.tensor([3, 7])).tolist() == [1, 0]
    with pytest.raises(ValueError, match="outside"):
        local_labels(torch.tensor([5]), torch.tensor([3, 7]))


def test_recalibrated_single_basis_gets_the_batch_statistics():
    bases = _bases(1)
    x = torch.randn(16, 3, 32, 32) * 2 + 1
    recalibrate_bn(bases, [(x, torch.ones(4, 1))])
    conv = bases.template.conv1
    with torch.no_grad():
        feats = torch.nn.functional.conv2d(x, bases.params["conv1.weight"][0], stride=2, padding=3)
    torch.testing.assert_close(
        bases.buffers["bn1.running_mean"][0], feats.mean((0, 2, 3)), rtol=1e-4, atol=1e-5
    )
    torch.testing.assert_close(
        bases.buffers["bn1.running_var"][0],
        feats.var((0, 2, 3), unbiased=False),
        rtol=1e-3,
        atol=1e-5,
    )
    assert conv.weight.shape == bases.params["conv1.weight"][0].shape


def test_recalibration_weights_batches_by_their_mixers():
    bases = _bases(2)
    xa, xb = torch.randn(8, 3, 32, 32), torch.randn(8, 3, 32, 32) + 3
    one_hot = [torch.tensor([[1.0, 0.0]] * 4), torch.tensor([[0.0, 1.0]] * 4)]
    recalibrate_bn(bases, [(xa, one_hot[0]), (xb, one_hot[1])])
    m0, m1 = bases.buffers["bn1.running_mean"]
    assert not torch.allclose(m0, m1)  # each basis got only its own batch
    single = _bases(2)
    recalibrate_bn(single, [(xa, one_hot[0])])
    torch.testing.assert_close(single.buffers["bn1.running_mean"][0], m0)


def test_packed_training_mix_equals_the_service_synthesis():
    """Stage 3 mixes with per-block GEMVs over packed bases; scoring and serving use
    ``model_store.synthesis``: the two must build the same model."""
    bases = _bases(3)
    alpha = torch.softmax(torch.randn(4, 3), -1)
    leaves, state = bases.train_state(alpha)
    assert set(state) == set(bases.template.state_dict())
    assert all(leaf.requires_grad for leaf in leaves.values())
    ref = synthesize([bases.state(q) for q in range(3)], alpha, list(range(6)))
    for name, value in ref.items():
        torch.testing.assert_close(state[name].detach().float(), value.float(), msg=name)
