"""Exceptions read for what they say. An exception after a listed class is a clause of its
own: "cats, dogs, birds excluding horses" → "cats, dogs, birds, excluding horses". And
"without X the app makes no sense" says X is needed, not excluded (:func:`needed_without`).

Read as one chunk, "birds excluding horses" negated both (set 64: the birds lost at 200). The
split is only for exceptions that name classes the list did not: "sneakers, sandals and ankle
boots except the ankle boots" or "bird, bear, cat, cow excluding the cow and dog" take back
what was asked, which the one-chunk reading already handles (an outside review of the first
rule: both wrong at 200), and "digits 2 to 5 except 7" is asked back (a digit before it).
"""

from __future__ import annotations

import re

from service.kinds.chunks import Known
from service.kinds.tokens import is_number, singular_forms, words

_EXCEPT_AFTER = re.compile(r"\b([\w-]+)\s+(?=(?:except|excluding)\b)", re.I)
_SENTENCE = re.compile(r"[.;!?\n]")


def split_exceptions(text: str, known: Known) -> str:
    """``text`` with a comma before each "except"/"excluding" that follows a class word and
    excepts only classes its sentence did not name before it."""
    def split(m: re.Match) -> str:
        word = m[1].lower()
        if not known.class_word(word) or is_number(word):
            return m[0]
        before = _SENTENCE.split(text[:m.end()])[-1]
        after = _SENTENCE.split(text[m.end():], maxsplit=1)[0]
        return m[0] if _classes(before, known) & _classes(after, known) else m[0].rstrip() + ", "
    return _EXCEPT_AFTER.sub(split, text)


def _classes(text: str, known: Known) -> set[str]:
    """The classes ``text``'s words name, plural or not (one word each)."""
    return {c for w in words(text) for f in (w, *singular_forms(w)) if (c := known.class_of(f))}


# "Without the pig and chicken the app don't make sense for us" (set 67: the pig dropped at
# 200): a condition naming what the task cannot do without, read as asking for it
_NEEDED_WITHOUT = re.compile(
    r"\bwithout\s+([^.!?;,]{1,60}?)\s*,?\s+(?=(?:the\s+\w+|it|this|that|we|our\s+\w+|there)\s+"
    r"(?:\w+\s+)?(?:(?:don'?t|doesn'?t|won'?t|wouldn'?t|can'?t|cannot)\s+(?:make\s+(?:any\s+)?"
    r"sense|work|function)|(?:is|would\s+be)\s+(?:useless|pointless)|makes?\s+no\s+sense)\b)",
    re.I)  # not "without ankle boots it doesn't need to handle winter" (an outside review)


def needed_without(text: str) -> str:
    """``text`` with "without X, <it> doesn't/can't/makes no sense" as "we need X. …"."""
    return _NEEDED_WITHOUT.sub(r"we need \1. ", text)


# "no more cat/dog", "not sandals/sneakers": the negation covers each item of a slashed pair
# (set 67: the dog kept at 200)
_NEGATED_SLASHES = re.compile(r"\b(no(?:\s+more)?|not|without|except|excluding)\s+"
                              r"([a-z][\w-]*(?:\s*/\s*[a-z][\w-]*)+)\b", re.I)


def negated_slashes(text: str) -> str:
    """``text`` with "no X/Y" as "no X, no Y"."""
    return _NEGATED_SLASHES.sub(lambda m: ", ".join(f"{m[1]} {w.strip()}"
                                                    for w in m[2].split("/")), text)


# "no more cat/dog, now it's cow + horse + sheep" (set 67): "now" turns to what is asked, so a
# negation before it reaches no further (the cow was negated with the cat)
_NOW = re.compile(r"(?<=\w)[.,;!]\s+now\b(?!\s+(?:that|and|then)\b)", re.I)


# "Previously we did t-shirt, trouser, dress but now … coats and pullovers only": what was
# done before "now" is history, not asked (set 66: both lists read, a 422)
_BEFORE_NOW = re.compile(r"\b(?:previously|formerly|originally|in\s+the\s+past|(?:we|i)\s+used\s+"
                         r"to)\b[^.!?;\n]{0,120}?,?\s+(?:but\s+|and\s+)?(?=now\b)", re.I)


def now_turns(text: str) -> str:
    """``text`` with ", now …" after a clause as a sentence of its own ("… . Now …"), and what
    was done "previously … but now" dropped."""
    return _NOW.sub(". Now", _BEFORE_NOW.sub(_history, text))


_STILL = re.compile(r"\bnow\b[^.!?;\n]*\b(?:also|too|as\s+well|additionally|plus|add|adding|"
                    r"still|again|more)\b", re.I)


def _history(m: re.Match) -> str:
    """Nothing for what was done before "now", unless "now" adds to it ("we used to sort
    cats, but now also dogs" asks for all three)."""
    return m[0] if _STILL.match(m.string, m.end()) else ""
