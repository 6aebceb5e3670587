"""synthesize / stack_bases: exact block-wise sums, BN handling, selection, torchvision parity."""

from __future__ import annotations

import pytest
import safetensors.torch
import torch
from torch.func import functional_call
from torchvision.models import resnet18

from model_store.resnet import build_resnet18
from model_store.synthesis import select_classes, stack_bases, synthesize

# Written out independently of model_store.resnet.block_of so a wrong map there fails here.
BLOCK = {"conv1": 0, "bn1": 0, "layer1": 0, "layer2": 1, "layer3": 2, "layer4": 3, "fc": 3}
CLASSES = [7, 2, 5]


@pytest.fixture(scope="module")
def manual(resnet_bases, mixers):
    return manual_mix(resnet_bases, mixers)


@pytest.fixture(scope="module")
def stacked(resnet_bases):
    return stack_bases(resnet_bases)


@pytest.fixture(scope="module")
def mixers():
    return torch.softmax(torch.randn(4, 3, generator=torch.Generator().manual_seed(5)), dim=-1)


def manual_mix(bases, mixers):
    """Block-wise weighted sum written the slow, obvious way (no selection)."""
    out = {}
    for key in bases[0]:
        if key.endswith("num_batches_tracked"):
            out[key] = bases[0][key]
            continue
        w = mixers[BLOCK[key.split(".")[0]]]
        out[key] = sum(float(w[q]) * bases[q][key].double() for q in range(len(bases))).float()
    return out


@pytest.mark.parametrize("path", ["list", "stacked"])
def test_equals_manual_blockwise_weighted_sum_with_selection(
    resnet_bases, stacked, mixers, manual, path
):
    arg = resnet_bases if path == "list" else stacked
    out = synthesize(arg, mixers, CLASSES)
    ref = manual
    assert list(out) == list(resnet_bases[0])
    for key, value in out.items():
        expected = ref[key][CLASSES] if key.startswith("fc.") else ref[key]
        torch.testing.assert_close(value, expected, rtol=1e-5, atol=1e-6, msg=key)
    # BN statistics really were mixed (the bases differ) and the counter comes from basis 0.
    rm = "layer2.0.bn1.running_var"
    assert not torch.allclose(out[rm], resnet_bases[0][rm])
    nbt = "layer3.1.bn2.num_batches_tracked"
    assert out[nbt].item() == resnet_bases[0][nbt].item() != resnet_bases[1][nbt].item()


def test_list_and_stacked_paths_agree(resnet_bases, stacked, mixers):
    a = synthesize(resnet_bases, mixers, CLASSES)
    b = synthesize(stacked, mixers, CLASSES)
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=1e-6, atol=1e-7)


def test_one_hot_mixers_reproduce_a_basis(resnet_bases, stacked):
    mix = torch.zeros(4, 3)
    mix[:, 1] = 1.0
    out = synthesize(stacked, mix, CLASSES)
    torch.testing.assert_close(
        out["layer1.0.conv1.weight"], resnet_bases[1]["layer1.0.conv1.weight"]
    )
    torch.testing.assert_close(out["fc.bias"], resnet_bases[1]["fc.bias"][CLASSES])


def test_selection_keeps_exactly_the_tasks_rows_in_task_order(
    resnet_bases, stacked, mixers, manual
):
    out = synthesize(stacked, mixers, CLASSES)
    full = manual
    assert out["fc.weight"].shape == (3, 512) and out["fc.bias"].shape == (3,)
    for j, c in enumerate(CLASSES):
        torch.testing.assert_close(out["fc.weight"][j], full["fc.weight"][c])
        torch.testing.assert_close(out["fc.bias"][j], full["fc.bias"][c])
    sel = select_classes(resnet_bases[0], [4, 0])
    assert torch.equal(sel["fc.weight"], resnet_bases[0]["fc.weight"][[4, 0]])
    assert torch.equal(sel["conv1.weight"], resnet_bases[0]["conv1.weight"])


