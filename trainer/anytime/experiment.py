"""The anytime benchmark (Accumulator paper §5): methods x settings x seeds on Tailor-PACS.

Clients: Tailor-PACS subsampled to ``per_class`` images per class, then either (``partition``)
all four domains pooled and shared out by Dirichlet(``alpha``) label skew over ``num_clients``
clients (``trainer.federated.data.dirichlet_clients``, the split FedCLIP's Dirichlet run uses),
or one client per domain (``domain_clients``, feature skew: every client has every class).
Each client is split 60/20/20. Every method of a seed sees the same clients, splits and tests.

Selection (``--select``, the protocol of issue 15): per setting and method, the lr from a
3-point grid *and* the number of rounds (the best round of that lr's run) are chosen on the
participants' validation splits of the first seed; every seed then runs that many rounds.

Settings (paper §5.1 and appendix A): ``conventional`` (everyone trains and is scored at the
last exit), ``anytime`` (a random exit per step; scored at every exit) and ``multitier``
(client ``i`` always trains at its own exit ``tiers[i]``, assigned round-robin at partition time
so the tiers are balanced, as in the paper; each client is scored at its own exit).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from trainer.anytime.federation import anytime_job, client_images, run_jobs
from trainer.federated.data import dirichlet_clients, domain_clients

#: benchmark name -> (model_store.anytime method, uses parallel adapters)
METHODS = {
    "accumulator": ("accumulator", False), "accumulator_pa": ("accumulator", True),
    "lw_linear": ("linear", False), "lw_linear_pa": ("linear", True),
    "lw_mlp": ("mlp", False), "lw_mlp_pa": ("mlp", True), "finetune": ("finetune", False),
    "accumulator_zero": ("accumulator", False), "accumulator_zero_pa": ("accumulator", True),
    "accumulator_frozen_pa": ("accumulator", True), "accumulator_slow_pa": ("accumulator", True),
}
#: stop 41's variants of the Accumulator, as ``spec`` entries (``trainer.anytime.task``):
#: ``zero_init`` starts the block as identity (``model_store.anytime``); ``freeze_accumulator``
#: (ablation) never trains the block or layer positions, leaving one shared MLP head + client
#: token (+ PA); ``block_lr_scale`` trains them at that fraction of the lr, so they can only
#: move off identity slowly (the frozen variant is its control)
VARIANTS: dict[str, dict[str, Any]] = {
    "accumulator_zero": {"zero_init": True}, "accumulator_zero_pa": {"zero_init": True},
    "accumulator_frozen_pa": {"zero_init": True, "freeze_accumulator": True},
    "accumulator_slow_pa": {"zero_init": True, "block_lr_scale": 0.1},
}
SETTINGS = {"conventional": "last", "anytime": "anytime", "multitier": "last"}
PARTITIONS = ("dirichlet", "domains")


def tiers_for(setting: str, num_clients: int, depth: int) -> list[int]:
    """Depth budgets: all ``depth`` except in ``multitier`` (thirds of the depth, round-robin)."""
    if setting != "multitier":
        return [depth] * num_clients
    levels = sorted({max(1, math.ceil(depth * k / 3)) for k in (1, 2, 3)})
    return [levels[i % len(levels)] for i in range(num_clients)]


def subsample(labels: np.ndarray, per_class: int, seed: int) -> np.ndarray:
    """Indices of ``per_class`` images of every class (all of a class if it has fewer)."""
    rng = np.random.default_rng(10_000 + seed)
    keep = [rng.permutation(np.flatnonzero(labels == c))[:per_class] for c in np.unique(labels)]
    return np.sort(np.concatenate(keep))


def make_clients(backbone: Any, data: Any, args: Any, seed: int) -> list:
    """The seed's clients (preprocessed images), identical for every method and setting."""
    idx = subsample(np.asarray(data.labels), args.per_class, seed)
    images, labels = np.asarray(data.images)[idx], np.asarray(data.labels)[idx]
    if getattr(args, "partition", "dirichlet") == "domains":
        splits = domain_clients(np.asarray(data.domains)[idx], list(data.domain_names), seed)
    else:
        splits = dirichlet_clients(labels, args.num_clients, args.alpha, seed, min_size=10)
    return [client_images(backbone, images, labels, s) for s in splits]


def default_lr(method: str, args: Any) -> float:
    """The method's lr before selection (``--lr``; ``--lr-finetune`` for full fine-tuning)."""
    return args.lr_finetune if method == "finetune" else args.lr


