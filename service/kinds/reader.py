"""A learned second reading of a description the rules refused: which classes it asks for.

The rules (:mod:`service.kinds.task_request`) answer 422 when a mention is unknown or the
request looks ambiguous; on requests written outside the project a third to a half of those
422s were answerable (docs/results-resolution.md, stop 55). The reader scores every catalogue
class of such a request with a gradient-boosted forest (:mod:`service.kinds.forest`) over
features of the rules' own pass: where the class's terms occur, whether a negation or a
retraction stands near them, whether the rules matched or suggested it, and what the unknown
mentions look like (a thing the catalogue lacks, a number, a word of no thing). The reading is
the classes scored above one half; its confidence, the chance that every class's call is right
(the product of max(p, 1 - p)). Features describe a class's place in the request, never which
class it is, so a reader fitted on one catalogue reads another's requests.

The reading is offered in the 422 body (``reading``), and taken as the answer, with a note,
when its confidence reaches ``reader_accept`` (:func:`read_refused`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from service.kinds import senses
from service.kinds.forest import Forest
from service.kinds.numbers import value_of
from service.kinds.tokens import singular_forms, words
from service.kinds.vocabulary import NEGATIONS

# slugs of the 422s the reader reads again; an unreadable description (markup, SQL, a bare
# negation) and a wrong domain stay refused
READ_AGAIN = ("unknown-classes", "ambiguous-classes", "too-few-classes")
_NEAR = NEGATIONS | {"except", "exclude", "excluding", "minus", "skip", "drop", "remove", "dont",
                     "don't", "ignore", "leave", "omit", "avoid", "other", "instead", "isn't",
                     "aren't", "won't", "forget", "scratch", "cut", "ditch"}
_AFTER = {"withdrawn", "withdraw", "remove", "removed", "drop", "dropped", "out", "cancel",
          "cancelled", "canceled", "delete", "deleted", "off", "disable", "disabled", "false",
          "scrap", "scrapped", "nope", "skip", "ditch", "exclude", "excluded", "unnecessary",
          "needed", "necessary", "instead", "not", "no", "dont", "don't", "never"}
_MIND = {"actually", "instead", "wait", "scratch", "rather", "correction", "change", "changed",
         "forget", "oops", "sorry", "nvm", "nevermind"}
_ALL = {"all", "every", "each", "any", "entire", "whole", "full", "complete"}


def term_hits(resolver: Any, tokens: list[str]) -> list[list[int]]:
    """Per class, the token positions where one of its terms (name, alias, numeral) starts,
    longest term first, left to right ("t shirt" is one hit)."""
    hits: list[list[int]] = [[] for _ in resolver.names]
    i = 0
    while i < len(tokens):
        n = next((n for n in (3, 2, 1) if i + n <= len(tokens)
                  and resolver.term(" ".join(tokens[i : i + n])) is not None), 0)  # fmt: skip
        if n:
            hits[resolver.term(" ".join(tokens[i : i + n]))].append(i)
        i += max(n, 1)
    return hits


def _unknown_features(unknown: list[dict[str, Any]]) -> list[float]:
    """What the unknown mentions look like: a thing the catalogue lacks ("mice", a foil) makes
    a refusal likely, a word of no thing ("for a laugh") or context does not."""
    rows = []
    for u in unknown:
        tokens = words(u["phrase"])
        thing = bool(tokens) and bool(senses.thing(tokens[-1]))
        top = u["did_you_mean"][0]["score"] if u.get("did_you_mean") else 0.0
        rows.append([bool(u.get("looks_like")), thing and not senses.abstract(tokens),
                     bool(tokens) and senses.abstract(tokens), value_of(u["phrase"]) is not None,
                     len(tokens) / 5, top])  # fmt: skip
    if not rows:
        return [0.0] * 9
    a = np.array(rows, dtype=float)
    return [*a.max(0), a[:, 4].min(), a[:, 5].min(), len(rows) / 3]


def features(resolver: Any, text: str, trace: dict[str, Any], slug: str,
             unknown: list[dict[str, Any]]) -> np.ndarray:
    """(classes, features) for one refused description: per class where its terms stand and
    what stands near them, then the request's own features (the same on every row)."""
    tokens = words(text)
    n, hits, tokset = max(len(tokens), 1), term_hits(resolver, tokens), set(tokens)
    marks, matched = trace.get("marks"), {m.index for m in trace.get("matches", [])}
    gone = set(marks.gone) if marks is not None else set()
    suggested: dict[str, float] = {}
    top: set[str] = set()
    for u in unknown:
        for j, s in enumerate(u.get("did_you_mean") or []):
            suggested[s["name"]] = max(suggested.get(s["name"], -1.0), s["score"])
            top |= {s["name"]} if j == 0 else set()
    mind = [i for i, t in enumerate(tokens) if t in _MIND]
    last = max((h[-1] for h in hits if h), default=-1)
    request = [*_unknown_features(unknown), slug == "unknown-classes",
               slug == "ambiguous-classes", slug == "too-few-classes",
               sum(bool(h) for h in hits) / 10, len(tokens) / 50, len(matched) / 5]
    groups = {n: g for g, members in resolver.known.groups.items() for n in members}
    rows = []
    for k, name in enumerate(resolver.names):
        rows.append(_class_features(name, hits[k], tokens, n, mind, last) + [
            k in gone, k in matched, name in top, name in suggested, suggested.get(name, 0.0),
            *_group_features(groups.get(name, ""), tokset), *_in_unknown(name, unknown)] + request)
    return np.array(rows, dtype=np.float32)


