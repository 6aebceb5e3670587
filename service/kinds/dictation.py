"""A dictated request, as speech-to-text writes it, with its spoken punctuation as marks.

Voice notes arrive as "we need the scanner to sort the returns into sneakers comma sandals and
ankle boots period camera photos off the dock period" (held-out set 61: its voice-note rows
were asked back or answered wrong). Read as prose, "comma" and "period" are words of the class phrases, so
"sneakers comma sandals" names no class. Spoken marks are only read as marks in a text that
dictates: two or more of them, or a "period" closing it or a clause ("crate labels period
photographed with the scanner"; not "the period of the photos", "a trial period in May").
In such a text a digit's homophone inside a run of digits is that digit ("six seven ate and
nine", "three comma for and five"): speech-to-text writes the commoner word.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SPOKEN = {
    "comma": ",", "period": ".", "full stop": ".", "question mark": "?",
    "exclamation mark": "!", "exclamation point": "!", "colon": ":", "semicolon": ";",
    "new line": "\n", "newline": "\n", "new paragraph": "\n", "next line": "\n",
}
_WORDS = "|".join(sorted(_SPOKEN, key=len, reverse=True)).replace(" ", r"\s+")
_MARK = re.compile(rf"\s*\b({_WORDS})\b", re.I)
_CLOSING = re.compile(r"\b(?:period|full\s+stop)\s*$|(?<!\bthe)(?<!\ba)(?<!\bthis)(?<!\bthat)"
                      r"(?<!\btrial)(?<!\bgrace)(?<!\btime)\s+period\s+(?!of\b|when\b|in\b|for\b)"
                      r"[a-z]", re.I)
_DIGITS = r"(?:zero|one|two|three|four|five|six|seven|eight|nine|\d)"
# "ate" and "won" after a digit word; "for"/"fore" only between two ("one for the team" stays)
_AFTER = re.compile(rf"(\b{_DIGITS}\s*,?\s*(?:and\s+)?)(ate|won)\b", re.I)
_BETWEEN = re.compile(rf"(\b{_DIGITS}\s*,?\s*)(?:for|fore)\b(?=\s*,?\s*(?:and\s+)?{_DIGITS}\b)",
                      re.I)
_SAID = {"ate": "eight", "won": "one"}


def dictated(text: str) -> str:
    """``text`` with spoken punctuation as marks and digit homophones as digits, when it is
    dictated (module docstring); any other text as it is."""
    if len(_MARK.findall(text)) < 2 and not _CLOSING.search(text):
        return text
    text = _MARK.sub(lambda m: _SPOKEN[" ".join(m[1].lower().split())], text)
    text = _AFTER.sub(lambda m: m[1] + _SAID[m[2].lower()], text)
    return _BETWEEN.sub(r"\1four", text)


_PAIR = re.compile(r"\b([a-z]{3,})\s+(?=([a-z]{3,})\b)", re.I)  # overlapping: "and pull overs"


def rejoined(text: str, class_word: Callable[[str], bool]) -> str:
    """Two words written apart that are one class or group word together: "pull overs", "foot
    wear", "hand bags" (speech-to-text and typing split compounds: set 61). Not when both are
    class words on their own ("sheep dogs" in "cows horses sheep dogs" may be a list)."""
    def join(m: re.Match) -> str:
        a, b = m[1].lower(), m[2].lower()
        if class_word(a + b) and not (class_word(a) and class_word(b)):
            return m[1]
        return m[0]
    return _PAIR.sub(join, text)
