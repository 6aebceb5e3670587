"""A federation on a real Flower deployment over loopback, timed phase by phase.

Same processes as on real machines — ``flower-superlink``, one ``flower-supernode`` per client
(each with only its own folder), ``flwr run`` on this project — all on 127.0.0.1:

1. ``prepare``: ``tailor train federated-prepare`` (frozen features per domain client);
2. ``start``: SuperLink + SuperNodes until every node is registered;
3. ``submit``: ``flwr run`` (FAB build from the project dir + StartRun);
4. ``run``: until the ServerApp's ``result.json`` (rounds, evaluation, personalisation).

Prints a table and writes ``benchmarks/results/flower_deployment.json``::

    python benchmarks/flower_deployment.py --size tiny --backbone latest \
        --store .tailor/store-real --clients 3 --rounds 2 --register-store /tmp/fedclip-store
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from trainer.federated.deploy import (
    config_string,
    prepare_main,
    register_main,
)
from trainer.federated.loopback import flwr_run, local_deployment, wait_for_result

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ["photo", "art_painting", "cartoon", "sketch"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="tiny", choices=("tiny", "default"))
    p.add_argument("--pacs-npz", default=None, help="instead of Tailor-PACS (tests)")
    p.add_argument("--data-dir", default=".tailor/data")
    p.add_argument("--store", default=".tailor/store")
    p.add_argument("--backbone", default="latest")
    p.add_argument("--method", default="fedclip")
    p.add_argument("--clients", type=int, default=3, choices=(2, 3, 4))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--local-epochs", type=int, default=1)
    p.add_argument("--personal-epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--register-store", default=None,
                   help="also save the run as a fedclip artifact in this store "
                        "(`tailor train federated-register`)")
    p.add_argument("--out", default="benchmarks/results/flower_deployment.json")
    return p


def _wait_for_nodes(log: Path, n: int, timeout: float = 180) -> None:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if log.exists() and log.read_text(errors="replace").count("Activated node_id") >= n:
            return
        time.sleep(0.2)
    raise TimeoutError(f"fewer than {n} SuperNodes registered in {timeout:.0f} s; see {log}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Prepare, deploy, run and time one federation; return the JSON payload."""
    work = Path(tempfile.mkdtemp(prefix="tailor-flower-"))
    t0 = time.perf_counter()
    prep_args = ["--size", args.size, "--data-dir", args.data_dir, "--store", args.store,
                 "--backbone", args.backbone, "--method", args.method,
                 "--out", str(work / "fed"), "--domains", *DOMAINS[:args.clients]]
    prep = prepare_main(prep_args + (["--pacs-npz", args.pacs_npz] if args.pacs_npz else []))
    t_prep = time.perf_counter() - t0
    run_cfg = {"fed-dir": prep["folders"]["server"], "image-dim": prep["folders"]["image_dim"],
               "num-clients": args.clients, "rounds": args.rounds, "lr": args.lr,
               "local-epochs": args.local_epochs, "personal-epochs": args.personal_epochs,
               "out-dir": str(work / "result")}
    with local_deployment(prep["folders"]["clients"], work / "flower") as dep:
        t1 = time.perf_counter()
        _wait_for_nodes(dep["logs"] / "superlink.log", args.clients)
        t2 = time.perf_counter()
        run_id = flwr_run(ROOT, dep, config_string(run_cfg))
        t3 = time.perf_counter()
        result = wait_for_result(dep, run_id, work / "result")
        t4 = time.perf_counter()
        app_starts = sum(p.read_text(errors="replace").count("Start `flwr-clientapp` process")
                         for p in dep["logs"].glob("supernode*.log"))
    last = result["client_eval"][-1]
    artifact = None
    if args.register_store:
        artifact = register_main(["--deployment", str(work / "fed"), "--result",
                                  str(work / "result"), "--store", args.register_store])
    return {
        "setting": {**{k: v for k, v in vars(args).items() if k != "out"},
                    "clients_names": prep["clients"], "backbone_src": prep["backbone"]},
        "seconds": {"prepare": t_prep, "start_nodes": t2 - t1, "submit": t3 - t2,
                    "run": t4 - t3, "total": t4 - t0},
        "rounds": result["rounds"], "clientapp_processes": app_starts,
        "global_test_acc": {c: m["test_acc"] for c, m in last.items()},
        "personal_test_acc": {c: m["test_acc"] for c, m in result["personal"].items()},
        "errors": result["errors"], "fedclip_artifact": artifact, "work_dir": str(work)}


def main() -> None:
    args = _parser().parse_args()
    payload = run(args)
    s = payload["seconds"]
    print(f"\n{'phase':<26}{'seconds':>10}")
    for k in ("prepare", "start_nodes", "submit", "run", "total"):
        print(f"{k:<26}{s[k]:>10.1f}")
    print(f"{'clientapp processes':<26}{payload['clientapp_processes']:>10}")
    print(f"\n{'round':<8}{'clients':>8}{'params/client':>15}{'bytes up':>12}{'bytes down':>12}")
    for r in payload["rounds"]:
        print(f"{r['round']:<8}{r['clients']:>8}{r['params_per_client']:>15,}"
              f"{r['bytes_up']:>12,}{r['bytes_down']:>12,}")
    print(f"\n{'client':<16}{'global test':>12}{'personal test':>15}")
    for c, acc in payload["global_test_acc"].items():
        print(f"{c:<16}{acc:>12.3f}{payload['personal_test_acc'].get(c, float('nan')):>15.3f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
