"""A whole group asked for at once: "all the digits", "every animal except cows", "the ten
digits", "the even digits".

People name a group of the catalogue rather than list its classes, often with exceptions. The
group phrase is spelt out as the group's classes, less those named after an excluding word, so
that the rest of the parser reads a plain list ("every animal except cows and sheep" → "bear,
bird, cat, …, zebra"). Only a group word of the catalogue (its ``group`` names, with a few
English synonyms) after a word of totality counts; a part of a group ("all footwear") is not a
group and is left to the resolver.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from service.kinds.tokens import NUMERALS, singular_forms, words

# English synonyms of common group names; a catalogue's own group names always count
SYNONYMS = {"digit": {"number", "numeral"}, "number": {"digit", "numeral"},
            "clothing": {"clothes", "garment", "apparel"}, "animal": {"creature", "critter"}}
_TOTAL = r"all|every|whole|entire|complete|full"  # not "each": "pairs each animal with its word"
_FILL = (r"the|of|your|our|a|single|possible|handwritten|written|printed|available|supported|"
         r"other|remaining|rest|"
         r"different|distinct|basic|kinds?\s+of|types?\s+of|\d+|ten|nine|eight|seven|six|five")
_PHRASE = re.compile(
    rf"\b(?:(?P<total>{_TOTAL})|(?P<parity>even|odd)|(?:the\s+)?(?P<count>\d+|ten|nine|eight|"
    rf"seven|six|five|four|three))(?P<fill>(?:\s+(?:{_FILL}|even|odd))*)\s+(?P<group>[a-z]+)\b"
    r"(?:\s+(?:items?|categor(?:y|ies)|class(?:es)?|things?|pieces?|articles?|kinds?|types?|"
    r"in\s+(?:your|the)\s+(?:list|catalogue|catalog|set)))*", re.I)  # fmt: skip
# the group phrase is about the images, not the task: "all animals in the photos are cats"
_ABOUT = re.compile(r"^\s*(?:with|that|which|who|is|are|was|were|has|have|in\s+(?:the|a|an|"
                    r"each|every|our|my)\s+\w+)\b", re.I)  # fmt: skip
# a negation before it: "Out of scope: all other digits", "not all animals"
_NEGATED = re.compile(r"\b(?:not|no|never|without|except|excluding|nor|out\s+of\s+scope|wont|"
                      r"won'?t|dont|don'?t|skip|drop|remove)\b[^.!?\n]*$", re.I)  # fmt: skip
_EXCLUDING = re.compile(r"^\s*,?\s*(?:(?:except(?:\s+for)?|excluding|but(?:\s+not)?|other\s+than|"
                        r"apart\s+from|minus|without|save\s+for)\b(?:\s+(?:please\s+)?(?:skip|"
                        r"drop|remove|scrap|forget|leave\s+out)\b)?|(?:skip|drop|remove|scrap|"
                        r"forget|leave\s+out)\b)", re.I)  # "all animals, but skip the cows"
_BOUNDED = re.compile(r"^\s*(?:from|between|below|above|under|over|less|greater|up\s+to|"
                      r"through|to|till|until|lower|higher|smaller|bigger|larger|\d)\b", re.I)
_LIST_WORDS = {"and", "or", "nor", "the", "for", "s", "plus"}
_COUNTS = {w: int(d) for d, w in NUMERALS.items()} | {"ten": 10}


def spell_out(text: str, groups: Mapping[str, list[str]],
              class_of: Callable[[str], str | None]) -> str:
    """``text`` with each whole-group phrase replaced by its classes, less the exceptions that
    follow it ("all ten digits except zero and one" → "two, three, …, nine")."""
    out, last = [], 0
    for match in _PHRASE.finditer(text):
        members = _members(match, groups)
        after, before = text[match.end():], text[last:match.start()]
        if members is None or match.start() < last or _BOUNDED.match(after) \
                or _ABOUT.match(after) or _NEGATED.search(before):  # fmt: skip
            continue  # "all digits from 1 to 5" is a range
        end, excluded = _exceptions(text, match.end(), class_of)
        if excluded is None:
            continue  # "all digits except those that look alike": which ones is unclear
        kept = [m for m in members if m not in excluded]
        out += [text[last:match.start()], ", ".join(kept) + (", " if text[end:].strip() else "")]
        last = end
    return "".join(out) + text[last:]


def _members(match: re.Match, groups: Mapping[str, list[str]]) -> list[str] | None:
    """The classes a matched phrase asks for, or None when it is no whole group."""
    group = group_of(match["group"].lower(), groups)
    if group is None:
        return None
    members = list(groups[group])
    parity = match["parity"] or next((w for w in words(match["fill"] or "")
                                      if w in ("even", "odd")), None)  # fmt: skip
    if parity:
        values = {m: _COUNTS.get(m) for m in members}
        if any(v is None for v in values.values()):
            return None  # "odd animals" is no parity
        return [m for m in members if values[m] % 2 == (parity == "odd")]
    count = match["count"] or next((w for w in words(match["fill"] or "") if w in _COUNTS
                                    or w.isdigit()), None)  # fmt: skip
    if match["total"] is None and count is None:
        return None
    if count is not None and _COUNTS.get(count, int(count) if count.isdigit() else -1) \
            != len(members):  # fmt: skip
        return None  # "3 digits" counts, it names no group
    return members


def group_of(word: str, groups: Mapping[str, list[str]]) -> str | None:
    """The catalogue group a word names ("animals", "garments"), if any."""
    for form in singular_forms(word):
        for group in groups:
            if form == group or form in SYNONYMS.get(group, ()):
                return group
    return None


def _exceptions(text: str, start: int, class_of: Callable[[str], str | None]
                ) -> tuple[int, set[str] | None]:
    """``(end, classes)``: the excluding clause right after a group phrase ("except zero and
    one", "but not cows or ankle boots") and the classes it names; ``(start, ∅)`` when there is
    none, ``(start, None)`` when it names no class ("except the big ones"). The clause ends at
    the first word that is neither a class nor a list word."""
    lead = _EXCLUDING.match(text[start:])
    if not lead:
        return start, set()  # no exceptions
    base = start + lead.end()
    tokens = list(re.finditer(r"[a-z0-9]+|[,&]", text[base:].lower()))
    end, excluded, i = start, set(), 0
    while i < len(tokens):
        n, name = next(((n, class_of(" ".join(t[0] for t in tokens[i:i + n])))
                        for n in (3, 2, 1) if i + n <= len(tokens)
                        and class_of(" ".join(t[0] for t in tokens[i:i + n]))),
                       (1, None))  # fmt: skip
        if name is not None:
            excluded.add(name)
            end = base + tokens[i + n - 1].end()
        elif tokens[i][0] not in _LIST_WORDS and tokens[i][0] not in ",&":
            break
        i += n
    return (end, excluded) if excluded else (start, None)
