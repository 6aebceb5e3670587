"""A learned second reading of a refused class list: the class each definition describes.

A ``classes`` request may describe a class instead of naming it ("the animal that says
moo"). The rules match such a phrase by its similarity to each class's words and answer 422
when no class is near enough by a margin. The phrase reader (``model_store.phrase_model``,
fitted by ``tailor train phrase-reader``) reads the phrases the rules left unknown: the
phrases the rules placed keep their classes, the others get the classes the reader finds
likeliest, one class per phrase (an assignment: two phrases never take one class), and that
is the answer, with a note, when each of those phrases' probability reaches ``accept``.

Why: on the definitions rows of sets 90-101 the rules refused 91 of 360 requests; with the
reader fitted on dev + 1-89, rescues from 0.9 answered 29 of them right and 1 wrong, where
0.8 answered 33 right and 5 wrong (docs/results-resolution.md, stop 60). A reader fitted for
other classes or another encoder is not used (logged once); one that fails leaves the 422.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from model_store.phrase_model import PhraseModel, encoder_key

log = logging.getLogger(__name__)

ACCEPT = 0.9  # see the module docstring


@dataclass
class Phrases:
    """A loaded phrase reader and the probability from which its reading is the answer."""

    model: PhraseModel
    accept: float = ACCEPT
    warned: bool = False

    def fits(self, resolver: Any) -> bool:
        """Whether it was fitted for this catalogue's classes (in order) and text encoder."""
        ok = self.model.classes == list(resolver.names) and \
            self.model.encoder == encoder_key(resolver.encoder)  # fmt: skip
        if not ok and not self.warned:
            self.warned = True
            log.warning("the phrase reader was fitted for other classes or another encoder: "
                        "it is not used (fit it again: tailor train phrase-reader)")
        return ok


def configured(settings: Any) -> Phrases | None:
    """The phrase reader at ``settings.phrase_reader_path`` if there is one this code reads
    (above 1, ``phrase_reader_accept`` never answers: then it is not loaded)."""
    path = settings.phrase_reader_path
    if path is None or settings.phrase_reader_accept > 1 or not Path(path).is_file():
        return None
    try:
        model = PhraseModel.load(Path(path))
    except Exception as exc:  # a stale or damaged file: the rules answer alone
        log.error("not loading the phrase reader: %s", exc)
        return None
    log.info("loaded the phrase reader %s (answers from %.2f)", path,
             settings.phrase_reader_accept)
    return Phrases(model, settings.phrase_reader_accept)


def rescue(phrases: Phrases | None, resolver: Any, request: Any, trace: dict[str, Any],
           slug: str) -> tuple[list[str], list[int], float] | None:
    """(phrases, class indices, confidence) for a class list the rules refused as naming an
    unknown class (``slug``), when the reader answers it: two or more distinct classes, each
    unknown phrase's at ``accept`` or more. ``trace`` is the rules' pass (their ``matches``: a
    placed phrase keeps its class). Other refusals stand: two phrases of one class
    ("ambiguous-classes") must be asked back, not spread over two classes."""
    if phrases is None or slug != "unknown-classes" or request.classes is None \
            or request.description is not None or not phrases.fits(resolver):  # fmt: skip
        return None
    matches = trace.get("matches") or []
    said = [m.phrase for m in matches]
    fixed = {j: m.index for j, m in enumerate(matches) if m.name is not None}
    free = [j for j in range(len(said)) if j not in fixed]
    if not free or len(said) < 2 or len(set(fixed.values())) < len(fixed):
        return None
    try:
        got = _assign(phrases.model, resolver, [said[j] for j in free], set(fixed.values()))
    except Exception:
        log.exception("the phrase reader failed; the rules' 422 stands")
        return None
    chosen, confidence = got
    if not chosen or confidence < phrases.accept:  # more phrases than classes left: none
        return None
    classes = dict(fixed) | dict(zip(free, chosen, strict=True))
    return said, [classes[j] for j in range(len(said))], confidence


def _assign(model: PhraseModel, resolver: Any, texts: list[str], taken: set[int]
            ) -> tuple[list[int], float]:
    """The classes (not in ``taken``) the model reads for ``texts``, one each and none twice
    (the assignment of most joint log-probability), and the least of their probabilities."""
    from scipy.optimize import linear_sum_assignment

    p = model.probabilities(resolver.encoder.encode(texts))
    left = [k for k in range(p.shape[1]) if k not in taken]
    if len(left) < len(texts):
        return [], 0.0
    sub = p[:, left]
    rows, cols = linear_sum_assignment(-np.log(np.clip(sub, 1e-12, None)))
    chosen = [left[c] for c in cols[np.argsort(rows)]]
    return chosen, float(sub[rows, cols].min())
