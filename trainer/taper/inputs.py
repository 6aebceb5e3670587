"""What a TAPER run trains on: Tailor-PACS splits, class text, the task sampler, and the stamp
that keeps checkpoints from being resumed by another config or dataset.

(User image folders are read by ``trainer.taper.user_data``, which returns the same ``Env``.)
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from trainer.taper.config import TaperConfig
from trainer.taper.data import TEST, TRAIN, VAL, make_split
from trainer.taper.describe import encode_class_text
from trainer.taper.run import Env

# Config fields added after runs were stamped, with the value that reproduces those runs: left
# out of the stamp at that value, so directories stamped before the field existed still resume.
ADDED_LATER = {"plain_prob": 0.0, "train_ks": [], "cross_group_prob": 0.0}


def load_class_text(catalogue: list[dict], cache: Path) -> dict[str, torch.Tensor]:
    """Prompt/definition embeddings of the catalogue, cached in the run directory."""
    if cache.exists():
        return load_file(str(cache))
    from model_store.text import TextEncoder

    text = encode_class_text(TextEncoder(device="cpu"), catalogue)
    save_file({k: v.contiguous() for k, v in text.items()}, str(cache))
    return text


def load_env(cfg: TaperConfig, data_dir: str, out_dir: Path, data=None) -> Env:
    """Data splits, catalogue, text embeddings and the training task sampler."""
    from trainer.data.catalogue import DOMAINS, GROUPS, catalogue_for

    if data is None:
        data = load_data(cfg, data_dir)
    names = list(data.class_names)
    catalogue = catalogue_for(names)
    groups = [GROUPS.index(c["group"]) if c["group"] in GROUPS else 0 for c in catalogue]
    out_dir.mkdir(parents=True, exist_ok=True)
    train = make_split(data, TRAIN)
    if cfg.plain_prob > 0:
        train = with_plain(train, data, cfg)
    return Env(
        cfg=cfg, train=train, val=make_split(data, VAL),
        test=make_split(data, TEST), catalogue=catalogue, domains=list(DOMAINS), groups=groups,
        class_text=load_class_text(catalogue, out_dir / "class_text.safetensors"),
        task_fn=training_task_fn(catalogue, cfg), out_dir=out_dir,
        fingerprint=str(getattr(data, "fingerprint", "")),
    )


def load_data(cfg: TaperConfig, data_dir: str):
    """Tailor-PACS from ``trainer.data.pacs`` at the configured size, its 32² renders brought
    to ``cfg.image_size`` with the shared preprocessing when that differs."""
    import dataclasses

    import numpy as np
    from PIL import Image

    from model_store.images import fit_square
    from trainer.data.pacs import build_pacs

    data = build_pacs(data_dir, size=cfg.data_size)
    if cfg.image_size == data.images.shape[1]:
        return data
    images = np.stack([np.asarray(fit_square(Image.fromarray(im), cfg.image_size))
                       for im in data.images])
    return dataclasses.replace(data, images=images)


def plain_images(data, split: int, image_size: int, invert: bool = False) -> torch.Tensor:
    """uint8 NCHW plain scans (``trainer.data.render.plain``) of one split's source images, at
    the run's resolution through the shared preprocessing."""
    import numpy as np
    from PIL import Image

    from model_store.images import fit_square
    from trainer.data.render import plain
    from trainer.data.sources import images_by_id

    ids = np.asarray(data.source_ids)[np.asarray(data.split) == split]
    scans = [plain(im, invert) for im in images_by_id(ids)]
    if image_size != scans[0].shape[0]:
        scans = [np.asarray(fit_square(Image.fromarray(im), image_size)) for im in scans]
    return torch.from_numpy(np.stack(scans)).permute(0, 3, 1, 2).contiguous()


def with_plain(train, data, cfg: TaperConfig):
    """The training split with its plain scans attached for the ``plain_prob`` augmentation."""
    import dataclasses

    return dataclasses.replace(train, plain=plain_images(data, TRAIN, cfg.image_size),
                               plain_prob=cfg.plain_prob)


def training_task_fn(catalogue: list[dict], cfg: TaperConfig):
    """Tasks for stage 3: the shared definition (nearest classes, same group first) at ``k``,
    or over ``train_ks`` and crossing groups with ``cross_group_prob`` (issue 14 §7)."""
    from trainer.taper.tasks import neighbour_task_fn, training_tasks

    if not cfg.train_ks and cfg.cross_group_prob == 0:
        return neighbour_task_fn(catalogue, cfg.k)  # the documented runs' exact draws
    return training_tasks(catalogue, cfg.train_ks or (cfg.k,), cfg.cross_group_prob)


def check_resumable(run_dir: Path, env: Env) -> None:
    """Checkpoints in ``run_dir`` are resumed only by the config and data that made them.

    Every stage resumes from its checkpoint file when it exists; without this stamp a changed
    config (another budget, width, k…) or dataset would silently reuse stages trained for the
    old one. The stamp hashes the config (seeds aside: each seed has its own directory) and the
    data fingerprint; a mismatch stops the run before anything is trained.
    """
    import hashlib

    recipe = {k: v for k, v in env.cfg.to_json().items()
              if k != "seeds" and ADDED_LATER.get(k, object()) != v}
    digest = hashlib.sha256(json.dumps([recipe, env.fingerprint], sort_keys=True,
                                       default=str).encode()).hexdigest()
    stamp = run_dir / "run_stamp.json"
    if stamp.exists():
        made_by = json.loads(stamp.read_text()).get("sha256")
        if made_by != digest:
            raise SystemExit(f"{run_dir} holds checkpoints of another config or dataset; "
                             "pass a new --out (or delete it) to train from scratch")
    elif any(run_dir.glob("*.safetensors")):
        raise SystemExit(f"{run_dir} holds checkpoints of unknown provenance (no run_stamp"
                         ".json); pass a new --out (or delete it)")
    else:
        stamp.write_text(json.dumps({"sha256": digest, "config": recipe,
                                     "data_fingerprint": env.fingerprint}, indent=1))
