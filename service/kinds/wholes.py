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

from service.kinds.everything import whole_at, whole_catalogue
from service.kinds.namely import named_in, names_next, narrowed
from service.kinds.tokens import words
from service.kinds.vocabulary import FILLER, NEGATIONS
from service.kinds.whole_words import (
    BOUNDED,
    COUNTS,
    DIGIT,
    TOTAL,
    distributed,
    group_of,
    related,
    whole_bare,
)

_FILL = (r"the|of|your|our|a|single|possible|handwritten|written|printed|available|supported|"
         r"other|remaining|rest|"
         r"different|distinct|basic|kinds?\s+of|types?\s+of|\d+|ten|nine|eight|seven|six|five|"
         r"(?:items?|class(?:es)?|things?|ones?)\s+(?:in|of|from)")  # "every item in the …"
_PHRASE = re.compile(
    rf"\b(?:(?P<total>{TOTAL})|(?P<parity>even|odd|prime)|(?:the\s+)?(?P<count>\d+|ten|nine|eight|"
    rf"seven|six|five|four|three))(?P<fill>(?:\s+(?:{_FILL}|even|odd|prime|single[\s-]digit))*)\s+(?P<group>[a-z]+)\b"
    r"(?:\s+(?:items?|categor(?:y|ies)|class(?:es)?|things?|stuff|pieces?|articles?|kinds?|types?|ones|"
    r"lists?|groups?|sections?|catalogue|catalog|collection|range|lineup|"
    r"(?:in|on|from|of)\s+(?:your|the)\s+(?:list|catalogue|catalog|set)|(?:that\s+)?(?:your|the)\s+"
    r"(?:list|catalogue|catalog|set)\s+(?:has|holds|offers|contains|includes)|(?:that\s+)?you\s+"
    r"(?:have|offer|"
    r"support|do|provide)|(?:that\s+)?you(?:'?ve|\s+have)?\s+got))*",
    re.I)  # "all the animals you have", "every animal you've got", "every animal your catalogue
# has" (held-out set 55: the cat excepted after it was asked for at 200)  # fmt: skip
# the group phrase is about the images, not the task: "all animals in the photos are cats",
# "every animal photo must be labelled", "all the animals we have are dogs and cats"
_ABOUT = re.compile(r"^\s*(?:with|that|which|who|is|are|was|were|has|have|we|you|they|i|our|my|"
                    r"images?|photos?|pictures?|pics?|dataset|data|videos?|frames?|shots?|clips?|"
                    r"scans?|in\s+(?:the|a|an|each|every|our|my)\s+\w+)\b", re.I)  # fmt: skip
# a negation or a past before it: "Out of scope: all other digits", "Avoid all animals",
# "Nobody wants all animals", "Previously we had all the animals"
_NEGATED = re.compile(r"\b(?:not|no|never|without|except|excluding|nor|out\s+of\s+scope|wont|"
                      r"won'?t|dont|don'?t|skip|drop|remove|avoid|ignore|exclude|leave|instead|"
                      r"nobody|previously|used\s+to|forget|scrap|minus)\b[^.!?\n]*$",
                      re.I)  # fmt: skip
# a whole group left out, right before it: its classes are excluded everywhere
_LEFT_OUT = re.compile(r"\b(?:exclude|excluding|skip|drop|remove|ignore|without|no)\s+"
                       r"(?:all\s+)?(?:of\s+)?(?:the\s+|any\s+)?$", re.I)
_CLAUSE_START = re.compile(r"[.!?;:,\n(]")
# a verb after the phrase (and its exceptions) makes it a subject, not a request: "All the
# digits, but 7s are the tricky ones", "All animals except cows are out of scope"
_PREDICATE = re.compile(r"^\s*(?:are|is|was|were|will|would|should|must|can|could|look|looks|"
                        r"seem|seems|get|gets|have|has|had|tend)\b", re.I)  # fmt: skip
_POST = {"of", "with", "that", "which", "who", "where", "in", "on", "from"}
_RANGE_AT = re.compile(r"^\s*(?:the\s+)?(\d|zero|one|two|three|four|five|six|seven|eight|nine)"
                       r"\s*(?:-|–|to|through|thru|until)\s*(\d|zero|one|two|three|four|five|"
                       r"six|seven|eight|nine)\b", re.I)  # fmt: skip
