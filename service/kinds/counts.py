"""Counts everyone knows, for digits described by them: "legs on a spider" is 8, "the number of
months in a year minus four" is 8, "how many fingers I have on both hands, take away a finger"
is 9.

A sentence encoder answers a count by association ("months in a year" sat 0.78 from four's
"seasons in a year"), and it cannot compute with one. So a short table of counts that people
use to describe digits (and as operands: twelve months, ten fingers) is read here, in the
shapes people write them: "the number of legs on a dog", "legs of a cow", "how many legs a
spider has", "how many fingers are on one hand", "the colours in a rainbow", "a square's
corners". :func:`rewrite`
puts each count's number in its place, and :mod:`service.kinds.numbers` does the arithmetic;
a count alone is the answer only when it is the whole phrase.
"""

from __future__ import annotations

import re

# (what is counted, of what, how many); "|" separates alternatives, each may be plural
FACTS = [
    ("month", "year", 12), ("day", "week", 7), ("day", "fortnight", 14), ("hour", "day", 24),
    ("season", "year", 4), ("colour|color", "rainbow", 7), ("planet", "solar system", 8),
    ("continent", "world|earth|planet", 7), ("dwarf|dwarve", "snow white", 7),
    ("point", "star", 5), ("arm|point|leg", "starfish", 5), ("leg", "spider", 8),
    ("leg", "insect|ant|beetle|bee", 6), ("leg", "tripod|stool", 3),
    ("leg", "dog|cat|cow|horse|sheep|zebra|giraffe|elephant|bear|table|chair", 4),
    ("leg", "bird|human|person|chicken|duck", 2), ("arm|tentacle|leg", "octopus", 8),
    ("finger", "both hands|two hands|both of your hands|both your hands", 10),
    ("finger", "hand", 5), ("toe", "both feet", 10),
    ("toe", "foot", 5), ("side|corner|angle", "triangle", 3), ("side|corner", "square", 4),
    ("side", "rectangle", 4), ("side", "pentagon", 5), ("side", "hexagon", 6),
    ("side", "heptagon", 7), ("side", "octagon", 8), ("wheel", "bicycle|bike", 2),
    ("wheel", "tricycle|trike", 3), ("wheel", "car", 4), ("wheel", "unicycle", 1),
    ("eye|ear", "face|person|human", 2), ("nose|mouth", "face", 1), ("string", "guitar", 6),
    ("string", "violin", 4), ("face|side", "die|dice|cube", 6), ("inning", "baseball game", 9),
    ("life|live", "cat", 9), ("wish", "genie", 3), ("side", "coin", 2),
    ("month", "quarter", 3), ("leg", "snake|fish|worm", 0), ("primary colour|primary color",
                                                             "painting|the world|art", 3),
    ("wonder", "world", 7), ("horn", "unicorn", 1),
]
_ASK = (r"(?:(?:how many|the number of|number of|the count of|count of|count|counting|"
        r"counting up)\s+)?(?:all\s+)?(?:the\s+)?")
_HAVE = r"(?:(?:are|is|there are|i have|you have|we have|we|you)\s+)?"
_OF = r"(?:(?:on|in|of|at|for)\s+)?"
_DET = (r"(?:(?:a|an|the|one|your|each|every|my|our|typical|normal|standard|regulation|single|"
        r"human|usual|classic|drawn|ordinary)\s+)*")
_OWNS = r"(?:\s+(?:has|have|has got|have got|does|do|stands on|stand on|walks on|walk on))?"


def _plural(alternatives: str) -> str:
    return "|".join(f"{w}(?:s|es)?" for w in alternatives.split("|"))


_COMPILED = [(re.compile(rf"\b{_ASK}(?:{_plural(counted)})\s+{_HAVE}{_OF}{_DET}"
                         rf"(?:{_plural(of)})\b{_OWNS}"), value)
             for counted, of, value in FACTS]  # fmt: skip
# "how many legs a spider has": the counted noun first, then the owner
_OWNER_FIRST = [(re.compile(rf"\bhow many\s+(?:{_plural(counted)})\s+{_DET}(?:{_plural(of)})"
                            rf"{_OWNS}\b"), value) for counted, of, value in FACTS]  # fmt: skip
# "a square's corners", "a spider's legs": the owner's, its apostrophe a space by now
_POSSESSIVE = [(re.compile(rf"\b{_ASK}{_DET}(?:{_plural(of)})\s+s\s+(?:{_plural(counted)})\b"),
                value) for counted, of, value in FACTS]  # fmt: skip
# any counted noun at all: most definitions have none, and skip the ~90 patterns (0.14 ms)
_ANY_COUNTED = re.compile(r"\b(?:" + "|".join(_plural(c) for c, _, _ in FACTS) + r")\b")
# "…, take away a single leg": one of the things counted
_ONE_MORE = re.compile(r"\b(take away|minus|less|plus|add|subtract)\s+(?:a single|a|an|one|"
                       r"just one)\s+(?!pair\b|couple\b|few\b|dozen\b|handful\b)[a-z]+$")
# "…, minus a pair": two of them (was read as "minus a" single one: nine at 200, set 46)
_TWO_MORE = re.compile(r"\b(take away|minus|less|plus|add|subtract)\s+a\s+(?:pair|couple)"
                       r"(?:\s+of\s+[a-z]+)?$")


def rewrite(text: str) -> tuple[str, int]:
    """``(text with each known count replaced by its number, how many were replaced)``;
    ``text`` is lower case, punctuation already spaces."""
    found = 0
    if not _ANY_COUNTED.search(text):
        return text, found
    for pattern, value in [*_OWNER_FIRST, *_POSSESSIVE, *_COMPILED]:
        text, n = pattern.subn(str(value), text)
        found += n
    if found:
        text = _TWO_MORE.sub(r"\1 2", _ONE_MORE.sub(r"\1 1", text))
    return text, found