def job_config(method: str, setting: str, seed: int, args: Any,
               choice: dict[str, Any] | None = None) -> dict[str, Any]:
    """Server + client config of one federation (same budget for every method); ``choice``
    (``lr``, ``rounds``) overrides the defaults, as selection does."""
    choice = choice or {}
    lr = choice.get("lr", default_lr(method, args))
    part = "client_token" if method.startswith("accumulator") else "all"
    return {"method": "fedavg", "weighting": "samples",
            "rounds": int(choice.get("rounds", args.rounds)), "lr": lr,
            "local_epochs": args.local_epochs, "batch_size": args.batch_size,
            "weight_decay": args.weight_decay, "seed": seed, "fraction_train": args.fraction,
            "exit_mode": SETTINGS[setting], "personal_part": part,
            "personal_epochs": args.personal_epochs, "personal_min_z": args.personal_min_z,
            "personal_gate": getattr(args, "personal_gate", "val"),
            "personal_folds": getattr(args, "personal_folds", 5),
            "device": getattr(args, "device", None)}


def plan_one(fed_dir: Path, clients: list, bench: dict[str, Any], method: str, setting: str,
             seed: int, choice: dict[str, Any] | None = None) -> dict[str, Any]:
    """One (method, setting, seed) federation as a job (``bench``: see :func:`setup`); what
    :func:`row_of` needs to summarise it rides along under ``"row"``."""
    args, depth = bench["args"], bench["depth"]
    kind, pa = METHODS[method]
    spec = {"foundation": bench["foundation"], "method": kind,
            "num_classes": bench["num_classes"], "adapter_rank": args.adapter_rank if pa else 0,
            **VARIANTS.get(method, {})}
    tiers = tiers_for(setting, len(clients), depth)
    cfg = job_config(method, setting, seed, args, choice)
    job = anytime_job(fed_dir, clients, tiers, spec, cfg)
    job["row"] = {"clients": clients, "tiers": tiers, "depth": depth, "method": method,
                  "setting": setting, "seed": seed, "lr": cfg["lr"], "rounds": cfg["rounds"]}
    return job


def row_of(job: dict[str, Any]) -> dict[str, Any]:
    """The summary row of a finished :func:`plan_one` job."""
    r = job["row"]
    row = summarize(job["sink"], r["clients"], r["tiers"], r["depth"], r["method"],
                    r["setting"], r["seed"])
    row.update(lr=r["lr"], rounds=r["rounds"])
    return row


def run_many(jobs: list[dict[str, Any]], bench: dict[str, Any], bar: Any = None) -> None:
    """:func:`plan_one` jobs in one simulation (one Ray start), ticking ``bar`` per job."""
    args = bench["args"]
    for job in jobs:
        job["on_done"] = lambda _job: bar and bar.update()
    run_jobs(jobs, len(jobs[0]["row"]["clients"]), num_cpus=args.num_cpus,
             num_gpus=int(str(getattr(args, "device", "cpu")).startswith("cuda")),
             backend=args.backend)


def select(bench: dict[str, Any], clients: list, tmp: Path, bar: Any) -> dict[str, Any]:
    """Per (setting, method): the lr among {0.3, 1, 3} x its default, and the number of rounds,
    whose global model has the best headline on the clients' *validation* splits (first
    seed's clients; the earliest such round). Test numbers are never looked at. The whole grid
    runs in one simulation."""
    args, out = bench["args"], {}
    grid = {(st, m, default_lr(m, args) * f): f for st in args.settings for m in args.methods
            for f in (0.3, 1.0, 3.0)}
    jobs = {(st, m, lr): plan_one(tmp / f"sel-{st}-{m}-{f}", clients, bench, m, st,
                                  args.seeds[0], {"lr": lr}) for (st, m, lr), f in grid.items()}
    bar.set_postfix_str(f"select lr and rounds ({len(jobs)} federations)")
    run_many(list(jobs.values()), bench, bar)
    for setting in args.settings:
        for method in args.methods:
            tried: dict[float, tuple[float, int]] = {}
            for (st, m, lr), job in jobs.items():
                if (st, m) == (setting, method):
                    curve = row_of(job)["val_curve"]
                    best = int(np.nanargmax(curve))
                    tried[lr] = (curve[best], best + 1)
            lr = max(tried, key=lambda k: tried[k][0])
            out[f"{setting}/{method}"] = {
                "lr": lr, "rounds": tried[lr][1],
                "val": {f"{k:.1e}": v for k, (v, _) in tried.items()},
                "best_round": {f"{k:.1e}": r for k, (_, r) in tried.items()}}
    return out


