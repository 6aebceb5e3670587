"""Features of a refused description for the learned reader (:mod:`service.kinds.reader`).

One row per catalogue class: where its terms stand in the request (count, first and last
position, whether it is the last class named), a negation in the four words before, a
retraction word ("drop", "removed", "withdrawn", "out") in the six after, a change of mind
("actually", "wait") before or after; whether the rules excluded, matched (and at what score)
or suggested it; its group named ("all the animals"); an unknown mention holding its word with a
retraction in it ("update drop pullovers"). Then, the same on every row, what the unknown
mentions look like (a foil the catalogue lacks, a WordNet thing, an abstract word, a number,
listed beside classes or asked for; their length and best score), the refusal's kind and the
request's size. None of these says which class a row is. :func:`class_vectors` adds how the
request uses each class's words, as the text encoder reads them in context; those vectors carry
the words themselves, so a reader is fitted for its catalogue (``benchmarks/reader.py``). Split
from ``reader.py`` to keep each module to one job.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from service.kinds import senses
from service.kinds.numbers import value_of
from service.kinds.tokens import singular_forms, words
from service.kinds.vocabulary import NEGATIONS

# the version of :func:`features`: a reader fitted on other features is not loaded
# (``service.kinds.reader.Reader.load``); bump it with any change here
VERSION = "stop56-1"
# :func:`words` drops apostrophes: "don't" is "dont"
_NEAR = NEGATIONS | {"except", "exclude", "excluding", "minus", "skip", "drop", "remove", "dont",
                     "doesnt", "ignore", "leave", "omit", "avoid", "other", "instead", "isnt",
                     "arent", "wont", "forget", "scratch", "cut", "ditch"}
_AFTER = {"withdrawn", "withdraw", "remove", "removed", "drop", "dropped", "out", "cancel",
          "cancelled", "canceled", "delete", "deleted", "off", "disable", "disabled", "false",
          "scrap", "scrapped", "nope", "skip", "ditch", "exclude", "excluded", "unnecessary",
          "needed", "necessary", "instead", "not", "no", "dont", "never"}
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


def class_vectors(encoder: Any, tokens: list[str], hits: list[list[int]]) -> np.ndarray:
    """Per class, the mean contextual vector of its terms' first words in the request
    (``encoder.word_vectors``), zeros for a class not named. Out of fold these lifted the
    reader's answers at 0.8 confidence from 157 right for 50 wrong to 208 for 41
    (docs/results-resolution.md, stop 56): "not the cats" and "the kids' cats" read apart."""
    vectors = encoder.word_vectors(tokens)
    out = np.zeros((len(hits), vectors.shape[1]), np.float32)
    for k, at in enumerate(hits):
        seen = [i for i in at if vectors[i].any()]  # past the encoder's limit: no vector
        if seen:
            out[k] = vectors[seen].mean(axis=0)
    return out


def project(vectors: np.ndarray, mean: np.ndarray, components: np.ndarray) -> np.ndarray:
    """:func:`class_vectors` on the principal directions fitted with the reader (``mean``,
    ``components``: sklearn's ``PCA``); a class not named stays zeros."""
    z = (vectors - mean) @ components.T
    z[~vectors.any(axis=1)] = 0.0
    return z.astype(np.float32)


def _unknown_features(unknown: list[dict[str, Any]], marks: Any) -> list[float]:
    """What the unknown mentions look like: a thing the catalogue lacks ("mice", a foil), above
    all one listed beside classes or asked for, makes a refusal likely; a word of no thing
    ("for a laugh") or context does not."""
    listed, kept = (marks.listed, marks.kept) if marks is not None else (set(), set())
    rows = []
    for u in unknown:
        tokens = words(u["phrase"])
        thing = bool(tokens) and bool(senses.thing(tokens[-1]))
        top = u["did_you_mean"][0]["score"] if u.get("did_you_mean") else 0.0
        rows.append([bool(u.get("looks_like")), thing and not senses.abstract(tokens),
                     bool(tokens) and senses.abstract(tokens), value_of(u["phrase"]) is not None,
                     len(tokens) / 5, top, u["phrase"] in listed, u["phrase"] in kept,
                     thing and u["phrase"] in listed | kept])  # fmt: skip
    if not rows:
        return [0.0] * 12
    a = np.array(rows, dtype=float)
    return [*a.max(0), a[:, 4].min(), a[:, 5].min(), len(rows) / 3]


def features(resolver: Any, text: str, trace: dict[str, Any], slug: str,
             unknown: list[dict[str, Any]]) -> np.ndarray:
    """(classes, features) for one refused description: per class where its terms stand and
    what stands near them, then the request's own features (the same on every row)."""
    tokens = words(text)
    n, hits, tokset = max(len(tokens), 1), term_hits(resolver, tokens), set(tokens)
    marks = trace.get("marks")
    matched = {m.index: m.score for m in trace.get("matches", []) if m.index is not None}
    gone = set(marks.gone) if marks is not None else set()
    suggested: dict[str, float] = {}
    top: set[str] = set()
    for u in unknown:
        for j, s in enumerate(u.get("did_you_mean") or []):
            suggested[s["name"]] = max(suggested.get(s["name"], -1.0), s["score"])
            top |= {s["name"]} if j == 0 else set()
    mind = [i for i, t in enumerate(tokens) if t in _MIND]
    last = max((h[-1] for h in hits if h), default=-1)
    request = [*_unknown_features(unknown, marks), slug == "unknown-classes",
               slug == "ambiguous-classes", slug == "too-few-classes",
               sum(bool(h) for h in hits) / 10, len(tokens) / 50, len(matched) / 5]
    groups = {n: g for g, members in resolver.known.groups.items() for n in members}
    rows = []
    for k, name in enumerate(resolver.names):
        rows.append(_class_features(name, hits[k], tokens, n, mind, last) + [
            k in gone, k in matched, matched.get(k, 0.0), name in top, name in suggested,
            suggested.get(name, 0.0),
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
    last = (words(group) or [""])[-1]
    named = bool(last) and any(g in tokset or f"{g}s" in tokset for g in singular_forms(last))
    return [named, named and bool(_ALL & tokset)]


def _in_unknown(name: str, unknown: list[dict[str, Any]]) -> list[float]:
    """Whether an unknown mention holds the class's word, and with a retraction or negation
    in it ("update drop pullovers", "bag remove")."""
    head = (words(name) or [""])[-1]
    holding = [words(u["phrase"]) for u in unknown
               if any(head in singular_forms(t) for t in words(u["phrase"]))]
    return [bool(holding), any(set(t) & (_AFTER | _NEAR) for t in holding)]