_PARITY_RANGE = re.compile(rf"^\s*(?:from\s+)?(?:the\s+)?{DIGIT}\s*(?:-|–|to|through|thru|"
                           rf"until)\s*{DIGIT}\b|^\s*between\s+(?:the\s+)?{DIGIT}\s*"
                           rf"(?:-|–|to|and)\s*{DIGIT}\b", re.I)  # not "odd digits 1 and 7"
_EXCLUDING = re.compile(r"^\s*,?\s*(?:(?:except(?:\s+for)?|excluding|but(?:\s+not|\s+no)?|"
                        r"other\s+than|apart\s+from|minus|without|save\s+for)\b(?:\s+(?:please\s+)?(?:skip|"
                        r"drop|remove|scrap|forget|leave\s+out)\b)?|(?:skip|drop|remove|scrap|"
                        r"forget|leave\s+out)\b)", re.I)  # "all animals, but skip the cows"
_LIST_WORDS = {"and", "or", "nor", "the", "for", "s", "plus", "n",
               "minus", "except", "excluding"}  # "minus X and minus the bag"
_NAMING_NEXT = {"but", "but no"}  # exclude only before a class: not "all animals but no
# cartoons" or "all the animals but leave the numbers out"




def spell_out(text: str, groups: Mapping[str, list[str]],
              class_of: Callable[[str], str | None]) -> tuple[str, list[str], list[str]]:
    """``(text, excepted, unclear)``: ``text`` with each whole-group phrase replaced by its classes,
    less the exceptions that follow it ("all ten digits except zero and one" → "two, three,
    …, nine"), and those exceptions, which the request excludes everywhere ("all animals
    except cows (we already have a cow model)" does not ask for cows), and the group phrases
    asked for whose exceptions are unclear ("all numbers, except zebras": dropped at 200
    before, stop 36), which the parser refuses."""
    out, last, excepted, unclear = [], 0, [], []
    if not _apposed_group(text, groups):
        text = whole_catalogue(text, groups, class_of)
    text = related(text, groups)  # "the whole catalogue"
    text = whole_bare(distributed(text, groups), groups)
    for match in _PHRASE.finditer(text):
        members = _members(match, groups)
        if members is None or match.start() < last:
            continue
        bounded = _within(text, match, members)  # "even numbers 0-8"
        members, tail = bounded or (members, match.end())
        if not _asked(text, last, match, class_of, bounded is not None):
            if left := _LEFT_OUT.search(text[last : match.start()]):  # "Exclude the even
                excepted += members  # numbers.": the verb goes too, else it reads on
                out, last = out + [text[last : last + left.start()]], tail
            continue
        end, excluded = exceptions(text, tail, class_of, members)
        if _PREDICATE.match(text[end:]):  # "All animals except cows are out of scope"
            continue
        if excluded is None:
            end, excluded = spelled_exception(text, tail, class_of, members)
        if excluded is None:  # "all digits except those that look alike": which ones?
            unclear.append(text[match.start():tail + 40].split(".")[0].strip(" ,;"))
            continue
        kept = [m for m in members if m not in excluded]
        if (listed := narrowed(text, end, class_of, kept)) is not None:  # "the even digits,
            excepted += [n for n in listed[0] if n not in kept]  # specifically 2, 3 and 8":
            kept, end = [], listed[1]  # the list after it is the request, 3 a clash
        excepted += sorted(excluded)
        spelt = ", ".join(kept)
        if text[match.start()].isupper():  # "cat. Every digit": still a sentence of its own
            spelt = spelt[:1].upper() + spelt[1:]
        left = "".join(f" (except {e})," for e in sorted(excluded))  # what a pronoun after
        # it points at: "all the animals, except the bear, we don't need it" took the zebra
        # back (held-out set 79, a wrong 200)
        out += [text[last:match.start()], spelt + (f",{left} " if text[end:].strip() else "")]
        last = end
    return "".join(out) + text[last:], excepted, unclear


