"""The tuned request reader beside the rules, measured as the service answers.

Every natural request of the chosen sets is resolved by ``service.kinds.reader.resolve_or_read``
once per configuration (:func:`configurations`): the rules alone, and the rules checked by a
trained request reader (``service.kinds.tuned``: an answer is asked back when the reader reads
otherwise and is confident, or finds it less than ``--veto`` times as likely as its own reading;
a refusal it reads with enough confidence is the answer, or with less when the ``--forest``
reader of refusals reads the same classes). A row is *right* when the answer has the expected
classes and domain, or when a request to ask back is asked back; a *wrong 200* is an answer that
is not right. The reader alone (``trainer.reader.train.outcomes``: its own reading of every
request, answering when it reads two or more classes) is shown too. The p50 latency of a
description is measured in the same run, for the rules alone and with the reader (on ONNX
Runtime, as the service runs it), on this machine's CPU; with ``--forest`` every configuration,
the rules alone included, also pays for the forest's reading of a refusal (it offers it in the
422, as the service does), so those figures do not compare with runs without it.

Train the reader with the test sets held out first, then measure (docs/results-resolution.md,
stop 58):

    make request-reader  # the test sets (TEST) are scored, not trained on
    python benchmarks/request_reader.py --reader .tailor/request-reader \
        --forest .tailor/reader.safetensors
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
from benchmarks.resolution import OUTSIDE, load_rows, tailor_pacs_catalogue  # noqa: E402

# written after the stop-59 code by agents that saw only the brief: scored (counts only), never read
# (docs/results-resolution.md, stop 60); 98-101, the stop-59 test, validated stop 60's changes
TEST = {"110-111": ("outside110", "outside111"), "112-113": ("outside112", "outside113")}
ASK_BACK = (0.5, 0.7, 0.9)  # confidence from which an answer read otherwise is asked back
RESCUE = (0.7, 0.9, 0.95)  # confidence from which a refusal read is answered
SECONDED = (0.5, 0.7)  # … or read alike by the forest reader
OUT = Path(__file__).resolve().parent / "results" / "request_reader"


def outcome(resolver, catalogue: dict, row: dict, tuned, forest=None) -> tuple[str, float]:
    """("right" | "wrong" | "asked", seconds) of one natural row as the service answers (the
    ``forest`` reader of refusals, if given, suggests only, as the service's default)."""
    from service.core.problems import Problem
    from service.core.schemas import PersonalizeCreate
    from service.kinds.reader import resolve_or_read

    t0 = time.perf_counter()
    try:
        matches, domain = resolve_or_read(resolver, forest, 1.01, PersonalizeCreate(
            description=row["description"]), catalogue["domains"], [], [], tuned)
    except (Problem, ValueError):
        return ("right" if row["expect"] is None else "asked"), time.perf_counter() - t0
    right = row["expect"] is not None and domain == row["domain"] and \
        sorted(m.name for m in matches) == sorted(row["expect"])  # fmt: skip
    return ("right" if right else "wrong"), time.perf_counter() - t0


def configurations(veto: float, forest: bool = False
                   ) -> dict[str, tuple[float, float, float, float] | None]:
    """(ask back from, veto, answer refusals from, answer them read alike by the forest from)
    per label: the rules alone (None), stop 57's policy (0.7 both ways, no veto), a grid with
    ``veto``, and, with a ``forest``, the stop-58 choice with the forest seconding."""
    grid = {f"ask {t} / rescue {r}": (t, veto, r, 2.0) for t in ASK_BACK for r in RESCUE}
    seconded = {f"ask 0.5 / rescue 0.9 / forest {s}": (0.5, veto, 0.9, s)
                for s in (SECONDED if forest else ())}  # fmt: skip
    return {"rules alone": None, "stop 57 (0.7 / 0.7, no veto)": (0.7, 0.0, 0.7, 2.0), **grid,
            **seconded}


def measure(resolver, catalogue: dict, reader, rows: list[dict], veto: float,
            forest=None) -> dict:
    """Counts per configuration (:func:`configurations`), the reader alone, and p50 latency
    with and without it."""
    from service.kinds.tuned import Tuned
    from trainer.reader.train import outcomes

    out: dict = {"requests": len(rows), "veto": veto, "configurations": {},
                 "alone": outcomes(reader, rows)}
    for label, knobs in configurations(veto, forest is not None).items():
        tuned = None if knobs is None else Tuned(reader, *knobs)
        counts, seconds = {"right": 0, "wrong": 0, "asked": 0}, []
        for row in tqdm(rows, desc=label, leave=False):
            what, s = outcome(resolver, catalogue, row, tuned, forest)
            counts[what] += 1
            seconds.append(s)
        out["configurations"][label] = {**counts, "p50_ms": 1e3 * float(np.median(seconds))}
    return out


def counts_table(title: str, n: int, configurations: dict) -> None:
    """Print right / wrong 200 / asked back / p50 per configuration (of ``n`` rows) as a
    Markdown table under ``title`` (also ``benchmarks/phrase_reader.py``'s)."""
    print(f"\n{title}")
    print("| configuration | right | wrong 200 | asked back | p50 ms |")
    print("|---|---|---|---|---|")
    for label, c in configurations.items():
        print(f"| {label} | {c['right']} ({100 * c['right'] / n:.1f} %) | {c['wrong']} "
              f"({100 * c['wrong'] / n:.1f} %) | {c['asked']} | {c['p50_ms']:.1f} |")


def table(name: str, result: dict) -> None:
    """Print one set group's counts per configuration as a Markdown table."""
    n = result["requests"]
    counts_table(f"{name}: {n} natural requests", n, result["configurations"])
    a = result["alone"]
    print(f"| the reader alone | {a['right']} ({100 * a['right'] / n:.1f} %) | {a['wrong']} "
          f"({100 * a['wrong'] / n:.1f} %) | {a['asked']} | |")


def plot(results: dict, out: Path) -> None:
    """Right against wrong 200s per configuration: one panel per set group, one series per
    reader."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(next(iter(results.values())))
    fig, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 4.5), squeeze=False)
    for ax, group in zip(axes[0], groups, strict=True):
        for reader, by_group in results.items():
            r = by_group[group]
            pts = [(100 * c["wrong"] / r["requests"], 100 * c["right"] / r["requests"], label)
                   for label, c in r["configurations"].items()]  # fmt: skip
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=Path(reader).name, s=14)
            for x, y, label in pts:
                ax.annotate(label.replace("ask ", "").replace("rescue ", ""), (x, y),
                            fontsize=5)
        ax.set_xlabel("wrong 200s, % of natural requests")
        ax.set_ylabel("right, % of natural requests")
        ax.set_title(f"sets {group}: rules checked by a tuned request reader", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "request_reader.png", dpi=120)


def score_reader(folder: Path, groups: dict, runtime: str, veto: float, forest=None) -> dict:
    """One reader's counts per set group (refused if it was trained on one of the sets)."""
    from model_store.request_model import load_reader

    trained = json.loads((folder / "reader.json").read_text())
    if seen := {s for sets in groups.values() for s in sets} & {
            Path(f).stem.replace("resolution_", "") for f in trained.get("files", [])}:
        raise SystemExit(f"{folder} was trained on {sorted(seen)}: train it with them "
                         f"as --val (make request-reader)")
    catalogue = tailor_pacs_catalogue()
    resolver, reader = resolver_for(catalogue), load_reader(folder, "cpu")
    runtime = reader.use_onnx() if runtime == "onnx" else reader.runtime
    head = trained.get("head", "mean")
    print(f"\nreader: {folder} ({head}) on {runtime}; {trained.get('trained_on')}; veto {veto}")
    results = {"runtime": runtime, "head": head, "trained_on": trained.get("trained_on")}
    for name, sets in groups.items():
        rows = [r for r in load_rows(outside={s: OUTSIDE[s] for s in sets})
                if r["kind"] == "natural" and r["split"] in sets]  # fmt: skip
        results[name] = measure(resolver, catalogue, reader, rows, veto, forest)
        table(name, results[name])
    return results


def _forest(path: Path, groups: dict):
    """The forest reader at ``path``, as the service loads it; refused if it is stale, or was
    fitted on a scored set or records no sets (``benchmarks/reader.py`` records them)."""
    from safetensors import safe_open

    from service.core.settings import Settings
    from service.kinds.reader import configured

    if (forest := configured(Settings(reader_path=path))) is None:
        raise SystemExit(f"{path} does not load (missing, stale or damaged): refit it")
    with safe_open(str(path), framework="numpy") as f:
        fitted = (f.metadata() or {}).get("sets")
    scored = {s for sets in groups.values() for s in sets}
    if fitted is None:
        raise SystemExit(f"{path} records no sets it was fitted on: refit it "
                         f"(benchmarks/reader.py)")
    if seen := scored & set(json.loads(fitted)):
        raise SystemExit(f"{path} was fitted on {sorted(seen)}: refit it with them as its TEST")
    return forest


def main(argv: list[str] | None = None) -> dict:
    """Score each reader on each set group, print the tables, write the JSON and the plot."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reader", type=Path, nargs="+", default=[Path(".tailor/request-reader")],
                   help="one or more reader folders, compared in one run")
    p.add_argument("--sets", nargs="*", default=None,
                   help="name=set,set groups to score (default: the test sets)")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--veto", type=float, default=None,
                   help="the likelihood ratio below which an answer is asked back (default: "
                        "the service's, service.kinds.tuned.VETO)")
    p.add_argument("--forest", type=Path, default=None,
                   help="the forest reader of refusals (benchmarks/reader.py; the service's "
                        "reader_path), fitted without the scored sets: it seconds rescues")
    p.add_argument("--runtime", choices=("onnx", "torch"), default="onnx",
                   help="the reader's runtime (the service's default: onnx)")
    args = p.parse_args(argv)
    from service.kinds.tuned import VETO

    veto = VETO if args.veto is None else args.veto
    if bad := [g for g in args.sets or [] if "=" not in g]:
        p.error(f"--sets takes name=set,set groups, not {bad}")
    groups = dict(TEST) if args.sets is None else {
        g.split("=")[0]: tuple(g.split("=")[1].split(",")) for g in args.sets}  # fmt: skip
    forest = None if args.forest is None else _forest(args.forest, groups)
    full = {str(folder): score_reader(folder, groups, args.runtime, veto, forest)
            for folder in args.reader}  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "request_reader.json").write_text(json.dumps({"veto": veto, "readers": full},
                                                             indent=1))
    plot({k: {g: v[g] for g in groups} for k, v in full.items()}, args.out)
    return full


if __name__ == "__main__":
    main()
