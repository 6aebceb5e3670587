"""A learned second reading of a description the rules refused: which classes it asks for.

The rules (:mod:`service.kinds.task_request`) answer 422 when a mention is unknown or the
request looks ambiguous; on requests written outside the project many of those 422s were
answerable (docs/results-resolution.md, stop 55). The reader scores every catalogue class of
such a request with a gradient-boosted forest (:mod:`service.kinds.forest`) over features of
the rules' own pass and over how the request uses each class's words, read in context by the
text encoder (:mod:`service.kinds.reader_features`). The reading is the classes scored
above one half; its confidence, the chance that every class's call is right (the product of
max(p, 1 - p)).

A reading of two or more classes is offered in the 422 body (``reading``) when its confidence
is at least :data:`OFFERED` (out of fold at stop 56, readings above one half were right 74 % of
the time, those below 43 %), and it is the answer, with a note, from ``reader_accept`` on
(:func:`resolve_or_read`). Where the tuned request reader (:mod:`service.kinds.tuned`) reads
a refusal with fair confidence, this reader's reading of the same classes seconds it (stop 58).
A reader never turns a 422 into an error: one that fails is logged and the rules' 422 stands.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from model_store.phrase_model import encoder_key
from service.kinds.forest import Forest
from service.kinds.reader_features import VERSION, class_vectors, features, project, term_hits
from service.kinds.tokens import words

log = logging.getLogger(__name__)

# slugs of the 422s the reader reads again; an unreadable description (markup, SQL, a bare
# negation) and a wrong domain stay refused
READ_AGAIN = ("unknown-classes", "ambiguous-classes", "too-few-classes")
N_FEATURES = 40  # columns of reader_features.features (tested)
CONTEXT_DIMS = 32  # principal directions of the class vectors (8, 16, 32, 64 tried: stop 56)
CONTEXT = ("context_mean", "context_components")  # the reader file's arrays for them
OFFERED = 0.5  # the least confidence of a reading a 422 offers (see above)


def match_key(threshold: float, margin: float, described: tuple[float, float]) -> str:
    """The rules' match settings as a reader file records them."""
    return f"{threshold}/{margin}/{described[0]}/{described[1]}"


def fitted_for(resolver: Any) -> str:
    """The catalogue's classes and the text encoder a reader reads with, as its file records
    them: the class vectors carry the encoder's view of these words, so a reader fitted for
    other classes or another encoder would read nonsense."""
    classes = hashlib.sha256("|".join(resolver.names).encode()).hexdigest()[:16]
    return f"{classes}/{encoder_key(resolver.encoder)}"


_WARNED: set[tuple[str, str]] = set()


def _fits(reader: Reader, resolver: Any) -> bool:
    """Whether ``reader`` was fitted for this resolver's classes and encoder (a file that
    records none is taken as it is); a mismatch is logged once per pair."""
    fitted, here = reader.fitted_with.get("fitted_for"), fitted_for(resolver)
    if fitted in (None, here):
        return True
    if (fitted, here) not in _WARNED:
        _WARNED.add((fitted, here))
        log.warning("the learned reader was fitted for %s, this catalogue and encoder are %s: "
                    "it is not used (refit it with benchmarks/reader.py)", fitted, here)
    return False