# an exception named by a description, then spelt out as what is not wanted: "except the farm
# ones (no cow sheep horse)", "except the domestic pets, so no cats and no dogs" (sets 106 and
# 109: asked back); not "except the wild ones, so cats, dogs …", which may list what is kept (an
# outside review)
_SPELLED = re.compile(r"^\s*,?\s*(?:except(?:\s+for)?|excluding|but\s+not|other\s+than|apart\s+"
                      r"from|minus)\s+(?:the\s+)?(?:[a-z-]+\s+){0,3}?[a-z-]+\s*(?:\(|,?\s*(?:i\.?\s?e\b"
                      r"\.?|(?:namely|that\s+is|meaning|so)\b))\s*,?\s*(?:no|not|without)\b", re.I)


def spelled_exception(text: str, start: int, class_of: Callable[[str], str | None],
                      members: list[str]) -> tuple[int, set[str] | None]:
    """``(end, classes)`` of an exception described and then listed (``_SPELLED``): the classes
    of the list, up to its closing bracket or sentence end, when every class named there is a
    member of the group; ``(start, None)`` otherwise."""
    lead = _SPELLED.match(text[start:])
    if lead is None:
        return start, None
    rest = re.match(r"[^.;!?\n)]*\)?", text[start + lead.end():])[0]
    names = named_in(rest, class_of)
    if not names or not set(names) <= set(members):
        return start, None
    return start + lead.end() + len(rest), set(names)


def _apposed_group(text: str, groups: Mapping[str, list[str]]) -> bool:
    """Whether a whole-catalogue phrase follows a group phrase and a comma, as its apposition:
    "all the clothes, every single category you have" is the clothes (set 85: all 30 at 200);
    not "the whole catalogue, all the animals included", "every animal, every digit, basically
    every class you have" or "all the animals. Actually, make it the full catalogue" (outside
    reviews)."""
    before = text[: whole_at(text)].rstrip()
    if not before.endswith(","):
        return False
    item = re.split(r"[,.;:!?]", before[:-1])[-1]
    return names_a_group(item, groups)


def names_a_group(text: str, groups: Mapping[str, list[str]]) -> bool:
    """Whether ``text`` asks for a whole group or its even or odd digits ("even digits only"),
    so that a header made of it is content, not a label (stop 32: a 422 on set 28)."""
    return any(_members(m, groups) for m in _PHRASE.finditer(text))


def _within(text: str, match: re.Match, members: list[str]) -> tuple[list[str], int] | None:
    """``(classes, end)`` of an even or odd group bounded by the range after it ("even numbers
    0-8" → zero, two, …, eight; read as the range alone it was all nine at 200), else None."""
    bound = _PARITY_RANGE.match(text[match.end():])
    if bound is None or _parity(match) is None:
        return None
    low, high = sorted(COUNTS.get(b.lower(), int(b) if b.isdigit() else -1)
                       for b in bound.groups() if b is not None)  # fmt: skip
    kept = [m for m in members if low <= COUNTS[m] <= high]
    return kept, match.end() + bound.end()


def _asked(text: str, last: int, match: re.Match, class_of: Callable[[str], str | None],
           bounded: bool = False) -> bool:
    """Whether a group phrase asks for the group: nothing but instruction, filler and class
    words before it in its clause ("dogs and all the other animals"; not "Avoid all animals"),
    no negation or past before it in its sentence, no range after it ("all digits from 1 to
    5"; an even or odd group's range bounds it instead, ``bounded``), and not about the
    images ("every animal photo"). A bounded group needs no clean clause: its range alone
    would be read as asked ("knows all the odd numbers 0-9": all ten at 200, set 63)."""
    after, before = text[match.end():], text[last : match.start()]  # since the last group
    clause = _CLAUSE_START.split(before)[-1]
    return not ((BOUNDED.match(after) and not bounded) or _ABOUT.match(after)
                or _NEGATED.search(before)) \
        and (bounded or all((w in FILLER and w not in NEGATIONS) or w == "plus"
                            or class_of(w) is not None for w in words(clause)))  # fmt: skip


def _members(match: re.Match, groups: Mapping[str, list[str]]) -> list[str] | None:
    """The classes a matched phrase asks for, or None when it is no whole group."""
    group = group_of(match["group"].lower(), groups)
    if group is None:
        return None
    members = list(groups[group])
    fill = words(match["fill"] or "")
    if sum(w in _PARITIES or w in COUNTS or w.isdigit() for w in fill) \
            + bool(match["parity"] or match["count"]) > 1:  # fmt: skip
        return None  # "even odd digits", "ten ten digits"
    parity = _parity(match)
    if parity:
        values = {m: COUNTS.get(m) for m in members}
        if any(v is None for v in values.values()):
            return None  # "odd animals" is no parity
        return [m for m in members if values[m] in _PARITIES[parity]]
    count = match["count"] or next((w for w in fill if w in COUNTS or w.isdigit()), None)
    if match["total"] is None and count is None:
        return None
    if count is not None and COUNTS.get(count, int(count) if count.isdigit() else -1) \
            != len(members):  # fmt: skip
        return None  # "3 digits" counts, it names no group
    return members


