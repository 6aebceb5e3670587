"""The anytime benchmark (Accumulator paper §5): methods x settings x seeds on Tailor-PACS.

Clients: Tailor-PACS (all four domains pooled) subsampled to ``per_class`` images per class,
shared out by Dirichlet(``alpha``) label skew over ``num_clients`` clients, each split 60/20/20
(``trainer.federated.data.dirichlet_clients``, the split FedCLIP's Dirichlet run uses). Every
method of a seed sees the same clients, splits and test sets.

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

from trainer.anytime.federation import client_images, run_anytime
from trainer.federated.data import dirichlet_clients

#: benchmark name -> (model_store.anytime method, uses parallel adapters)
METHODS = {
    "accumulator": ("accumulator", False), "accumulator_pa": ("accumulator", True),
    "lw_linear": ("linear", False), "lw_linear_pa": ("linear", True),
    "lw_mlp": ("mlp", False), "lw_mlp_pa": ("mlp", True), "finetune": ("finetune", False),
}
SETTINGS = {"conventional": "last", "anytime": "anytime", "multitier": "last"}


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
    splits = dirichlet_clients(labels, args.num_clients, args.alpha, seed, min_size=10)
    return [client_images(backbone, images, labels, s) for s in splits]


def default_lr(method: str, args: Any) -> float:
    """The method's lr before selection (``--lr``; ``--lr-finetune`` for full fine-tuning)."""
    return args.lr_finetune if method == "finetune" else args.lr


def job_config(method: str, setting: str, seed: int, args: Any,
               lr: float | None = None) -> dict[str, Any]:
    """Server + client config of one federation (same budget for every method)."""
    lr = default_lr(method, args) if lr is None else lr
    part = "client_token" if method.startswith("accumulator") else "all"
    return {"method": "fedavg", "weighting": "samples", "rounds": args.rounds, "lr": lr,
            "local_epochs": args.local_epochs, "batch_size": args.batch_size,
            "weight_decay": args.weight_decay, "seed": seed, "fraction_train": args.fraction,
            "exit_mode": SETTINGS[setting], "personal_part": part,
            "personal_epochs": args.personal_epochs}