def _class_features(name: str, hits: list[int], tokens: list[str], n: int, mind: list[int],
                    last: int) -> list[float]:
    """Where a class's terms stand: how often, how far in, after or before a change of mind,
    with a negation just before or a retraction word just after ("bags, coats. no bags")."""
    if not hits:
        return [0.0] * 12
    before = [any(t in _NEAR for t in tokens[max(0, i - 4) : i]) for i in hits]
    after = [sum(t in _AFTER for t in tokens[i + 1 : i + 7]) for i in hits]
    return [1.0, min(len(hits), 3) / 3, hits[-1] / n, hits[0] / n, all(before), any(before),
            before[-1], any(t in _NEAR for i in hits for t in tokens[i + 1 : i + 3]),
            any(p < hits[-1] for p in mind), any(p > hits[-1] for p in mind),
            min(after[-1], 3) / 3, hits[-1] == last]  # fmt: skip


def _group_features(group: str, tokset: set[str]) -> list[float]:
    """Whether the class's group is named ("all the animals"), and with a word for all."""
    named = bool(group) and any(g in tokset or f"{g}s" in tokset for g in singular_forms(group))
    return [named, named and bool(_ALL & tokset)]


def _in_unknown(name: str, unknown: list[dict[str, Any]]) -> list[float]:
    """Whether an unknown mention holds the class's word, and with a retraction or negation
    in it ("update drop pullovers", "bag remove")."""
    head = name.split()[-1]
    holding = [words(u["phrase"]) for u in unknown
               if any(head in singular_forms(t) for t in words(u["phrase"]))]
    return [bool(holding), any(set(t) & (_AFTER | _NEAR) for t in holding)]


class Reader:
    """A fitted forest that reads a refused description again (:func:`features`).

    Args:
        forest: the fitted :class:`service.kinds.forest.Forest`.
    """

    def __init__(self, forest: Forest) -> None:
        self.forest = forest

    @classmethod
    def load(cls, path: Path) -> Reader:
        """The reader saved at ``path`` by ``benchmarks/reader.py`` (safetensors)."""
        return cls(Forest.load(path))

    def read(self, resolver: Any, text: str, trace: dict[str, Any], slug: str,
             unknown: list[dict[str, Any]]) -> tuple[list[int], float]:
        """(class indices in catalogue order, confidence) for a refused description."""
        p = self.forest.predict(features(resolver, text, trace, slug, unknown))
        chosen = [int(k) for k in np.flatnonzero(p > 0.5)]
        return chosen, float(np.prod(np.maximum(p, 1.0 - p)))


def resolve_or_read(resolver: Any, reader: Reader | None, accept: float, request: Any,
                    domains: list[str], ignored: list[str] | None = None,
                    notes: list[str] | None = None) -> tuple[list[Any], str | None]:
    """:func:`service.kinds.task_request.resolve_request`; when it refuses a description
    (:data:`READ_AGAIN`) and a reader is loaded, the reader's classes (two or more) are the
    answer if its confidence reaches ``accept``, else the 422 carries them as ``reading``, a
    whole request to confirm ("resend with these classes")."""
    from service.core.problems import Problem
    from service.kinds.resolution import Match
    from service.kinds.task_request import resolve_request

    trace: dict[str, Any] = {}
    try:
        return resolve_request(resolver, request, domains, ignored, notes, trace)
    except Problem as problem:
        if reader is None or request.description is None or problem.slug not in READ_AGAIN \
                or "marks" not in trace:  # fmt: skip
            raise
        chosen, confidence = reader.read(resolver, request.description, trace, problem.slug,
                                         problem.extra.get("unknown") or [])
        if len(chosen) < 2:
            raise
        hits = term_hits(resolver, words(request.description))  # request order, as the rules
        chosen.sort(key=lambda k: hits[k][0] if hits[k] else len(hits) + k)
        if confidence < accept:
            problem.extra["reading"] = {"classes": [resolver.names[k] for k in chosen],
                                        "confidence": round(confidence, 4)}
            raise
        if notes is not None:
            notes.append(f"read by the learned reader (confidence {confidence:.2f}); the "
                         f"rules alone answered: {problem.detail}")
        return [Match(resolver.names[k], resolver.names[k], k, round(confidence, 4))
                for k in chosen], trace["domain"]  # fmt: skip
