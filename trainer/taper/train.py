"""``tailor train taper``: train TAPER + baselines + controls for each seed, score, save artifact.

Outputs (under ``--out``, default ``.tailor/runs/taper-<config>``): per-seed checkpoints (resume by
re-running the same command), ``seed<k>/curves.json`` and ``results.json``, ``summary.json``,
``report.md`` and PNGs. The TAPER artifact of the first seed is written to the model store with
``model_store.taper.save_taper`` (metrics include ``default_method``, chosen on val tasks).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from trainer.taper.config import CONFIGS, TaperConfig, get_config
from trainer.taper.data import TEST, TRAIN, VAL, make_split
from trainer.taper.describe import Describer, encode_class_text
from trainer.taper.run import Env, train_all
from trainer.taper.stages import Context


def auto_threads(parallel: bool) -> int:
    """1 thread when processes run side by side or the box is busy, else every core."""
    cores = os.cpu_count() or 1
    if parallel:
        return 1
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, cores if busy < 0.5 * cores else 1)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """CLI arguments (``--set key=value`` overrides any ``TaperConfig`` field)."""
    p = argparse.ArgumentParser(prog="tailor train taper", description=__doc__)
    p.add_argument("--config", default="default", choices=sorted(CONFIGS))
    p.add_argument("--data-dir", default=os.environ.get("TAILOR_DATA_DIR", ".tailor/data"))
    p.add_argument("--store-dir", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    p.add_argument("--out", default=None, help="run directory (default .tailor/runs/taper-<cfg>)")
    p.add_argument("--seeds", default=None, help="comma-separated seeds (default: config's)")
    p.add_argument("--ablations", action="store_true", help="also train Table-6 ablations")
    p.add_argument("--no-artifact", action="store_true", help="do not write to the model store")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads per process; 0 = auto: all cores when the machine is "
                        "idle, else 1 (on a loaded 2-core box 2 threads were ~10x slower)")
    p.add_argument("--jobs", type=int, default=1, help="seeds trained in parallel processes")
    p.add_argument("--seed-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--data", default=None, metavar="PATH",
                   help="train on your images: PATH/class/* or PATH/domain/class/* "
                        "(png, jpg, webp) instead of Tailor-PACS")
    p.add_argument("--catalogue", default=None, metavar="FILE",
                   help="with --data: YAML/JSON class definitions, prompts, aliases, groups and "
                        "domain descriptions (see trainer/data/user_catalogue.py)")
    p.add_argument("--groups", type=int, default=3,
                   help="with --data: groups (specialists) to cluster classes into when the "
                        "catalogue gives none")
    p.add_argument("--image-size", type=int, default=None, choices=(32, 48, 64, 96, 128, 224),
                   help="train (and serve) at this resolution: shorter side resized, centre "
                        "crop (default: the config's, 32)")
    p.add_argument("--bad-images", choices=("fail", "skip"), default="fail",
                   help="with --data: an unreadable image fails the run (naming it) or is "
                        "skipped and counted")
    return p.parse_args(argv)


def _coerce(cfg: TaperConfig, key: str, raw: str):
    if not hasattr(cfg, key):
        raise SystemExit(f"--set: unknown config field {key!r}")
    current = getattr(cfg, key)
    if isinstance(current, bool):
        return raw.lower() in ("1", "true", "yes")
    if isinstance(current, tuple):
        return tuple(int(v) for v in raw.split(","))
    return type(current)(raw)


def build_config(args: argparse.Namespace) -> TaperConfig:
    """Named config + ``--set`` overrides + ``--seeds``."""
    overrides = {}
    for item in args.set:
        key, sep, raw = item.partition("=")
        if not sep:
            raise SystemExit(f"--set expects KEY=VALUE, got {item!r}")
        overrides[key] = _coerce(CONFIGS[args.config], key, raw)
    if args.seeds:
        overrides["seeds"] = tuple(int(s) for s in args.seeds.split(","))
    if getattr(args, "image_size", None):
        overrides["image_size"] = args.image_size
    return get_config(args.config, **overrides)


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
    return Env(
        cfg=cfg, train=make_split(data, TRAIN), val=make_split(data, VAL),
        test=make_split(data, TEST), catalogue=catalogue, domains=list(DOMAINS), groups=groups,
        class_text=load_class_text(catalogue, out_dir / "class_text.safetensors"),
        task_fn=training_task_fn(catalogue, cfg.k), out_dir=out_dir,
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


def training_task_fn(catalogue: list[dict], k: int):
    """Tasks for stage 3: the shared definition (nearest classes, same group first)."""
    from trainer.taper.tasks import neighbour_task_fn

    return neighbour_task_fn(catalogue, k)


def check_resumable(run_dir: Path, env: Env) -> None:
    """Checkpoints in ``run_dir`` are resumed only by the config and data that made them.

    Every stage resumes from its checkpoint file when it exists; without this stamp a changed
    config (another budget, width, k…) or dataset would silently reuse stages trained for the
    old one. The stamp hashes the config (seeds aside: each seed has its own directory) and the
    data fingerprint; a mismatch stops the run before anything is trained.
    """
    import hashlib

    recipe = {k: v for k, v in env.cfg.to_json().items() if k != "seeds"}
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


def run_seed(env: Env, seed: int, ablations: bool) -> tuple[dict, dict]:
    """Train and score one seed; returns (results, trained methods)."""
    from trainer.taper.scoring import score_seed

    torch.manual_seed(seed)
    run_dir = env.out_dir / f"seed{seed}"
    run_dir.mkdir(parents=True, exist_ok=True)
    check_resumable(run_dir, env)
    ctx = Context(cfg=env.cfg, seed=seed, train=env.train, num_classes=len(env.catalogue),
                  groups=env.groups, task_fn=env.task_fn, run_dir=run_dir)
    if (run_dir / "curves.json").exists():  # resumed: keep the finished stages' curves
        ctx.curves = json.loads((run_dir / "curves.json").read_text())
    describer = Describer(env.class_text, env.cfg.description)
    t0 = time.time()
    methods = train_all(ctx, env, describer, ablations)
    train_s = time.time() - t0
    cached = run_dir / "results.json"
    if cached.exists():  # scored by a previous (or parallel) run: only re-calibrate BN
        from trainer.taper.scoring import calibrate_all

        calibrate_all(ctx, {k: methods[k] for k in ("selection", "taper")})
        return json.loads(cached.read_text()), methods
    results = score_seed(env, ctx, methods)
    results["train_seconds"] = train_s
    cached.write_text(json.dumps(results, indent=1))
    return results, methods


def run_parallel(argv: list[str], seeds: tuple[int, ...], jobs: int, out_dir: Path) -> None:
    """Train+score seeds in ``jobs`` child processes (logs in ``<out>/seed<k>.log``)."""
    import subprocess
    import sys

    pending, running = list(seeds), []
    while pending or running:
        while pending and len(running) < jobs:
            seed = pending.pop(0)
            log = open(out_dir / f"seed{seed}.log", "w")  # noqa: SIM115 (closed below)
            args = [a for a in argv if a != "--ablations" or seed == seeds[0]]
            cmd = [sys.executable, "-m", "trainer.taper.train", *args, "--seeds", str(seed),
                   "--seed-only", "--jobs", "1"]
            running.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log))
        proc, log = running.pop(0)
        if proc.wait() != 0:
            raise SystemExit(f"a seed process failed; see {log.name}")
        log.close()


def strip_seeds(argv: list[str]) -> list[str]:
    """``argv`` without ``--seeds X`` / ``--jobs N`` (the parent sets them per child)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("--seeds", "--jobs"):
            skip = True
        elif not arg.startswith(("--seeds=", "--jobs=")):
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> dict:
    """Entry point of ``tailor train taper``; returns the summary dict."""
    from trainer.taper.report import summarise, write_report
    from trainer.taper.save import save_artifact

    args = parse_args(argv)
    torch.set_num_threads(args.threads or auto_threads(parallel=args.jobs > 1 or args.seed_only))
    cfg = build_config(args)
    out_dir = Path(args.out or f".tailor/runs/taper-{cfg.name}")
    if args.data:
        from trainer.taper.user_data import load_user_env

        env, cfg = load_user_env(cfg, args, out_dir)
    else:
        env = load_env(cfg, args.data_dir, out_dir)
    (out_dir / "config.json").write_text(json.dumps(cfg.to_json(), indent=1))
    if args.seed_only:
        run_seed(env, cfg.seeds[0], ablations=args.ablations)
        return {}
    if args.jobs > 1 and len(cfg.seeds) > 1:
        raw = [a for a in (argv if argv is not None else sys.argv[1:])]
        run_parallel(strip_seeds(raw), cfg.seeds, args.jobs, out_dir)
    per_seed, first = {}, None
    for i, seed in enumerate(cfg.seeds):
        results, methods = run_seed(env, seed, ablations=args.ablations and i == 0)
        per_seed[seed] = results
        first = first or (seed, results, methods)
    summary = summarise(cfg, per_seed)
    write_report(out_dir, cfg, summary, per_seed, first[2],
                 class_names=[c["name"] for c in env.catalogue])
    if not args.no_artifact:
        ref = save_artifact(args.store_dir, env, first[2], summary, first[1])
        summary["artifact"] = {"version": ref.version, "path": str(ref.path)}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: summary[k] for k in ("ratio", "main") if k in summary}, indent=1))
    return summary


if __name__ == "__main__":  # pragma: no cover
    main()
