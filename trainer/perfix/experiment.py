"""The FedPerfix benchmark (paper §4, Table 2): methods x settings x seeds on Tailor-PACS.

Settings: ``label`` — Tailor-PACS (four domains pooled) subsampled to ``per_class`` images per
class and shared out by Dirichlet(``alpha``) over ``num_clients`` clients, a ``fraction`` of them
trained per round (the paper's 64 clients / 8 per round, scaled to a CPU); ``concept`` — the four
domains as four clients, all trained every round (the paper's Office-Home setting, one client
per domain). Every client is split 60/20/20; every method of a seed sees the same clients,
splits, rounds, local epochs and test sets. A method's score is the mean over clients of each
client's test accuracy with the model it would use (global + its local part) after the last
round, the paper's metric; the report gives it as mean ± std over seeds, with the spread over
clients beside it.

``--select`` chooses each method's lr per setting from {0.3, 1, 3} x the default on the first
seed's clients' *validation* splits. ``--init-stability`` reruns Vanilla Prefix and FedPerfix
on the first seed's label-skew clients with two more initial draws of the local part (§5.3).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch

from model_store.perfix import PerfixViT
from trainer.anytime.experiment import subsample
from trainer.anytime.federation import client_images
from trainer.federated.data import dirichlet_clients, domain_clients
from trainer.perfix.federation import perfix_job, run_jobs

SETTINGS = ("label", "concept")


def make_clients(backbone: Any, data: Any, args: Any, seed: int, setting: str) -> list:
    """The seed's clients for a setting (preprocessed images), the same for every method."""
    idx = subsample(np.asarray(data.labels), args.per_class, seed)
    images, labels = np.asarray(data.images)[idx], np.asarray(data.labels)[idx]
    if setting == "label":
        splits = dirichlet_clients(labels, args.num_clients, args.alpha, seed, min_size=10)
    else:
        splits = domain_clients(np.asarray(data.domains)[idx], list(data.domain_names), seed)
    return [client_images(backbone, images, labels, s) for s in splits]


def job_config(setting: str, seed: int, args: Any, lr: float) -> dict[str, Any]:
    """Server + client config of one federation (the same budget for every method)."""
    return {"method": "fedavg", "weighting": "samples", "rounds": args.rounds, "lr": lr,
            "local_epochs": args.local_epochs, "batch_size": args.batch_size,
            "weight_decay": args.weight_decay, "seed": seed,
            "fraction_train": args.fraction if setting == "label" else 1.0}


def plan_one(fed_dir: Path, clients: list, bench: dict[str, Any], method: str, setting: str,
             seed: int, lr: float | None = None, init_seed: int | None = None,
             save: bool = False) -> dict[str, Any]:
    """One (method, setting, seed) federation as a job; ``save``: :func:`row_of` also writes
    it as the ``perfix`` artifact (its version in ``bench["artifact"]``)."""
    args = bench["args"]
    lr = args.lr if lr is None else lr
    init = seed if init_seed is None else init_seed
    spec = {"foundation": bench["foundation"], "method": method,
            "num_classes": bench["num_classes"], "init_seed": init, "rank": args.rank,
            "scale": args.scale, "num_tokens": args.num_tokens}
    job = perfix_job(fed_dir, clients, spec, job_config(setting, seed, args, lr), save)
    job["row"] = {"clients": clients, "spec": spec, "save": save, "method": method,
                  "setting": setting, "seed": seed, "init_seed": init, "lr": lr}
    return job


def run_many(jobs: list[dict[str, Any]], bench: dict[str, Any], bar: Any = None) -> None:
    """:func:`plan_one` jobs, one simulation per client count, ticking ``bar`` per job."""
    groups: dict[int, list] = {}
    for job in jobs:
        job["on_done"] = lambda _job: bar and bar.update()
        groups.setdefault(len(job["row"]["clients"]), []).append(job)
    for num_nodes, group in groups.items():
        run_jobs(group, num_nodes, num_cpus=bench["args"].num_cpus,
                 backend=bench["args"].backend)


