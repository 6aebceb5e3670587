"""A tiny real text encoder folder for tests of the request reader.

A two-layer, 32-wide BERT with random weights, saved with the bundled MiniLM's tokenizer in the
Hugging Face layout that ``BertModel.from_pretrained`` and ``AutoTokenizer.from_pretrained``
read. Training it for a few steps exercises exactly the code that fine-tunes MiniLM, in
seconds.
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
