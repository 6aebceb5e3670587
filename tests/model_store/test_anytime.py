"""The Accumulator against the paper's equations (4)-(8), at every exit, and the baselines."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

from model_store.anytime import AnytimeViT
from model_store.clip import _create, default_model_config
from model_store.vit import reinit_vit, vit_vision_cfg

DEPTH = 3


@pytest.fixture(scope="module")
def visual():
    cfg = default_model_config("vit", embed_dim=8)
    cfg["vision_cfg"] = vit_vision_cfg(16, patch_size=4, width=32, layers=DEPTH, head_width=16)
    tower = _create(cfg, checkpoint=None).visual
    reinit_vit(tower, seed=3)
    return tower.eval()


def _msa_mlp(z, ln1, attn, ln2, mlp):
    """Eqs. (5)-(6): z = MSA(LN(z)) + z; z = MLP(LN(z)) + z, with attention written out."""
    y, heads = ln1(z), attn.num_heads
    q, k, v = F.linear(y, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)
    split = lambda t: t.unflatten(-1, (heads, -1)).transpose(1, 2)  # noqa: E731
    a = torch.softmax(split(q) @ split(k).transpose(-1, -2) / (q.shape[-1] // heads) ** 0.5, -1)
    z = z + attn.out_proj((a @ split(v)).transpose(1, 2).flatten(2))
    return z + mlp(ln2(z))


def _paper_logits(model, x, exit_):
    """Eqs. (4), (7), (8) by hand: the CLS history, its replacement, the residual exit head."""
    vis, acc = model.visual, model.accumulator
    tokens = vis.conv1(x).flatten(2).transpose(1, 2)
    z = vis.ln_pre(torch.cat([vis.class_embedding.expand(len(x), 1, -1), tokens], 1)
                   + vis.positional_embedding)  # eq. (4)
    enc = acc.block
    fm = lambda t: enc.linear2(F.gelu(enc.linear1(t)))  # noqa: E731

    def accumulate(history):  # eq. (7): h^l over [z_client, z_cls^0 + p'_0, ...]
        seq = [acc.client_token.expand(len(x), -1)] + [
            c + acc.layer_pos[i] for i, c in enumerate(history)]
        return _msa_mlp(torch.stack(seq, 1), enc.norm1, enc.self_attn, enc.norm2, fm)

    history = [z[:, 0]]
    z = torch.cat([accumulate(history)[:, -1:], z[:, 1:]], 1)
    for block in vis.transformer.resblocks[:exit_]:
        z = _msa_mlp(z, block.ln_1, block.attn, block.ln_2, block.mlp)
        history.append(z[:, 0])
        h = accumulate(history)
        out = model.head(h[:, 0] + z[:, 0])  # eq. (8)
        z = torch.cat([h[:, -1:], z[:, 1:]], 1)  # z_cls^l <- h^l_{l+1}
    return out


def test_accumulator_matches_the_paper_at_every_exit_and_runs_only_that_deep(visual):
    torch.manual_seed(0)
    model = AnytimeViT(copy.deepcopy(visual), num_classes=5).eval()
    x = torch.randn(4, 3, 16, 16)
    with torch.no_grad():
        every = model.forward_exits(x, DEPTH)
        for exit_ in range(1, DEPTH + 1):
            logits = model(x, exit_)
            assert model.blocks_run == exit_
            torch.testing.assert_close(logits, _paper_logits(model, x, exit_))
            torch.testing.assert_close(every[exit_ - 1], logits)
    assert len({round(float(e.sum()), 4) for e in every}) == DEPTH  # exits really differ


def test_zero_init_accumulator_starts_as_the_foundation_and_still_learns(visual):
    """Step 0 of a zero-initialised Accumulator is the frozen ViT's own forward pass: every
    exit reads head(z_client + z_cls^l) with z_cls^l untouched. Same seed, same other draws."""
    torch.manual_seed(2)
    paper = AnytimeViT(copy.deepcopy(visual), 5)
    torch.manual_seed(2)
    zero = AnytimeViT(copy.deepcopy(visual), 5, zero_init=True)
    x = torch.randn(3, 3, 16, 16)
    with torch.no_grad():
        z = zero.visual._embeds(x)
        plain = []
        for block in zero.visual.transformer.resblocks:
            z = block(z)
            plain.append(zero.head(zero.accumulator.client_token + z[:, 0]))
        for got, want in zip(zero.forward_exits(x, DEPTH), plain, strict=True):
            torch.testing.assert_close(got, want)
        assert not torch.allclose(paper(x), zero(x))  # the paper's random block perturbs
    torch.testing.assert_close(paper.head[1].weight, zero.head[1].weight)  # same head draw
    zero(x).logsumexp(-1).sum().backward()  # the zeroed outputs get gradient, so it can learn
    assert zero.accumulator.block.linear2.weight.grad.abs().sum() > 0
    assert zero.accumulator.block.self_attn.out_proj.weight.grad.abs().sum() > 0


def test_trainable_parts_per_method(visual):
    acc = AnytimeViT(copy.deepcopy(visual), 5, adapter_rank=4)
    names = acc.trainable_names()
    assert any(n.startswith("accumulator.") for n in names)
    assert {n.split(".")[0] for n in names} == {"visual", "accumulator", "head"}
    assert all(".mlp.down." in n or ".mlp.up." in n for n in names if n.startswith("visual."))
    full = AnytimeViT(copy.deepcopy(visual), 5, method="finetune")
    assert "visual.conv1.weight" in full.trainable_names()
    lin = AnytimeViT(copy.deepcopy(visual), 5, method="linear")
    assert lin.trainable_names() == [f"heads.{i}.{p}" for i in range(DEPTH)
                                     for p in ("weight", "bias")]


def test_fresh_parallel_adapters_leave_the_backbone_exact(visual):
    torch.manual_seed(1)
    plain = AnytimeViT(copy.deepcopy(visual), 5, method="mlp").eval()
    torch.manual_seed(1)
    with_pa = AnytimeViT(copy.deepcopy(visual), 5, method="mlp", adapter_rank=4).eval()
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        torch.testing.assert_close(with_pa(x, 2), plain(x, 2))
        with_pa.visual.transformer.resblocks[0].mlp.up.weight.normal_()  # not a constant: LN
        assert not torch.allclose(with_pa(x, 2), plain(x, 2))  # the adapters are in the path


@pytest.mark.parametrize("bad", [0, DEPTH + 1, -1, 1.5, True, "2"])
def test_bad_exits_are_refused(visual, bad):
    model = AnytimeViT(copy.deepcopy(visual), 5)
    with pytest.raises(ValueError, match="exit must be an integer"):
        model(torch.zeros(1, 3, 16, 16), bad)


def test_refuses_non_vit_and_unknown_methods(visual):
    with pytest.raises(ValueError, match="unknown anytime method"):
        AnytimeViT(copy.deepcopy(visual), 5, method="prefix")
    with pytest.raises(ValueError, match="need a ViT"):
        AnytimeViT(torch.nn.Linear(2, 2), 5)