def row_of(job: dict[str, Any], bench: dict[str, Any]) -> dict[str, Any]:
    """The summary row of a finished :func:`plan_one` job (saving it when it asked)."""
    info, sink = job["row"], job["sink"]
    clients = info["clients"]
    if info["save"]:
        bench["artifact"] = save_run(bench, clients, info["spec"], sink)
    final = sink["client_eval"][-1]
    test = [final[i]["test_acc"] for i in range(len(clients))]
    val = [final[i]["val_acc"] for i in range(len(clients))]
    return {**{k: info[k] for k in ("method", "setting", "seed", "init_seed", "lr")},
            "clients": [c.name for c in clients], "client_test": test, "client_val": val,
            "mean_test": float(np.mean(test)), "mean_val": float(np.mean(val)),
            "params_per_round": sink["rounds"][0]["params_per_client"],
            "clients_per_round": sink["rounds"][0]["clients"],
            "curve": [float(np.mean([r[i]["test_acc"] for i in r])) for r in sink["client_eval"]],
            "seconds": round(sink["seconds"], 1)}


def save_run(bench: dict[str, Any], clients: list, spec: dict[str, Any],
             sink: dict[str, Any]) -> str:
    """Write one federation as the ``perfix`` artifact the service serves; its version."""
    from model_store.perfix_artifact import save_perfix

    names = [c.name for c in clients]
    personal = sink["personal"]
    ref = save_perfix(
        bench["args"].store, model_cfg={k: spec[k] for k in ("method", "rank", "scale",
                                                             "num_tokens")},
        class_names=bench["class_names"], foundation=bench["source"],
        global_state=sink["global_state"],
        client_states={names[i]: rec["state"] for i, rec in personal.items()},
        client_acc={names[i]: {"val": rec["metrics"]["val_acc"],
                               "test": rec["metrics"]["test_acc"]} for i, rec in personal.items()},
        metadata={"command": getattr(bench["args"], "command", None)})  # fmt: skip
    return ref.version


def select_lrs(bench: dict[str, Any], clients_by: dict[str, list], tmp: Path,
               bar: Any) -> dict[str, Any]:
    """Per (setting, method): the lr among {0.3, 1, 3} x the default with the best mean
    client accuracy on *validation* (first seed); test numbers are never looked at. The whole
    grid runs in one simulation per setting."""
    args, out = bench["args"], {}
    jobs = {(st, m, args.lr * f): plan_one(tmp / f"sel-{st}-{m}-{f}", clients_by[st], bench, m,
                                           st, args.seeds[0], args.lr * f)
            for st in args.settings for m in args.methods for f in (0.3, 1.0, 3.0)}
    bar.set_postfix_str(f"select lr ({len(jobs)} federations)")
    run_many(list(jobs.values()), bench, bar)
    for setting in args.settings:
        for method in args.methods:
            runs = {lr: row_of(job, bench) for (st, m, lr), job in jobs.items()
                    if (st, m) == (setting, method)}
            tried = {lr: run["mean_val"] for lr, run in runs.items()}
            best = max(tried, key=tried.get)
            out[f"{setting}/{method}"] = {"lr": best, "run": runs[best],
                                          "val": {f"{k:.1e}": v for k, v in tried.items()}}
    return out


def resources(backbone: Any, num_classes: int, args: Any) -> dict[str, dict[str, int]]:
    """Per method: parameters stored on a client (all of its model), kept local, sent per
    round, and FLOPs of one image's forward (torch's FlopCounterMode)."""
    from torch.utils.flop_counter import FlopCounterMode

    out = {}
    x = torch.zeros(1, 3, backbone.image_size, backbone.image_size)
    for m in dict.fromkeys(["fedavg", *args.methods]):  # FedAvg: the yardstick of Table 2
        model = PerfixViT(copy.deepcopy(backbone.model.visual), num_classes, m, args.rank,
                          args.scale, args.num_tokens)
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(x)
        sizes = dict((n, p.numel()) for n, p in model.named_parameters())
        out[m] = {"stored": sum(sizes.values()),
                  "local": sum(sizes[n] for n in model.local_names()),
                  "sent": sum(sizes[n] for n in model.global_names()),
                  "flops": int(counter.get_total_flops())}
    return out


def _stability(bench: dict[str, Any], clients: list, chosen: dict[str, Any],
               tmp: Path) -> list[dict[str, Any]]:
    """Jobs: Vanilla Prefix vs FedPerfix under two more draws of the local part (same
    clients)."""
    args = bench["args"]
    return [plan_one(tmp / f"init-{init}-{method}", clients, bench, method, "label",
                     args.seeds[0], chosen.get(f"label/{method}", {}).get("lr"), init_seed=init)
            for method in ("vanilla_prefix", "fedperfix") for init in (101, 202)]


