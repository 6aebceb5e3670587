"""A text encoder fine-tuned to read a task description as a catalogue's class set and domain.

The rules (``service.kinds.task_request``) read requests through word lists written from
sets the project had read; on sets nobody had read they stayed at about 60 % exact answers for
six stops (docs/results-resolution.md, stop 57). This model learns the reading from the labelled
requests instead: MiniLM's transformer, its mean-pooled last layer, one logit per class (asked
for or not) and one per domain (``None`` first: no domain asked); with the label-attention
head (the default since stop 58) each class also reads the tokens through its own attention.
It is trained by ``tailor train request-reader`` (``trainer.reader``) and read by
``service.kinds.tuned``.

A saved model is one folder: ``weights.safetensors`` (every tensor), ``reader.json`` (classes,
domains, the head, the encoder's config, the version) and the tokenizer's own files. It holds
no code and loads offline; a folder of another version is refused (``ValueError``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

VERSION = "request-reader-1"
WEIGHTS, CONFIG = "weights.safetensors", "reader.json"


HEADS = ("mean", "label-attention")


class RequestModel(torch.nn.Module):
    """Encoder + mean pooling + a class head (one logit each) and a domain head.

    With ``head="label-attention"`` each class also attends over the tokens with its own query
    and adds a logit read from what it attended to (label-wise attention, as in LAAT, Vu et
    al. 2020). Why: the mean-pooled reader's errors on unread sets were mostly classes that
    were not asked for but often are together ("bag, dress, shirt" read with ``t-shirt`` and
    ``trouser``); a class's own attention ties its logit to the words that name it. The added
    logit starts at zero, so training starts from the mean-pooled model.

    Args:
        encoder: a ``transformers`` encoder (``BertModel``) returning ``last_hidden_state``.
        classes: the catalogue's class names, in catalogue order.
        domains: the catalogue's domains; the domain head has one more output, "no domain",
            first.
        head: ``"mean"`` or ``"label-attention"``.
    """

    def __init__(self, encoder: torch.nn.Module, classes: list[str], domains: list[str],
                 head: str = "mean"):
        super().__init__()
        if head not in HEADS:
            raise ValueError(f"head {head!r} is not one of {HEADS}")
        self.encoder, self.classes, self.domains = encoder, list(classes), list(domains)
        self.head, width = head, encoder.config.hidden_size
        self.drop = torch.nn.Dropout(0.1)
        self.class_head = torch.nn.Linear(width, len(classes))
        self.domain_head = torch.nn.Linear(width, len(domains) + 1)
        if head == "label-attention":
            self.class_query = torch.nn.Linear(width, len(classes), bias=False)
            self.class_read = torch.nn.Parameter(torch.zeros(len(classes), width))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """(class logits, domain logits) per request."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = self.drop((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0))
        classes = self.class_head(pooled)
        if self.head == "label-attention":
            scores = self.class_query(hidden).masked_fill(mask == 0, -1e4)  # (batch, tokens, C)
            attended = torch.einsum("btc,btw->bcw", scores.softmax(1), self.drop(hidden))
            classes = classes + (attended * self.class_read).sum(-1)
        return classes, self.domain_head(pooled)


