"""A linear reader of class-list phrases: which catalogue class a definition describes.

The rules match a phrase that describes a class without naming it ("the animal that says
moo") by its text-encoder similarity to each class's names, prompts and definition; where no
class is near enough they answer 422. On the definitions rows of sets 90-101 the rules refused
47 answerable lists of 360, often where the nearest class was right but not by the margin
they ask for (docs/results-resolution.md, stop 60). This model learns the reading instead
from the ~7,000 labelled definition phrases of the resolution sets: a multinomial logistic
regression over the same encoder's embedding of the phrase. Why a linear model over frozen
embeddings and not a fine-tuned encoder: it fits in seconds, its probabilities are
calibrated enough to act on, and it reads with the embeddings the service computes anyway.

A softmax over the catalogue alone has no way to say "none of these": an outside review found
it reading "a pet hamster" as cat at 0.91. So the model has one more output, *none*, learnt
from definitions of things the catalogue lacks (the hard negatives of
``resolution_hard.jsonl``); its mass lowers every class's probability.

Trained by ``tailor train phrase-reader`` (``trainer.reader.phrases``), read by
``service.kinds.phrases``. One ``.safetensors`` file: ``weight`` ((classes + 1) x dim, *none*
last) and ``bias``, with the classes, the encoder and the files it learnt from in its metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

VERSION = "phrase-reader-1"


def encoder_key(encoder: Any) -> str:
    """The text encoder a model reads with, as files record it (folder name / dimension):
    a model fitted on one encoder's embeddings reads nonsense from another's."""
    name = Path(str(getattr(encoder, "path", type(encoder).__name__))).name
    return f"{name}/{getattr(encoder, 'dim', '?')}"


@dataclass
class PhraseModel:
    """Softmax(weight · embedding + bias) over ``classes`` (catalogue order) and *none*.

    Args:
        classes: the class names, in the catalogue's order.
        weight: float32 (len(classes) + 1, dim); the last row is *none of these*.
        bias: float32 (len(classes) + 1,).
        encoder: :func:`encoder_key` of the encoder it was fitted on.
        fitted_on: free-form facts about the fit (files, rows, regularisation).
    """

    classes: list[str]
    weight: np.ndarray
    bias: np.ndarray
    encoder: str
    fitted_on: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.weight = np.asarray(self.weight, dtype=np.float32)
        self.bias = np.asarray(self.bias, dtype=np.float32)
        k = len(self.classes) + 1
        if self.weight.ndim != 2 or self.weight.shape[0] != k or self.bias.shape != (k,):
            raise ValueError(f"a phrase reader for {len(self.classes)} classes needs weight "
                             f"({k}, dim) and bias ({k},) (the last: none of these), not "
                             f"{self.weight.shape} and {self.bias.shape}")

    def probabilities(self, embeddings: np.ndarray) -> np.ndarray:
        """P(class | phrase) for each row of ``embeddings`` (n, dim) -> (n, classes + 1), the
        last column *none of these*."""
        logits = np.asarray(embeddings, dtype=np.float32) @ self.weight.T + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def save(self, path: Path) -> None:
        """Write the model to ``path`` (safetensors, metadata as JSON strings)."""
        from safetensors.numpy import save_file

        path.parent.mkdir(parents=True, exist_ok=True)
        save_file({"weight": self.weight, "bias": self.bias}, str(path), metadata={
            "version": VERSION, "classes": json.dumps(self.classes), "encoder": self.encoder,
            "fitted_on": json.dumps(self.fitted_on)})  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> PhraseModel:
        """The model saved at ``path``; ``ValueError`` for another version or a damaged file."""
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as f:
            meta = f.metadata() or {}
            if meta.get("version") != VERSION:
                raise ValueError(f"{path} is {meta.get('version')!r}, this code reads "
                                 f"{VERSION!r}: fit it again (tailor train phrase-reader)")
            weight, bias = f.get_tensor("weight"), f.get_tensor("bias")
        return cls(json.loads(meta["classes"]), weight, bias, meta.get("encoder", "?"),
                   json.loads(meta.get("fitted_on", "{}")))
