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
from trainer.perfix.federation import run_perfix

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


def run_one(fed_dir: Path, clients: list, bench: dict[str, Any], method: str, setting: str,
            seed: int, lr: float | None = None, init_seed: int | None = None,
            save: bool = False) -> dict[str, Any]:
    """Federate one (method, setting, seed); the summary row (``save``: also write this
    federation as the ``perfix`` artifact, its version in ``bench["artifact"]``)."""
    args = bench["args"]
    lr = args.lr if lr is None else lr
    init = seed if init_seed is None else init_seed
    spec = {"foundation": bench["foundation"], "method": method,
            "num_classes": bench["num_classes"], "init_seed": init, "rank": args.rank,
            "scale": args.scale, "num_tokens": args.num_tokens}
    sink = run_perfix(fed_dir, clients, spec, job_config(setting, seed, args, lr),
                      num_cpus=args.num_cpus, collect=save)
    if save:
        bench["artifact"] = save_run(bench, clients, spec, sink)
    final = sink["client_eval"][-1]
    test = [final[i]["test_acc"] for i in range(len(clients))]
    val = [final[i]["val_acc"] for i in range(len(clients))]
    return {"method": method, "setting": setting, "seed": seed, "init_seed": init, "lr": lr,
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
    client accuracy on *validation* (first seed); test numbers are never looked at."""
    args, out = bench["args"], {}
    for setting in args.settings:
        for method in args.methods:
            tried, runs = {}, {}
            for factor in (0.3, 1.0, 3.0):
                lr = args.lr * factor
                bar.set_postfix_str(f"select {setting} {method} lr {lr:.1e}")
                runs[lr] = run_one(tmp / f"sel-{setting}-{method}-{factor}", clients_by[setting],
                                   bench, method, setting, args.seeds[0], lr)
                tried[lr] = runs[lr]["mean_val"]
                bar.update()
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


def _stability(bench: dict[str, Any], clients: list, chosen: dict[str, Any], tmp: Path,
               bar: Any) -> list[dict[str, Any]]:
    """Vanilla Prefix vs FedPerfix under two more draws of the local part (same clients)."""
    args, rows = bench["args"], []
    for method in ("vanilla_prefix", "fedperfix"):
        lr = chosen.get(f"label/{method}", {}).get("lr")
        for init in (101, 202):
            bar.set_postfix_str(f"init {init} {method}")
            rows.append(run_one(tmp / f"init-{init}-{method}", clients, bench, method, "label",
                                args.seeds[0], lr, init_seed=init))
            bar.update()
    return rows


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
            for setting, method in plan:
                bar.set_postfix_str(f"seed {seed} {setting} {method}")
                lr = chosen.get(f"{setting}/{method}", {}).get("lr")
                save = (args.save, setting, seed) == (method, "label", args.seeds[0])
                if chosen and seed == args.seeds[0] and not save:
                    rows.append(chosen[f"{setting}/{method}"]["run"])
                    continue
                rows.append(run_one(Path(tmp) / f"{seed}-{setting}-{method}", clients[setting],
                                    bench, method, setting, seed, lr, save=save))
                bar.update()
            if stab and not stability and "label" in clients:
                stability = _stability(bench, clients["label"], chosen, Path(tmp), bar)
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
