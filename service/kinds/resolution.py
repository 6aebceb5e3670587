"""Phrase → catalogue class resolution by text-embedding similarity ("did you mean").

A description such as "sketches of cats, dogs and horses" is split into phrases; each phrase is
matched exactly (after normalising case, punctuation and plurals) or else by cosine similarity
of its embedding with the class names and definitions. Phrases below the threshold are unknown:
the caller answers 422 with the nearest classes as suggestions, so the user can fix the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_LEAD = re.compile(
    r"^\s*(please\s+)?(classify|distinguish|recogni[sz]e|detect|identify|sort|separate|"
    r"tell apart|tell|label|find)(\s+between|\s+among)?\b",
    re.I,
)
_DOMAIN_OF = re.compile(
    r"\b(sketch(?:es)?|drawings?|cartoons?|comics?|(?:art\s+)?paintings?|art|"
    r"photos?|photographs?)\s+of\b",
    re.I,
)
_FILLER = re.compile(
    r"\b(images?|pictures?|kinds?|types?|sorts?)\s+of\b|\b(a|an|the|some|different|"
    r"various|from|each other)\b",
    re.I,
)
_SPLIT = re.compile(r",|;|&|\+|\band\b|\bor\b|\bvs\.?|\bversus\b|\bfrom\b", re.I)
_DOMAIN_WORDS = {
    "sketch": "sketch", "sketches": "sketch", "drawing": "sketch", "drawings": "sketch",
    "cartoon": "cartoon", "cartoons": "cartoon", "comic": "cartoon", "comics": "cartoon",
    "painting": "art_painting", "paintings": "art_painting", "art": "art_painting",
    "photo": "photo", "photos": "photo", "photograph": "photo", "photographs": "photo",
}  # fmt: skip


def normalise(text: str) -> str:
    """Lower-case, punctuation to spaces, single spaces: ``"T-shirt/top"`` → ``"t shirt top"``."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def _singulars(word: str) -> list[str]:
    forms = [word]
    if word.endswith("ies"):
        forms.append(word[:-3] + "y")
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s"):
        forms.append(word[:-1])
    return forms


@dataclass
class Match:
    """One phrase's resolution: the class (None when unknown), its score and alternatives."""

    phrase: str
    name: str | None
    index: int | None
    score: float
    suggestions: list[dict[str, Any]] = field(default_factory=list)


class ClassResolver:
    """Matches phrases to a catalogue with a text encoder.

    Args:
        catalogue: the artifact's ``catalogue.json`` (``classes`` with ``name``/``definition``).
        encoder: object with ``encode(list[str]) -> (n, d)`` L2-normalised array.
        threshold: minimum cosine similarity to accept a match.
    """

    def __init__(self, catalogue: dict[str, Any], encoder: Any, threshold: float) -> None:
        self.names = [c["name"] for c in catalogue["classes"]]
        self.domains = list(catalogue.get("domains", []))
        self.encoder, self.threshold = encoder, threshold
        self._exact = {normalise(n): i for i, n in enumerate(self.names)}
        self._name_emb = encoder.encode(self.names)
        defs = [c.get("definition") or c["name"] for c in catalogue["classes"]]
        self._def_emb = encoder.encode(defs)

    def _exact_index(self, phrase: str) -> int | None:
        norm = normalise(phrase)
        if not norm:
            return None
        head, _, last = norm.rpartition(" ")
        for form in _singulars(last):
            idx = self._exact.get(f"{head} {form}".strip())
            if idx is not None:
                return idx
        return None

    def match_many(self, phrases: list[str]) -> list[Match]:
        """Resolve each phrase; unknown ones come back with ``name=None`` and suggestions."""
        pending = [p for p in phrases if self._exact_index(p) is None]
        emb = self.encoder.encode(pending) if pending else np.zeros((0, 1), np.float32)
        sims = np.maximum(emb @ self._name_emb.T, emb @ self._def_emb.T) if pending else emb
        out, row = [], 0
        for phrase in phrases:
            idx = self._exact_index(phrase)
            if idx is not None:
                out.append(Match(phrase, self.names[idx], idx, 1.0))
                continue
            out.append(self._from_scores(phrase, sims[row]))
            row += 1
        return out

    def _from_scores(self, phrase: str, scores: np.ndarray) -> Match:
        order = np.argsort(-scores)[:3]
        suggestions = [{"name": self.names[i], "score": round(float(scores[i]), 4)} for i in order]
        best = int(order[0])
        score = float(scores[best])
        if score < self.threshold:
            return Match(phrase, None, None, round(score, 4), suggestions)
        return Match(phrase, self.names[best], best, round(score, 4), suggestions[1:])

    def parse_description(self, text: str) -> tuple[list[str], str | None]:
        """Split a free-text task description into class phrases and an optional domain."""
        domain = None
        found = _DOMAIN_OF.search(text)
        if found:
            word = found.group(1).lower().split()[-1]
            candidate = _DOMAIN_WORDS.get(word)
            domain = candidate if candidate in self.domains else None
            text = _DOMAIN_OF.sub(" ", text)
        text = _LEAD.sub(" ", text)
        text = _FILLER.sub(" ", text)
        phrases = [p.strip(" .!?:'\"") for p in _SPLIT.split(text)]
        return [p for p in phrases if normalise(p)], domain


def resolve_request(
    resolver: ClassResolver, request: Any, domains: list[str]
) -> tuple[list[Match], str | None]:
    """A ``description``/``classes`` request → its distinct classes (request order) and domain.

    Raises:
        Problem: 422 ``unknown-domain``, ``unknown-classes`` (with suggestions per phrase) or
            ``too-few-classes``.
    """
    from service.core.problems import Problem

    if request.classes is not None:
        phrases, domain = list(request.classes), None
    else:
        phrases, domain = resolver.parse_description(request.description or "")
    domain = request.domain or domain
    if domain is not None and domain not in domains:
        raise Problem(422, "unknown-domain", f"unknown domain {domain!r}", domains=domains)
    matches = resolver.match_many(phrases)
    unknown = [m for m in matches if m.name is None]
    if unknown:
        raise Problem(
            422, "unknown-classes",
            "no catalogue class matches " + ", ".join(repr(m.phrase) for m in unknown),
            unknown=[{"phrase": m.phrase, "did_you_mean": m.suggestions} for m in unknown],
        )  # fmt: skip
    unique: list[Match] = []  # first occurrence of each class, in request order
    for m in matches:
        if all(u.index != m.index for u in unique):
            unique.append(m)
    if len(unique) < 2:
        raise Problem(422, "too-few-classes",
                      "a task needs at least 2 distinct classes; resolved: "
                      + ", ".join(str(m.name) for m in unique))  # fmt: skip
    return unique, domain