def _weighted(values: list[float], weights: list[int]) -> float:
    ok = [(v, w) for v, w in zip(values, weights, strict=True) if not math.isnan(v)]
    return float(sum(v * w for v, w in ok) / max(1, sum(w for _, w in ok))) if ok else math.nan


def scores(final: dict[int, dict], clients: list, tiers: list[int], depth: int, setting: str,
           split: str) -> tuple[list[float], list[float], float]:
    """``(per-exit accuracy, per-client score, headline)`` of one split from the last round's
    client evaluation; per-exit numbers weight clients by split size over those reaching it."""
    sizes = [c.num(split) for c in clients]
    per_client = [[final[i][f"{split}_acc_exit{e}"] for e in range(1, depth + 1)]
                  for i in range(len(clients))]
    exit_acc = [_weighted([pc[e] for pc in per_client], sizes) for e in range(depth)]
    own = [float(np.nanmean(pc[:t])) if SETTINGS[setting] == "anytime" else pc[t - 1]
           for pc, t in zip(per_client, tiers, strict=True)]
    headline = {"conventional": exit_acc[-1], "anytime": float(np.nanmean(exit_acc)),
                "multitier": _weighted(own, sizes)}[setting]
    return exit_acc, own, headline


def _curve(metrics: dict[str, Any], prefix: str = "curve", kept: str = "best_epoch"
           ) -> dict[str, Any]:  # fmt: skip
    """A client's personalisation epochs (val, paired z over epoch 0, test; analysis only)
    and the epoch it kept; ``prefix="valgate"``: the val gate's record beside a cross-fitted
    gate's."""
    epoch = metrics.get(kept)
    keys = ("val", "z", "test", *(k for k in ("z_fold", "test_z") if f"{prefix}_{k}" in metrics))
    return {"epoch": None if epoch is None else int(epoch),
            **{k: list(metrics.get(f"{prefix}_{k}", [])) for k in keys}}


def summarize(sink: dict[str, Any], clients: list, tiers: list[int], depth: int, method: str,
              setting: str, seed: int) -> dict[str, Any]:
    """Per-exit test accuracy, the setting's headline number (test, and val for selection),
    and each client's personalisation gain."""
    final = sink["client_eval"][-1]
    exit_acc, own, headline = scores(final, clients, tiers, depth, setting, "test")
    personal = {i: sink["personal"][i]["metrics"] for i in sink["personal"]}
    rounds = sink["rounds"]
    val_curve = [scores(ev, clients, tiers, depth, setting, "val")[2]
                 for ev in sink["client_eval"]]
    return {"method": method, "setting": setting, "seed": seed, "tiers": tiers,
            "headline": headline, "val_headline": val_curve[-1], "val_curve": val_curve,
            "exit_acc": exit_acc, "client_global": own,
            "client_personal": [personal[i]["test_acc"] if i in personal else math.nan
                                for i in range(len(clients))],
            "client_personal_curve": [_curve(personal.get(i, {})) for i in range(len(clients))],
            "client_valgate_curve": [_curve(personal.get(i, {}), "valgate", "valgate_epoch")
                                     for i in range(len(clients))],
            "params_per_round": rounds[0]["params_per_client"],
            "bytes_up_per_round": float(np.mean([r["bytes_up"] for r in rounds])),
            "clients_per_round": rounds[0]["clients"], "seconds": round(sink["seconds"], 1)}


@torch.no_grad()
def zero_shot(backbone: Any, clients: list, class_names: list[str]) -> float:
    """The foundation's own zero-shot test accuracy over the clients (the control every
    trained exit should beat): CLIP image embeddings against the class prompts."""
    from trainer.federated.foundation import class_prompts

    prompts = class_prompts(list(class_names))
    flat = torch.from_numpy(backbone.encode_text([p for ps in prompts for p in ps]))
    text = torch.nn.functional.normalize(flat.view(len(prompts), -1, flat.shape[1]).mean(1), dim=-1)
    hits, total, dev = 0, 0, next(backbone.model.parameters()).device
    for c in clients:
        x, y = c.split("test")
        img = torch.nn.functional.normalize(backbone.model.encode_image(x.to(dev)), dim=-1).cpu()
        hits += int(((img @ text.T).argmax(1) == y).sum())
        total += len(y)
    return hits / max(1, total)


