"""Mentions that name a class already named: repeats, kinds of one class, and context.

People name a class more than once: "cat, cat, dog"; "stallions, foals & zebras" (two kinds of
horse); "need 3s and 8s -- oh and 5s, those get mixed up with 3s" (the second "3s" sits in a
sentence about the forms, not a new request). Each is one class asked for once. Two
*different* short mentions naming one class exactly ("kittens and cats", "shirts and polo
shirts") may distinguish two things the catalogue has as one: left to clash (422,
:func:`exact_clashes`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from service.kinds.heads import MAKES_ANOTHER
from service.kinds.leftovers import within
from service.kinds.parsed import Marks
from service.kinds.resolution import ClassResolver
from service.kinds.tokens import NUMERALS, singular_forms, words
from service.kinds.vocabulary import ADJECTIVAL, FILLER

# a sentence that says two words are one thing: "(parrots and budgies count as birds)",
# "(recorded as 'jumpers' in our older records)", "also jumpers (same thing I guess)",
# "pullovers sweaters whatever you call them" (held-out sets 27, 36, 52: 422s)
GLOSS = re.compile(r"\b(?:same\s+(?:thing|class|label|category)|counts?\s+as|recorded\s+as|"
                   r"(?:also\s+)?(?:known|referred\s+to|filed|listed)\s+as|a\.?k\.?a\b|"
                   r"whatever\s+you\s+call\s+(?:them|it))", re.I)
# a sentence that keeps a kind of the class apart: "Wild cats should be their own class", "Guide
# dogs need a separate label", "puppies should be split out" (an outside review of stop 45)
APART = re.compile(r"\b(?:separat\w*|own|apart|distinct\w*|different|individual\w*|split|"
                   r"(?:new|extra|another|a|its|their)\s+(?:label|class|category|tag))\b", re.I)
# a sentence asking for a class of its own: "Dress shirts are a separate category", "Birds of
# prey are a distinct class", "dogs in costumes as a separate class" (an outside review)
OWN_CLASS = re.compile(r"\b(?:(?:separate|distinct|different|new|extra|another)\s+(?:class|"
                       r"category|label|tag)|own\s+(?:class|category))(?:es|ies|s)?\b|"
                       r"\bsplit\s+out\b", re.I)  # not "its own label": an image's
# words before an example of a class named beside it ("birds, mostly budgies")
EXAMPLE = {"especially", "mostly", "mainly", "eg", "lots", "lot", "including", "particularly",
           "typically", "usually", "example", "instance", "such"}
HEDGES = {"maybe", "perhaps", "possibly", "probably", "yeah", "um", "uh", "hmm", "erm"}


def distinct(phrases: list[str]) -> list[str]:
    """Drop repeated mentions ("cat, cat, dog"; "cats … cats again"; "maybe bears too? yeah,
    bears": filler aside), first occurrence kept. "shirts and polo shirts"
    and "kittens and cats" are two mentions (a clash, 422), not one."""
    seen, out = set(), []
    for p in phrases:
        tokens = [w for w in words(p) if w not in FILLER | HEDGES] or words(p)  # "maybe bears"
        key = tuple(NUMERALS.get(s, s) for w in tokens  # "0" is "zero", "7s" is "7"
                    for s in singular_forms(w)[-1:])
        if key and key not in seen:
            seen.add(key)
            out.append(p)
    return out


def kinds_of_one(resolver: ClassResolver, phrases: list[str], notes: list[str]) -> list[str]:
    """The mentions, each class named by several of its kinds kept once: "stallions, foals &
    zebras" asks for horses and zebras (no read outside row expected a 422 for that; merging
    every repeated class lost none of the tuning pool's rows). A class named outright beside
    a kind of it ("kittens and cats", "shirts and polo shirts") distinguishes the two: left
    to clash (422)."""
    kinds: dict[int, list[str]] = {}
    for p in phrases:  # a bare term: "lion cubs" is no kind of bear (exact allows a word)
        idx = resolver.term(" ".join(w for w in words(p) if w not in FILLER | HEDGES))
        if idx is not None:
            kinds.setdefault(idx, []).append(p)
    dropped = set()
    for idx, group in kinds.items():
        name = set(words(resolver.names[idx]))
        if len(group) > 1 and not any(name & {f for w in words(p) for f in singular_forms(w)}
                                      for p in group):  # fmt: skip
            dropped |= set(group[1:])
            notes.append(f"{', '.join(map(repr, group))} are kinds of one class: "
                         f"{resolver.names[idx]}")  # fmt: skip
    return [p for p in phrases if p not in dropped]


def exact_clashes(resolver: ClassResolver, phrases: list[str]) -> dict[str, list[str]]:
    """Class name → the different mentions that all name it exactly (two or more)."""
    by_class: dict[str, list[str]] = {}
    for p in phrases:
        idx = resolver.exact(p)
        if idx is not None:
            by_class.setdefault(resolver.names[idx], []).append(p)
    return {name: ps for name, ps in by_class.items() if len(ps) > 1}


def in_context(resolver: ClassResolver, phrases: list[str], runs: set[str]) -> list[str]:
    """The mentions that only repeat a class another mention asks for, in a sentence about
    something else (dropped as context by the caller): words that stood apart in the text
    (not in ``runs``: "those get mixed up with 3s" → "mixed 3s") naming one class by the same
    word as a mention that is that word and nothing else ("3s"). Words side by side qualify
    their class word ("shirts and polo shirts", "a horse or a unicorn horse": an outside
    review's wrong 200): they still clash. A mention naming several classes stays ambiguous
    even when each is asked for elsewhere ("cats, dogs and cat-dog hybrids", "outfits of
    t-shirts with trousers": an outside review of stop 33, wrong 200s when dropped)."""
    named = {p: resolver.exact(p) for p in phrases}
    by_word: dict[tuple[int, str], list[str]] = {}
    for p in phrases:
        if named[p] is not None:
            for key in _class_words(resolver, p, named[p]):
                by_word.setdefault((named[p], key), []).append(p)
    dropped: list[str] = []
    for group in by_word.values():
        bare = [p for p in group if p in runs and resolver.term(p) is not None]
        if len(group) > 1 and bare and all(p == bare[0] or p not in runs for p in group):
            dropped += [p for p in group if p != bare[0] and p not in dropped]
    return dropped


def repeated_apart(resolver: ClassResolver, phrases: list[str], marks: Marks,
                   notes: list[str]) -> list[str]:
    """The mentions, a class named again by its own word kept once when the repeat stands
    in another sentence or outside the request's lists: "the usual birds and the neighbour's
    sheep … a classifier for bear, bird and sheep", "Tom: add dogs … cows horses dogs then",
    "cats, dogs and the occasional horse from our equine side" (held-out sets 52/53: 422s).
    Only the class's own word, plural or adjective, with nothing before it that makes it
    another thing: a different word may name a class of its own that the catalogue merges
    ("I need cats and dogs. Kittens are a separate class", "Polo shirts get their own
    label": each a wrong 200 when every such repeat was merged), and stays a clash (422)."""
    dropped: list[str] = []
    for name, group in exact_clashes(resolver, phrases).items():
        idx = resolver.names.index(name)
        places = [_sentence(p, marks.sentence_of) for p in group]
        apart = None not in places and len(set(places)) == len(places)
        outside = not all(within(p, marks.listed) for p in group)
        glossed = [p for p, at in zip(group, places, strict=True) if at is not None
                   and GLOSS.search(marks.sentences[at]) and not _own_word(resolver, p, idx)]
        kept_apart = any(at is not None and APART.search(marks.sentences[at]) for at in places)
        exampled = [p for p in group if _example(p, marks)]
        said_so = [p for p in group if p in glossed or p in exampled]  # a gloss or an example
        one = _kind_and_others(resolver, group, idx, marks) or (
            (apart or outside or exampled) and all(_own_word(resolver, p, idx) or p in said_so
                                                   for p in group))  # fmt: skip
        if one and not kept_apart:
            dropped += group[1:]
            notes.append(f"{', '.join(map(repr, group))} name one class: {name}")
    return [p for p in phrases if p not in dropped]


def kind_apart(resolver: ClassResolver, marks: Marks) -> tuple[str, str] | None:
    """``(mention, class)`` when a sentence asks for a kind of a class the request names
    elsewhere as a class of its own ("Sort shirts and trousers. Dress shirts are a separate
    category", "Cats and dogs, treating long-haired cats as a separate class", "Dogs and cats.
    Also dogs in costumes as a separate class"): the catalogue has one class for both, so the
    caller asks back. Not a sentence that separates two classes ("Cats should be a separate
    class from dogs") nor classes named only there ("cats and dogs as separate classes"). An
    outside review of stop 45 found eight such requests answered at 200."""
    def named_apart(idx: int, mention: str, at: int) -> bool:
        return any(other != mention and i != at and idx in {
            resolver.exact(other), *resolver.classes_in(other)}
            for other, i in marks.sentence_of.items())  # fmt: skip

    for at, sentence in enumerate(marks.sentences):
        if not OWN_CLASS.search(sentence):
            continue
        named = resolver.classes_in(" ".join(words(sentence)))  # "Also dogs in costumes as a
        if len(named) == 1 and named_apart(named[0], "", at):  # separate class": the mention
            return sentence.strip(), resolver.names[named[0]]  # read is the bare "dogs"
        for mention in (m for m, i in marks.sentence_of.items() if i == at):
            found = [idx for idx in resolver.classes_in(mention)
                     if resolver.term(mention) is None and named_apart(idx, mention, -1)]
            if found:
                return mention, resolver.names[found[0]]
    return None


def _example(phrase: str, marks: Marks) -> bool:
    """Whether ``phrase`` follows a word that gives an example of a class ("birds, especially
    budgies", "birds too, we see a lot of budgies", "cats and birds, e.g. budgies": held-out
    set 56, 422s) within the three words before it, in its sentence."""
    at = _sentence(phrase, marks.sentence_of)
    if at is None or not words(phrase):
        return False
    said = f" {' '.join(words(marks.sentences[at]))} ".replace(" e g ", " eg ").split()
    last = words(phrase)[-1]
    return any(w == last and EXAMPLE & set(said[max(0, i - 4):i]) for i, w in enumerate(said))


def _kind_and_others(resolver: ClassResolver, group: list[str], idx: int,
                     marks: Marks) -> bool:
    """Whether two mentions of one class say that one is a kind of the other: "parrots and
    other birds", "kittens and the other cats" (held-out set 56: a 422), where the second
    is the class's own word."""
    if len(group) != 2 or not _own_word(resolver, group[1], idx):
        return False
    said = [" ".join(words(s)) for s in marks.sentences]
    return any(f" {group[0]} and other {group[1]} " in f" {s} "
               or f" {group[0]} and the other {group[1]} " in f" {s} " for s in said)


def _sentence(phrase: str, sentence_of: Mapping[str, int]) -> int | None:
    """The sentence a mention came from: its own, or the first that holds its words."""
    if phrase in sentence_of:
        return sentence_of[phrase]
    return min((i for m, i in sentence_of.items() if f" {phrase} " in f" {m} "), default=None)


def _own_word(resolver: ClassResolver, phrase: str, idx: int) -> bool:
    """Whether ``phrase`` names class ``idx`` by the class's own word ("usual birds", "add
    dogs") with no word before it that makes it another thing (``heads.MAKES_ANOTHER``: "polo
    shirts"), or is only its adjective ("equine")."""
    tokens = [w for w in words(phrase) if w not in FILLER | HEDGES]
    if len(tokens) == 1 and tokens[0] in ADJECTIVAL:
        return resolver.exact(phrase) == idx
    name = set(words(resolver.names[idx]))
    own = [i for i, w in enumerate(tokens) if name & set(singular_forms(w))]
    return resolver.classes_in(phrase) == [idx] and bool(own) and not any(
        i and tokens[i - 1] in MAKES_ANOTHER for i in own)


def _class_words(resolver: ClassResolver, phrase: str, idx: int) -> set[str]:
    """The words of ``phrase`` that name class ``idx`` on their own, singular, numerals
    spelt out ("3s" → "three")."""
    return {NUMERALS.get(singular_forms(w)[-1], singular_forms(w)[-1]) for w in words(phrase)
            if resolver.term(w) == idx}
