"""FedPerfix's prefix attention against the equations written out by hand, and each method's
local part (what never leaves a client)."""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from model_store.perfix import METHODS, PerfixViT, PrefixAttention
from model_store.testing import make_tiny_foundation
from model_store.vit import encode_pre_projection


@pytest.fixture(scope="module")
def visual(tmp_path_factory):
    _, backbone = make_tiny_foundation(tmp_path_factory.mktemp("store"), layers=2)
    return backbone.model.visual


def _mha(width: int = 16, heads: int = 2) -> nn.MultiheadAttention:
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(width, heads, batch_first=True)
    with torch.no_grad():
        mha.in_proj_bias.normal_()
    return mha.eval()


def _attention(q, k, v, heads: int) -> torch.Tensor:
    """Multi-head scaled dot-product attention, by hand: (B, Nq, D) x (B, Nk, D)."""
    b, nq, d = q.shape
    dh = d // heads
    split = lambda t: t.view(b, t.shape[1], heads, dh).transpose(1, 2)  # noqa: E731
    w = (split(q) @ split(k).transpose(-1, -2) / math.sqrt(dh)).softmax(-1)
    return (w @ split(v)).transpose(1, 2).reshape(b, nq, d)


def test_s_zero_is_standard_attention_in_a_block_and_in_the_whole_tower(visual):
    mha, z = _mha(), torch.randn(3, 7, 16)
    off = PrefixAttention(copy.deepcopy(mha), "adapter", rank=4, scale=0.0)
    torch.testing.assert_close(off(z)[0], mha(z, z, z, need_weights=False)[0])
    x = torch.randn(2, 3, 32, 32)
    plain = encode_pre_projection(visual, x)
    zero = PerfixViT(copy.deepcopy(visual), 5, "fedperfix", rank=4, scale=0.0)
    torch.testing.assert_close(encode_pre_projection(zero.visual, x), plain)
    on = PerfixViT(copy.deepcopy(visual), 5, "fedperfix", rank=4, scale=0.8)
    assert not torch.allclose(encode_pre_projection(on.visual, x), plain, atol=1e-4)


def test_adapter_prefixes_follow_eq_4_and_5():
    mha, z, s = _mha(), torch.randn(2, 5, 16), 0.7
    att = PrefixAttention(copy.deepcopy(mha), "adapter", rank=3, scale=s)
    wq, wk, wv = mha.in_proj_weight.chunk(3)
    bq, bk, bv = mha.in_proj_bias.chunk(3)
    p = torch.tanh(z @ att.prefix.down.weight.T + att.prefix.down.bias) @ att.prefix.up.weight.T \
        + att.prefix.up.bias  # eq. 4: tanh(Z W_down) W_up, then split into P_k | P_v
    pk, pv = p[..., :16], p[..., 16:]
    out = _attention(z @ wq.T + bq, z @ wk.T + bk + s * pk, z @ wv.T + bv + s * pv, 2)
    expected = out @ mha.out_proj.weight.T + mha.out_proj.bias
    torch.testing.assert_close(att(z)[0], expected, atol=1e-5, rtol=1e-5)


def test_vanilla_prefix_tokens_are_concatenated_to_every_heads_keys_and_values():
    mha, z = _mha(), torch.randn(2, 5, 16)
    att = PrefixAttention(copy.deepcopy(mha), "tokens", num_tokens=3)
    wq, wk, wv = mha.in_proj_weight.chunk(3)
    bq, bk, bv = mha.in_proj_bias.chunk(3)
    keys = torch.cat([att.prefix_k.expand(2, -1, -1), z @ wk.T + bk], dim=1)  # eq. 3
    values = torch.cat([att.prefix_v.expand(2, -1, -1), z @ wv.T + bv], dim=1)
    expected = _attention(z @ wq.T + bq, keys, values, 2) @ mha.out_proj.weight.T \
        + mha.out_proj.bias
    torch.testing.assert_close(att(z)[0], expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="unmasked"):
        att(z, attn_mask=torch.zeros(5, 5))


def test_each_methods_local_part(visual):
    parts = {m: PerfixViT(copy.deepcopy(visual), 4, m, rank=4) for m in METHODS}
    for m, model in parts.items():
        local, glob = set(model.local_names()), set(model.global_names())
        assert not local & glob, m
        trainable = {n for n, p in model.named_parameters() if p.requires_grad}
        assert local | glob == trainable, m
    assert parts["fedavg"].local_names() == [] and parts["local"].global_names() == []
    assert set(parts["fedrep"].local_names()) == {"head.weight", "head.bias"}
    assert not any(n.startswith("head.") for n in parts["fedbabu"].global_names())
    assert not parts["fedbabu"].head.weight.requires_grad  # frozen while federating
    assert all(".ln_" in f".{n}" for n in parts["fedbn"].local_names())
    perfix = set(parts["fedperfix"].local_names())
    assert {n for n in perfix if not n.startswith("head.")} == \
        {n for n, _ in parts["fedperfix"].named_parameters() if ".attn.prefix." in n}
    assert any(".attn.in_proj_weight" in n for n in parts["fedperfix"].global_names())
    assert any(".attn.in_proj_weight" in n for n in parts["vanilla_attention"].local_names())
    # a plain tower's weights load into the prefixed one (same names for the shared part)
    plain = {k: v for k, v in visual.state_dict().items() if k != "proj"}
    missing = parts["fedperfix"].visual.load_state_dict(plain, strict=False)
    assert missing.unexpected_keys == []
    assert all(".attn.prefix." in k for k in missing.missing_keys)
    with pytest.raises(ValueError, match="unknown method"):
        PerfixViT(copy.deepcopy(visual), 4, "apfl")


def test_forward_is_a_head_on_the_pooled_feature(visual):
    model = PerfixViT(copy.deepcopy(visual), 4, "fedavg")
    x = torch.randn(2, 3, 32, 32)
    feats = encode_pre_projection(visual, x)
    torch.testing.assert_close(model(x), F.linear(feats, model.head.weight, model.head.bias))


def test_artifact_assembles_global_plus_the_clients_part_strictly(tmp_path):
    from model_store.perfix_artifact import open_perfix, save_perfix
    from model_store.testing import make_tiny_perfix

    ref = make_tiny_perfix(tmp_path, clients=("a", "b"), seed=1)
    fed = open_perfix(tmp_path, ref.version, device="cpu")
    a = fed.classifier("a")
    glob, mine = fed.artifact.tensors("global"), fed.client_state("a")
    state = a.model.state_dict()
    assert all(torch.equal(state[k], v) for k, v in {**glob, **mine}.items())
    with pytest.raises(KeyError, match="no model for client"):
        fed.classifier("nobody")
    broken = {k: v for k, v in mine.items() if not k.startswith("head.")}
    bad = save_perfix(tmp_path, model_cfg=dict(fed.config, rank=4), class_names=fed.class_names,
                      foundation={k: fed.config["backbone"][k] for k in ("version", "sha256")},
                      global_state=glob, client_states={"a": broken},
                      client_acc={})  # fmt: skip
    with pytest.raises(ValueError, match="does not match"):
        open_perfix(tmp_path, bad.version, device="cpu").classifier("a")
