"""Hard negatives for the request resolver: the two outside reviews of stop 33 (issue 13).

``benchmarks/data/resolution_hard.jsonl`` keeps what two adversarial reviewers (agents with the
code, a base worktree and a harness) wrote to break stop 33's first rules:

- 707 definition pairs (``kind: definitions``): one probe definition beside a clear catalogue
  one (``partner``). 373 probes describe things the catalogue lacks (``accept: []``: a 422 is
  right), 334 describe a catalogue class (``accept``: the classes a careful reader allows).
- 557 descriptions (``kind: natural``) aimed at one rule each (``rule``: 1 repeats, 2 email
  replies, 3 dismissals, 4 chats / task lists / glosses, 5 vocabulary, 6 wishes), with the
  reviewer's intended answer (``expect``: classes, or null for a 422); the 108 it called
  debatable are left out.

Unlike the outside sets of ``benchmarks/resolution.py`` these are not requests as people write
them: most rows sit next to a rule's edge, so the shares here measure guards, not accuracy.
Each row is resolved as the rules of ``POST /v1/personalize`` resolve it (no learned reader;
``benchmarks/phrase_reader.py`` scores the definition pairs with the phrase reader), at the
service's thresholds and at any ``--described`` pairs given:

    .venv/bin/python benchmarks/resolution_hard.py [--described 0.60/0.04 ...]

Prints per setting: out-of-catalogue definitions answered 200, catalogue definitions right and
wrong, descriptions right and wrong at 200 per rule. Writes
``benchmarks/results/resolution/hard.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[0:0] = [str(_HERE.parent)]  # the repository root, not benchmarks/, on sys.path

from tqdm import tqdm  # noqa: E402

from benchmarks.resolution import OUT, resolve, tailor_pacs_catalogue  # noqa: E402

DATA = _HERE / "data" / "resolution_hard.jsonl"


def verdict(row: dict, status: int, classes: list | None) -> str:
    """``right``, ``wrong200`` (a 200 that is not the answer) or ``refused`` (a needless 422)."""
    if row["kind"] == "definitions":
        if not row["accept"]:
            return "right" if status == 422 else "wrong200"
        ok = status == 200 and classes[0] in row["accept"] and classes[1] == row["partner"]
    else:
        want = row["expect"]
        ok = status == 422 if want is None else status == 200 and sorted(classes) == sorted(want)
    return "right" if ok else "wrong200" if status == 200 else "refused"


def score(resolver, catalogue: dict, rows: list[dict], label: str) -> dict:
    """Counts of verdicts per group: out-of-catalogue and catalogue definitions, and
    descriptions per rule."""
    counts: Counter = Counter()
    for row in tqdm(rows, desc=label):
        status, classes, _ = resolve(resolver, catalogue, row)
        if row["kind"] == "definitions":
            group = "definitions: catalogue" if row["accept"] else "definitions: lacking"
        else:
            group = f"descriptions: rule {row['rule']}"
        counts[(group, verdict(row, status, classes))] += 1
    groups = sorted({g for g, _ in counts})
    return {g: {v: counts[(g, v)] for v in ("right", "wrong200", "refused")} for g in groups}


def main(argv: list[str] | None = None) -> dict:
    """Score every row at the service's thresholds and at each ``--described`` pair."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--described", nargs="*", default=[],
                   help="described threshold/margin pairs to compare, e.g. 0.60/0.04")
    args = p.parse_args(argv)
    from service.core.settings import Settings
    from service.kinds.resolution import ClassResolver
    from service.kinds.taper import load_text_encoder

    s = Settings()
    catalogue = tailor_pacs_catalogue()
    resolver = ClassResolver(catalogue, load_text_encoder(None, "cpu"), s.match_threshold,
                             s.match_margin)  # fmt: skip
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    settings = [(s.match_described_threshold, s.match_described_margin)]
    settings += [tuple(float(x) for x in pair.split("/")) for pair in args.described]
    results = {}
    for threshold, margin in settings:
        resolver.described = (threshold, margin)
        results[f"{threshold}/{margin}"] = score(resolver, catalogue, rows, f"{threshold}/{margin}")
    for label, groups in results.items():
        print(f"described {label}")
        for group, v in groups.items():
            total = sum(v.values())
            print(f"  {group:26s} {total:4d} rows  right {v['right']:4d}  "
                  f"wrong 200 {v['wrong200']:4d}  needless 422 {v['refused']:4d}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "hard.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {OUT / 'hard.json'}")
    return results


if __name__ == "__main__":
    main()
