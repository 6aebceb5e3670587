"""A "wait, no X" aside in a list: "bear, bird, and— wait, no bird — horse", "cats and dogs,
wait no dogs are fine, add horses too". It takes back X, or keeps it when what follows
approves of it, and the list goes on; moved out of :mod:`service.kinds.corrections` (past 300
lines), which reads the other correction markers.
"""

from __future__ import annotations

import itertools
import re

from service.kinds.tokens import singular_forms, words

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
