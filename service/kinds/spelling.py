"""Misspelt class words in requests ("sneekers", "girafes"), corrected only where it is safe.

A correction can turn a 422 into a 200, so it must never turn a real word into a class:
"mittens" is not "kittens", "beagles" not "eagles". Hence three guards: only words of the
catalogue's class names and aliases are targets (never filler or style words, whose correction
would silently drop a mention); the first letter must agree (misspellings seldom change it,
while different real words that are one edit apart often do); and a word the text encoder's
tokenizer knows as a whole word, or one inflected from such a word ("buttoned"), is real.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from service.kinds.tokens import singular_forms

_SUFFIXES = ("ed", "d", "ing", "er", "ers", "ly", "est")


def edit_distance(a: str, b: str, limit: int) -> int:
    """Edits (insertions, deletions, substitutions, adjacent swaps) between ``a`` and ``b``;
    ``limit + 1`` when the lengths alone rule out ``limit``. Written here, not imported: two
    short words are a dozen lines, and no library this project depends on has it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2, prev = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if prev2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


_ENGLISH_ENDINGS = ("ed", "ing", "ly", "tion", "ment", "ness", "able")


class Speller:
    """Corrects a misspelt word to the nearest class word of ``targets`` with the same first
    letter, within 1 edit (2 from 8 letters), if no other target is as near; words shorter than
    5 letters, with digits, or real (``known`` to the encoder, or inflected from a known word)
    are left alone. Results are memoised: a request repeats its words, and a service its
    requests."""

    def __init__(self, targets: Iterable[str], known: Iterable[str]) -> None:
        self.targets = {w for w in targets if w.isalpha()}
        self.known = set(known) | self.targets
        self._vocabulary = bool(self.known - self.targets)  # an encoder's words to tell by
        self._cached = functools.lru_cache(maxsize=4096)(self._correct)

    def __call__(self, token: str) -> str:
        return self._cached(token)

    def _correct(self, token: str) -> str:
        if len(token) < 5 or not token.isalpha() or self._real(token):
            return token
        limit = 1 if len(token) < 8 else 2
        dist = {w: edit_distance(token, w, limit) for w in self.targets if w[0] == token[0]}
        dist = {w: min(d, edit_distance(token, w.replace("ph", "f"), limit))
                for w, d in dist.items()}  # "elefant": ph spelt f is one slip
        best = min(dist.values(), default=limit + 1)
        near = [w for w, d in dist.items() if d == best]
        return near[0] if best <= limit and len(near) == 1 else token

    def foreign(self, token: str) -> bool:
        """A word of letters that is no known word nor inflected from one, when there is a
        vocabulary to tell ("gato", "Turnschuhe"; not "wolves", "hotdogs")."""
        return token.isalpha() and self._vocabulary and not self._real(token) \
            and not token.endswith(_ENGLISH_ENDINGS)  # "undecided (birds)": no translation

    def _real(self, token: str) -> bool:
        """A known word, or one inflected from a known word ("buttoned", "grazing")."""
        stems = singular_forms(token) + [token[: -len(end)] for end in _SUFFIXES
                                         if token.endswith(end)]  # fmt: skip
        return any(stem in self.known for stem in stems)