def run_one(fed_dir: Path, clients: list, bench: dict[str, Any], method: str, setting: str,
            seed: int, lr: float | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Federate one (method, setting, seed); return its summary and the server's sink
    (``bench``: see :func:`setup`)."""
    args, depth = bench["args"], bench["depth"]
    kind, pa = METHODS[method]
    spec = {"foundation": bench["foundation"], "method": kind,
            "num_classes": bench["num_classes"], "adapter_rank": args.adapter_rank if pa else 0}
    tiers = tiers_for(setting, len(clients), depth)
    sink = run_anytime(fed_dir, clients, tiers, spec,
                       job_config(method, setting, seed, args, lr), num_cpus=args.num_cpus)
    row = summarize(sink, clients, tiers, depth, method, setting, seed)
    row["lr"] = job_config(method, setting, seed, args, lr)["lr"]
    return row, sink


def select_lrs(bench: dict[str, Any], clients: list, tmp: Path, bar: Any) -> dict[str, Any]:
    """Per (setting, method): the lr among {0.3, 1, 3} x its default with the best headline
    on the clients' *validation* splits (first seed); test numbers are never looked at."""
    args, out = bench["args"], {}
    for setting in args.settings:
        for method in args.methods:
            tried = {}
            for factor in (0.3, 1.0, 3.0):
                lr = default_lr(method, args) * factor
                bar.set_postfix_str(f"select {setting} {method} lr {lr:.1e}")
                row, _ = run_one(tmp / f"sel-{setting}-{method}-{factor}", clients, bench,
                                 method, setting, args.seeds[0], lr)
                tried[lr] = row["val_headline"]
                bar.update()
            out[f"{setting}/{method}"] = {"lr": max(tried, key=tried.get),
                                          "val": {f"{k:.1e}": v for k, v in tried.items()}}
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


def summarize(sink: dict[str, Any], clients: list, tiers: list[int], depth: int, method: str,
              setting: str, seed: int) -> dict[str, Any]:
    """Per-exit test accuracy, the setting's headline number (test, and val for selection),
    and each client's personalisation gain."""
    final = sink["client_eval"][-1]
    exit_acc, own, headline = scores(final, clients, tiers, depth, setting, "test")
    personal = {i: sink["personal"][i]["metrics"]["test_acc"] for i in sink["personal"]}
    rounds = sink["rounds"]
    return {"method": method, "setting": setting, "seed": seed, "tiers": tiers,
            "headline": headline, "val_headline": scores(final, clients, tiers, depth,
                                                         setting, "val")[2],
            "exit_acc": exit_acc, "client_global": own,
            "client_personal": [personal.get(i, math.nan) for i in range(len(clients))],
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
    hits = total = 0
    for c in clients:
        x, y = c.split("test")
        img = torch.nn.functional.normalize(backbone.model.encode_image(x), dim=-1)
        hits += int(((img @ text.T).argmax(1) == y).sum())
        total += len(y)
    return hits / max(1, total)


def exit_flops(model: torch.nn.Module, image_size: int) -> list[int]:
    """FLOPs of one image's forward to each exit, counted by torch's FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.zeros(1, 3, image_size, image_size)
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
    from model_store.kinds import FOUNDATION
    from trainer.federated.data import load_backbone, load_pacs

    backbone, source = load_backbone(args.backbone, args.store, "cpu")
    if args.save and "version" not in source:
        raise SystemExit("--save needs a foundation from --store ('latest' or "
                         "foundation:<version>), so the artifact can name it")
    foundation = args.backbone
    if "version" in source:
        foundation = f"local-dir:{open_artifact(args.store, FOUNDATION, source['version']).path}"
    data = load_pacs(args)
    num_classes = len(data.class_names)
    flops = {m: exit_flops(AnytimeViT(copy.deepcopy(backbone.model.visual), num_classes, k,
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

    from trainer.anytime.report import write_report

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
                chosen = select_lrs(bench, clients, Path(tmp), bar)
            for setting, method in plan:
                bar.set_postfix_str(f"seed {seed} {setting} {method}")
                lr = chosen.get(f"{setting}/{method}", {}).get("lr")
                row, sink = run_one(Path(tmp) / f"{seed}-{setting}-{method}", clients, bench,
                                    method, setting, seed, lr)
                rows.append(row)
                if args.save == f"{setting}/{method}" and "artifact" not in bench:
                    bench["artifact"] = save_run(bench, clients, row, sink)
                bar.update()
    payload = {"command": getattr(args, "command", "tailor train anytime"),
               "foundation": bench["source"], "methods": args.methods,
               "settings": args.settings, "protocol": protocol_text(args),
               "flops": bench["flops"], "full_params": bench["full"], "rows": rows,
               "zero_shot": zero, "selection": chosen, "artifact": bench.get("artifact"),
               "seconds": time.perf_counter() - t0}
    write_report(Path(args.out), payload)
    return payload


def _or_none(value: float) -> float | None:
    """JSON has no NaN: an exit beyond a client's budget was not scored."""
    return None if math.isnan(value) else float(value)


def save_run(bench: dict[str, Any], clients: list, row: dict[str, Any],
             sink: dict[str, Any]) -> str:
    """Write one federation (first seed of ``--save``) as the ``anytime`` artifact the service
    serves by client ID; returns its version."""
    from model_store.anytime_artifact import save_anytime

    args, depth = bench["args"], bench["depth"]
    kind, pa = METHODS[row["method"]]
    names = [c.name for c in clients]
    ref = save_anytime(
        args.store, model_cfg={"method": kind, "adapter_rank": args.adapter_rank if pa else 0,
                               "depth": depth},
        class_names=bench["class_names"], foundation=bench["source"],
        global_state=sink["global_state"],
        client_states={names[i]: rec["state"] for i, rec in sink["personal"].items()},
        tiers=dict(zip(names, row["tiers"], strict=True)),
        exit_val_acc=exit_val_accuracies(names, sink, depth),
        flops=bench["flops"][row["method"]],
        metadata={"benchmark_row": dict(row), "command": getattr(args, "command", None)})
    return ref.version


def exit_val_accuracies(names: list[str], sink: dict[str, Any],
                        depth: int) -> dict[str, list[float | None]]:
    """Validation accuracy per exit of the models the artifact serves: each client's
    personalised model on its own val split, and ``global``: the global model's, averaged over
    the clients whose budget reaches the exit (None where nobody measured it)."""
    final, personal = sink["client_eval"][-1], sink["personal"]
    out: dict[str, list[float | None]] = {}
    for i, name in enumerate(names):
        rec = personal[i]["metrics"] if i in personal else final[i]
        out[name] = [_or_none(rec.get(f"val_acc_exit{e}")) for e in range(1, depth + 1)]
    out["global"] = [_or_none(float(np.nanmean(col)) if not np.isnan(col).all() else None)
                     for col in ([float(final[i][f"val_acc_exit{e}"]) for i in final]
                                 for e in range(1, depth + 1))]  # fmt: skip
    return out


def protocol_text(args: Any) -> str:
    """One paragraph of what every method got (the same for all)."""
    return (f"{args.num_clients} clients, Dirichlet alpha={args.alpha} over "
            f"{args.per_class} images/class, split 60/20/20; {args.fraction:.0%} of clients per "
            f"round; {args.rounds} rounds x {args.local_epochs} local epochs, batch "
            f"{args.batch_size}; lr "
            + ("chosen per setting and method from {0.3, 1, 3} x the default on the clients' "
               "validation splits (first seed)" if args.select else
               f"{args.lr} (finetune {args.lr_finetune}), not selected")
            + f"; PA rank "
            f"{args.adapter_rank}; personalisation {args.personal_epochs} epochs (client token "
            f"for the Accumulator, everything trainable otherwise), epoch chosen on val; "
            f"seeds {args.seeds}.")
