"""Lists that say what a phrase means: "the even digits, namely 2 and 4", "photos of wardrobe
contents, i.e. coats, dresses and shirts".

After a group phrase, such a list is the request (a class of it outside the group is a clash,
see :mod:`service.kinds.wholes`); after a phrase that names nothing, the phrase is a header and
the list its classes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.tokens import words

_NAMELY = re.compile(r"^\s*(?:only\b)?\s*[,:(]?\s*(?:(?:specifically|namely|that\s+is|in\s+"
                     r"particular|(?P<so>so|meaning))\b|i\.?\s?e\b\.?)[,:]?",
                     re.I)  # "so" only before a class; "i.e." whole (its dot ended the list)


def narrowed(text: str, at: int, class_of: Callable[[str], str | None], kept: list[str]
             ) -> tuple[list[str], int] | None:  # fmt: skip
    """``(classes, where the list starts)`` of a "specifically"/"namely"/"i.e." list right
    after a group phrase, up to the end of its sentence (stop 34, set 36); None when no such
    list follows."""
    lead = _NAMELY.match(text[at:])
    if not lead or lead["so"] and not names_next(text, at + lead.end(), class_of):
        return None  # "the even digits, so 1, 3 and 5" (set 38) clashes; "…, so we can" reads on
    found = named_in(re.split(r"[.!?;\n]", text[at + lead.end():])[0], class_of)
    if lead["so"] and set(found) <= set(kept):  # "odd digits, so 7 and 9 included": the
        return None  # group restated; only a listed class outside it clashes
    return (found, at + lead.end()) if found else None


def named_in(text: str, class_of: Callable[[str], str | None]) -> list[str]:
    """The classes ``text``'s words name in order, longest names first ("ankle boots")."""
    tokens, found, i = words(text), [], 0
    while i < len(tokens):
        n, name = next(((n, class_of(" ".join(tokens[i:i + n]))) for n in (3, 2, 1)
                        if class_of(" ".join(tokens[i:i + n]))), (1, None))
        found += [name] if name else []
        i += n
    return found


def names_next(text: str, at: int, class_of: Callable[[str], str | None]) -> bool:
    """Whether the words right after ``at`` (after "the") name a class."""
    tokens = [t for t in words(text[at:])[:4] if t != "the"]
    return any(class_of(" ".join(tokens[:n])) for n in (1, 2, 3))


# "photos of wardrobe contents, i.e. coats, dresses and shirts": the list says what the words
# before it mean (held-out set 42: "wardrobe contents" was an unknown class)
_AFTER_PHRASE = re.compile(r"(?P<head>[^.,;:!?()\n]+?)\s*,?\s*\(?\b(?:i\.\s?e\.?|ie|namely|"
                           r"that\s+is)\s*[,:]?\s+", re.I)  # fmt: skip


def namely(text: str, names: Callable[[str], bool]) -> str:
    """"X, i.e. A, B and C" as "X: A, B and C", so that X reads as a header (its style words
    count, its other words are no class), when X names nothing itself (``names``: a class,
    group, number or parity word; "the even digits, i.e. 2 and 4" is left to the group
    reader, which refuses a clash)."""
    return _AFTER_PHRASE.sub(lambda m: m[0] if any(map(names, words(m["head"])))
                       else f"{m['head']}: ", text)  # fmt: skip
