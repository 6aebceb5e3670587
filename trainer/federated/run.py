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
    lodo_tasks,
    selection_jobs,
    shared_inputs,
    summarize_job,
    task_jobs,
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
            "weighting": args.weighting, "personal_epochs": args.personal_epochs,
            "personal_min_z": args.personal_min_z, "max_rounds": args.max_rounds}


def _grids(args: argparse.Namespace) -> dict[str, list[float]] | None:
    """Candidate values (``--select``): {0.3, 1, 3} x each default lr, and FedProx's mu grid."""
    if not args.select:
        return None
    return {"embed": [float(f"{args.lr_adapter * f:.3g}") for f in (0.3, 1, 3)],
            "trunk": [float(f"{args.lr_proj * f:.3g}") for f in (0.3, 1, 3)],
            "mu": list(args.mu_grid)}


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
    grids = _grids(args)
    table: dict[str, Any] | None = {} if grids else None
    for seed in args.seeds:
        splits = domain_clients(np.asarray(data.domains), list(data.domain_names), seed)
        feats = _clients(splits, full, labels)
        zero.append({"seed": seed, "acc": zero_shot(feats["embed"], shared["embed"]["text"],
                                                    scale)})
        for task, parts, unseen in lodo_tasks(feats):
            if table is not None and seed == args.seeds[0]:  # chosen once per task
                jobs += selection_jobs(task, parts, shared, scale, cfg, list(args.methods),
                                       root, grids, table)
            jobs += task_jobs(task, parts, unseen, shared, scale, cfg, list(args.methods), root,
                              seed, table)
    t_feat = time.perf_counter() - t0
    sim_seconds = simulate(jobs, num_nodes=len(data.domain_names) - 1,
                           backend=args.backend) if jobs else 0.0
    payload: dict[str, Any] = {
        "setting": "Tailor-PACS leave-one-domain-out", "backbone": source,
        "config": {**cfg, "seeds": list(args.seeds), "methods": list(args.methods),
                   "logit_scale": scale, "data": str(getattr(data, "fingerprint", "")),
                   "num_images": int(len(labels))},
        "rows": [summarize_job(j) for j in jobs if not j["sink"]["meta"].get("selection")],
        "selection": {"grids": grids, "chosen": table or {}}, "zero_shot": zero,
        "full_backbone_params": {
            "both_towers": sum(p.numel() for p in backbone.model.parameters()),
            "image_tower": sum(p.numel() for p in backbone.model.visual.parameters())},
        "seconds": {"features": t_feat, "lodo_simulation": sim_seconds},
        "feature_cache": {"hits": cache.hits, "misses": cache.misses}, "extra": {}}
    if not args.no_deploy:
        _deploy_and_dirichlet(args, data, full, labels, shared, scale, cfg, root, source,
                              payload, grids)
    payload["seconds"]["total"] = time.perf_counter() - t0
    write_report(Path(args.out), payload, list(data.domain_names), list(args.methods))
    shutil.rmtree(root, ignore_errors=True)
    return payload


def _deploy_and_dirichlet(args, data, full, labels, shared, scale, cfg, root, source,
                          payload, grids=None) -> None:
    """4-client runs: the deployable federation of all domains, and Dirichlet label skew.

    Each setting chooses its own settings on its 4 clients' val splits (as a leave-one-out task
    does), FedCLIP and FedAvg only.
    """
    settings = {
        "all-domains": domain_clients(np.asarray(data.domains), list(data.domain_names), 0),
        f"dirichlet-{args.dirichlet_alpha}": dirichlet_clients(labels, 4, args.dirichlet_alpha,
                                                               seed=0)}
    table: dict[str, Any] | None = {} if grids else None
    jobs: list[dict[str, Any]] = []
    for name, splits in settings.items():
        clients = _clients(splits, full, labels)
        if table is not None:
            jobs += selection_jobs(name, clients, shared, scale, cfg, ["fedclip", "fedavg"],
                                   root, grids, table)
        jobs += task_jobs(name, clients, None, shared, scale, cfg, ["fedclip", "fedavg"], root,
                          0, table)
    payload["seconds"]["four_client_simulation"] = simulate(jobs, num_nodes=4,
                                                            backend=args.backend)
    done = [j for j in jobs if not j["sink"]["meta"].get("selection")]
    payload["extra"] = {
        "four_client_runs": [{k: v for k, v in summarize_job(j).items()
                              if k not in ("unseen_curve", "comm")} for j in done],
        "four_client_selection": table or {},
        "zero_shot_per_domain_seed0": zero_shot(_clients(settings["all-domains"], full,
                                                         labels)["embed"],
                                                shared["embed"]["text"], scale)}
    payload["fedclip_artifact"] = _save_adapters(args, done[0], source, shared, scale,
                                                 list(data.class_names), payload)
