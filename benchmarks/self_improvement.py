"""Personalize from unlabeled images (TAPER §5.2, Figure 3; issue 18): curves, choices, costs.

    .venv/bin/python benchmarks/self_improvement.py [--store .tailor/store] [--tasks 20]

On the deployed TAPER artifact and Tailor-PACS: 5- and 10-way tasks inside one domain and
across domains, drawn with fixed seeds from the *val* split (where every threshold is chosen)
and the *test* split (where everything is reported). For each task the app's stream is its
images in a fixed order; after n = 8 … 256 of them the task is estimated and the model built:
  - description: the model of the true classes (and domain) — the upper line;
  - all-class: the generic model over every class — the lower line;
  - paper: the k most common pseudo-labels (k given), the paper's loop;
  - relabel: the paper's loop re-labelling over a 2k shortlist, three rounds (k given);
  - em (k given) and **ours** (em, k and domain estimated): what the service runs.
Then, through the real service in-process: /refine against its parent and against the old
/refine, and the cost of an images-only /personalize as a ratio to /predict on the same images
plus a cold /personalize. Writes ``results.json``, ``curves.png`` and ``report.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from tqdm import tqdm  # noqa: E402

from benchmarks._unlabeled import Scorer, estimates, make_tasks, normalise  # noqa: E402
from benchmarks._unlabeled_report import plot, report  # noqa: E402
from benchmarks._unlabeled_service import service_figures  # noqa: E402
from model_store.resnet import build_resnet18  # noqa: E402
from model_store.unlabeled import generic_scores  # noqa: E402

SHARES = (0.02, 0.03, 0.05, 0.08, 0.12)
CONFS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
SELECT_AT = (32, 64, 128)
RULES = ("count", "soft", "em", "relabel")


def posteriors(bundle, images: np.ndarray, label: str):
    """All-class and domain posteriors of every image of a split (one forward, chunked)."""
    model = build_resnet18(len(bundle.class_names))
    model.load_state_dict(bundle.generic)
    model.eval()
    x, probs, doms = normalise(images), [], []
    for i in tqdm(range(0, len(x), 512), desc=f"scoring {label}", unit="chunk"):
        p, d = generic_scores(model, x[i:i + 512], bundle.domain_head)
        probs.append(p)
        doms.append(d)
    return x, np.concatenate(probs), (np.concatenate(doms) if doms[0] is not None else None)


def choose(tasks, probs, doms) -> dict:
    """min_share (k) and min_domain_conf chosen on val tasks; every rule's val exact rate."""
    def rate(fn):
        hits = [fn(t, t.stream[:n]) for t in tasks for n in SELECT_AT]
        return float(np.mean(hits))

    def exact(share):
        return rate(lambda t, s: set(estimates(probs[s], None, t.way, share, 0.5)["em_k"]
                                     .classes) == set(t.classes))

    def dom_ok(conf):
        return rate(lambda t, s: estimates(probs[s], doms[s], t.way, 0.05, conf)["em"].domain
                    == t.domain)

    shares = {s: exact(s) for s in tqdm(SHARES, desc="val: min_share")}
    confs = {c: dom_ok(c) for c in tqdm(CONFS, desc="val: min_domain_conf")} if doms is not None \
        else {}
    rules = {r: rate(lambda t, s, r=r: set(_classes(estimates(probs[s], None, t.way, 0.05,
                                                              0.5)[r])) == set(t.classes))
             for r in RULES}
    best_share = max(shares, key=lambda s: (shares[s], -abs(s - 0.05)))
    best_conf = max(confs, key=lambda c: (confs[c], c)) if confs else 0.6
    return {"min_share": best_share, "min_domain_conf": best_conf, "val_exact_by_share": shares,
            "val_domain_by_conf": confs, "val_exact_by_rule_k_given": rules}


def _classes(est) -> list[int]:
    return est if isinstance(est, list) else est.classes


