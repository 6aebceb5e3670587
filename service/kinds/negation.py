"""Whether a chunk asks for the absence of a class: "not horses", "no cats", "anything but
dogs", "bags are out of scope", "horses not needed". Split from :mod:`service.kinds.chunks` at
stop 53 (past 300 lines); that module finds a chunk's mention, this one says whether the chunk
turns it down.
"""

from __future__ import annotations

from collections.abc import Callable

from service.kinds.parsed import Parsed
from service.kinds.vocabulary import (
    DROPPED,
    EXCLUDING,
    FILLER,
    NEEDED,
    NEGATIONS,
    SPARE,
    STORY_VERBS,
)

_CONTRACTED = {"dont", "doesnt", "didnt", "wont", "shouldnt"}
_WANTING = {"need", "needs", "want", "wants", "include", "care", "sell", "carry", "stock", "have"}
_BARE = {"the", "are", "is", "be", "been", "all", "also", "too", "hereby", "now"}  # "horses are
# excluded", "… is hereby excluded" (set 71)


def _never(_: str) -> bool:
    return False


def _asks(tokens: list[str]) -> bool:
    """"but I need instead zebras and giraffes" asks (set 82: the zebras were refused); not
    "but I need neither birds nor bears" (an outside review)."""
    return tokens[1:2] in (["i"], ["we"]) and tokens[2:3] != [] and tokens[2] in _WANTING \
        and not ((NEGATIONS | {"neither"}) - {"but"}) & set(tokens[3:])


def negates(tokens: list[str], class_word: Callable[[str], bool] = _never,
            described: bool = False) -> bool:
    """A mention that asks for the absence of a class: "not horses", "no cats", "anything but
    dogs", "bags are out of scope", "horses not needed" (a negation first, an excluding word
    anywhere, "not" before a word of need, or "don't need"); "a top with no collar" is not.
    ``described``:
    a listed definition, which may negate inside ("the animal that never forgets", "worn over
    everything else"): only a negation opening it counts, and no excluding word."""
    content = [t for t in tokens  # "the animal said never to forget" negates nothing
               if t not in FILLER or t in NEGATIONS | STORY_VERBS or class_word(t)]
    if content[:1] == ["but"] and (not any(map(class_word, tokens)) or _asks(tokens)):
        content = content[1:]  # "but the images are all sketches" asks for no absence; "but
        # dogs" (not) still may
    if described:
        content = tokens[1:2] if tokens[:1] in (["but"], ["and"], ["just"]) else tokens[:1]
    pairs = list(zip(tokens, tokens[1:], strict=False))
    other_than = ("other", "than") in pairs or any(  # "bags are out of scope"
        tokens[i:i + 3] == ["out", "of", "scope"] for i in range(len(tokens))) \
        or tokens[-2:] in (["are", "out"], ["is", "out"]) \
        or tokens[-2:-1] in (["is"], ["are"]) and tokens[-1] in SPARE \
        or (tokens[-1:] == ["not"] and 2 <= len(tokens) <= 4 and tokens[-2].endswith("ly")) \
        # "Shirts are out.", "t-shirts explicitly NOT" (not "… and purses not": unclear)
    not_needed = any(a in _NOT_BE and b in NEEDED for a, b in pairs) or any(
        a in _WONT_BE and b == "be" and c in NEEDED  # "five and six won't be needed" (a review)
        for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False)) or any(
        a in _CONTRACTED and b in _WANTING and c != "to"  # "we don't need dogs"; not "don't
        for a, b, c in zip(tokens, tokens[1:], [*tokens[2:], ""], strict=False)) or any(
        a in ("do", "does", "did") and b == "not" and c in _WANTING and d != "to"  # "Horses we
        for a, b, c, d in zip(tokens, tokens[1:], tokens[2:], [*tokens[3:], ""], strict=False))
    # do not need" (set 80: horse at 200), as "don't need"; not "do not want to miss"
    excluding = _excluding(tokens, class_word) and not described or (  # "(sheep excluded)",
        bool(DROPPED & set(tokens)) and all(t in DROPPED or class_word(t) or t in _BARE
                                            for t in tokens))  # not "with tags removed"
    unasked = tokens[:1] in (["nobody"], ["noone"]) and bool(_ASKED & set(tokens))  # "Nobody
    # asked for sheep" (an outside review of stop 53: sheep at 200)
    return bool(content) and ((content[0] in NEGATIONS and not class_word(content[0]))
                              or excluding or other_than or not_needed or unasked)


def _excluding(tokens: list[str], class_word: Callable[[str], bool]) -> bool:
    """An excluding word in ``tokens``; "anything"/"everything" only before every class word
    ("anything but dogs"), not after one ("also dogs since they show up in everything": set
    69 lost the dogs at 200)."""
    found = EXCLUDING & set(tokens)
    if found - _ALL_THINGS:
        return True
    first = next((i for i, t in enumerate(tokens) if class_word(t)), len(tokens))
    return any(t in _ALL_THINGS for t in tokens[:first])


_ALL_THINGS = {"anything", "everything"}
_WONT_BE = {"wont", "not", "never", "shouldnt", "wouldnt", "cant"}
_NOT_BE = {"not", "never", "arent", "isnt", "wasnt", "werent"}  # "actually the cows aren't
# necessary" kept cow at 200 (stop 46: read as "cows necessary")


_ASKED = {"asked", "asks", "wants", "wanted", "needs", "needed", "requested", "cares"}
_JOINING = {"and", "&", "or", ","}
_CLAUSE_BREAKS = {";", ":", "—", "–", "-", "--"}


def negated_before(items: list[tuple[str, list[str], list[str]]], parsed: Parsed,
                   bare: Callable[[list[str]], bool]) -> None:
    """The bare class names joined before a chunk that negates its class at its end ("Cows
    and sheep are excluded", "cats, dogs and horses are not needed": set 71 kept the cows at
    200), negated with it. ``items``: the sentence's chunks so far, the last the negating
    one, as ``(separator before it, its mentions, its tokens)``: the list its "and" closes,
    back to the sentence's start, a clause break (";") or an earlier "and", every item a bare
    name ("Need cats and dogs, cows and sheep are not needed" is unclear: left as it was)."""
    if len(items) < 2 or items[-1][0] not in _JOINING - {","}:  # "cats and dogs, horses not
        return  # needed": a list of its own
    chain: list[str] = []
    for j in range(len(items) - 2, -1, -1):
        separator = items[j + 1][0]
        if separator in _CLAUSE_BREAKS or chain and separator != ",":  # "cats and dogs; cows
            break  # and sheep are not needed", "cats and dogs, cows and sheep are not needed"
        if separator not in _JOINING or not bare(items[j][2]):
            return
        if chain and items[j][0] in _JOINING - {","}:  # "Bears, zebras and giraffes, horses
            break  # and cows are excluded": giraffes closes a list of its own (a review)
        chain += items[j][1]
    gone = chain
    parsed.negated += gone
    for mention in gone:
        parsed.mentions.remove(mention)
