"""A learned second reading of a refused class list: the class each definition describes.

A ``classes`` request may describe a class instead of naming it ("the animal that says
moo"). The rules match such a phrase by its similarity to each class's words and answer 422
when no class is near enough by a margin. The phrase reader (``model_store.phrase_model``,
fitted by ``tailor train phrase-reader``) reads the phrases the rules left unknown: the
phrases the rules placed keep their classes, the others get the classes the reader finds
likeliest, one class per phrase (an assignment: two phrases never take one class), and that
is the answer, with a note, when each of those phrases' probability reaches ``accept``.

Why: on the definitions rows of sets 90-101 the rules answered 307 of 360 right and refused
47 answerable ones; with the reader fitted on dev + 1-89, from 0.9 the service answered 323
right with no more wrong 200s (6), and of the outside reviews' hard pairs it answered 6 more
catalogue probes right and 1 more probe of a thing the catalogue lacks (of 193) wrongly; 0.8
and below made more wrong 200s than the 5-to-1 rule allows (docs/results-resolution.md, stop
60; the foil guard below cost 4 of those lists and a probe). A reader fitted for other
classes or another encoder is not used (logged once); one that fails leaves the 422.
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
           problem: Any, notes: list[str] | None = None) -> list[Any] | None:
    """The answer (one ``Match`` per phrase, request order) to a class list the rules refused
    as naming an unknown class, when the reader gives each unknown phrase a class of its own
    with at least ``accept``; the rules' matches (``trace``) stand, and ``notes`` gets the
    reader's. Other refusals stand: two phrases of one class ("ambiguous-classes") are asked
    back, and so is a phrase the rules found nearer a thing the catalogue lacks (a foil:
    "the number of fingers and toes" is twenty, not five)."""
    if phrases is None or problem.slug != "unknown-classes" or request.classes is None \
            or not phrases.fits(resolver):  # a request is a list or a description, not both
        return None
    matches = list(trace.get("matches") or [])
    free = [j for j, m in enumerate(matches) if m.name is None]
    if not free or len(matches) < 2 or any(matches[j].looks_like for j in free):
        return None
    try:
        chosen, least = _assign(phrases.model, resolver, [matches[j].phrase for j in free],
                                {m.index for m in matches if m.name is not None})
    except Exception:
        log.exception("the phrase reader failed; the rules' 422 stands")
        return None
    if not chosen or least < phrases.accept:
        return None
    from service.kinds.resolution import Match

    for j, (k, p) in zip(free, chosen, strict=True):
        matches[j] = Match(matches[j].phrase, resolver.names[k], k, round(p, 4))
    if notes is not None:  # the rules' placements stand, and their notes with them
        notes.append(f"the phrases no class matched were read by the phrase reader (least "
                     f"probability {least:.2f}); the rules alone answered: {problem.detail}")
    return matches


def _assign(model: PhraseModel, resolver: Any, texts: list[str], taken: set[int]
            ) -> tuple[list[tuple[int, float]], float]:
    """(class, probability) per text, classes not in ``taken``, one each and none twice (the
    assignment of most joint log-probability; *none of these* keeps its share of each
    phrase's probability), and the least of those probabilities; nothing when fewer classes
    are left than texts."""
    from scipy.optimize import linear_sum_assignment

    left = [k for k in range(len(model.classes)) if k not in taken]
    if len(left) < len(texts):
        return [], 0.0
    p = model.probabilities(resolver.encoder.encode(texts))[:, left]
    rows, cols = linear_sum_assignment(-np.log(np.clip(p, 1e-12, None)))
    order = np.argsort(rows)
    chosen = [(left[c], float(p[r, c])) for r, c in zip(rows[order], cols[order], strict=True)]
    return chosen, min(q for _, q in chosen)
