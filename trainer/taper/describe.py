"""Task descriptions for the mixer: text embeddings of class prompts (or definitions), or BoW.

Per the paper (§3.5) a task's description is the mean of the normalised prompt embeddings of its
classes; when a task fixes a domain the domain's prompts are used ("a sketch of a horse"), as in
the DomainNet experiment (§4.4). Prompt embeddings are computed once per run with the bundled
MiniLM (``model_store.text.TextEncoder``) and stored in the artifact (``class_text``) so the
service embeds tasks exactly as training did.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from trainer.data.catalogue import DOMAINS, class_prompts


def _normalise(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def encode_class_text(encoder, catalogue: Sequence[dict],
                      domains: Sequence[str] = DOMAINS) -> dict[str, torch.Tensor]:
    """All text tensors of a catalogue, in the artifact's ``class_text`` layout.

    Returns ``prompts`` (N, P, d), ``names`` (N, d), ``domain_prompts`` (D, N, P, d) and
    ``definitions`` (N, d), all L2-normalised float32.
    """
    names = [c["name"] for c in catalogue]
    n = len(names)

    def enc(texts: list[str]) -> torch.Tensor:
        return torch.from_numpy(np.asarray(encoder.encode(texts), dtype=np.float32))

    generic = [c.get("prompts") or class_prompts(c["name"]) for c in catalogue]
    p = len(generic[0])
    prompts = enc([t for group in generic for t in group]).view(n, p, -1)
    domain_prompts = torch.stack([
        enc([t for c in catalogue
             for t in (c.get("domain_prompts") or {}).get(dom) or class_prompts(c["name"], dom)
             ]).view(n, p, -1)
        for dom in domains
    ])
    definitions = enc([c.get("definition") or c["name"] for c in catalogue])
    return {"prompts": prompts, "names": enc(names), "domain_prompts": domain_prompts,
            "definitions": definitions}


class Describer:
    """Maps a task (classes, domain) to the mixer's input vector.

    ``kind`` "text" uses prompt embeddings; "definitions" uses the one-sentence definitions
    (free-language evaluation, §5.1); "bow" is the N-hot class vector plus a domain one-hot.
    """

    def __init__(self, class_text: dict[str, torch.Tensor], kind: str = "text"):
        if kind not in ("text", "definitions", "bow"):
            raise ValueError(f"unknown description kind {kind!r}")
        self.kind = kind
        # Mean of normalised prompts, NOT re-normalised per class, so that a task's vector equals
        # normalise(mean over all its prompts) -- model_store.text.task_embedding's formula.
        self.class_vec = _normalise(class_text["prompts"]).mean(1)  # (N, d)
        self.domain_vec = _normalise(class_text["domain_prompts"]).mean(2)  # (D, N, d)
        self.def_vec = _normalise(class_text["definitions"])
        self.num_classes, self.num_domains = self.class_vec.shape[0], self.domain_vec.shape[0]

    @property
    def dim(self) -> int:
        """Input size of the mixer."""
        if self.kind == "bow":
            return self.num_classes + self.num_domains
        return self.class_vec.shape[1]

    def __call__(self, classes: Sequence[int], domain: int | None = None) -> torch.Tensor:
        """Description vector of one task."""
        idx = torch.as_tensor(list(classes), dtype=torch.long)
        if self.kind == "bow":
            vec = torch.zeros(self.dim)
            vec[idx] = 1.0
            if domain is not None:
                vec[self.num_classes + domain] = 1.0
            return vec
        if self.kind == "definitions":
            rows = self.def_vec[idx]
        else:
            rows = (self.class_vec if domain is None else self.domain_vec[domain])[idx]
        return _normalise(rows.mean(0))
