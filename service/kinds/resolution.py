"""Request → catalogue classes and domain: exact terms first, then the text encoder, jointly.

A description is first read by :mod:`service.kinds.parsing` (instruction, filler and negations
dropped; class mentions and style words kept). Each mention then resolves

1. exactly, when one of its word n-grams is a class name, an alias from the catalogue (``aliases``
   per class) or a numeral ("3", "3s" → three), singular or plural (a mention that computes
   a digit, "the number after six", arrives as that numeral: :mod:`service.kinds.numbers`),
   and at most one other word is left over, which names no other class ("woolly sheep",
   "high-top boots"; "the striped african horse" is a description, not a horse; "cats dogs"
   is not one class). A run of numbers with no separator ("2 4 6 8") is one mention per
   number. A longer mention that ends in a numeral after words leaning to no class ("a child
   holds up a card showing 3") is that numeral, the words before it context
   (:func:`service.kinds.leftovers.tails`);
2. else by cosine similarity of its embedding with every view of every class (name, aliases,
   definition), the best view per class counting. A mention that *describes* a class (four
   or more words, or three content words) is also compared with the catalogue's several
   ``descriptions`` per class (looks, use, habitat, what a numeral counts), and has its own
   threshold and margin: one dictionary definition per class matched 62–71 % of outsiders'
   definitions, the descriptions 91–94 % (docs/results-resolution.md, stop 26). Names and
   short phrases never see the descriptions ("hats" is no "hat-trick", so no *three*). A
   mention that asks to count something ("how many legs a spider has") must be a near
   paraphrase of a catalogue fact (similarity 0.80): the encoder answers counts by association.

All mentions are assigned *jointly*: k mentions get k distinct classes (Hungarian assignment on
the similarities), so two phrases cannot take the same class and no class is invented. Repeated
mentions ("cat, cat, dog") collapse; two different mentions that exactly name the same class
("kittens and cats") are ambiguous (422). A mention whose assigned similarity is below the
threshold is unknown: 422 with the nearest classes as suggestions (never a guessed 200). The
domain is the one whose description is most similar to the request's style words ("charcoal
drawings" → sketch).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment

from model_store.domains import DOMAIN_DESCRIPTIONS
from service.kinds import senses
from service.kinds.chunks import Known
from service.kinds.domains import described_words, domain_of
from service.kinds.foils import Foils
from service.kinds.lexical import Lexical
from service.kinds.lexicon import Lexicon
from service.kinds.numbers import COUNT_MIN_SIMILARITY, COUNTED, COUNTING, uncomputed, value_of
from service.kinds.spelling import Speller
from service.kinds.tokens import compound_tail, numbers_only, words
from service.kinds.vocabulary import FILLER, GENERIC, GROUPS, NEGATIONS

_RELATIVE = {"that", "which", "who", "whose"}  # a listed definition's clause: it describes

# a description is refused when a foil (:mod:`.foils`) is nearer than its class by more than
# this, by the encoder alone: "nearer a foil". On the tuning pool 0.0 and 0.03 kept the same
# share of wrong 200s; on an outside review's 707 probes -0.02 refused 3 more of 373
# out-of-catalogue things and 3 more of 334 catalogue ones (docs/results-resolution.md, stop 33)
FOIL_MARGIN = 0.0


@dataclass
class Match:
    """One phrase's resolution: the class (None when unknown), its score and alternatives."""

    phrase: str
    name: str | None
    index: int | None
    score: float
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    looks_like: str | None = None  # the foil a refused description is nearer (foils.py)


