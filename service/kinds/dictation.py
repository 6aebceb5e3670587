"""A dictated request, as speech-to-text writes it, with its spoken punctuation as marks.

Voice notes arrive as "we need the scanner to sort the returns into sneakers comma sandals and
ankle boots period camera photos off the dock period" (held-out set 61: its voice-note rows
were asked back or answered wrong). Read as prose, "comma" and "period" are words of the class
phrases, so "sneakers comma sandals" names no class. Spoken marks are only read as marks in a
text that dictates: two or more of them, or a "period" closing it or a clause ("crate labels
period photographed with the scanner"; not "the period of the photos", "a trial period in
May", "in the third period"). In such a text a digit's homophone inside a run of digits is
that digit ("six seven ate and nine", "three comma for and five"): speech-to-text writes the
commoner word; an outside review found "one for seven", "seven ate nine" and "team 4 won in"
turned into digits by the first version, hence the guards below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from service.kinds.tokens import is_number, plural

_SPOKEN = {
    "comma": ",", "period": ".", "full stop": ".", "question mark": "?",
    "exclamation mark": "!", "exclamation point": "!", "colon": ":", "semicolon": ";",
    "new line": "\n", "newline": "\n", "new paragraph": "\n", "next line": "\n",
}
_WORDS = "|".join(sorted(_SPOKEN, key=len, reverse=True)).replace(" ", r"\s+")
_MARK = re.compile(rf"\s*\b({_WORDS})\b", re.I)
# a "period" that is a span of time, not a full stop: "the trial period", "last period"
_SPAN = (r"(?<!\bthe)(?<!\ba)(?<!\bthis)(?<!\bthat)(?<!\btrial)(?<!\bgrace)(?<!\btime)"
         r"(?<!\bpilot)(?<!\blast)(?<!\bnext)(?<!\bfirst)(?<!\bsecond)(?<!\bthird)(?<!\bfourth)"
         r"(?<!\breview)(?<!\btest)(?<!\bsame)(?<!\bsprint)(?<!\bholiday)(?<!\bwaiting)")
_CLOSING = re.compile(rf"{_SPAN}\s+(?:period|full\s+stop)\s*$|{_SPAN}\s+period\s+"
                      r"(?!of\b|when\b|in\b|for\b|ends?\b|starts?\b)[a-z]", re.I)
_DIGITS = r"(?:zero|one|two|three|four|five|six|seven|eight|nine|\d)"
# "ate" and "won" right after a digit word and before "and", a mark or the end ("six seven ate
# and nine"; not "seven ate nine", "team 4 won in"); "for"/"fore" between two digit words
# with a comma or "and" beside it ("three, for and five"; not "one for seven", "2 for 8")
_AFTER = re.compile(rf"(\b{_DIGITS}\s*,?\s*(?:and\s+)?)(ate|won)\b(?=\s*(?:[,.;!?]|and\b|$))",
                    re.I)
_BETWEEN = re.compile(rf"(\b{_DIGITS}\s*,\s*)(?:for|fore)\b(?=\s*,?\s*(?:and\s+)?{_DIGITS}\b)|"
                      rf"(\b{_DIGITS}\s+)(?:for|fore)\b(?=\s*(?:,|and\b)\s*(?:and\s+)?{_DIGITS}\b)",
                      re.I)
_SAID = {"ate": "eight", "won": "one"}


def dictated(text: str) -> str:
    """``text`` with spoken punctuation as marks and digit homophones as digits, when it is
    dictated (module docstring); any other text as it is."""
    if len(_MARK.findall(text)) < 2 and not _CLOSING.search(text):
        return text
    text = _MARK.sub(lambda m: _SPOKEN[" ".join(m[1].lower().split())], text)
    text = _AFTER.sub(lambda m: m[1] + _SAID[m[2].lower()], text)
    return _BETWEEN.sub(lambda m: (m[1] or m[2]) + "four", text)


_PAIR = re.compile(r"\b([a-z]{3,})\s+(?=([a-z]{3,})\b(?!\s+(?:the|a|an|it|them|those|these|"
                   r"that|this|up|over|out|into|onto)\b))", re.I)  # overlapping: "and pull overs"


def rejoined(text: str, class_word: Callable[[str], bool], groups: Collection[str] = ()) -> str:
    """Two words written apart that are one class or group word together, the second plural
    or the whole a group word: "pull overs", "hand bags", "foot wear" (speech-to-text and
    typing split compounds: set 61). Not a verb and its particle ("pull over the van", "back
    pack the results": an outside review), and not when both are class words on their own
    ("sheep dogs" in "cows horses sheep dogs" may be a list)."""
    def join(m: re.Match) -> str:
        a, b = m[1].lower(), m[2].lower()
        whole = a + b
        if (class_word(whole) and b.endswith("s") or whole in groups) \
                and not (class_word(a) and class_word(b)):  # fmt: skip
            return m[1]
        return m[0]
    return _PAIR.sub(join, text)


_WORD_RUN = re.compile(r"\b[A-Za-z][\w'-]*(?:[ \t]+[A-Za-z][\w'-]*)+")


def listed_runs(text: str, class_word: Callable[[str], bool]) -> str:
    """Three or more plural class words side by side with no mark between, as a list:
    "DRESSES COATS PULLOVERS SHIRTS TROUSERS" (set 66: a retiree typing in capitals without
    punctuation, read as one unknown phrase). Plurals only, digits not: "zebra finch giraffe",
    "bull dog cat", "cows horses sheep dogs" and "zero one two three comma for …" stay as they
    were (an unknown, a compound, an ambiguity, a dictation); two are left alone."""
    def split(m: re.Match) -> str:
        tokens = m[0].split()
        out, run = [], []
        for token in [*tokens, ""]:
            if token and plural(token.lower()) and class_word(token.lower()) \
                    and not is_number(token.lower()):
                run.append(token)
                continue
            out.append(f", {', '.join(run)}," if len(run) >= 3 else " ".join(run))
            out.append(token)
            run = []
        return re.sub(r"^,\s*|\s*,$|\s+(?=,)", "", " ".join(t for t in out if t))
    return _WORD_RUN.sub(split, text)
