"""How well task descriptions are understood: the request resolver on a development set.

``benchmarks/data/resolution_dev.jsonl`` holds requests written for this purpose (not taken from
the code's word lists): natural descriptions (``description``, expected classes and domain, or
``expect: null`` where the right answer is a 422: negations, injection-like strings, classes the
catalogue lacks, ambiguous mentions) and definition-only requests (``classes`` given as three
free-language definitions without the class names). Each row is resolved exactly as the
rules of ``POST /v1/personalize`` resolve it (``service.kinds.resolution.resolve_request`` with
the bundled MiniLM over the Tailor-PACS catalogue), outcome 200 (classes, domain) or 422; the
learned readers beside the rules are measured by ``benchmarks/request_reader.py`` (descriptions)
and ``benchmarks/phrase_reader.py`` (class lists).

The rows are split in two by a hash of their id: *tune* and *report*. Names and short phrases
are matched at the service's own threshold and margin (chosen on the tune split at stop 24);
mentions that describe a class (four or more words, or three content words) have their own
pair, chosen here on a tuning pool (the tune split and the outside sets 1–11 below): the most
exact answers among the settings whose wrong class sets at 200 stay within 1 % for each kind of
request. Every split is then scored at that setting (and at the service's default). Since
stop 27 the two differ: the pool's choice (0.45 / 0.02) is optimistic, because that stop's
descriptions were written after reading the pool, and it accepted more out-of-catalogue
definitions in an outside review; the service kept stop 26's 0.525 / 0.06 until stop 29 added
word overlap to a description's score (``service.kinds.lexical``) and took the pool's choice,
0.575 / 0.08 (the most exact rows within 1 % wrong class sets at 200 per kind).

Twenty-one more sets were written *outside* the project, by writers (independent agents) that saw
only the class and domain names and the row format, never this code, its catalogue text or the
development set: ``resolution_outside.jsonl`` (70 natural + 40 definition rows), ``…2`` and
``…3`` (60 + 30 each), ``…4`` and ``…5`` (60 natural each), ``…6`` to ``…13`` (60 + 30 each;
even numbers in a chat voice, odd ones as written requirements). Rules and catalogue text were
written after reading the failures of sets 1–11, so each set is held out only at its first score
(``docs/results-resolution.md``); sets 10 and 11 were first scored at commit 37b0f90 (stop 26),
sets 12 (forum posts, tickets, changed minds) and 13 (voice, code comments, chat) at 90a8095 and
at the end of stop 27, their rows unread in between. Stop 28 added four: 14 (clients' emails),
15 (terse developer inputs: keywords, CLI flags, config snippets) and 16 (definitions only,
half of its rows naming one thing outside the catalogue, so a 422 is right) were scored at
f86b39f before any change and at the end of stop 28, unread in between; 17 (50 definition
rows, each with one out-of-catalogue thing) was read and joins the tuning pool. Four rows of
sets 3–5 ("every animal except cats and dogs") were relabelled at stop 28 from a 422 to the
remaining classes. Set 18 (a mix of chats, emails, tickets and keyword lists, 60 + 30, its brief
asking for two or more classes per request) was scored at f86b39f and at the end of stop 28,
and once more at stop 29 before it was read. Stop 29 added 19 (product specs, non-native
writers, voice transcripts, GitHub issues, app-store copy; 60 + 30) and 20 (60 definition rows,
15 of them with one out-of-catalogue thing close to a catalogue class), both scored at d29adc4
(stop 28's final) and after stop 29's definition work, unread in between. Set 21 (questions,
chats with emoji, tweets, CSV headers, small businesses, tenders; 60 + 30) was written during
stop 29 and scored at d29adc4 and at 10063be before it was read. Splits ``outside`` …
``outside21``.

    .venv/bin/python benchmarks/resolution.py [--threshold 0.55] [--no-sweep]

Prints per split and kind: exact class-set accuracy (a 422 is right only where one is
expected), domain accuracy (rows with expected classes), 422 rate, wrong-200 rate (a 200 whose
class set or domain is not the expected one, including a 200 where a 422 was expected),
``w.class`` (the same, counting the class set only), p50 latency, and
for definition-only rows answered 422 the share whose every unknown definition has one of the
expected classes among its three suggestions (``top3``); then, per split, the share of single
definitions whose nearest class is right, with and without the catalogue's descriptions
(``benchmarks/_definitions.py``).
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

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

DATA = _HERE / "data" / "resolution_dev.jsonl"
OUTSIDE = {name: _HERE / "data" / f"resolution_{name}.jsonl"  # sets 1-109, in the order written
           for name in ("outside", *(f"outside{n}" for n in range(2, 114)))}
# Where (threshold, margin) is chosen: the development set's tune half, and (stop 26; 10 and
# 11 since stop 27; 12, 13 and 17 since stop 28; 14-16 and 18-21 since stop 29; 22 and 23
# since stop 30) the outside sets whose failures were read while writing the rules, so the
# choice sees requests the catalogue's author did not write. Sets 24 and 25 were scored
# unread at stop 30's start and end; only the rows that changed were read (not tuned on).
# Sets 26 and 27 (stop 31) likewise: scored unread at its start and after its rules, then read.
# Sets 28 and 29 (stop 32): scored unread at its start and after its first rules, then read.
# Sets 30 and 31 (stop 33) likewise; 32 and 33 (stop 33) were scored unread at its start and
# after its rules and outside reviews, then read. Stop 34: 34 and 35 scored unread at its start
# and after its first rules, then read; 36 and 37 scored at the stop-33 code and after the
# first rules, then read; 38 and 39 scored unread at the stop-33 code and at the stop's end.
# Stop 35: 38 and 39 read; 40 and 41 scored unread at the stop-34 code and after this stop's
# rules, then read. Stop 36: 42 scored unread at the stop-35 code, then read; 43 scored unread
# at the stop-35 code and after this stop's rules and reviews, then read. Stop 37: 45 scored
# unread at the stop-36 code, then read; 44 scored unread at the stop-36 code and after this
# stop's rules and review. Stop 38: 46 scored unread at the stop-37 code, then read; 47 scored
# unread at the stop-37 code and after this stop's rules and two reviews. Stop 44: 52 and 53
# scored unread at the stop-43 code and after this stop's rule (service.kinds.heads); stop 45
# read them. Stop 45: 54 and 55 scored unread at the stop-44 code and at 83e966b / dde76d4
# (this stop's first rules), then read. Stop 48: 61 scored unread at the stop-47 code, then
# read. Stop 49: 62 and 63 scored unread at the stop-48 code, then read. Stop 50: 64 and 65
# likewise at the stop-49 code. Stop 51: 67 likewise at the stop-50 code. Stop 52: 66 likewise
# at the stop-51 code; 68 scored unread at the stop-51 code and at ae0b4f7, then its wrong 200s
# read; 69 scored unread at the stop-51 code and at this stop's end. Stop 53: 69 scored unread
# at the stop-52 code, then read; 71 scored unread at the stop-52 code and at 084558f, then
# read; 70 scored unread at the stop-52 code, at 084558f and after set 71's rules, then read;
# 72 and 73 scored unread at the stop-52 code and at this stop's rules (both the same), then
# their wrong 200s read. Stop 54: 74-77 scored unread at the stop-53 code; 72-75's 422s and
# 74-75 wholly read; 76 and 77 scored unread after the rules read from 72-75, only the rows a
# rule changed read. 78 and 79 scored unread at the stop-53 code and at this stop's end, still
# unread. Stop 55: 80-85 written; 78-83's wrong 200s read; 84 and 85 scored unread at the
# stop-54 code and at this stop's end. Stop 56: 86 and 87 scored unread at the stop-55 code,
# then the wrong 200s of 84-87 read; 88 and 89 scored unread at the stop-55 code, at 169ae45
# and at this stop's end (all three the same), still unread. Stop 57: 90-93 scored unread at
# the stop-56 code; 92-93 never read. Stop 58: 94-97 scored unread at the stop-57 code (the
# rules alone, and with the stop-57 tuned reader), first thing. Stop 59: 98-101 scored unread
# at the stop-58 code (the rules alone, and as shipped), first thing. Stop 60: 102-105 scored
# unread at the stop-59 code (the rules alone, and as shipped), first thing. Stop 61: 106-109
# scored unread at the stop-60 code (the rules alone, and as shipped), first thing.
# Stop 62: 110-113 (written from benchmarks/data/heldout_brief.md, rewritten after the old
# brief was lost) scored unread at the stop-61 code, first thing; 106-109 then read.
# Every other split is scored, never chosen on.
TUNE_SPLITS = ("tune", "outside", "outside2", "outside3", "outside4", "outside5", "outside6",
               "outside7", "outside8", "outside9", "outside10", "outside11", "outside12",
               "outside13", "outside14", "outside15", "outside16", "outside17", "outside18",
               "outside19", "outside20", "outside21", "outside22", "outside23")
OUT = _HERE / "results" / "resolution"
THRESHOLDS = [round(0.30 + 0.025 * i, 3) for i in range(21)]  # 0.30 … 0.80
MARGINS = [0.0, 0.02, 0.04, 0.06, 0.08, 0.10]
MAX_WRONG = 0.01  # issue 13: wrong class sets answered 200, at most 1 %


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_rows(path: Path = DATA, outside: dict[str, Path] | None = None) -> list[dict]:
    """The development set, each row tagged with its split (``tune`` or ``report``), then the
    outside-written sets (split: their name; never tuned on)."""
    rows = _jsonl(path)
    for row in rows:
        row["split"] = "tune" if hashlib.sha1(row["id"].encode()).digest()[0] % 2 else "report"
    for split, extra in (OUTSIDE if outside is None else outside).items():
        rows += [{**row, "split": split} for row in _jsonl(extra)]
    return rows


def tailor_pacs_catalogue(aliases: bool = True) -> dict:
    """The Tailor-PACS catalogue as an artifact's ``catalogue.json`` holds it (``aliases=False``:
    without the per-class aliases, the ablation)."""
    from trainer.data.catalogue import catalogue_json

    catalogue = catalogue_json()
    if not aliases:
        catalogue["classes"] = [{**c, "aliases": []} for c in catalogue["classes"]]
    return catalogue


def resolve(resolver, catalogue: dict, row: dict) -> tuple[int, list[str] | None, str | None]:
    """(status, classes in request order, domain) as the service would answer; for a 422 the
    classes are its suggestions (``did_you_mean`` names per unknown phrase, if any)."""
    from service.core.problems import Problem
    from service.core.schemas import PersonalizeCreate
    from service.kinds.task_request import resolve_request

    fields = {"description": row["description"]} if row["kind"] == "natural" else {
        "classes": row["classes"]}  # fmt: skip
    try:
        request = PersonalizeCreate(**fields)
        matches, domain = resolve_request(resolver, request, catalogue["domains"])
    except Problem as exc:
        unknown = exc.extra.get("unknown") or []
        return 422, [(u["phrase"], [s["name"] for s in u["did_you_mean"]]) for u in unknown] \
            or None, None  # fmt: skip
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
    wrong_classes = sum(o["status"] == 200 and not o["right_classes"] for o in outcomes)
    asked = [o["suggested_top3"] for o in outcomes if o.get("suggested_top3") is not None]
    return {
        "rows": n, "exact": exact / n if n else float("nan"),
        "domain": domain_ok / len(answerable) if answerable else float("nan"),
        "rate_422": sum(o["status"] == 422 for o in outcomes) / n if n else float("nan"),
        "wrong_200": wrong / n if n else float("nan"),
        "wrong_classes_200": wrong_classes / n if n else float("nan"),
        "p50_ms": statistics.median(o["ms"] for o in outcomes) if n else float("nan"),
        "suggested_top3": sum(asked) / len(asked) if asked else float("nan"),
    }  # fmt: skip


def run(resolver, catalogue: dict, rows: list[dict], threshold: float,
        margin: float = 0.0) -> list[dict]:  # fmt: skip
    """Resolve every row with ``threshold`` and ``margin`` for mentions that describe a class
    (names and short phrases keep the service's own pair); one outcome dict per row."""
    resolver.described = (threshold, margin)
    outcomes = []
    for row in rows:
        t0 = time.perf_counter()
        status, classes, domain = resolve(resolver, catalogue, row)
        ms = (time.perf_counter() - t0) * 1e3
        want = row["expect"]
        right_classes = (status == 422) if want is None else (
            status == 200 and sorted(classes) == sorted(want))
        right = right_classes and (want is None or domain == row["domain"])
        suggested = None  # a definition-only 422: is each unknown definition's class suggested?
        if status == 422 and want is not None and row["kind"] == "definitions" and classes:
            expected = dict(zip(row["classes"], want, strict=True))
            suggested = all(expected.get(phrase) in names for phrase, names in classes)
        outcomes.append({"id": row["id"], "kind": row["kind"], "split": row["split"],
                         "status": status, "classes": classes, "domain": domain,
                         "expect": want, "want_domain": row["domain"], "right": right,
                         "right_classes": right_classes,
                         "suggested_top3": suggested, "ms": ms})  # fmt: skip
    return outcomes


class Memo:
    """The encoder with a per-sentence cache, for the sweep only: every (threshold, margin)
    point re-resolves the same rows, and re-encoding them made a 768-d encoder's sweep take an
    hour on this CPU. Latency is measured afterwards with the bare encoder."""

    def __init__(self, encoder):
        self.encoder, self.cache = encoder, {}

    def encode(self, texts: list[str]) -> np.ndarray:
        """Rows of the bare encoder's output, each sentence encoded once."""
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            self.cache.update(zip(todo, self.encoder.encode(todo), strict=True))
        return np.stack([self.cache[t] for t in texts])


def choose_threshold(resolver, catalogue: dict, tune: list[dict]) -> tuple[tuple, list[dict]]:
    """The (threshold, margin) with the most exact answers on the tuning pool among those whose
    wrong class sets at 200 stay within issue 13's bound (1 %) for natural requests and for
    definition-only requests, each kind on its own; ties: the stricter one, higher
    threshold then larger margin. Stop 26 replaced "exact − 5 × wrong-200": its maximum moved
    with every one-row change and twice chose settings that answered 3–10 % of the unseen
    definition rows with a wrong class. Wrong domains do not count here: they do not depend on
    these two numbers (outside2's camera apps, ``photo`` vs ``null``, are 1.3 % of the pool)."""
    sweep = []
    grid = [(t, m) for t in THRESHOLDS for m in MARGINS]
    for t, m in tqdm(grid, desc="threshold × margin sweep (tuning pool)"):
        outcomes = run(resolver, catalogue, tune, t, m)
        s = score(outcomes)
        worst = max(score([o for o in outcomes if o["kind"] == kind])["wrong_classes_200"]
                    for kind in ("natural", "definitions"))  # fmt: skip
        sweep.append({"threshold": t, "margin": m, **s, "admissible": worst <= MAX_WRONG})
    admissible = [r for r in sweep if r["admissible"]] or sweep
    best = max(admissible, key=lambda r: (r["exact"], r["threshold"], r["margin"]))
    return (best["threshold"], best["margin"]), sweep


def table(results: dict) -> str:
    """Aligned text: one line per (threshold, split, kind)."""
    lines = [f"resolver: {results['resolver']}  rows: {results['rows']}  aliases: "
             f"{results['aliases']}  chosen threshold/margin {results['chosen_threshold']} "
             f"(tuning pool: {', '.join(TUNE_SPLITS)})"]  # fmt: skip
    head = (f"  {'thresh/margin':>19} {'split':8} {'kind':11} {'rows':>4} {'exact':>6} "
            f"{'domain':>6} {'422':>6} {'wrong200':>8} {'w.class':>7} {'p50 ms':>7} {'top3':>6}")
    lines.append(head)
    for label, groups in results["scores"].items():
        for key, s in groups.items():
            split, kind = key.split("/")
            lines.append(f"  {label:>19} {split:8} {kind:11} {s['rows']:4d} {s['exact']:6.1%} "
                         f"{s['domain']:6.1%} {s['rate_422']:6.1%} {s['wrong_200']:8.1%} "
                         f"{s['wrong_classes_200']:7.1%} "
                         f"{s['p50_ms']:7.1f} {s['suggested_top3']:6.1%}")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    """Sweep on tune, score both splits at the chosen and the default threshold, report."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threshold", type=float, default=None, help="the described-mention "
                   "threshold to compare with (default: TAILOR_MATCH_DESCRIBED_THRESHOLD's)")
    p.add_argument("--margin", type=float, default=None,
                   help="likewise (TAILOR_MATCH_DESCRIBED_MARGIN)")
    p.add_argument("--no-aliases", dest="aliases", action="store_false",
                   help="drop the catalogue's aliases (ablation)")
    p.add_argument("--encoder", default=None,
                   help="a local sentence-transformers folder to compare (default: bundled MiniLM)")
    p.add_argument("--no-sweep", dest="sweep", action="store_false",
                   help="score at the service's setting only (the sweep takes ~40 min on 2 cores)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    from service.core.settings import Settings
    from service.kinds.resolution import ClassResolver
    from service.kinds.taper import load_text_encoder

    fields = Settings.model_fields
    default = (fields["match_described_threshold"].default if args.threshold is None
               else args.threshold, fields["match_described_margin"].default
               if args.margin is None else args.margin)  # fmt: skip
    catalogue = tailor_pacs_catalogue(args.aliases)
    resolver = ClassResolver(catalogue, load_text_encoder(args.encoder, "cpu"),
                             fields["match_threshold"].default, fields["match_margin"].default)
    rows = load_rows()
    run(resolver, catalogue, rows[:5], *default)  # warm-up (encoder, caches)
    bare, resolver.encoder = resolver.encoder, Memo(resolver.encoder)
    pool = [r for r in rows if r["split"] in TUNE_SPLITS]
    chosen, sweep = choose_threshold(resolver, catalogue, pool) if args.sweep else (default, [])
    resolver.encoder = bare
    scores = {}
    for label, (t, m) in (("default", default), ("chosen", chosen))[:2 if args.sweep else 1]:
        outcomes = run(resolver, catalogue, tqdm(rows, desc=f"scoring at {t}/{m}"), t, m)
        groups = {}
        for split in dict.fromkeys(r["split"] for r in rows):
            for kind in ("natural", "definitions", "all"):
                chosen_rows = [o for o in outcomes if o["split"] == split
                               and kind in ("all", o["kind"])]  # fmt: skip
                groups[f"{split}/{kind}"] = score(chosen_rows)
        scores[f"{label} {t}/{m}"] = groups
        if label == "chosen" or not args.sweep:
            failures = [o for o in outcomes if not o["right"]]
    from benchmarks._definitions import ablation
    from benchmarks._definitions import table as top1_table

    top1 = ablation(catalogue, bare, rows)
    results = {"resolver": type(resolver).__module__, "rows": len(rows), "aliases": args.aliases,
               "encoder": args.encoder or "bundled all-MiniLM-L6-v2",
               "chosen_threshold": chosen, "scores": scores, "sweep": sweep,
               "failures": failures, "definition_top1": top1}  # fmt: skip
    print(table(results))
    print(top1_table(top1))
    args.out.mkdir(parents=True, exist_ok=True)
    name = "resolution" + ("" if args.aliases else "-no-aliases")
    name += f"-{Path(args.encoder).name}.json" if args.encoder else ".json"
    (args.out / name).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out / name}")
    return results


if __name__ == "__main__":
    main()
