"""Fit and measure the learned reader of refused descriptions (``service.kinds.reader``).

Every natural request of the stored sets is resolved by the rules, as the service does. Those
the rules refuse for an unknown mention, an ambiguity or too few classes are the reader's
rows: per catalogue class, the features of ``service.kinds.reader_features.features``, the
class's contextual vector (``class_vectors``) and whether the class is asked for (a request whose
right answer is a refusal asks for none). The vectors are cut to their first principal
directions (``PCA``), then a ``HistGradientBoostingClassifier`` is fitted, on the rows of every
set but the test sets.

Measured, per confidence threshold, on refused natural requests:

- *out of fold*: the training sets in five folds by set (a set's rows are never read by the
  forest that scores them), so a threshold is chosen on data the forest did not see;
- *test*: sets no forest and no rule was written from (``TEST``), scored once.

"+right" counts refusals that become right answers, "+wrong" those that become a 200 with a
wrong class set or domain (a refusal row answered, too); both per 100 natural requests.

    python benchmarks/reader.py                                # table, JSON, PNG, the reader
    python benchmarks/reader.py --fit-only --out .tailor/reader.safetensors  # make demo
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
from benchmarks.resolution import OUTSIDE, load_rows, tailor_pacs_catalogue  # noqa: E402

# written after the stop-59 code, by agents that saw only the brief (docs: stop 60); each stop's
# test sets are training sets from the next (98-101 since stop 60)
TEST = ("outside110", "outside111", "outside112", "outside113")
# 0.5: the readings a 422 offers (service.kinds.reader.OFFERED); 0: every reading
THRESHOLDS = (0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.0)
OUT = Path(__file__).resolve().parent / "results" / "reader"


def resolver_for(catalogue: dict):
    """The service's resolver over ``catalogue`` at its default settings."""
    from service.core.settings import Settings
    from service.kinds.resolution import ClassResolver
    from service.kinds.taper import load_text_encoder

    f = Settings.model_fields
    return ClassResolver(catalogue, load_text_encoder(None, "cpu"), f["match_threshold"].default,
                         f["match_margin"].default, (f["match_described_threshold"].default,
                                                     f["match_described_margin"].default))


def refused(resolver, catalogue: dict, rows: list[dict]) -> list[dict]:
    """Each natural row, resolved by the rules: ``rule_right``, and for a refusal the reader
    reads again, its ``x`` (features) and ``y`` (asked-for classes)."""
    from service.core.problems import Problem
    from service.core.schemas import PersonalizeCreate
    from service.kinds.reader import READ_AGAIN
    from service.kinds.reader_features import class_vectors, features, term_hits
    from service.kinds.task_request import resolve_request
    from service.kinds.tokens import words

    out = []
    for row in tqdm(rows, desc="rules", leave=False):
        trace: dict = {}
        item = {"id": row["id"], "split": row["split"], "expect": row["expect"],
                "domain": row["domain"]}
        t0 = time.perf_counter()
        try:
            matches, domain = resolve_request(
                resolver, PersonalizeCreate(description=row["description"]),
                catalogue["domains"], trace=trace)
            item["rule_right"] = row["expect"] is not None and domain == row["domain"] and \
                sorted(m.name for m in matches) == sorted(row["expect"])  # fmt: skip
        except (Problem, ValueError) as exc:
            item["rule_right"] = row["expect"] is None
            slug = getattr(exc, "slug", None)
            if slug in READ_AGAIN and "marks" in trace:
                t1 = time.perf_counter()
                item["x"] = features(resolver, row["description"], trace, slug,
                                     exc.extra.get("unknown") or [])
                tokens = words(row["description"])
                item["c"] = class_vectors(resolver.encoder, tokens, term_hits(resolver, tokens))
                item["ms"] = {"rules": (t1 - t0) * 1e3, "features": (time.perf_counter() - t1)
                              * 1e3}  # fmt: skip
                item["y"] = np.array([n in (row["expect"] or []) for n in resolver.names])
                item["rule_domain"] = trace["domain"]
        out.append(item)
    return out


def fit(items: list[dict]):
    """(sklearn's forest, the service's ``Reader``) fitted on the refused rows of ``items``:
    the principal directions of the named classes' vectors, then the forest over the features
    and the projected vectors (see ``service.kinds.forest``)."""
    from sklearn.decomposition import PCA
    from sklearn.ensemble import HistGradientBoostingClassifier

    from service.kinds.forest import Forest
    from service.kinds.reader import CONTEXT, CONTEXT_DIMS, Reader
    from service.kinds.reader_features import project

    read = [i for i in items if "x" in i]
    vectors = np.concatenate([i["c"] for i in read])
    named = vectors[vectors.any(axis=1)]
    pca = PCA(min(CONTEXT_DIMS, *named.shape), random_state=0).fit(named)
    components = np.zeros((CONTEXT_DIMS, vectors.shape[1]), np.float32)  # a small fit: padded
    components[: len(pca.components_)] = pca.components_
    mean = pca.mean_.astype(np.float32)
    x = np.concatenate([np.concatenate([i["x"], project(i["c"], mean, components)], axis=1)
                        for i in read])  # fmt: skip
    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, random_state=0,
                                           early_stopping=False).fit(
        x, np.concatenate([i["y"] for i in read]))
    forest = Forest.from_sklearn(model)
    forest.a.update(zip(CONTEXT, (mean, components), strict=True))
    return model, Reader(forest)


