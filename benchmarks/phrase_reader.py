"""The phrase reader beside the rules on definitions-only class lists, as the service answers.

Every definitions row of the chosen sets (``classes``: phrases that describe classes without
naming them) is resolved by ``service.kinds.reader.resolve_or_read``: by the rules alone, and
with the phrase reader (``service.kinds.phrases``) answering the lists the rules refused for
an unknown phrase, from each ``--accept`` probability. A row is *right* when the answer has
the expected classes (and the expected domain: none is given), or when a row to
refuse is refused; a *wrong 200* is an answer that is not right. The outside reviews' hard
pairs are scored too (``resolution_hard.jsonl``: a probe definition beside a clear catalogue
one): the 334 probes of catalogue classes, and the probes of things the catalogue lacks in the
half the reader is not fitted on (``trainer.reader.phrases.fitted_negative``), where any 200 is
wrong. p50 latency is per row, on this machine's CPU, in the same run. The reader must not
have been fitted on a scored set. The service's probability (0.9) was chosen on sets 90-101
(docs/results-resolution.md, stop 60); the others are shown, not chosen on the test.

    tailor train phrase-reader --out /tmp/phrases.safetensors \
        --hold-out benchmarks/data/resolution_outside11[0-3].jsonl
    python benchmarks/phrase_reader.py --model /tmp/phrases.safetensors
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.reader import resolver_for  # noqa: E402
from benchmarks.request_reader import counts_table  # noqa: E402
from benchmarks.resolution import OUTSIDE, load_rows, tailor_pacs_catalogue  # noqa: E402

# the test sets: written after the stop-59 code, scored (counts only) and never read
TEST = {"110-113": ("outside110", "outside111", "outside112", "outside113")}
ACCEPT = (0.8, 0.85, 0.9, 0.95)
OUT = Path(__file__).resolve().parent / "results" / "phrase_reader"


def outcome(resolver, catalogue: dict, row: dict, phrases) -> tuple[str, float]:
    """("right" | "wrong" | "asked", seconds) of one definitions row as the service answers."""
    from service.core.problems import Problem
    from service.core.schemas import PersonalizeCreate
    from service.kinds.reader import resolve_or_read

    t0 = time.perf_counter()
    refuse = row.get("expect") is None and not row.get("accept")
    try:
        matches, domain = resolve_or_read(resolver, None, 1.01, PersonalizeCreate(
            classes=row["classes"]), catalogue["domains"], [], [], None, phrases)
    except (Problem, ValueError):
        return ("right" if refuse else "asked"), time.perf_counter() - t0
    names = [m.name for m in matches]
    if "accept" in row:  # a hard pair: the probe's class among those allowed, then the partner
        right = not refuse and names[0] in row["accept"] and names[1:] == [row["partner"]]
    else:
        right = not refuse and domain == row["domain"] and sorted(names) == sorted(row["expect"])
    return ("right" if right else "wrong"), time.perf_counter() - t0


def measure(resolver, catalogue: dict, model, rows: list[dict], accepts) -> dict:
    """Counts and p50 latency for the rules alone and from each probability in ``accepts``."""
    from service.kinds.phrases import Phrases

    out: dict = {"rows": len(rows), "configurations": {}}
    for accept in (None, *accepts):
        label = "rules alone" if accept is None else f"phrase reader from {accept}"
        phrases = None if accept is None else Phrases(model, accept)
        counts, seconds = {"right": 0, "wrong": 0, "asked": 0}, []
        for row in tqdm(rows, desc=label, leave=False):
            what, s = outcome(resolver, catalogue, row, phrases)
            counts[what] += 1
            seconds.append(s)
        out["configurations"][label] = {**counts, "p50_ms": 1e3 * float(np.median(seconds))}
    return out


def table(name: str, result: dict) -> None:
    """Print one set group's counts per configuration as a Markdown table."""
    n = result["rows"]
    counts_table(f"{name}: {n} definitions-only requests", n, result["configurations"])


def plot(results: dict, out: Path) -> None:
    """Right against wrong 200s per configuration, one series per set group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for group, r in results.items():
        pts = [(100 * c["wrong"] / r["rows"], 100 * c["right"] / r["rows"], label)
               for label, c in r["configurations"].items()]  # fmt: skip
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"sets {group}")
        for x, y, label in pts:
            ax.annotate(label.replace("phrase reader from ", ""), (x, y), fontsize=6)
    ax.set_xlabel("wrong 200s, % of definitions-only requests")
    ax.set_ylabel("right, % of definitions-only requests")
    ax.set_title("the rules, and the phrase reader answering their refusals", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "phrase_reader.png", dpi=120)


def _model(path: Path, groups: dict):
    """The phrase reader at ``path``; refused if it was fitted on a scored set or records
    none it was fitted on."""
    from model_store.phrase_model import PhraseModel

    model = PhraseModel.load(path)
    if "files" not in model.fitted_on:
        raise SystemExit(f"{path} records no files it was fitted on: fit it again "
                         f"(tailor train phrase-reader)")
    fitted = {Path(f).stem.replace("resolution_", "") for f in model.fitted_on["files"]}
    if seen := fitted & {s for sets in groups.values() for s in sets}:
        raise SystemExit(f"{path} was fitted on {sorted(seen)}: fit it with them held out")
    return model


def hard_rows() -> list[dict]:
    """The hard pairs the reader may be scored on: every catalogue probe, and the probes of
    things the catalogue lacks that it is not fitted on."""
    from trainer.reader.phrases import fitted_negative

    path = Path(__file__).resolve().parent / "data" / "resolution_hard.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if r["kind"] == "definitions"
            and (r["accept"] or not fitted_negative(r))]  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    """Score the model on each set group, print the tables, write the JSON and the plot."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", type=Path, default=Path(".tailor/phrase-reader.safetensors"))
    p.add_argument("--sets", nargs="*", default=None,
                   help="name=set,set groups to score (default: the test sets)")
    p.add_argument("--accept", type=float, nargs="+", default=list(ACCEPT))
    p.add_argument("--no-hard", action="store_true", help="skip the outside reviews' pairs")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    if bad := [g for g in args.sets or [] if "=" not in g]:
        p.error(f"--sets takes name=set,set groups, not {bad}")
    groups = dict(TEST) if args.sets is None else {
        g.split("=")[0]: tuple(g.split("=")[1].split(",")) for g in args.sets}  # fmt: skip
    if unknown := sorted({s for sets in groups.values() for s in sets} - set(OUTSIDE)):
        p.error(f"no outside-written sets named {unknown}")
    model = _model(args.model, groups)
    catalogue = tailor_pacs_catalogue()
    resolver = resolver_for(catalogue)
    results = {}
    for name, sets in groups.items():
        rows = [r for r in load_rows(outside={s: OUTSIDE[s] for s in sets})
                if r["kind"] == "definitions" and r["split"] in sets]  # fmt: skip
        results[name] = measure(resolver, catalogue, model, rows, args.accept)
        table(name, results[name])
    hard = [] if args.no_hard else hard_rows()
    for name, rows in (("hard: lacking", [r for r in hard if not r["accept"]]),
                       ("hard: catalogue", [r for r in hard if r["accept"]])):
        if rows:
            results[name] = measure(resolver, catalogue, model, rows, args.accept)
            table(f"{name} (the outside reviews' pairs)", results[name])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "phrase_reader.json").write_text(json.dumps(
        {"model": str(args.model), "fitted_on": model.fitted_on, "results": results}, indent=1))
    plot(results, args.out)
    return results


if __name__ == "__main__":
    main()