# the digits each word picks: "prime digits" (set 45: "the prime single-digit numbers")
_PARITIES = {"even": {0, 2, 4, 6, 8}, "odd": {1, 3, 5, 7, 9}, "prime": {2, 3, 5, 7}}


def _parity(match: re.Match) -> str | None:
    """"even" or "odd" when a group phrase says which ("Odd digits only": was even, at 200)."""
    said = (match["parity"] or "").lower() or next(
        (w for w in words(match["fill"] or "") if w in _PARITIES), None)
    return said or None



def _modifies(tokens: list[str], after: int) -> bool:
    """Whether the class word ending at ``after`` qualifies the next word ("zebra crossings",
    "dog toys", "1 vs 7 mistakes": an outside review of stop 46) instead of ending an item."""
    return after < len(tokens) and tokens[after] not in _LIST_WORDS | {"no", ",", "&"} \
        and tokens[after] not in FILLER - {"vs"}


def exceptions(text: str, start: int, class_of: Callable[[str], str | None],
                members: list[str]) -> tuple[int, set[str] | None]:
    """``(end, classes)``: the excluding clause right after a group phrase ("except zero and
    one", "but not cows or ankle boots", "except 1-3") and the classes it names; ``(start, ∅)``
    when there is none; ``(start, None)`` when which classes is unclear: it names no class,
    a class of another group ("except cows, and sneakers too"), "the ones …", or a class with
    a post-modifier ("except birds of prey"). It ends at the first other word."""
    lead = _EXCLUDING.match(text[start:])
    bare_but = bool(lead) and " ".join(lead[0].strip(" ,").lower().split()) in _NAMING_NEXT
    if not lead or bare_but and not names_next(text, start + lead.end(), class_of):
        return start, set()  # no exceptions; "all the animals but leave the numbers out"
    base, excluded = start + lead.end(), set()
    noes = {"no"} if "no" in lead[0].lower().split() else set()  # "but no zebras no giraffes"
    if span := _RANGE_AT.match(text[base:]):  # "except 1-3": the whole range
        lo, hi = (int(g) if g.isdigit() else COUNTS[g.lower()] for g in span.groups())
        excluded |= {class_of(str(d)) for d in range(lo, hi + 1)}
        base += span.end()
    found = list(re.finditer(r"[a-z0-9]+|[,&]", text[base:].lower()))
    tokens, ends = [t[0] for t in found], [t.end() for t in found]
    end, i = (base if excluded else start), 0
    while i < len(tokens):
        n, name = next(((n, class_of(" ".join(tokens[i:i + n]))) for n in (3, 2, 1)
                        if i + n <= len(tokens) and class_of(" ".join(tokens[i:i + n]))),
                       (1, None))  # fmt: skip
        if name is not None and (tokens[i] in ("one", "ones") and i and tokens[i - 1] == "the"
                                 or name not in members):  # fmt: skip
            return start, None  # "except the ones with stripes", "except cows and sneakers"
        if name is not None and noes and _modifies(tokens, i + n) and not re.search(
                r"[.;:!?)]", text[base + ends[i + n - 1]:base + found[i + n].start()]):
            return start, set()  # "but no zebra crossings", "but no 1 vs 7 mistakes"
        if name is not None:
            excluded.add(name)
            end = base + ends[i + n - 1]
        elif tokens[i] in _POST and excluded and tokens[i - 1] != ",":
            return start, None  # "except birds of prey"; not "except cats, in watercolour"
        elif tokens[i] not in _LIST_WORDS | noes and tokens[i] not in ",&" and not (
                tokens[i] == "not" and i and tokens[i - 1] in ("and", "or")):  # "and not
            # birds"; not "except 6, not 9", a correction
            break
        i += n
    return (end, excluded) if excluded and None not in excluded else (start, None)
