"""A lone number beside other classes is a count or an idiom, not a digit class.

"Dog or cat? Half my callouts there's one or the other", "drop the bears, there are only two
of them", "dress, coat, shirt, trouser. Four only.", "On the one hand …": the rules read the
number word as a digit class beside animals or garments. Six of the 45 wrong 200s the rules
gave on held-out sets 90-105 were such a digit (docs/results-resolution.md, stop 61). Of the
5,905 natural requests with answers in the project's sets, six ask for one digit beside other
classes, and each says so: "the digit 7", "the number nine", or a quoted list item. So a single
digit class said as a count (a singular number that is no list item: "one", "2", "callouts
one"; not "sevens", "horse, cow, 1", or a description such as "the loneliest number"), beside
two or more classes that are not digits, is dropped with a note, unless the request calls it a
number or a digit, quotes it, or says how many classes it wants (an outside review of stop 61).
"""

from __future__ import annotations

import re

from service.kinds.resolution import Match
from service.kinds.tokens import NUMERALS, is_number, words

_DIGITS = frozenset(NUMERALS.values())
_CALLED_A_NUMBER = re.compile(r"\b(?:numbers?|digits?|numerals?|figures?)\b", re.I)


def _quoted(phrase: str, text: str) -> bool:
    """Whether the text quotes the phrase (a JSON or code list: ``["giraffe", "four"]``)."""
    return re.search(rf"[\"'`‘’“”]{re.escape(phrase)}[\"'`‘’“”]", text, re.I) is not None


def _counted(match: Match, listed: set[str]) -> bool:
    """Whether a digit's mention reads as a count: a singular number ("one", "2", "callouts
    one"; not "sevens" or "7s", which name the digit) that is no list item ("horse, cow, 1")."""
    said = words(match.phrase)
    return match.phrase not in listed and any(w in NUMERALS or w in _DIGITS for w in said) \
        and not any(is_number(w) and w not in NUMERALS and w not in _DIGITS for w in said)


def without_lone_digit(matches: list[Match], text: str, notes: list[str],
                       listed: set[str] = frozenset(), declared: int | None = None
                       ) -> list[Match]:  # fmt: skip
    """The matches without a lone digit said as a count among two or more other classes (see
    the module's docstring; ``listed``: the request's list items, ``declared``: the number of
    classes it says it wants, which keeps every class); the note says how to keep it."""
    digits = [m for m in matches if m.name in _DIGITS]
    others = {m.name for m in matches if m.name is not None and m.name not in _DIGITS}
    if len({m.name for m in digits}) != 1 or len(others) < 2 or declared is not None:
        return matches
    if not all(_counted(m, listed) for m in digits) or _CALLED_A_NUMBER.search(text) \
            or any(_quoted(m.phrase, text) for m in digits):  # fmt: skip
        return matches
    notes.append(f"ignored {digits[0].phrase!r}: a lone number beside other classes reads as a "
                 f"count, not the digit {digits[0].name}; ask for 'the digit "
                 f"{digits[0].name}' to include it")  # fmt: skip
    return [m for m in matches if m not in digits]
