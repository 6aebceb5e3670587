"""Score one seed's methods: main table, per-domain, dynamic way, free language, self-improvement.

Everything is measured on the fixed test tasks of ``Env.eval_tasks``; the only choice made from
data (the artifact's default method) uses the val tasks.
"""

from __future__ import annotations

import json
import time

import numpy as np
import torch
from tqdm import tqdm

from trainer.taper.describe import Describer
from trainer.taper.evaluate import (
    Method,
    calibrate,
    clear_cache,
    mixer_similarity,
    per_domain,
    score,
    self_improvement,
)
from trainer.taper.run import Env
from trainer.taper.stages import Context

DYNAMIC_METHODS = ("selection", "taper", "one_basis")
CALIBRATION_OFFSET = 500


def calibrate_all(ctx: Context, methods: dict[str, Method]) -> None:
    """Same BN treatment for all: re-estimate on identical training task batches."""
    cfg = ctx.cfg
    done: set[int] = set()
    for method in methods.values():
        if id(method.bases) in done:
            continue
        calibrate(method, ctx.batcher(CALIBRATION_OFFSET), cfg.bn_recal_batches, cfg.task_batch)
        done.add(id(method.bases))


def _share_bases(methods: dict[str, Method]) -> None:
    """Methods that differ only in selection share one Bases (calibrated once)."""
    pairs = (("standard", "selection"), ("taper_no_selection", "taper"))
    for a, b in pairs:
        if a in methods and b in methods:
            methods[a].bases = methods[b].bases


def score_seed(env: Env, ctx: Context, methods: dict[str, Method]) -> dict:
    """All tables of one seed as a JSON-ready dict."""
    t0 = time.time()
    _share_bases(methods)
    calibrate_all(ctx, methods)
    clear_cache()
    cfg = env.cfg
    test = env.eval_tasks(cfg.k, cfg.test_tasks)
    main = {name: score(m, env.test, test)
            for name, m in tqdm(methods.items(), desc=f"s{ctx.seed} scoring test tasks",
                                unit="method")}
    out = {
        "main": {name: r["acc"] for name, r in main.items()},
        "per_domain": {name: per_domain(r["per_task"], test, env.domains)
                       for name, r in main.items()},
        "domain_free": {name: float(np.mean([a for a, t in zip(r["per_task"], test, strict=True)
                                             if t.domain is None] or [float("nan")]))
                        for name, r in main.items()},
    }
    out["dynamic"] = {}
    for k in cfg.dynamic_ks:
        tasks = env.eval_tasks(k, max(cfg.test_tasks // 2, 4))
        out["dynamic"][str(k)] = {n: score(methods[n], env.test, tasks)["acc"]
                                  for n in DYNAMIC_METHODS if n in methods}
    cross = env.eval_tasks(cfg.k, max(cfg.test_tasks // 2, 4), cross=True)
    out["cross_group"] = {n: score(methods[n], env.test, cross)["acc"]
                          for n in DYNAMIC_METHODS if n in methods}
    out["free_language"] = free_language(env, methods["taper"], test)
    generic_full = Method("generic", methods["selection"].bases, methods["selection"].router,
                          selection=False)
    free = [t for t in test if t.domain is None][:10] or test[:10]
    out["self_improvement"] = self_improvement(
        generic_full, methods["taper"], env.test, free, cfg.k, batch=max(cfg.k * 2, 8),
        steps=6, seed=ctx.seed)
    val = env.eval_tasks(cfg.k, cfg.val_tasks, split="val")
    out["val"] = {n: score(methods[n], env.val, val)["acc"]
                  for n in ("selection", "taper", "one_basis") if n in methods}
    out["mixers"] = mixer_table(methods["taper"], test)
    out["eval_seconds"] = time.time() - t0
    (ctx.run_dir / "results.json").write_text(json.dumps(out, indent=1))
    return out


def free_language(env: Env, taper: Method, tasks) -> dict:
    """§5.1: tasks described by class definitions instead of names (wording has no domain)."""
    defs = taper.router.with_describer(Describer(env.class_text, "definitions"), False)
    by_def = Method("taper_definitions", taper.bases, defs, True)
    return {
        "names_acc": score(taper, env.test, tasks)["acc"],
        "definitions_acc": score(by_def, env.test, tasks)["acc"],
        "mixer_cosine": mixer_similarity(taper.router, defs, tasks),
    }


def mixer_table(taper: Method, tasks, limit: int = 60) -> dict:
    """Mixers of the first ``limit`` test tasks, for the Fig. 4a style heatmap."""
    rows = tasks[:limit]
    return {
        "tasks": [{"classes": t.classes, "domain": t.domain} for t in rows],
        "alpha": [taper.router(t.classes, t.domain).tolist() for t in rows],
    }


def basis_similarity(method: Method) -> dict[str, list[list[float]]]:
    """Per-block cosine similarity of the bases' deviations from their mean (Fig. 4b style)."""
    from model_store.resnet import NUM_BLOCKS

    bases = method.bases
    out = {}
    for block in range(NUM_BLOCKS):
        flat = torch.cat([p.detach().reshape(bases.num_bases, -1)
                          for n, p in bases.params.items() if bases.block[n] == block], 1)
        dev = flat - flat.mean(0, keepdim=True)
        dev = dev / dev.norm(dim=1, keepdim=True).clamp_min(1e-12)
        out[str(block)] = (dev @ dev.T).tolist()
    return out


__all__ = ["score_seed", "basis_similarity"]