class ClassResolver(Lexicon):
    """Matches mentions to a catalogue with a text encoder (exact terms: :class:`Lexicon`).

    Args:
        catalogue: the artifact's ``catalogue.json`` (``classes`` with ``name``, ``definition``,
            optional ``aliases`` and ``descriptions``; ``domains``; optional
            ``domain_descriptions``).
        encoder: object with ``encode(list[str]) -> (n, d)`` L2-normalised array.
        threshold: minimum cosine similarity to accept a non-exact match.
        margin: how far a non-exact match must lead the next-best class ("shoes": sneaker,
            sandal and ankle boot score alike, so none is chosen).
        described: (threshold, margin) for a mention that describes a class
            (:meth:`describes`: four or more words, or three content words); only those are
            also compared with the catalogue's ``descriptions``. Default: ``(threshold,
            margin)``.
    """

    def __init__(
        self, catalogue: dict[str, Any], encoder: Any, threshold: float, margin: float = 0.0,
        described: tuple[float, float] | None = None,
    ) -> None:
        classes = catalogue["classes"]
        Lexicon.__init__(self, classes)  # names, exact terms
        self.domains = list(catalogue.get("domains", []))
        self.encoder, self.threshold, self.margin = encoder, threshold, margin
        self.described = described or (threshold, margin)
        views, owners, kinds = [], [], []  # kind: 0 one-word term, 1 longer term, 2 text
        for i, c in enumerate(classes):
            terms = [c["name"], *(a for a in c.get("aliases", [])
                                  if not self._compound_of_other(a, i))]
            for text, kind in [*((t, int(len(words(t)) > 1)) for t in terms),
                               (c.get("definition") or "", 2),
                               *((d, 3) for d in c.get("descriptions", []))]:
                if text:
                    views.append(text)
                    owners.append(i)
                    kinds.append(kind)
        self._views = encoder.encode(views)
        self._lexical = Lexical(classes)
        owners, kinds = np.array(owners), np.array(kinds)
        self._foils = Foils(encoder, lambda name: self.term(name) is not None,
                            self._views[np.isin(kinds, (0, 1))])
        # which views a mention is compared with: a word, a phrase, a description (see
        # similarities); one list of view indices per class for each
        self._seen_by = {who: [np.flatnonzero((owners == i) & np.isin(kinds, allowed))
                               for i in range(len(classes))]
                         for who, allowed in (("word", (0, 2)), ("phrase", (0, 1, 2)),
                                              ("description", (0, 1, 2, 3)))}  # fmt: skip
        described = {**DOMAIN_DESCRIPTIONS, **catalogue.get("domain_descriptions", {})}
        texts = [f"{d.replace('_', ' ')}: {described.get(d, d)}" for d in self.domains]
        self._domain_emb = encoder.encode(texts) if texts else None
        self._domain_words = described_words({d: described.get(d, d) for d in self.domains})
        plurals = {w + ("es" if w.endswith(("s", "x", "ch", "sh")) else "s") for w in self._words}
        self.spell = Speller(self._words | plurals, getattr(encoder, "known_words", tuple)())
        self.known = self._known(classes, catalogue.get("subgroups") or {})

    def _compound_of_other(self, alias: str, owner: int) -> bool:
        """A one-word alias made of another class's name and its own ("sheepdog"): matched
        exactly, but no view for the encoder, which reads it as that other class (stop 37:
        with it, "farm" leaned to dog and "farm animals but NOT dogs" was refused). Not
        "cattle", which only opens with "cat"."""
        own = self.names[owner]
        return " " not in alias and alias.endswith(own) and any(
            alias.startswith(n) and alias != own for j, n in enumerate(self.names) if j != owner)

    def _known(self, classes: list[dict[str, Any]], subgroups: dict[str, list[str]]) -> Known:
        """What the parser needs to know of this catalogue (:class:`chunks.Known`)."""
        groups: dict[str, list[str]] = {}
        for c in classes:
            if c.get("group"):
                groups.setdefault(c["group"], []).append(c["name"])
        subgroups = {str(w).lower(): list(ms) for w, ms in subgroups.items()
                     if set(ms) <= set(self.names)}  # a sub-group of classes this task has
        return Known(lambda p: self.exact(p) is not None, self.class_word, self.spell, groups,
                     lambda p: self.names[i] if (i := self.term(p)) is not None else None,
                     subgroups, self.spell.foreign)

    # ---- mentions -------------------------------------------------------------------------

    def describes(self, phrase: str, listed: bool = False) -> bool:
        """Whether a mention describes a class rather than naming it: four or more words, or
        three content words ("summer footwear that leaves the toes bare", "the digit for a
        couple of things"; not "hats", "wedding photos"); with a word of a class name in it,
        four content words and not at the end ("a striped horse-like animal from Africa", not
        "Dr Smith's cats"); a listed class of six or more words always describes."""
        tokens = words(phrase)
        content = sum(w not in FILLER for w in tokens)
        named = any(map(self.class_word, tokens))
        if not listed and tokens and self.class_word(tokens[-1]):
            return False  # in a description, "… but it should also flag cats" names cats
        if listed and len(tokens) >= 6:  # a listed definition may say "buttons down the front"
            return True
        if listed and len(tokens) >= 3 and _RELATIVE & set(tokens[1:-1]):  # "pet that meows"
            return True
        return (len(tokens) >= 4 or content >= 3) and (content >= 4 or not named)

    def similarities(self, phrases: list[str], core: bool = False,
                     listed: bool = False) -> np.ndarray:
        """(len(phrases), classes): the best cosine similarity over each class's views. Only a
        description (:meth:`describes`) is compared with the descriptions, since their other
        nouns ("a hat-trick", "legs of a spider") would match a name ("hats", "spiders"); a
        single word is not compared with longer aliases, whose sense is in their first word
        ("shoes" is not "running shoe"). With ``core``, nothing is compared with descriptions.
        A description also scores its word overlap with each class's texts (:mod:`.lexical`).
        """
        return self._scored(phrases, core, listed)[0]

    def _scored(self, phrases: list[str], core: bool = False, listed: bool = False
                ) -> tuple[np.ndarray, list[str | None], np.ndarray]:
        """(:meth:`similarities`, nearest foil per phrase, how much nearer that foil is than
        each class by the encoder alone); foils only for descriptions (:mod:`.foils`), else
        (None, -inf)."""
        embeddings = self.encoder.encode(phrases)
        sims = _dot(embeddings, self._views)
        out = np.full((len(phrases), len(self.names)), -1.0)
        who = ["description" if not core and self.describes(p, listed) else
               "word" if len(words(p)) == 1 else "phrase" for p in phrases]  # fmt: skip
        described = [i for i, w in enumerate(who) if w == "description"  # not a count known
                     and value_of(phrases[i]) is None]  # to be no digit ("months in a year")
        lexical = self._lexical.scores([phrases[i] for i in described])
        for row, kind in enumerate(who):
            for k, seen in enumerate(self._seen_by[kind]):
                if len(seen):
                    out[row, k] = sims[row, seen].max()
        foils, lead = [None] * len(phrases), np.full(out.shape, -np.inf)
        if described:
            names, near = self._foils.nearest(embeddings[described])
            for row, name, sim in zip(described, names, near, strict=True):
                foils[row], lead[row] = name, sim - out[row]
        out[described] += lexical  # word overlap with the class's texts (:mod:`.lexical`)
        return out, foils, lead

    def names_foil(self, phrase: str) -> bool:
        """Whether a short mention names something the catalogue lacks outright ("guinea
        pig", "goats"; :meth:`service.kinds.foils.Foils.named`)."""
        return self._foils.named(phrase) is not None

    def match_many(self, phrases: list[str], listed: bool = False) -> list[Match]:
        """Resolve distinct mentions jointly (k mentions → k distinct classes); unknown ones
        come back with ``name=None`` and suggestions. ``listed``: the phrases are the items of
        a ``classes`` list, each one class however long, not mentions read from a sentence."""
        if not phrases:
            return []
        exact = [self.exact(p) for p in phrases]
        scores = np.full((len(phrases), len(self.names)), -1.0)
        pending = [i for i, e in enumerate(exact) if e is None and not numbers_only(phrases[i])]
        foils, lead = [None] * len(phrases), np.full(scores.shape, -np.inf)
        if pending:  # a number that is no class ("11") stays at -1: unknown
            scores[pending], found, lead[pending] = self._scored([phrases[i] for i in pending],
                                                                 listed=listed)
            for i, name in zip(pending, found, strict=True):
                foils[i] = name
        for i, e in enumerate(exact):
            if e is not None:
                scores[i, e] = 1.0
        assigned = np.full(len(phrases), -1)  # more mentions than classes: some get none
        rows, cols = linear_sum_assignment(-scores)
        assigned[rows] = cols
        matches = [self._match(p, scores[i], int(assigned[i]), exact[i] is not None, listed)
                   for i, p in enumerate(phrases)]  # fmt: skip
        taken = {m.index for m in matches if m.index is not None}
        for i, m in enumerate(matches):  # listed definitions: a class another took is no
            # rival (read pool +16, one wrong; in sentences +2 and 3 wrong, so not there)
            if listed and m.index is None and assigned[i] >= 0 and taken:
                rivals = scores[i].copy()
                rivals[list(taken - {int(assigned[i])})] = -1.0
                again = self._match(phrases[i], rivals, int(assigned[i]), False, listed)
                matches[i] = m if again.index is None else again
        for i, m in enumerate(matches):  # a description nearer a foil than its class, or a
            if m.index is not None and not exact[i] and (named := self._foils.named(m.phrase)):
                foils[i], lead[i, m.index] = named, np.inf  # foil named outright: refused
            if m.index is not None and foils[i] and lead[i, m.index] > FOIL_MARGIN:
                matches[i] = Match(m.phrase, None, None, m.score,
                                   [{"name": self.names[m.index], "score": m.score},
                                    *m.suggestions][:3], looks_like=foils[i])  # fmt: skip
        return matches

    def _match(self, phrase: str, scores: np.ndarray, chosen: int, exact: bool,
               listed: bool = False) -> Match:
        order = [int(i) for i in np.argsort(-scores)[:3]]
        suggestions = [{"name": self.names[i], "score": round(float(scores[i]), 4)} for i in order]
        if chosen < 0 or scores[chosen] < 0:  # no class left, or one it cannot be
            return Match(phrase, None, None, -1.0, suggestions)
        score = float(scores[chosen])
        runner_up = float(np.delete(scores, chosen).max()) if len(scores) > 1 else -1.0
        described = self.describes(phrase, listed)  # "a top with no collar" describes
        threshold, margin = self.described if described else (self.threshold, self.margin)
        if COUNTING.search(phrase) or (chosen in self._numbers and COUNTED.search(phrase)):
            threshold = max(threshold, COUNT_MIN_SIMILARITY)
        negated = not described and any(t in NEGATIONS and not self.class_word(t)
                                        for t in words(phrase))  # "handbags not" is no bag
        negated |= not exact and not described and len(words(phrase)) == 1 and (
            senses.abstract(words(phrase)) or len(phrase) <= 2)  # "kick" no sneaker, "FR" no dress
        head = None if exact else compound_tail(phrase, self._term)
        negated |= head not in (None, chosen) or self.alias_modifier(phrase)  # "sheepdog"
        # is no sheep, a "slide deck" no sandal
        negated |= not exact and (value_of(phrase) is not None  # a number no digit class is
                                  or chosen in self._numbers and uncomputed(phrase)
                                  or set(words(phrase)) <= GENERIC | GROUPS)  # "footwear",
        # "fashion", "wildlife": which one?
        if not exact and (score < threshold or score - runner_up < margin or negated):
            return Match(phrase, None, None, round(score, 4), suggestions)
        others = [s for s in suggestions if s["name"] != self.names[chosen]][:2]
        return Match(phrase, self.names[chosen], chosen, round(score, 4), others)

    # ---- domains --------------------------------------------------------------------------

    def domain_of(self, style: list[str]) -> str | None:
        """The domain whose description is most similar to the style words, if similar enough
        (:func:`service.kinds.domains.domain_of`)."""
        if self._domain_emb is None:
            return None
        return domain_of(style, self.domains,
                         lambda text: _dot(self.encoder.encode([text]), self._domain_emb),
                         self._domain_words)


def _dot(queries: np.ndarray, views: np.ndarray) -> np.ndarray:
    """``queries @ views.T`` in torch, not numpy: numpy's BLAS threads spin after a product
    and take the 2-core CPU from the encoder's next request (p50 of definition requests 30
    ms instead of 16 ms once the catalogue's views passed ~400 rows)."""
    return (torch.from_numpy(queries) @ torch.from_numpy(views).T).numpy()

