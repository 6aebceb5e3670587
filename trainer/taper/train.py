"""``tailor train taper``: train TAPER + baselines + controls for each seed, score, save artifact.

Outputs (under ``--out``, default ``.tailor/runs/taper-<config>``): per-seed checkpoints (resume by
re-running the same command), ``seed<k>/curves.json`` and ``results.json``, ``summary.json``,
``report.md`` and PNGs. The TAPER artifact of the first seed is written to the model store with
``model_store.taper.save_taper`` (metrics include ``default_method``, chosen on val tasks).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import torch

from trainer.taper.config import CONFIGS, TaperConfig, get_config
from trainer.taper.describe import Describer
from trainer.taper.device import PRECISIONS, Runtime, describe, make_runtime, shutdown
from trainer.taper.inputs import check_resumable, load_env
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
    p.add_argument("--device", default="auto",
                   help="auto (CUDA when present), cpu, cuda or cuda:N; under torchrun each "
                        "rank takes cuda:LOCAL_RANK")
    p.add_argument("--precision", default="auto", choices=PRECISIONS,
                   help="auto = bf16 autocast on CUDA, fp32 on CPU")
    p.add_argument("--checkpoint-minutes", type=float, default=5.0,
                   help="snapshot a training stage this often, so an interrupted run resumes "
                        "mid-stage (0 = every step)")
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
    declared = {f.name: f.type for f in dataclasses.fields(TaperConfig)}[key]
    if declared in ("float", float):  # a named config may hold 8 where 8.5 is allowed
        return float(raw)
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


def run_seed(env: Env, seed: int, ablations: bool, rt: Runtime | None = None,
             checkpoint_every: float = 300.0) -> tuple[dict, dict]:
    """Train and score one seed; returns (results, trained methods).

    Under torchrun every rank trains; rank 0 alone scores while the others wait (they return
    empty results).
    """
    from trainer.taper.device import main_first

    rt = rt or Runtime()
    torch.manual_seed(seed)
    run_dir = env.out_dir / f"seed{seed}"
    with main_first(rt) as first:
        run_dir.mkdir(parents=True, exist_ok=True)
        if first:
            check_resumable(run_dir, env)
    ctx = Context(cfg=env.cfg, seed=seed, train=env.train, num_classes=len(env.catalogue),
                  groups=env.groups, task_fn=env.task_fn, run_dir=run_dir, rt=rt,
                  checkpoint_every=checkpoint_every)
    if (run_dir / "curves.json").exists():  # resumed: keep the finished stages' curves
        ctx.curves = json.loads((run_dir / "curves.json").read_text())
    describer = Describer(env.class_text, env.cfg.description)
    t0 = time.time()
    methods = train_all(ctx, env, describer, ablations)
    train_s = time.time() - t0
    if not rt.is_main:
        rt.barrier()  # rank 0 scores
        return {}, methods
    try:
        return _score(env, ctx, methods, train_s)
    finally:
        rt.barrier()


def _score(env: Env, ctx: Context, methods: dict, train_s: float) -> tuple[dict, dict]:
    """Scores of one trained seed (cached in ``results.json``)."""
    from trainer.taper.scoring import score_seed

    run_dir = ctx.run_dir
    cached = run_dir / "results.json"
    if cached.exists():  # scored by a previous (or parallel) run: only re-calibrate BN
        from trainer.taper.scoring import calibrate_all

        calibrate_all(ctx, {k: methods[k] for k in ("selection", "taper")})
        return json.loads(cached.read_text()), methods
    results = score_seed(env, ctx, methods)
    results["train_seconds"] = train_s
    results["runtime"] = describe(ctx.rt)
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


def _load(args: argparse.Namespace, cfg: TaperConfig, out_dir: Path,
          rt: Runtime) -> tuple[Env, TaperConfig]:
    """The run's data (Tailor-PACS or ``--data``) with its images on the training device."""
    from trainer.taper.device import main_first

    with main_first(rt):  # rank 0 writes the caches (decoded images, class text) first
        if args.data:
            from trainer.taper.user_data import load_user_env

            env, cfg = load_user_env(cfg, args, out_dir)
        else:
            env = load_env(cfg, args.data_dir, out_dir)
    if rt.is_main:
        (out_dir / "config.json").write_text(json.dumps(cfg.to_json(), indent=1))
    print(f"training on {describe(rt)}", file=sys.stderr, flush=True)
    env = dataclasses.replace(env, train=env.train.to(rt.device), val=env.val.to(rt.device),
                              test=env.test.to(rt.device))
    return env, cfg


def main(argv: list[str] | None = None) -> dict:
    """Entry point of ``tailor train taper``; returns the summary dict."""
    from trainer.taper.report import summarise, write_report
    from trainer.taper.save import save_artifact

    args = parse_args(argv)
    ranks = int(os.environ.get("WORLD_SIZE", "1"))
    torch.set_num_threads(args.threads or auto_threads(
        parallel=args.jobs > 1 or args.seed_only or ranks > 1))
    cfg = build_config(args)
    out_dir = Path(args.out or f".tailor/runs/taper-{cfg.name}")
    rt = make_runtime(args.device, args.precision)
    env, cfg = _load(args, cfg, out_dir, rt)
    every = args.checkpoint_minutes * 60
    if args.seed_only:
        run_seed(env, cfg.seeds[0], ablations=args.ablations, rt=rt, checkpoint_every=every)
        shutdown(rt)
        return {}
    if args.jobs > 1 and len(cfg.seeds) > 1 and not rt.distributed:
        raw = [a for a in (argv if argv is not None else sys.argv[1:])]
        run_parallel(strip_seeds(raw), cfg.seeds, args.jobs, out_dir)
    per_seed, first = {}, None
    for i, seed in enumerate(cfg.seeds):
        results, methods = run_seed(env, seed, ablations=args.ablations and i == 0, rt=rt,
                                    checkpoint_every=every)
        per_seed[seed] = results
        first = first or (seed, results, methods)
    if not rt.is_main:  # rank 0 writes the report and the artifact
        shutdown(rt)
        return {}
    summary = summarise(cfg, per_seed)
    summary["runtime"] = describe(rt)
    write_report(out_dir, cfg, summary, per_seed, first[2],
                 class_names=[c["name"] for c in env.catalogue])
    if not args.no_artifact:
        ref = save_artifact(args.store_dir, env, first[2], summary, first[1])
        summary["artifact"] = {"version": ref.version, "path": str(ref.path)}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: summary[k] for k in ("ratio", "main") if k in summary}, indent=1))
    shutdown(rt)
    return summary


if __name__ == "__main__":  # pragma: no cover
    main()