def exit_flops(model: torch.nn.Module, image_size: int) -> list[int]:
    """FLOPs of one image's forward to each exit, counted by torch's FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.zeros(1, 3, image_size, image_size, device=next(model.parameters()).device)
    out = []
    for e in range(1, model.depth + 1):
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(x, e)
        out.append(int(counter.get_total_flops()))
    return out


def setup(args: Any) -> tuple[dict[str, Any], Any, Any]:
    """``(bench, backbone, data)``: the ViT foundation (and its bundle path, which clients
    load), the dataset, and what is measured once (FLOPs per exit, backbone size)."""
    import copy

    from model_store.anytime import AnytimeViT
    from model_store.artifacts import open_artifact
    from model_store.device import pick_device
    from model_store.kinds import FOUNDATION
    from trainer.federated.data import load_backbone, load_pacs

    args.device = str(pick_device(getattr(args, "device", None)))  # "auto" → cuda or cpu
    backbone, source = load_backbone(args.backbone, args.store, args.device)
    if args.save and "version" not in source:
        raise SystemExit("--save needs a foundation from --store ('latest' or "
                         "foundation:<version>), so the artifact can name it")
    foundation = args.backbone
    if "version" in source:
        foundation = f"local-dir:{open_artifact(args.store, FOUNDATION, source['version']).path}"
    data = load_pacs(args)
    num_classes = len(data.class_names)
    flops = {m: exit_flops(AnytimeViT(copy.deepcopy(backbone.model.visual).cpu(), num_classes, k,
                                      args.adapter_rank if pa else 0), backbone.image_size)
             for m, (k, pa) in METHODS.items() if m in args.methods}
    bench = {"args": args, "depth": len(backbone.model.visual.transformer.resblocks),
             "foundation": foundation, "num_classes": num_classes, "source": source,
             "class_names": list(data.class_names),
             "flops": flops, "full": sum(p.numel() for p in backbone.model.visual.parameters())}
    return bench, backbone, data


def run_benchmark(args: Any) -> dict[str, Any]:
    """Every (seed, setting, method) federation, after ``--select``'s lr choice on validation;
    writes the report under ``args.out``."""
    import tempfile
    import time

    from tqdm import tqdm

    from trainer.anytime.artifact import save_run
    from trainer.anytime.report import protocol_text, write_report

    t0 = time.perf_counter()
    bench, backbone, data = setup(args)
    plan = [(st, m) for st in args.settings for m in args.methods]
    n_select = 3 * len(plan) if args.select else 0
    rows, zero, chosen = [], {}, {}
    with tempfile.TemporaryDirectory() as tmp, \
            tqdm(total=len(plan) * len(args.seeds) + n_select, desc="federations") as bar:
        for seed in args.seeds:
            clients = make_clients(backbone, data, args, seed)
            zero[seed] = zero_shot(backbone, clients, data.class_names)
            if args.select and not chosen:
                chosen = select(bench, clients, Path(tmp), bar)
            bar.set_postfix_str(f"seed {seed}: {len(plan)} federations")
            jobs = [plan_one(Path(tmp) / f"{seed}-{st}-{m}", clients, bench, m, st, seed,
                             chosen.get(f"{st}/{m}")) for st, m in plan]
            run_many(jobs, bench, bar)
            for (setting, method), job in zip(plan, jobs, strict=True):
                rows.append(row_of(job))
                if args.save == f"{setting}/{method}" and "artifact" not in bench:
                    kind, pa = METHODS[method]
                    bench["artifact"] = save_run(bench, clients, rows[-1], job["sink"], {
                        "method": kind, "adapter_rank": args.adapter_rank if pa else 0,
                        "depth": bench["depth"]})
    payload = {"command": getattr(args, "command", "tailor train anytime"),
               "foundation": bench["source"], "methods": args.methods,
               "settings": args.settings, "protocol": protocol_text(args),
               "flops": bench["flops"], "full_params": bench["full"], "rows": rows,
               "zero_shot": zero, "selection": chosen, "artifact": bench.get("artifact"),
               "seconds": time.perf_counter() - t0}
    write_report(Path(args.out), payload)
    return payload
