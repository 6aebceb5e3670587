"""Per-definition top-1 for ``benchmarks/resolution.py``: how often the encoder's nearest class is
the right one, before any threshold, margin or joint assignment.

The exact-set figure of a definition-only row needs all three definitions right *and* confident,
so it hides where the error comes from; this splits it. Scored with and without the catalogue's
``descriptions`` (the stop-26 ablation: one dictionary definition per class against several
descriptions), one row per split.
"""

from __future__ import annotations

import numpy as np


def definition_top1(resolver, rows: list[dict]) -> dict[str, float]:
    """split → share of definitions whose best class (exact name/alias/computed digit first,
    else the most similar) is the expected one."""
    out = {}
    defined = [r for r in rows if r["kind"] == "definitions" and r["expect"] is not None]
    for split in dict.fromkeys(r["split"] for r in defined):  # a 422 row has no right class
        texts, want = [], []
        for r in defined:
            if r["split"] == split:
                texts += r["classes"]
                want += [resolver.names.index(w) for w in r["expect"]]
        sims = resolver.similarities(texts, listed=True)
        exact = [resolver.exact(t) for t in texts]
        best = [e if e is not None else int(np.argmax(s)) for e, s in zip(exact, sims, strict=True)]
        out[split] = float(np.mean(np.array(best) == np.array(want)))
    return out


def ablation(catalogue: dict, encoder, rows: list[dict]) -> dict[str, dict[str, float]]:
    """Per-definition top-1 with the catalogue as given and without its descriptions."""
    from service.kinds.resolution import ClassResolver

    bare = {**catalogue, "classes": [{**c, "descriptions": []} for c in catalogue["classes"]]}
    return {label: definition_top1(ClassResolver(cat, encoder, 0.0), rows)
            for label, cat in (("descriptions", catalogue), ("no descriptions", bare))}


def table(top1: dict[str, dict[str, float]]) -> str:
    """One line per variant: top-1 per split."""
    lines = ["per-definition top-1 (nearest class, no threshold):"]
    for label, splits in top1.items():
        lines.append(f"  {label:>16}: " + "  ".join(f"{s} {v:.1%}" for s, v in splits.items()))
    return "\n".join(lines)
