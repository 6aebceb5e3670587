"""The whole catalogue asked for at once: "every class you have", "the full catalogue".

A developer testing the service, or one whose app covers everything, asks for all of it
rather than list 30 classes (read outside sets 36 and 38: "Give me the whole catalogue, every
class across digits, clothes and animals"). The phrase is rewritten as one "all <group>" per
catalogue group, which :mod:`service.kinds.wholes` spells out. Only where the request names
no class itself: "cats and dogs from our whole catalogue of product photos" is about the
user's catalogue, and "every class you have except cats" is left to a 422.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from service.kinds.arithmetic import NUMBERS
from service.kinds.tokens import named_classes

_WHOLE = re.compile(
    r"\b(?:(?:every|all)\s+(?:the\s+)?(?:single\s+)?(?:class(?:es)?|categor(?:y|ies)|labels?)\s+"
    r"(?:you\s+(?:have|support|offer)|you'?ve\s+got|available|in\s+(?:the\s+|your\s+)?"
    r"catalog(?:ue)?|across\s+[a-z, ]+?(?=[.;!?]|$|\s+but\b))"
    r"|(?:the|your)\s+(?:whole|full|entire|complete)\s+catalog(?:ue)?"
    r"(?!\s+of\b))", re.I)  # fmt: skip


# "all 30 classes", "all thirty of them", "All 30." where the catalogue holds that many classes
# (24 requests of the outside sets 1-109; "all 30 classes pls" was a 422)
_ALL_N = re.compile(r"\b(?:all|every)\s+(?:the\s+)?(?P<n>\d+|[a-z]+)(?:[\s-]+(?:class(?:es)?|"
                    r"categor(?:y|ies)|labels?|things?|items?|of\s+them)\b|(?=\s*(?:[.!?,;:)]|"
                    r"$|please\b|pls\b)))", re.I)


def counted_whole(text: str, groups: Mapping[str, list[str]]) -> str:
    """``text`` with "all 30 classes" as "every class you have", when the catalogue holds
    exactly that many classes (a count of another size is left to the other rules)."""
    total = sum(len(members) for members in groups.values())

    def whole(m: re.Match) -> str:
        n = m["n"].lower()
        return "every class you have" if (int(n) if n.isdigit() else NUMBERS.get(n)) == total \
            else m[0]
    return _ALL_N.sub(whole, text) if total > 10 else text


def whole_at(text: str) -> int:
    """Where the first phrase asking for every class starts (the text's length if none)."""
    found = _WHOLE.search(text)
    return found.start() if found else len(text)


def whole_catalogue(text: str, groups: Mapping[str, list[str]],
                    class_of: Callable[[str], str | None]) -> str:
    """``text`` with a phrase asking for every class as "all <group>, all <group> and …",
    when the text names no class itself."""
    if not groups or not _WHOLE.search(text):
        return text
    if named_classes(text, class_of):
        return text
    spelt = [f"all {g}" for g in groups]
    return _WHOLE.sub(", ".join(spelt[:-1]) + f" and {spelt[-1]}" if len(spelt) > 1
                      else spelt[0], text, count=1)
