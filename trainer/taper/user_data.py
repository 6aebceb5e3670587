"""``tailor train taper --data PATH [--catalogue FILE]``: a TAPER run on the user's images.

The tree is read by ``trainer.data.imagefolder`` (``root/class/*`` or ``root/domain/class/*``),
the catalogue built by ``trainer.data.user_catalogue`` (the file's definitions, prompts, aliases,
groups and domain descriptions; groups clustered from text when absent), and the run is the
same three stages as on Tailor-PACS. A flat tree has one domain, so specialists are sharded by
group, never by domain (one shard would reduce TAPER to one model).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.torch import load_file, save_file

from trainer.taper.config import TaperConfig
from trainer.taper.data import TEST, TRAIN, VAL, make_split
from trainer.taper.run import Env


def load_user_env(cfg: TaperConfig, args: Any, out_dir: Path) -> tuple[Env, TaperConfig]:
    """The run's environment on the user's data, and the config it actually uses."""
    from model_store.text import TextEncoder
    from trainer.data.imagefolder import read_imagefolder
    from trainer.data.user_catalogue import build_catalogue, read_catalogue_file
    from trainer.taper.describe import encode_class_text
    from trainer.taper.inputs import training_task_fn

    if cfg.plain_prob > 0:
        raise SystemExit("plain_prob swaps in plain scans of Tailor-PACS source images; with "
                         "--data there are none (leave it at 0)")
    skipped: list[str] = []
    data = read_imagefolder(args.data, skip_bad=args.bad_images == "skip", skipped=skipped,
                            size=cfg.image_size)
    if skipped:
        print(f"skipped {len(skipped)} unreadable image(s), e.g. {skipped[0]}", flush=True)
    spec = read_catalogue_file(args.catalogue) if args.catalogue else None
    encoder = TextEncoder(device="cpu")
    cat = build_catalogue(list(data.class_names), list(data.domain_names), spec,
                          lambda texts: np.asarray(encoder.encode(texts)), args.groups)
    if len(cat.domains) == 1 and cfg.shard_by != "group":
        cfg = cfg.replace(shard_by="group")
    if cfg.k > len(cat.entries):
        raise SystemExit(f"config {cfg.name!r} trains {cfg.k}-way tasks but {args.data} has "
                         f"{len(cat.entries)} classes; pass --set k={len(cat.entries)}")
    out_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(json.dumps([cat.artifact_json(), [e["domain_prompts"] for e in
                                        cat.entries]], sort_keys=True).encode()).hexdigest()
    cache = out_dir / f"class_text-{digest[:12]}.safetensors"
    if cache.exists():
        text = load_file(str(cache))
    else:
        text = encode_class_text(encoder, cat.entries, cat.domains)
        save_file({k: v.contiguous() for k, v in text.items()}, str(cache))
    env = Env(cfg=cfg, train=make_split(data, TRAIN), val=make_split(data, VAL),
              test=make_split(data, TEST), catalogue=cat.entries, domains=cat.domains,
              groups=cat.group_ids, class_text=text, task_fn=training_task_fn(cat.entries, cfg),
              out_dir=out_dir, fingerprint=str(data.fingerprint),
              catalogue_doc=cat.artifact_json())
    return env, cfg
