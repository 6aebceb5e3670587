"""Numbers as a span of digits: "digits 0 through 4", "1-3", "always between 0 and 5".

A range is spelt out only where it is one: the whole chunk, or right after a digit word, with
both ends naming classes ("size 2-4 shoes", "ages 3 to 5" and "5 to 9 per photo" stay as they
are); "between N and M" only after a bounding word and never after a word of comparing
("distinguish between 3 and 8" names a pair).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.tokens import NUMERALS, words
from service.kinds.vocabulary import COMPARING, DIGIT_CONTEXT, FILLER

NUMBER = r"(?:\d|zero|one|two|three|four|five|six|seven|eight|nine)"
_RANGE = re.compile(rf"\b({NUMBER})\s*(?:-|–|—|\bto\b|\bthrough\b|\bthru\b|\btill\b|"
                    rf"\buntil\b)\s*({NUMBER})\b", re.I)
# "always between 0 and 5" bounds a range; after an instruction to compare ("tell apart
# between 3 and 8", "confuses 1 and 7") it names a pair
_BETWEEN = re.compile(rf"\bbetween\s+({NUMBER})\s+and\s+({NUMBER})\b", re.I)
_BOUNDING = {"always", "only", "anywhere", "somewhere", "numbers", "digits", "numerals", "values",
             "is", "are", "be", "lie", "lies", "fall", "falls", "range", "ranging", "all", "any",
             "anything", "everything"}  # "always between 0 and 5", "digits between 2 and 7"


# "between 1 and 7, which look alike", "between 2 and 6, exclusive", "0 or between 1 and 5":
# a pair, an open range or an alternative, not the range spelt out
_UNSURE = {"alike", "similar", "exclusive", "exclusively", "or", "either", "excluding"}


def between(text: str) -> str:
    """"always between 0 and 5" as the range "0 to 5": after a bounding word ("always",
    "digits", "are"), with the ends two or more apart and no word of comparing before it in
    the text, nor a word of doubt anywhere (``_UNSURE``); "distinguish between 3 and 8" and
    "classify between 3 and 8" stay a pair."""
    def spelt(match: re.Match) -> str:
        before, everywhere = words(text[: match.start()]), set(words(text))
        lo, hi = _as_int(match[1]), _as_int(match[2])
        ranged = hi - lo >= 2 and before and before[-1] in _BOUNDING \
            and not (everywhere - {"between"}) & (COMPARING | _UNSURE)  # fmt: skip
        return f"{match[1]} to {match[2]}" if ranged else match[0]
    return _BETWEEN.sub(spelt, text)


def span(chunk: str, names_a_class: Callable[[str], bool]) -> list[str] | None:
    """The numbers of a chunk that is a range and nothing else ("digits 0 through 4", "1-3",
    "handwritten numbers six to nine"), or a range right after a digit word ("recognition for
    digits 3 through 7 only"), when both ends name classes; None otherwise, so "size 2-4
    shoes", "ages 3 to 5" and "5 to 9 per photo" stay as they are."""
    match = _RANGE.search(chunk)
    if match is None:
        return None
    before, after = words(chunk[: match.start()]), words(chunk[match.end():])
    cued = bool(before) and before[-1] in DIGIT_CONTEXT and all(t in FILLER for t in after)
    if not cued and (after or any(t not in FILLER for t in before)):
        return None
    lo, hi = (_as_int(match[i]) for i in (1, 2))
    if lo >= hi or not all(names_a_class(match[i].lower()) for i in (1, 2)):
        return None
    return [str(n) for n in range(lo, hi + 1)]


def _as_int(number: str) -> int:
    number = number.lower()
    return int(number) if number.isdigit() else list(NUMERALS.values()).index(number)