def readings(predict, items: list[dict], names: list[str]) -> list[tuple[float, bool]]:
    """(confidence, right) of each refused row's reading of two or more classes."""
    out = []
    for i in (i for i in items if "x" in i):
        t0 = time.perf_counter()
        p = predict(i["x"], i["c"])
        i["ms"]["forest"] = (time.perf_counter() - t0) * 1e3
        chosen = sorted(names[k] for k in np.flatnonzero(p > 0.5))
        if len(chosen) >= 2:
            right = i["expect"] is not None and chosen == sorted(i["expect"]) \
                and i["rule_domain"] == i["domain"]  # fmt: skip
            out.append((float(np.prod(np.maximum(p, 1 - p))), right))
    return out


def curve(found: list[tuple[float, bool]], items: list[dict]) -> list[dict]:
    """Per threshold: requests, rules right, +right, +wrong (counts and per 100 requests)."""
    n, base = len(items), sum(i["rule_right"] for i in items)
    rows = []
    for t in THRESHOLDS:
        taken = [r for c, r in found if c >= t]
        gain, loss = sum(taken), len(taken) - sum(taken)
        rows.append({"threshold": t, "requests": n, "rules_right": base, "right": gain,
                     "wrong": loss, "right_pct": 100 * gain / n, "wrong_pct": 100 * loss / n})
    return rows


def latency(ms: list[dict[str, float]]) -> dict[str, float]:
    """p50 per refused request of the rules' pass and of the reader (features + forest), and
    their ratio, measured in the same run on this CPU."""
    rules = float(np.median([m["rules"] for m in ms]))
    read = float(np.median([m["features"] + m["forest"] for m in ms]))
    return {"rules_p50": rules, "reader_p50": read, "reader_over_rules": read / rules,
            "requests": len(ms)}


def out_of_fold(items: list[dict], names: list[str], folds: int = 5) -> list:
    """Readings of each fold's rows by a reader fitted on the other folds (split by set)."""
    splits = sorted({i["split"] for i in items})
    found = []
    for f in tqdm(range(folds), desc="folds", leave=False):
        held = set(splits[f::folds])
        _, reader = fit([i for i in items if i["split"] not in held])
        found += readings(reader.probabilities, [i for i in items if i["split"] in held], names)
    return found


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=OUT / "reader.safetensors",
                   help="where the fitted reader goes (the service's TAILOR_READER_PATH)")
    p.add_argument("--fit-only", action="store_true", help="fit and save; no measurement")
    p.add_argument("--no-test", action="store_true",
                   help="out of fold only: choose features without looking at the test sets")
    args = p.parse_args(argv)
    from service.kinds.reader import fitted_for, match_key
    from service.kinds.reader_features import VERSION

    catalogue = tailor_pacs_catalogue()
    resolver = resolver_for(catalogue)
    rows = [r for r in load_rows(outside={s: v for s, v in OUTSIDE.items() if s not in TEST})
            if r["kind"] == "natural"]  # fmt: skip
    items = refused(resolver, catalogue, rows)
    _, reader = fit(items)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    reader.forest.save(args.out, {"fitted_on": f"{len(rows)} natural requests of "
                           f"{len({r['split'] for r in rows})} sets; test sets: {TEST}",
                           "sets": json.dumps(sorted({r["split"] for r in rows})),
                           "features": VERSION, "fitted_for": fitted_for(resolver),
                           "match": match_key(resolver.threshold, resolver.margin,
                                              resolver.described)})
    print(f"reader: {args.out} ({sum('x' in i for i in items)} refused requests of {len(rows)})")
    if args.fit_only:
        return {}
    from benchmarks._reader_report import report

    results = {"out_of_fold": curve(out_of_fold(items, resolver.names), items)}
    test_rows = [r for r in load_rows(outside={s: OUTSIDE[s] for s in TEST if s in OUTSIDE})
                 if r["kind"] == "natural" and r["split"] in TEST and not args.no_test]
    tests = refused(resolver, catalogue, test_rows)
    for split in TEST if tests else ():
        mine = [i for i in tests if i["split"] == split]
        if not mine:  # a test set not stored
            continue
        results[split] = curve(readings(reader.probabilities, mine, resolver.names), mine)
    if tests:
        results["test, all"] = curve(readings(reader.probabilities, tests, resolver.names), tests)
        results["latency_ms"] = latency([i["ms"] for i in tests if "x" in i])
    report(results, args.out.parent)
    return results


if __name__ == "__main__":
    main()
