"""Orchestrates ``tailor train federated``: features, simulations, report, adapter artifacts."""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from model_store.adapters import write_fedclip_artifact
from trainer.federated.data import (
    FeatureCache,
    client_arrays,
    dirichlet_clients,
    domain_clients,
    domain_features,
    load_backbone,
    load_pacs,
)
from trainer.federated.experiment import (
    lodo_jobs,
    make_job,
    method_spec,
    select_lr_jobs,
    shared_inputs,
    summarize_job,
    zero_shot,
)
from trainer.federated.report import write_report
from trainer.federated.simulation import simulate
from trainer.federated.task import ClientData


def _clients(splits: list, full: dict[str, np.ndarray], labels: np.ndarray
             ) -> dict[str, list[ClientData]]:
    return {kind: [ClientData(s.name, client_arrays(s, full[kind][s.all()], labels))
                   for s in splits] for kind in full}


def _train_cfg(args: argparse.Namespace) -> dict[str, Any]:
    return {"rounds": args.rounds, "local_epochs": args.local_epochs,
            "batch_size": args.batch_size, "lr_adapter": args.lr_adapter,
            "lr_proj": args.lr_proj, "weight_decay": args.weight_decay, "mu": args.mu,
            "weighting": args.weighting, "personal_epochs": args.personal_epochs}


def four_client_jobs(clients: dict[str, list[ClientData]], shared: dict, scale: float,
                     cfg: dict[str, Any], root: Path, setting: str,
                     lr_table: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """FedCLIP (+ personalisation) and FedAvg over all 4 clients of a setting, no held-out."""
    jobs = []
    for method in ("fedclip", "fedavg"):
        kind, spec = method_spec(method, scale, None)
        lr = (lr_table or {}).get(method, cfg["lr_adapter" if kind == "embed" else "lr_proj"])
        mcfg = {**cfg, "seed": 0, "lr": lr,
                "personal_epochs": cfg["personal_epochs"] if kind == "embed" else 0}
        meta = {"seed": 0, "held_out": setting, "method": method,
                "participants": [c.name for c in clients[kind]]}
        jobs.append(make_job(method, clients[kind], None, shared[kind], spec, mcfg, root, meta))
    return jobs


def _save_adapters(args, job, backbone_src, shared, scale, class_names, payload) -> str:
    sink, meta = job["sink"], job["sink"]["meta"]
    personal = {meta["participants"][p]: r["state"] for p, r in sink["personal"].items()}
    strip = len("adapter.")
    ref = write_fedclip_artifact(
        args.store, global_state={k[strip:]: v for k, v in sink["global_state"].items()},
        client_states={c: {k[strip:]: v for k, v in s.items()} for c, s in personal.items()},
        adapter_config={"type": "attention", "dim": int(shared["embed"]["text"].shape[1]),
                        "rank": None},
        class_names=class_names, text_features=torch.from_numpy(shared["embed"]["text"]),
        logit_scale=scale, backbone=backbone_src,
        metadata={"metrics": summarize_job(job), "benchmark": payload["config"]})
    return ref.version


def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``tailor train federated`` does; returns the results payload."""
    t0 = time.perf_counter()
    data = load_pacs(args)
    backbone, source = load_backbone(args.backbone, args.store, args.device)
    cache = FeatureCache(Path(args.data_dir) / "features")
    full = domain_features(backbone, cache, data)
    labels = np.asarray(data.labels)
    shared = shared_inputs(backbone, list(data.class_names))
    scale, cfg = backbone.logit_scale, _train_cfg(args)
    root = Path(tempfile.mkdtemp(prefix="tailor-fed-"))
    zero, jobs = [], []
    lr_table: dict[str, Any] | None = None
    for seed in args.seeds:
        splits = domain_clients(np.asarray(data.domains), list(data.domain_names), seed)
        feats = _clients(splits, full, labels)
        zero.append({"seed": seed, "acc": zero_shot(feats["embed"], shared["embed"]["text"],
                                                    scale)})
        if args.select_lr and lr_table is None:
            lr_table = {}
            grids = {"embed": [float(f"{args.lr_adapter * f:.3g}") for f in (0.3, 1, 3)],
                     "trunk": [float(f"{args.lr_proj * f:.3g}") for f in (0.3, 1, 3)]}
            jobs += select_lr_jobs(feats, shared, scale, cfg, list(args.methods), root, grids,
                                   lr_table)
        jobs += lodo_jobs(feats, shared, scale, cfg, list(args.methods), root, seed, lr_table)
    t_feat = time.perf_counter() - t0
    sim_seconds = simulate(jobs, num_nodes=len(data.domain_names) - 1) if jobs else 0.0
    payload: dict[str, Any] = {
        "setting": "Tailor-PACS leave-one-domain-out", "backbone": source,
        "config": {**cfg, "seeds": list(args.seeds), "methods": list(args.methods),
                   "logit_scale": scale, "data": str(getattr(data, "fingerprint", "")),
                   "num_images": int(len(labels))},
        "rows": [summarize_job(j) for j in jobs if not j["sink"]["meta"].get("selection")],
        "lr_selection": lr_table or {}, "zero_shot": zero,
        "full_backbone_params": {
            "both_towers": sum(p.numel() for p in backbone.model.parameters()),
            "image_tower": sum(p.numel() for p in backbone.model.visual.parameters())},
        "seconds": {"features": t_feat, "lodo_simulation": sim_seconds},
        "feature_cache": {"hits": cache.hits, "misses": cache.misses}, "extra": {}}
    if not args.no_deploy:
        _deploy_and_dirichlet(args, data, full, labels, shared, scale, cfg, root, source,
                              payload, lr_table)
    payload["seconds"]["total"] = time.perf_counter() - t0
    write_report(Path(args.out), payload, list(data.domain_names), list(args.methods))
    shutil.rmtree(root, ignore_errors=True)
    return payload


def _deploy_and_dirichlet(args, data, full, labels, shared, scale, cfg, root, source,
                          payload, lr_table=None) -> None:
    """4-client runs: the deployable federation of all domains, and Dirichlet label skew."""
    dom = _clients(domain_clients(np.asarray(data.domains), list(data.domain_names), 0),
                   full, labels)
    skew = _clients(dirichlet_clients(labels, 4, args.dirichlet_alpha, seed=0), full, labels)
    jobs = four_client_jobs(dom, shared, scale, cfg, root, "all-domains", lr_table)
    jobs += four_client_jobs(skew, shared, scale, cfg, root, f"dirichlet-{args.dirichlet_alpha}",
                             lr_table)
    payload["seconds"]["four_client_simulation"] = simulate(jobs, num_nodes=4)
    payload["extra"] = {
        "four_client_runs": [{k: v for k, v in summarize_job(j).items()
                              if k not in ("unseen_curve", "comm")} for j in jobs],
        "zero_shot_per_domain_seed0": zero_shot(dom["embed"], shared["embed"]["text"], scale)}
    payload["fedclip_artifact"] = _save_adapters(args, jobs[0], source, shared, scale,
                                                 list(data.class_names), payload)
