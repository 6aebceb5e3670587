"""A tiny real text encoder folder for tests of the request reader, and readers set by hand.

A two-layer, 32-wide BERT with random weights, saved with the bundled MiniLM's tokenizer in the
Hugging Face layout that ``BertModel.from_pretrained`` and ``AutoTokenizer.from_pretrained``
read. Training it for a few steps exercises exactly the code that fine-tunes MiniLM, in
seconds. :func:`forced_reader` saves a real reader folder around it whose heads read the same
classes and domain whatever the text, so the paths a test takes are known in advance.
"""

from __future__ import annotations

from pathlib import Path

import torch


def make_tiny_encoder(folder: Path, seed: int = 0) -> Path:
    """Write the tiny encoder and the bundled tokenizer to ``folder``; returns it."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from model_store.text import bundled_model_path

    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path(), local_files_only=True)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=256)
    BertModel(config, add_pooling_layer=False).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def forced_reader(folder: Path, names: list[str], domains: list[str], reads: list[str],
                  domain: str | None, sure: float = 12.0, head: str = "mean") -> Path:
    """Save to ``folder`` a request reader over ``names`` and ``domains`` that reads ``reads``
    and ``domain`` for every text, with logits of size ``sure`` (0: every class at one half);
    returns the folder. With ``head="label-attention"`` the attention's read-out stays zero, so
    it reads the same, through the default head's whole graph."""
    from transformers import AutoTokenizer, BertModel

    from model_store.request_model import RequestModel, save_reader

    base = make_tiny_encoder(folder.with_name(folder.name + "-base"))
    model = RequestModel(BertModel.from_pretrained(str(base), add_pooling_layer=False), names,
                         domains, head)
    with torch.no_grad():
        for head in (model.class_head, model.domain_head):
            head.weight.zero_()
        model.class_head.bias.copy_(torch.tensor([sure if n in reads else -sure for n in names]))
        d = 0 if domain is None else 1 + domains.index(domain)
        model.domain_head.bias.copy_(torch.tensor(
            [sure if i == d else -sure for i in range(len(domains) + 1)]))  # fmt: skip
    return save_reader(model, AutoTokenizer.from_pretrained(str(base)), folder, 64, {})
