"""Word tokens, plurals and numerals: the text primitives the request parser and the resolver
share (kept apart so that :mod:`service.kinds.ranges` can use them without importing the
parser)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

NUMERALS = dict(zip("0123456789", ("zero", "one", "two", "three", "four", "five", "six",
                                     "seven", "eight", "nine"), strict=True))  # fmt: skip


def words(text: str) -> list[str]:
    """Lower-case word tokens, accents folded (apostrophes dropped, hyphens split): "kid's
    T-shirts" → ``["kids", "t", "shirts"]``, "ÉLÉPHANTS" → ``["elephants"]``."""
    folded = unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9a-z]+", " ", folded.replace("'", "")).split()


def named_classes(text: str, class_of: Callable[[str], str | None]) -> set[str]:
    """The classes that a run of one to three of ``text``'s words names ("ankle boots")."""
    tokens = words(text)
    return {c for n in (1, 2, 3) for i in range(len(tokens) - n + 1)
            if (c := class_of(" ".join(tokens[i:i + n]))) is not None}  # fmt: skip


def numbers_only(phrase: str) -> bool:
    """Digits and nothing else ("11", "3s 7s"): no class by similarity."""
    tokens = words(phrase)
    return bool(tokens) and all(t.rstrip("s").isdigit() for t in tokens)


def is_number(token: str) -> bool:
    """A digit or number word, or the plural of one ("3s", "sevens")."""
    return any(f in NUMERALS or f in NUMERALS.values() for f in singular_forms(token))


# plurals the suffix rules of :func:`singular_forms` cannot undo ("calves" they can)
IRREGULAR_PLURALS = {"mice": "mouse", "geese": "goose", "oxen": "ox", "teeth": "tooth",
                     "feet": "foot", "people": "person", "children": "child"}


def singular_forms(word: str) -> list[str]:
    """``word`` and what it may be the plural of (cats, ponies, calves, boxes, 3s, zeroes)."""
    forms = [word]
    if word.endswith("ies") and len(word) > 4:
        forms.append(word[:-3] + "y")
    if word.endswith("ves"):
        forms += [word[:-3] + "f", word[:-3] + "fe"]
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s") and len(word) > 1:
        forms.append(word[:-1])
    return forms


def plural(token: str) -> bool:
    """A word that looks like a plural noun ("hamsters", "llamas"; not "glass", "bus", "this"):
    where context rules stop, since an unknown class asked for is usually a plural."""
    return len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is"))


def side_by_side(tokens: list[str], term: Callable[[list[str]], int | None]
                 ) -> list[list[str]] | None:
    """``tokens`` cut into class terms, longest first ("ankle boots sneakers" → ``[["ankle",
    "boots"], ["sneakers"]]``), or None when a token is in no term."""
    terms, i = [], 0
    while i < len(tokens):
        n = next((n for n in (3, 2, 1) if i + n <= len(tokens)
                  and term(tokens[i : i + n]) is not None), 0)  # fmt: skip
        if not n:
            return None
        terms.append(tokens[i : i + n])
        i += n
    return terms


def compound_tail(phrase: str, term: Callable[[list[str]], int | None]) -> int | None:
    """The class a one-word compound ends in ("sheepdog" → dog's index), if any."""
    tokens = words(phrase)
    if len(tokens) != 1:
        return None
    return next((term([tokens[0][k:]]) for k in range(2, len(tokens[0]) - 2)
                 if term([tokens[0][k:]]) is not None), None)  # fmt: skip
