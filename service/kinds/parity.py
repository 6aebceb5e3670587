"""Even and odd digits within a range or a list: "only the even numbers, handwritten, 0
through 8", "Numbers 2 to 8, but no odd ones". Split from ``ranges.py`` at stop 39 (over 300
lines); the range patterns are :mod:`service.kinds.ranges`'."""

from __future__ import annotations

import re
from collections.abc import Mapping

from service.kinds.ranges import NUMBER, as_int
from service.kinds.tokens import NUMERALS, words

# "only the even numbers, handwritten, 0 through 8": the parity within the range (set 40: all
# nine digits at 200, the two read as a union)
_PARITY_RANGE = re.compile(
    rf"\b(?P<parity>even|odd)\s+(?:digits?|numbers?|numerals?)\b(?P<mid>[^.;!?0-9]{{0,40}}?)"
    rf"(?:\bbetween\s+(?P<a>{NUMBER})\s+and\s+|(?:\bfrom\s+)?\b(?P<lo>{NUMBER})\s*"
    rf"(?:-|–|(?:up\s+)?to|through|thru|until)\s*)(?P<hi>{NUMBER})(?=\s*(?:[,.;:!?)]|$|\b(?:only|please|pls|inclusive|"
    r"handwritten|written|in|on)\b))", re.I)  # not "2 to 8 megapixels", "2 to 6 per image"
_PARITY_MID = {"only", "just", "the", "handwritten", "written", "please", "pls", "digits",
               "numbers", "from", "inclusive", "all"}  # words about the digits, no others


# what "even" means, said after it: "the even numbers only, the ones you can divide by two,
# from 0 until 8" (set 67: all nine digits at 200, the gloss stood between parity and range)
_EVEN_GLOSS = re.compile(r"(\beven\b[^.;!?]{0,40}?),?\s*(?:i\.?e\.?,?\s*|that\s+is,?\s*)?"
                         r"(?:the\s+ones?\s+|those\s+|that\s+are\s+|which\s+are\s+)?"
                         r"(?:(?:that\s+|which\s+)?(?:you\s+can\s+|we\s+can\s+|can\s+be\s+)?"
                         r"(?:divide[ds]?|divisible|dividable|split)\s+(?:evenly\s+)?"
                         r"(?:by|in|into)\s+(?:two|2)|(?:the\s+)?multiples\s+of\s+(?:two|2))"
                         r"(?:\s+(?:exactly|evenly))?(?=\s*[,.;:!?)]|\s+from\b|\s*$)", re.I)


# "numbers divisible by two from 0 to 8": the even ones, said without "even" (all nine at 200)
_BY_TWO = re.compile(r"\b(digits?|numbers?|numerals?)\s+(?:that\s+are\s+|which\s+are\s+)?"
                     r"(?:evenly\s+)?(?:divisible|dividable)\s+by\s+(?:two|2)\b", re.I)


def parity_range(text: str) -> str:
    """"even numbers … 0 through 8" as the even digits from 0 to 8, the words between kept
    ("handwritten"); left as it is when any other word lies between them or the range ends
    no clause (an outside review: "apart from 0 to 4", "kids aged 4 to 8", "2 to 6 per
    image" were read as the range)."""
    def spelt(m: re.Match) -> str:
        lo, hi = as_int(m["lo"] or m["a"]), as_int(m["hi"])
        if lo >= hi or not all(w in _PARITY_MID for w in words(m["mid"])):
            return m[0]  # "even digits apart from 0 to 4", "odd digits on pages 2 to 8"
        odd = m["parity"].lower() == "odd"
        return ", ".join(str(n) for n in range(lo, hi + 1) if n % 2 == odd) + m["mid"]
    text = _BY_TWO.sub(r"even \1", _EVEN_GLOSS.sub(r"\1", text))
    return _PARITY_RANGE.sub(spelt, text)


_PARITY_ONES = re.compile(r",?\s*\b(?:but\s+)?(?:(?:no|not|without|skip|drop|exclude)\s+(?:the\s+|"
                          r"any\s+)?|(?P<only>only|just|only\s+care\s+about)\s+(?:the\s+)?)"
                          r"(?P<parity>even|odd)\s+ones\b|,?\s*\b(?:the\s+)?(?P<parity2>even|odd)"
                          r"\s+ones\s+(?P<only2>only)\b|(?<=\d)\s*[,;:—–-]*\s*(?:(?P<only3>only|just)\s+"
                          r"(?P<parity3>even|odd)|(?P<parity4>even|odd)\s+(?P<only4>only))\b",
                          re.I)  # fmt: skip  # "1,3,5,7,9 — odd only" (set 69), right after
# a digit: not "the paper is not even", "the handwriting is just odd" (an outside review)
_PARITY_COUNTS = {w: int(d) for d, w in NUMERALS.items()}


def parity_filter(text: str, groups: Mapping[str, list[str]]) -> tuple[str, list[str]]:
    """``(text, dropped)``: "but no odd ones", "only the even ones" after a list or range of
    digits, without that phrase, and the digits it takes away (all of the other parity:
    "only the even ones" drops the odd). Taken back, not excluded: "Numbers 2 to 8, but no
    odd ones" is 2, 4, 6, 8, not a clash (stop 32: a wrong set at 200)."""
    digits = next((ms for ms in groups.values() if all(m in _PARITY_COUNTS for m in ms)), [])
    dropped: list[str] = []

    def drop(m: re.Match) -> str:
        parity = m["parity"] or m["parity2"] or m["parity3"] or m["parity4"]
        only = m["only"] or m["only2"] or m["only3"] or m["only4"]
        odd = (parity.lower() == "odd") == (only is None)  # the parity taken away
        dropped.extend(str(_PARITY_COUNTS[d]) for d in digits  # "3": no filler
                       if _PARITY_COUNTS[d] % 2 == odd)
        return " "
    return (_PARITY_ONES.sub(drop, text) if digits else text), dropped