def curves(tasks, probs, doms, scorer: Scorer, sizes, choice, method) -> list[dict]:
    """One row per (task, n): accuracy and estimate quality of every line."""
    rows = []
    for ti, t in enumerate(tqdm(tasks, desc="test tasks", unit="task")):
        ev = t.evaluate
        upper = scorer.accuracy(t.classes, t.domain, method, ev)
        lower = float((probs[ev].argmax(1) == scorer.labels[ev]).mean())
        for n in sizes:
            s = t.stream[:n]
            est = estimates(probs[s], None if doms is None else doms[s], t.way,
                            choice["min_share"], choice["min_domain_conf"])
            row = {"task": ti, "way": t.way, "scope": t.scope, "n": n, "seen": int(len(s)),
                   "description": upper, "all_class": lower,
                   "k_ok": len(est["em_k"].classes) == t.way,
                   "domain_ok": est["em_k"].domain == t.domain if doms is not None else None}
            for line in ("count", "relabel", "em", "em_k"):
                cls = _classes(est[line])
                dom = est[line].domain if line == "em_k" else None
                row[f"{line}_acc"] = scorer.accuracy(cls, dom, method, ev)
                row[f"{line}_exact"] = set(cls) == set(t.classes)
                row[f"{line}_recall"] = len(set(cls) & set(t.classes)) / t.way
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--store", default=os.environ.get("TAILOR_STORE_DIR", ".tailor/store"))
    p.add_argument("--data-dir", default=os.environ.get("TAILOR_DATA_DIR", ".tailor/data"))
    p.add_argument("--size", default="default", choices=("default", "tiny"))
    p.add_argument("--tasks", type=int, default=20, help="test tasks per (way, scope)")
    p.add_argument("--val-tasks", type=int, default=20, help="val tasks per (way, scope)")
    p.add_argument("--ways", type=int, nargs="+", default=[5, 10])
    p.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 64, 128, 256])
    p.add_argument("--service-tasks", type=int, default=20, help="tasks for /refine and timing")
    p.add_argument("--out", default="benchmarks/results/self_improvement")
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    from model_store.taper import load_taper
    from trainer.data.pacs import build_pacs

    t0 = time.perf_counter()
    bundle = load_taper(args.store, "latest", device="cpu")
    data = build_pacs(args.data_dir, size=args.size)
    method = bundle.default_method
    split = {}
    for name, code in (("val", 1), ("test", 2)):
        m = np.asarray(data.split) == code
        x, probs, doms = posteriors(bundle, np.asarray(data.images)[m], name)
        split[name] = (x, np.asarray(data.labels)[m], np.asarray(data.domains)[m], probs, doms)
    scopes = ("domain", "mixed")
    _, yv, dv, pv, qv = split["val"]
    val_tasks = make_tasks(yv, dv, ways=tuple(args.ways), scopes=scopes,
                           per_config=args.val_tasks, seed=4321)
    choice = choose(val_tasks, pv, qv)
    x, y, d, pt, qt = split["test"]
    test_tasks = make_tasks(y, d, ways=tuple(args.ways), scopes=scopes, per_config=args.tasks,
                            seed=1234)
    scorer = Scorer(bundle, x, y, list(bundle.domains))
    rows = curves(test_tasks, pt, qt, scorer, args.sizes, choice, method)
    service = service_figures(args, bundle, data, test_tasks, scorer, choice, method)
    result = {"command": "python benchmarks/self_improvement.py " + " ".join(argv or sys.argv[1:]),
              "artifact": bundle.version, "method": method, "choice": choice, "rows": rows,
              "service": service, "domain_head": bundle.metrics.get("domain_head"),
              "seconds": round(time.perf_counter() - t0, 1), "device": "cpu",
              "threads": torch.get_num_threads()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result, indent=1, default=float))
    plot(rows, out / "curves.png")
    text = report(result)
    (out / "report.md").write_text(text)
    print(text)
    return result


if __name__ == "__main__":
    main()
