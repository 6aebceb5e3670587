"""How well task descriptions are understood: the request resolver on a development set.

``benchmarks/data/resolution_dev.jsonl`` holds requests written for this purpose (not taken from
the code's word lists): natural descriptions (``description``, expected classes and domain, or
``expect: null`` where the right answer is a 422: negations, injection-like strings, classes the
catalogue lacks, ambiguous mentions) and definition-only requests (``classes`` given as three
free-language definitions without the class names). Each row is resolved exactly as
``POST /v1/personalize`` resolves it (``service.kinds.resolution.resolve_request`` with the
bundled MiniLM over the Tailor-PACS catalogue), outcome 200 (classes, domain) or 422.

The rows are split in two by a hash of their id: the *tune* split chooses the similarity
threshold (the best exact-set accuracy minus 5 × the wrong-200 rate), the *report* split is
scored at that threshold (and at the service's default, for comparison).

    .venv/bin/python benchmarks/resolution.py [--threshold 0.55]

Prints per split and kind: exact class-set accuracy (a 422 is right only where one is
expected), domain accuracy (rows with expected classes), 422 rate, wrong-200 rate (a 200 whose
class set is not the expected one, including a 200 where a 422 was expected), p50 latency.
Writes ``benchmarks/results/resolution/resolution.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[0:0] = [str(_HERE.parent)]  # the repository root, not benchmarks/, on sys.path

from tqdm import tqdm  # noqa: E402

DATA = _HERE / "data" / "resolution_dev.jsonl"
OUT = _HERE / "results" / "resolution"
THRESHOLDS = [round(0.30 + 0.025 * i, 3) for i in range(21)]  # 0.30 … 0.80


def load_rows(path: Path = DATA) -> list[dict]:
    """The development set, each row tagged with its split (``tune`` or ``report``)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for row in rows:
        row["split"] = "tune" if hashlib.sha1(row["id"].encode()).digest()[0] % 2 else "report"
    return rows


def tailor_pacs_catalogue() -> dict:
    """The Tailor-PACS catalogue as an artifact's ``catalogue.json`` holds it."""
    from trainer.data import pacs

    return {"classes": [dict(c) for c in pacs.CLASSES], "domains": list(pacs.DOMAINS)}


def resolve(resolver, catalogue: dict, row: dict) -> tuple[int, list[str] | None, str | None]:
    """(status, classes in request order, domain) as the service would answer."""
    from service.core.problems import Problem
    from service.core.schemas import PersonalizeCreate
    from service.kinds.resolution import resolve_request

    fields = {"description": row["description"]} if row["kind"] == "natural" else {
        "classes": row["classes"]}  # fmt: skip
    try:
        request = PersonalizeCreate(**fields)
        matches, domain = resolve_request(resolver, request, catalogue["domains"])
    except Problem:
        return 422, None, None
    except ValueError:  # schema refusal: the API answers 422 as well
        return 422, None, None
    return 200, [m.name for m in matches], domain


def score(outcomes: list[dict]) -> dict:
    """The figures of one group of rows."""
    n = len(outcomes)
    exact = sum(o["right"] for o in outcomes)
    answerable = [o for o in outcomes if o["expect"] is not None]
    domain_ok = sum(o["status"] == 200 and o["domain"] == o["want_domain"] for o in answerable)
    wrong = sum(o["status"] == 200 and not o["right"] for o in outcomes)
    return {
        "rows": n, "exact": exact / n if n else float("nan"),
        "domain": domain_ok / len(answerable) if answerable else float("nan"),
        "rate_422": sum(o["status"] == 422 for o in outcomes) / n if n else float("nan"),
        "wrong_200": wrong / n if n else float("nan"),
        "p50_ms": statistics.median(o["ms"] for o in outcomes) if n else float("nan"),
    }  # fmt: skip


def run(resolver, catalogue: dict, rows: list[dict], threshold: float) -> list[dict]:
    """Resolve every row at ``threshold``; one outcome dict per row."""
    resolver.threshold = threshold
    outcomes = []
    for row in rows:
        t0 = time.perf_counter()
        status, classes, domain = resolve(resolver, catalogue, row)
        ms = (time.perf_counter() - t0) * 1e3
        want = row["expect"]
        right = (status == 422) if want is None else (
            status == 200 and sorted(classes) == sorted(want) and domain == row["domain"])
        outcomes.append({"id": row["id"], "kind": row["kind"], "split": row["split"],
                         "status": status, "classes": classes, "domain": domain,
                         "expect": want, "want_domain": row["domain"], "right": right,
                         "ms": ms})  # fmt: skip
    return outcomes


def choose_threshold(resolver, catalogue: dict, tune: list[dict]) -> tuple[float, list[dict]]:
    """The threshold that maximises exact − 5 × wrong-200 on the tune split."""
    sweep = []
    for t in tqdm(THRESHOLDS, desc="threshold sweep (tune split)"):
        s = score(run(resolver, catalogue, tune, t))
        sweep.append({"threshold": t, **s, "objective": s["exact"] - 5 * s["wrong_200"]})
    best = max(sweep, key=lambda r: (r["objective"], -abs(r["threshold"] - 0.55)))
    return best["threshold"], sweep


def table(results: dict) -> str:
    """Aligned text: one line per (threshold, split, kind)."""
    lines = [f"resolver: {results['resolver']}  rows: {results['rows']}  chosen threshold "
             f"{results['chosen_threshold']} (tune split)"]  # fmt: skip
    head = f"  {'threshold':>14} {'split':6} {'kind':11} {'rows':>4} {'exact':>6} {'domain':>6} " \
           f"{'422':>6} {'wrong200':>8} {'p50 ms':>7}"
    lines.append(head)
    for label, groups in results["scores"].items():
        for key, s in groups.items():
            split, kind = key.split("/")
            lines.append(f"  {label:>14} {split:6} {kind:11} {s['rows']:4d} {s['exact']:6.1%} "
                         f"{s['domain']:6.1%} {s['rate_422']:6.1%} {s['wrong_200']:8.1%} "
                         f"{s['p50_ms']:7.1f}")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    """Sweep on tune, score both splits at the chosen and the default threshold, report."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threshold", type=float, default=0.55, help="the service's default")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    from service.kinds.resolution import ClassResolver
    from service.kinds.taper import load_text_encoder

    catalogue = tailor_pacs_catalogue()
    resolver = ClassResolver(catalogue, load_text_encoder(None, "cpu"), args.threshold)
    rows = load_rows()
    run(resolver, catalogue, rows[:5], args.threshold)  # warm-up (encoder, caches)
    chosen, sweep = choose_threshold(resolver, catalogue, [r for r in rows if r["split"] == "tune"])
    scores = {}
    for label, t in (("default", args.threshold), ("chosen", chosen)):
        outcomes = run(resolver, catalogue, tqdm(rows, desc=f"scoring at {t}"), t)
        groups = {}
        for split in ("tune", "report"):
            for kind in ("natural", "definitions", "all"):
                chosen_rows = [o for o in outcomes if o["split"] == split
                               and kind in ("all", o["kind"])]  # fmt: skip
                groups[f"{split}/{kind}"] = score(chosen_rows)
        scores[f"{label} {t}"] = groups
        if label == "chosen":
            failures = [o for o in outcomes if not o["right"]]
    results = {"resolver": type(resolver).__module__, "rows": len(rows),
               "chosen_threshold": chosen, "scores": scores, "sweep": sweep,
               "failures": failures}  # fmt: skip
    print(table(results))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "resolution.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out / 'resolution.json'}")
    return results


if __name__ == "__main__":
    main()
