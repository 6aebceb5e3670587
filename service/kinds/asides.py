"""A "wait, no X" aside in a list: "bear, bird, and— wait, no bird — horse", "cats and dogs,
wait no dogs are fine, add horses too". It takes back X, or keeps it when what follows
approves of it, and the list goes on; moved out of :mod:`service.kinds.corrections` (past 300
lines), which reads the other correction markers. And classes put off after "for now": "cats
and dogs for now, horses later" asks for two (:func:`later_items`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from service.kinds.chunks import is_style
from service.kinds.tokens import singular_forms, words
from service.kinds.vocabulary import STYLE_HINTS

# "wait, no" straight before a word takes back that word, not the sentence before it
_WAIT_NO = re.compile(r"[\s,—–-]*\bwait,?\s+no\s+(?=[a-z0-9])(?!(?:just|only|actually|instead|"
                      r"i|we|make|sorry)\b)", re.I)
# "…, wait, no birds, horses" / "and— wait, no bird — horse": one item taken back, the list
# goes on after the dash or comma (an outside review: "…, drop birds, horses" lost horses)
_WAIT_NO_ITEM = re.compile(_WAIT_NO.pattern + r"([^—–.,;!?()]+?)\s*(?=\s-\s|[—–,.!]|$)", re.I)

# "wait no dogs are fine", "wait no cats should stay": the second thought keeps what it names
# (an outside review of stop 50: dogs dropped at 200); "wait no dogs needed after all" drops
_APPROVED = re.compile(r"(?:are|is|r)\s+(?:fine|ok|okay|good|needed|staying|in)$|(?:should|can|"
                       r"will|must)\s+stay$|stays?$|(?:are|is)\s+(?:still\s+)?(?:ok|okay|fine)"
                       r"\s+(?:actually|after\s+all)$")
_NEEDED = re.compile(r"(?:needed|required|wanted)(?:\s+after\s+all)?$")


def _taken_back_item(m: re.Match) -> str:
    """"wait, no X" as an aside that drops X when X came before ("wait, no birds, horses" keeps
    horses) or keeps it when what follows X approves of it ("wait no dogs are fine"); when X
    did not come before, the marker corrects what came before ("sneakers, wait, no sandals"
    asks for sandals) and is left to
    :func:`service.kinds.corrections.retract_before_markers`."""
    item, raw = words(m[1]), m[1].split()
    before = {f for w in words(m.string[: m.start()]) for f in (w, *singular_forms(w))}
    named = len(list(itertools.takewhile(lambda w: before & {w, *singular_forms(w)}, item)))
    if named and _APPROVED.match(" ".join(item[named:])):  # "wait no dogs are fine": kept
        return ", "
    if named and _NEEDED.match(" ".join(item[named:])):  # "wait no dogs needed after all"
        return f" (drop {' '.join(item[:named])}) "
    if item and len(item) <= 3 and all(before & {w, *singular_forms(w)} for w in item):
        return f" (drop {m[1].strip()}) "
    if len(raw) > 3 and words(raw[0]) and before & {(w := words(raw[0])[0]), *singular_forms(w)}:
        return f" (drop {raw[0]}) {' '.join(raw[1:])} "  # "wait no bears in Kenya lol" (set 64)
    return m[0]


def wait_no_items(text: str) -> str:
    """``text`` with each "wait, no X" aside read (:func:`_taken_back_item`)."""
    return _WAIT_NO_ITEM.sub(_taken_back_item, text)


# "cats and dogs for now, (maybe) horses later", "…for now; later horses", "…for now, horses in
# phase 2": what comes after "for now" and is put off is not asked for (set 67's leftover:
# horses at 200). Only after "for now" / "to start" / "initially" earlier in the text.
_FOR_NOW = re.compile(r"\b(?:for\s+now|to\s+start(?:\s+with)?|initially|at\s+first|for\s+v1)\b",
                      re.I)
_ITEMS = r"[a-z][\w'-]*(?:(?:\s*,\s*|\s+(?:and|&|or)\s+|\s+)[a-z][\w'-]*){0,4}?"
_WHEN = (r"(?:later(?:\s+on)?|eventually|down\s+the\s+(?:road|line)|in\s+(?:a\s+)?(?:phase|"
         r"v|version|release|sprint)\s*(?:2|3|two|three|later)|next\s+(?:year|month|quarter|"
         r"version|release|sprint|phase))")
_LATER = re.compile(rf"(?P<sep>[,;—–]|\s-)\s*(?:and\s+|but\s+|then\s+)?(?:maybe\s+|"
                    rf"perhaps\s+|possibly\s+)?(?:{_WHEN}\s+(?:maybe\s+|also\s+)?(?P<after>"
                    rf"{_ITEMS})|(?P<before>{_ITEMS})\s+(?:maybe\s+)?{_WHEN})"
                    r"(?:\s+(?:too|as\s+well|also))?(?=\s*(?:[.;!?]|$))", re.I)


def later_items(text: str) -> str:
    """``text`` with the classes put off after "for now" taken back ("(drop horses)")."""
    first = _FOR_NOW.search(text)
    if first is None:
        return text
    return text[: first.end()] + _LATER.sub(
        lambda m: f"{m['sep']} (drop {m['after'] or m['before']}) ", text[first.end():])


# ", all rescued from bad situations" after a list: what the items have been through, not an
# item (set 66: "rescued" asked back); a past participle only, not "…, all ten", "…, all birds"
_ALL_DONE = re.compile(r",\s+(?:all|each|both)\s+(?:of\s+them\s+)?(?:[a-z]+ed|drawn|taken|"
                       r"shot|born|bred|found|kept|seen|grown|worn|made)\b[^,.;!?\n]*", re.I)


def participle_asides(text: str, class_word: Callable[[str], bool]) -> str:
    """``text`` without a list's closing ", all rescued from …" when it names no class, style
    or camera ("…, all shot on my DSLR" says photo)."""
    return _ALL_DONE.sub(lambda m: m[0] if any(class_word(w) or is_style(w) or w in STYLE_HINTS
                                               for w in words(m[0])) else "", text)
