"""A catalogue's exact terms: names, aliases and numerals, and the phrases they make.

The part of :class:`service.kinds.resolution.ClassResolver` that needs no encoder: which class
a phrase names outright ("woolly sheep", "3s", "button down shirts"), which classes a phrase's
words name, whether a word belongs to a class name, and runs of names listed with spaces
("zebra giraffe elephant"). Split from ``resolution.py`` at stop 33 (351 lines).
"""

from __future__ import annotations

import functools
from typing import Any

from service.kinds.tokens import NUMERALS, is_number, side_by_side, singular_forms, words
from service.kinds.vocabulary import ADJECTIVAL, FILLER, SAME_PLURAL


class Lexicon:
    """Exact terms of a catalogue's classes (``name`` and ``aliases``) and the digits' numerals.

    Args:
        classes: the ``classes`` of an artifact's ``catalogue.json``.
    """

    def __init__(self, classes: list[dict[str, Any]]) -> None:
        self.names = [c["name"] for c in classes]
        self._lexicon: dict[str, int] = {}
        for i, c in enumerate(classes):
            for term in [c["name"], *c.get("aliases", [])]:
                self._lexicon.setdefault(" ".join(words(term)), i)
        for digit, word in NUMERALS.items():
            if word in self._lexicon:
                self._lexicon.setdefault(digit, self._lexicon[word])
        self._numbers = {self._lexicon[w] for w in NUMERALS.values() if w in self._lexicon}
        self._named = {" ".join(words(n)) for n in self.names}  # the names, not the aliases
        self._name_words = {w for n in self._named for w in n.split()}  # "boot": ankle boot's
        self._words = {w for term in self._lexicon for w in term.split()}
        self._exact = functools.lru_cache(maxsize=4096)(
            lambda phrase: self._exact_uncached(words(phrase)))

    def exact(self, phrase: str) -> int | None:
        """The class a short phrase names outright (longest n-gram first; of equal ones the
        last, the head noun: "house cats" is cats), else None; memoised (parsing asks again)."""
        return self._exact(phrase)

    def _exact_uncached(self, tokens: list[str]) -> int | None:
        """The name must end the phrase: a word after it makes it a modifier ("horse
        carriages", "cat ears"), a word before it may qualify it ("woolly sheep")."""
        for n in range(len(tokens), max(len(tokens) - 2, 0), -1):
            idx = self._term(tokens[len(tokens) - n :])
            if idx is not None and not any(self._term([t]) not in (None, idx) and
                                           not is_number(t) for t in tokens[: len(tokens) - n]):
                return idx
        for n in (2, 1):  # the words before are a name of the same class: "button down shirts"
            if len(tokens) > n and self._term(tokens[-n:]) is not None \
                    and self._term(tokens[:-n]) == self._term(tokens[-n:]):  # fmt: skip
                return self._term(tokens[-n:])
        return None

    def term(self, phrase: str) -> int | None:
        """The class whose name, alias or numeral the whole phrase is (no other word)."""
        tokens = words(phrase)
        return self._term(tokens) if tokens else None

    def classes_in(self, phrase: str) -> list[int]:
        """The distinct non-number classes a phrase's words name (longest names first, left
        to right: "t shirt" is one class, "cats dogs" two)."""
        tokens, found, i = words(phrase), [], 0
        while i < len(tokens):
            n = next((n for n in (3, 2, 1) if i + n <= len(tokens)
                      and self._term(tokens[i : i + n]) is not None), 0)  # fmt: skip
            if n and not is_number(tokens[i]):
                found.append(self._term(tokens[i : i + n]))
            i += max(n, 1)
        return list(dict.fromkeys(found))

    def class_word(self, token: str) -> bool:
        """Whether ``token`` (or its singular) is a word of a class name or alias."""
        return any(form in self._words for form in singular_forms(token))

    def _term(self, tokens: list[str]) -> int | None:
        """The class whose name, alias or numeral these tokens are (last word may be plural)."""
        *head, last = tokens
        for form in singular_forms(last):
            idx = self._lexicon.get(" ".join([*head, form]))
            if idx is not None:
                return idx
        return None

    def alias_modifier(self, phrase: str) -> bool:
        """Whether a two-word phrase is an alias modifying a noun no class has ("slide deck",
        "boot camp": set 70's "what's in our slide deck" was a sandal at 200). Aliases only: a
        class's own name before a noun ("zebra characters", "cows wandering") is that class,
        as are adjectives ("canine companion") and numerals."""
        tokens = words(phrase)
        return len(tokens) == 2 and tokens[0].isalpha() and not is_number(tokens[0]) \
            and not set(singular_forms(tokens[0])) & self._name_words \
            and tokens[0] not in ADJECTIVAL \
            and self.term(tokens[0]) is not None and self.term(tokens[1]) is None \
            and tokens[1] not in FILLER and not self.class_word(tokens[1])

    def term_run(self, phrase: str, names: bool = False) -> list[str]:
        """One mention per class term of a run listed with spaces: numbers ("2 4 6 8", "six
        seven") and, with ``names`` (the words stood side by side in the text: not "cats then
        dogs"), three or more class names, not aliases ("zebra giraffe elephant"; "zebra finch
        giraffe" is a finch), or names all plural but the last ("bears birds", "puppies
        kittens"); nothing else may be in the phrase. Two names
        where the first is singular stay one phrase: "dog bag" may be a bag for dogs (a
        clash, 422). Any other phrase → itself."""
        terms = side_by_side(words(phrase), self._term)
        if terms is None:
            return [phrase]
        numbers = all(len(t) == 1 and is_number(t[0]) for t in terms)
        plurals = all(" ".join(t) not in self._lexicon  # "bears" is not; "sheep" may be,
                      or len(terms) >= 3 and " ".join(t) in SAME_PLURAL  # in "cows horses
                      and self._term(["".join(t + n)]) is None  # sheep dogs" (set 49); "sheep
                      for t, n in zip(terms, terms[1:], strict=False))  # dogs" may be sheepdogs
        named = all(" ".join(t) in self._named for t in terms)  # "zebra finch giraffe" is not
        if len(terms) > 1 and (numbers or names and (len(terms) >= 3 and named or plurals)):
            return [" ".join(t) for t in terms]
        return [phrase]