class RequestReader:
    """A loaded :class:`RequestModel` with its tokenizer, reading texts on one device."""

    def __init__(self, model: RequestModel, tokenizer: Any, max_length: int = 128,
                 device: str | torch.device = "cpu"):
        self.model, self.tokenizer, self.max_length = model.eval().to(device), tokenizer, max_length
        self.device = torch.device(device)
        self.runtime, self._onnx = "torch", None

    def use_onnx(self) -> str:
        """Run on ONNX Runtime from now on, where it loads and agrees with PyTorch (on a CPU
        only: :mod:`model_store.request_onnx`); returns the runtime in use."""
        if self.device.type == "cpu":
            from model_store.request_onnx import onnx_probabilities

            self._onnx = onnx_probabilities(self)
            self.runtime = "onnx" if self._onnx is not None else "torch"
        return self.runtime

    @property
    def classes(self) -> list[str]:
        """The catalogue's classes, in the order of the class head's outputs."""
        return self.model.classes

    @property
    def domains(self) -> list[str]:
        """The catalogue's domains; the domain head's outputs are ``[None, *domains]``."""
        return self.model.domains

    def length(self, text: str) -> int:
        """How many tokens ``text`` is, special ones included (more than ``max_length``: the
        reader would not see its end)."""
        return len(self.tokenizer(text)["input_ids"])

    def batch(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """Token ids and mask of ``texts`` (padded to the longest, cut at ``max_length``)."""
        enc = self.tokenizer(list(texts), padding=True, truncation=True,
                             max_length=self.max_length, return_tensors="pt")
        return {"input_ids": enc["input_ids"].to(self.device),
                "attention_mask": enc["attention_mask"].to(self.device)}

    def probabilities(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(P(class asked for), P(domain)) per text; the domain columns are ``[None, *domains]``."""
        if self._onnx is not None:
            return self._onnx(texts)
        return self.torch_probabilities(texts)

    @torch.no_grad()
    def torch_probabilities(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`probabilities` on PyTorch, whatever the runtime."""
        classes, domains = self.model(**self.batch(texts))
        return (torch.sigmoid(classes).float().cpu().numpy(),
                torch.softmax(domains, -1).float().cpu().numpy())


def reading(p_classes: np.ndarray, p_domain: np.ndarray, domains: list[str],
            with_domain: bool = True) -> tuple[list[int], str | None, float]:
    """(classes above one half, the likeliest domain, confidence) of one text. The confidence
    is the chance that every class's call and the domain are right, taken as independent: the
    product of max(p, 1 - p) over the classes, times the domain's probability (left out when
    ``with_domain`` is false: the request fixed its domain)."""
    chosen = [int(k) for k in np.flatnonzero(p_classes > 0.5)]
    d = int(p_domain.argmax())
    domain = None if d == 0 else domains[d - 1]
    return chosen, domain, chance(p_classes, p_domain, domains, chosen, domain, with_domain)


def chance(p_classes: np.ndarray, p_domain: np.ndarray, domains: list[str], chosen: list[int],
           domain: str | None, with_domain: bool = True) -> float:
    """The chance of one reading (``chosen`` classes asked for, the others not, and
    ``domain``), each call taken as independent: the product of p or 1 - p over the classes,
    times the domain's probability (left out when ``with_domain`` is false). A text's own
    reading (:func:`reading`) is the likeliest, so its chance is its confidence."""
    asked = np.zeros(len(p_classes), dtype=bool)
    asked[list(chosen)] = True
    p = float(np.prod(np.where(asked, p_classes, 1.0 - p_classes)))
    if not with_domain:
        return p
    return p * float(p_domain[0 if domain is None else 1 + domains.index(domain)])


def save_reader(model: RequestModel, tokenizer: Any, folder: Path, max_length: int,
                provenance: dict[str, Any]) -> Path:
    """Write ``model`` to ``folder`` (weights, config, tokenizer); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    save_file(state, str(folder / WEIGHTS), metadata={"version": VERSION,
                                                       "labels": _labels(model)})
    tokenizer.save_pretrained(str(folder))
    (folder / CONFIG).write_text(json.dumps({
        "version": VERSION, "classes": model.classes, "domains": model.domains,
        "max_length": max_length, "head": model.head,
        "encoder": model.encoder.config.to_dict(),
        **provenance}, indent=1))
    return folder


def _labels(model: RequestModel) -> str:
    """The classes and domains the heads' rows stand for, as the weights file records them."""
    return json.dumps([model.classes, model.domains])


def load_reader(folder: Path, device: str | torch.device = "cpu") -> RequestReader:
    """The reader saved in ``folder``. ``ValueError`` for another version, a config that does
    not match its weights (shapes, or the classes and domains they were saved with), a
    ``max_length`` past the encoder's positions, or a damaged weights file;
    ``FileNotFoundError`` for a missing file."""
    from safetensors import safe_open
    from transformers import AutoTokenizer, BertConfig, BertModel

    config = json.loads((folder / CONFIG).read_text())
    if config.get("version") != VERSION:
        raise ValueError(f"{folder} holds a request reader of version {config.get('version')!r}, "
                         f"this code reads {VERSION!r}: train it again")
    encoder = BertModel(BertConfig.from_dict(config["encoder"]), add_pooling_layer=False)
    model = RequestModel(encoder, config["classes"], config["domains"],
                         config.get("head", "mean"))
    max_length = int(config.get("max_length", 128))
    if max_length > encoder.config.max_position_embeddings:
        raise ValueError(f"{folder}: max_length {max_length} is past the encoder's "
                         f"{encoder.config.max_position_embeddings} positions")
    try:
        with safe_open(str(folder / WEIGHTS), "pt") as f:
            saved = (f.metadata() or {}).get("labels")
        model.load_state_dict(load_file(str(folder / WEIGHTS)))
    except FileNotFoundError:
        raise
    except Exception as err:  # misshapen or missing tensors, a damaged file
        raise ValueError(f"{folder}: the weights do not fit its config ({err})") from err
    if saved not in (None, _labels(model)):  # a file that records none is taken as it is
        raise ValueError(f"{folder}: the weights were saved for other classes or domains "
                         f"than its config names")
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    return RequestReader(model, tokenizer, max_length, device)