class Reader:
    """A fitted forest that reads a refused description again.

    Args:
        forest: the fitted :class:`service.kinds.forest.Forest` over :data:`N_FEATURES` and
            :data:`CONTEXT_DIMS` columns; its file's :data:`CONTEXT` arrays project the class
            vectors (``reader_features.project``).
        fitted_with: how the rules ran when it was fitted (``match`` thresholds), to warn when
            the service runs them otherwise: the rules' scores are among the features.
    """

    def __init__(self, forest: Forest, fitted_with: dict[str, str] | None = None) -> None:
        width = N_FEATURES + CONTEXT_DIMS
        if forest.n_features != width:
            raise ValueError(f"the reader has {forest.n_features} features, this code "
                             f"computes {width}: refit it (benchmarks/reader.py)")
        if any(n not in forest.a for n in CONTEXT) or forest.a[CONTEXT[1]].ndim != 2 \
                or forest.a[CONTEXT[1]].shape[0] != CONTEXT_DIMS \
                or forest.a[CONTEXT[0]].shape != forest.a[CONTEXT[1]].shape[1:]:  # fmt: skip
            raise ValueError("the reader holds no projection of the class vectors this code "
                             "reads: refit it (benchmarks/reader.py)")
        self.forest, self.fitted_with = forest, dict(fitted_with or {})
        self.mean, self.components = (forest.a[n] for n in CONTEXT)

    @classmethod
    def load(cls, path: Path, match: str | None = None) -> Reader:
        """The reader saved at ``path`` by ``benchmarks/reader.py``; ``ValueError`` when it
        was fitted on other features. ``match``: the service's thresholds, compared with
        those it was fitted under (a warning when they differ)."""
        forest, metadata = Forest.load(path)
        if metadata.get("features") != VERSION:
            raise ValueError(f"{path} was fitted on features {metadata.get('features')!r}, "
                             f"this code computes {VERSION!r}: refit it (benchmarks/reader.py)")
        if match is not None and metadata.get("match") not in (None, match):
            log.warning("the reader %s was fitted with match settings %s, the service runs %s",
                        path, metadata["match"], match)
        return cls(forest, metadata)

    def read(self, resolver: Any, text: str, trace: dict[str, Any], slug: str,
             unknown: list[dict[str, Any]]) -> tuple[list[int], float]:
        """(class indices in catalogue order, confidence) for a refused description."""
        tokens = words(text)
        p = self.probabilities(features(resolver, text, trace, slug, unknown),
                               class_vectors(resolver.encoder, tokens, term_hits(resolver, tokens)))
        chosen = [int(k) for k in np.flatnonzero(p > 0.5)]
        return chosen, float(np.prod(np.maximum(p, 1.0 - p)))

    def probabilities(self, x: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """P(asked for) per class from its features ``x`` and class ``vectors``."""
        return self.forest.predict(np.concatenate(
            [x, project(vectors, self.mean, self.components)], axis=1))


def configured(settings: Any) -> Reader | None:
    """The reader at ``settings.reader_path`` when there is one this code can use; a stale one
    (other features) is logged and left, and the rules alone answer."""
    path = settings.reader_path
    if path is None or not Path(path).is_file():
        return None
    rules = match_key(settings.match_threshold, settings.match_margin,
                      (settings.match_described_threshold, settings.match_described_margin))
    try:
        reader = Reader.load(Path(path), rules)
    except Exception as exc:  # a stale, foreign or damaged file: the rules answer alone
        log.error("not loading the learned reader: %s", exc)
        return None
    log.info("loaded the learned reader %s (answers from %.2f)", path, settings.reader_accept)
    return reader


def resolve_or_read(resolver: Any, reader: Reader | None, accept: float, request: Any,
                    domains: list[str], ignored: list[str] | None = None,
                    notes: list[str] | None = None, tuned: Any = None, phrases: Any = None
                    ) -> tuple[list[Any], str | None]:
    """:func:`service.kinds.task_request.resolve_request`, checked by the ``tuned`` request
    reader when one is loaded (:mod:`service.kinds.tuned`: an answer it reads otherwise is asked
    back when it is confident, or finds the answer far less likely than its own reading (the
    veto); a reading of a refusal is the answer at its ``rescue_from`` confidence, or at its
    ``seconded_from`` confidence when this forest ``reader`` reads the same classes). When the
    rules refuse a description (:data:`READ_AGAIN`) and a reader is loaded, the reader's
    classes (two or more, request order) are the answer if its confidence reaches ``accept``;
    else the 422 carries them as ``reading`` when its confidence is at least :data:`OFFERED`.
    A refused class list is read by the ``phrases`` reader (:mod:`service.kinds.phrases`)."""
    from service.core.problems import Problem
    from service.kinds import phrases as listed
    from service.kinds import tuned as second
    from service.kinds.task_request import resolve_request

    trace: dict[str, Any] = {}
    before = (list(ignored or []), list(notes or []))
    checked = second.usable(tuned, resolver, request, domains)
    try:
        matches, domain = resolve_request(resolver, request, domains, ignored, notes, trace)
    except Problem as problem:
        if problem.slug not in READ_AGAIN or "marks" not in trace:
            raise
        if (read := listed.rescue(phrases, resolver, request, trace, problem, notes)):
            return read, trace["domain"]
        forest = None
        if reader is not None and request.description is not None and _fits(reader, resolver):
            forest = _once(lambda refusal=problem: _forest_reading(resolver, reader, request,
                                                                   refusal, trace))
        if checked and (read := second.rescue(tuned, resolver, request, trace, forest)):
            return _answer(resolver, read[0], read[2], problem.detail, read[1], before,
                           ignored, notes, "tuned")
        if forest is None:
            raise
        return _read_again(resolver, forest, accept, problem, trace, request.description,
                           before, ignored, notes)
    if checked:
        second.check(tuned, resolver, request, matches, domain)
    return matches, domain


def _once(read: Any) -> Any:
    """``read`` called at most once, its result kept: the tuned reader's rescue and the
    forest's own 422 ask the forest for the same reading."""
    kept: list[Any] = []

    def reading() -> Any:
        if not kept:
            kept.append(read())
        return kept[0]

    return reading


def _forest_reading(resolver: Any, reader: Reader, request: Any, problem: Any,
                    trace: dict[str, Any]) -> tuple[list[int], float] | None:
    """The forest's (classes, confidence) for a refused description, or None if it failed
    (logged: a reader's fault never turns a 422 into a 500)."""
    try:
        return reader.read(resolver, request.description, trace, problem.slug,
                           problem.extra.get("unknown") or [])
    except Exception:
        log.exception("the learned reader failed; the rules' 422 stands")
        return None


def _read_again(resolver: Any, forest: Callable[[], tuple[list[int], float] | None],
                accept: float, problem: Any,
                trace: dict[str, Any], text: str, before: tuple[list[str], list[str]],
                ignored: list[str] | None, notes: list[str] | None
                ) -> tuple[list[Any], str | None]:
    """The forest's reading of a refused description: the answer from ``accept``, offered in
    the 422 from :data:`OFFERED`, else the rules' 422 as it was."""
    from service.kinds.tuned import in_request_order

    if (got := forest()) is None:
        raise problem from None
    chosen, confidence = got
    if len(chosen) < 2 or confidence < min(accept, OFFERED):
        raise problem
    chosen = in_request_order(resolver, text, chosen)
    if confidence < accept:
        problem.extra["reading"] = {"classes": [resolver.names[k] for k in chosen],
                                    "confidence": round(confidence, 4)}
        raise problem
    return _answer(resolver, chosen, confidence, problem.detail, trace["domain"], before,
                   ignored, notes)


def _answer(resolver: Any, chosen: list[int], confidence: float, refusal: str,
            domain: str | None, before: tuple[list[str], list[str]],
            ignored: list[str] | None, notes: list[str] | None, by: str = "learned"
            ) -> tuple[list[Any], str | None]:
    """The reading as the answer: the refused pass's notes and context are dropped (they
    describe a reading that is not the answer), the reader's note is added."""
    from service.kinds.resolution import Match

    if ignored is not None:
        ignored[:] = before[0]
    if notes is not None:
        notes[:] = [*before[1], f"read by the {by} reader (confidence {confidence:.2f}); "
                                f"the rules alone answered: {refusal}"]
    return [Match(resolver.names[k], resolver.names[k], k, round(confidence, 4))
            for k in chosen], domain  # fmt: skip