def run_benchmark(args: Any) -> dict[str, Any]:
    """Every (seed, setting, method) federation after ``--select``'s lr choice on validation
    (and ``--init-stability``'s reruns); writes the report under ``args.out``."""
    import tempfile
    import time

    from tqdm import tqdm

    from trainer.federated.data import load_backbone, load_pacs
    from trainer.perfix.report import write_report

    t0 = time.perf_counter()
    backbone, source = load_backbone(args.backbone, args.store, "cpu")
    data = load_pacs(args)
    if args.save and "version" not in source:
        raise SystemExit("--save needs a foundation from --store ('latest' or "
                         "foundation:<version>), so the artifact can name it")
    bench = {"args": args, "foundation": _bundle(args, source), "source": source,
             "num_classes": len(data.class_names), "class_names": list(data.class_names)}
    plan = [(st, m) for st in args.settings for m in args.methods]
    stab = args.init_stability and {"vanilla_prefix", "fedperfix"} <= set(args.methods)
    total = len(plan) * (len(args.seeds) + 3 * args.select) + 4 * bool(stab)
    if args.select:  # the first seed's run at the chosen lr is the selection run (deterministic)
        total -= len(plan) - int(bool(args.save))
    rows, chosen, stability = [], {}, []
    with tempfile.TemporaryDirectory() as tmp, tqdm(total=total, desc="federations") as bar:
        for seed in args.seeds:
            clients = {s: make_clients(backbone, data, args, seed, s) for s in args.settings}
            if args.select and not chosen:
                chosen = select_lrs(bench, clients, Path(tmp), bar)
            todo = []  # per (setting, method): a job, or the first seed's selection run
            for setting, method in plan:
                lr = chosen.get(f"{setting}/{method}", {}).get("lr")
                save = (args.save, setting, seed) == (method, "label", args.seeds[0])
                if chosen and seed == args.seeds[0] and not save:
                    todo.append(chosen[f"{setting}/{method}"]["run"])
                    continue
                todo.append(plan_one(Path(tmp) / f"{seed}-{setting}-{method}", clients[setting],
                                     bench, method, setting, seed, lr, save=save))
            extra = (_stability(bench, clients["label"], chosen, Path(tmp))
                     if stab and not stability and "label" in clients else [])
            bar.set_postfix_str(f"seed {seed}")
            run_many([j for j in todo + extra if "cfg" in j], bench, bar)
            rows += [row_of(j, bench) if "cfg" in j else j for j in todo]
            stability = stability or [row_of(j, bench) for j in extra]
    payload = {"command": getattr(args, "command", "tailor train perfix"), "foundation": source,
               "methods": args.methods, "settings": args.settings, "rows": rows,
               "stability": stability,
               "selection": {k: {f: v for f, v in c.items() if f != "run"}
                             for k, c in chosen.items()}, "protocol": protocol_text(args),
               "resources": resources(backbone, bench["num_classes"], args),
               "artifact": bench.get("artifact"),
               "seconds": time.perf_counter() - t0}
    write_report(Path(args.out), payload)
    return payload


def _bundle(args: Any, source: dict[str, Any]) -> str:
    """The foundation as a ``local-dir:`` bundle every client process can load."""
    from model_store.artifacts import open_artifact
    from model_store.kinds import FOUNDATION

    if "version" not in source:
        return args.backbone
    return f"local-dir:{open_artifact(args.store, FOUNDATION, source['version']).path}"


def protocol_text(args: Any) -> str:
    """One paragraph of what every method got (the same for all)."""
    return (f"label skew: {args.num_clients} clients, Dirichlet alpha={args.alpha} over "
            f"{args.per_class} images/class, {args.fraction:.0%} of clients per round; concept "
            f"skew: the 4 domains as clients, all per round; split 60/20/20; {args.rounds} "
            f"rounds x {args.local_epochs} local epochs, batch {args.batch_size}, AdamW, lr "
            + ("chosen per setting and method from {0.3, 1, 3} x " f"{args.lr:.0e} on the "
               "clients' validation splits (first seed)" if args.select else
               f"{args.lr:.0e} (not selected)")
            + f"; FedPerfix rank {args.rank}, s={args.scale}; vanilla prefix {args.num_tokens} "
            f"tokens; seeds {args.seeds}.")