def test_loads_strictly_into_torchvision_and_matches_tailors_own_forward(stacked, mixers, manual):
    out = synthesize(stacked, mixers, CLASSES)
    stock = resnet18(num_classes=len(CLASSES))
    stock.load_state_dict(out, strict=True)
    # Tailor's own forward: the full 10-way mixed model through functional_call, then the
    # task's columns. Selection must not change the logits of the selected classes.
    full = manual
    x = torch.randn(4, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ours = functional_call(build_resnet18(10).eval(), full, (x,))[:, CLASSES]
        torch.testing.assert_close(stock.eval()(x), ours, rtol=1e-4, atol=1e-4)


def test_output_never_aliases_the_bases_and_serialises(resnet_bases, mixers):
    stacked = stack_bases(resnet_bases)
    before = stacked["conv1.weight"].clone()
    out = synthesize(stacked, mixers, CLASSES)
    blob = safetensors.torch.save(out)  # disjoint views of one segment buffer are accepted
    out["conv1.weight"].zero_()
    out["bn1.num_batches_tracked"].zero_()
    assert torch.equal(stacked["conv1.weight"], before)
    assert stacked["bn1.num_batches_tracked"][0] == resnet_bases[0]["bn1.num_batches_tracked"]
    assert set(safetensors.torch.load(blob)) == set(out)


def test_gradients_reach_mixers_and_bases(resnet_bases):
    logits = torch.zeros(4, 3, requires_grad=True)
    stacked = {k: v.clone().requires_grad_(v.is_floating_point()) for k, v in
               stack_bases(resnet_bases).items()}  # fmt: skip
    out = synthesize(stacked, logits.softmax(-1), CLASSES)
    (out["layer4.1.conv2.weight"].sum() + out["fc.weight"].pow(2).sum()).backward()
    assert logits.grad is not None and logits.grad[3].abs().sum() > 0
    assert logits.grad[:3].abs().sum() == 0  # only block 3 was used in the loss
    assert stacked["fc.weight"].grad[:, CLASSES].abs().sum() > 0
    assert stacked["fc.weight"].grad[:, [0, 1]].abs().sum() == 0


@pytest.mark.parametrize(
    "mix, classes, match",
    [
        (torch.ones(3, 3) / 3, [0], "shape"),
        (torch.ones(4, 2) / 2, [0], "shape"),
        (torch.full((4, 3), float("nan")), [0], "finite"),
        (torch.ones(4, 3, dtype=torch.long), [0], "floating"),
        (torch.ones(4, 3) / 3, [], "at least one"),
        (torch.ones(4, 3) / 3, [1, 1], "duplicates"),
        (torch.ones(4, 3) / 3, [10], "out of range"),
        (torch.ones(4, 3) / 3, [-1], "out of range"),
        (torch.ones(4, 3) / 3, [True], "out of range"),
    ],
)
def test_bad_inputs_raise_clear_errors(resnet_bases, stacked, mix, classes, match):
    for arg in (resnet_bases, stacked):
        with pytest.raises(ValueError, match=match):
            synthesize(arg, mix, classes)


def test_mismatched_bases_are_refused(resnet_bases):
    other = dict(resnet_bases[1])
    other["fc.weight"] = torch.zeros(5, 512)
    with pytest.raises(ValueError, match="fc.weight"):
        stack_bases([resnet_bases[0], other])
    missing = {k: v for k, v in resnet_bases[1].items() if k != "fc.bias"}
    with pytest.raises(ValueError, match="keys differ"):
        synthesize([resnet_bases[0], missing], torch.ones(4, 2) / 2, [0])
    with pytest.raises(ValueError, match="non-empty"):
        stack_bases([])


def test_bit_identical_on_repeat_and_across_thread_counts(stacked, mixers):
    """Replicas rebuild evicted models from recipes; the bytes (and ETag) must not change."""
    threads = torch.get_num_threads()
    try:
        outs = []
        for n in (1, max(2, threads)):
            torch.set_num_threads(n)
            with torch.no_grad():
                outs += [synthesize(stacked, mixers, CLASSES) for _ in range(2)]
    finally:
        torch.set_num_threads(threads)
    blobs = {safetensors.torch.save(o) for o in outs}
    assert len(blobs) == 1
