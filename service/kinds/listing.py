"""Which mentions are items of a list: the evidence that an unknown phrase asks for a class.

A class someone wants stands in the list with the others ("cows, sheep and goats"); a phrase
about the app stands in a sentence ("Guests upload photos from our game drives and we'd like
to tag elephants"). Two chunks joined by a list separator are items of one list when nothing
but an article or a hedge stands between their mentions and the separator: the mention ends
its chunk and the next one opens the next chunk ("Oh, and lions if you can": an item added
to a list said before). A chunk that gives several mentions (a range, "2 4 6 8") is a list of
its own. A chunk that gives no mention does not break a list ("horses, Priority: alpacas").
"""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from service.kinds.chunks import POST, is_style
from service.kinds.tokens import plural
from service.kinds.vocabulary import DIGIT_CONTEXT, OBJECTS, OWNERS, REQUESTING

# words that may stand between a list item and its separator: "cats, the dogs and maybe
# horses too", "zebras as well, please"
_AROUND = {"a", "an", "the", "some", "also", "plus", "maybe", "perhaps", "possibly", "even",
           "especially", "then", "just", "only", "too", "well", "as", "please", "pls", "etc",
           "both", "either", "neither", "any", "all", "of", "my", "our", "your", "their"} \
    | DIGIT_CONTEXT  # "numeral 5 vs numeral 6", "the number 3 or a handwritten 8"
_WISHING = {"nice", "hope", "hoping", "wish", "ideally", "maybe", "perhaps", "possibly", "must",
            "should", "required", "mandatory", "important", "essential", "class", "category",
            "care", "interest", "target", "forgot", "forgotten"}  # with REQUESTING: "Required:
# kangaroos"; "EDIT: lol forgot donkeys" (an outside review of stop 52: dropped at 200)
_JOINING = {"and", "or", "nor", "n", "&", "+", "und", "oder", "ou", "aur", "et"}  # a list goes
# on after these (also as other languages say "and" and "or"), not after ","
_PLAIN = {",", ";", "/"}  # a list closed by "and" goes on only after "and", "or", "vs", "from"
_SEPARATORS = {",", ";", "&", "+", "/", "vs", "vs.", "v", "v.", "versus"} | _JOINING

Item = tuple[str, list[str], list[str]]  # (separator before it, its mentions, its words)


def list_items(items: list[Item], comparing: bool = False) -> set[str]:
    """The mentions of a sentence's chunks that are list items (see the module docstring);
    in a sentence that compares, "from" joins items too ("tell a 3 from an 8")."""
    separators = _SEPARATORS | {"from"} if comparing else _SEPARATORS
    listed = {m for _, mentions, _ in items if len(mentions) > 1 for m in mentions}
    listed |= {right[0] for separator, right, words in items  # "Oh, and lions if you can"
               if separator in _JOINING and len(right) == 1
               and _opens(right[0], words, styled=True)  # "and okapi illustrations"
               and not OBJECTS & set(words)}  # not "and the tablet reads it out"
    named = [item for item in items if item[1]]  # "horses, Priority: alpacas"
    closed = False  # "horses and dogs, renaissance-era mostly": a list ended by "and"
    for (_, left, left_words), (separator, right, right_words) in zip(named, named[1:],
                                                                          strict=False):
        if separator == "from" and left_words[-1:] != left[0].split()[-1:]:
            closed = False  # "horses that customers upload from their phones": a source
        elif separator in separators and len(left) == 1 and len(right) == 1 \
                and _ends(left[0], left_words) and _opens(right[0], right_words) \
                and not (closed and separator in _PLAIN  # "…, watches": still an item
                         and not plural(right[0].split()[0])):  # fmt: skip
            listed |= {left[0], right[0]}
            closed = separator in _JOINING
        else:
            closed = False
    return listed


_COPULAS = {"is", "are", "was", "were"}


def _ends(mention: str, chunk: list[str], styled: bool = False) -> bool:
    """Whether ``mention`` ends its chunk: after its first word, only its own words, words of
    ``_AROUND``, stop words or adverbs ("lions if you can", "zebras automatically") up to a
    post-modifier ("one for a lottery scanner", "deer in our field cameras"). A style or
    other content word there makes the mention a modifier ("product photos", "phone pics")
    or a clause's subject ("our rangers upload them"); ``styled``: style words may follow
    too, as after "and" ("and okapi illustrations")."""
    first, own = mention.split()[0], set(mention.split())
    if first not in chunk:
        return False
    after = chunk[chunk.index(first) + 1:]
    after = after[: next((i for i, w in enumerate(after) if w in POST or w == "as"
                          or (len(w) > 4 and w.endswith(("ed", "ing")))),
                         len(after))]  # "8 as cartoons", "alpacas photographed at dusk"
    verb = next((i for i, w in enumerate(after) if w in _COPULAS), len(after))
    if own & set(after[verb + 1:]):  # "tablets are Samsung Galaxy Tab": a sentence, no item
        return False
    return all(w in own or w in _AROUND or w in ENGLISH_STOP_WORDS or w.endswith("ly")
               or (styled and is_style(w)) for w in after)  # fmt: skip


def _opens(mention: str, chunk: list[str], styled: bool = False) -> bool:
    """Whether ``mention`` opens its chunk (after words of ``_AROUND`` and style words:
    "sketches of cats") and ends it (:func:`_ends`)."""
    return _first(chunk) == mention.split()[0] and _ends(mention, chunk, styled)


def asked(items: list[Item]) -> set[str]:
    """The mentions of chunks that ask for something ("we would also like raccoons", "Also
    tigers.", "plus penguins", "though ferrets would be nice", "the llamas should be
    recognised"), or that follow a chunk asking and naming nothing ("Required: kangaroos"):
    never context."""
    found, lead = set(), False
    for _, mentions, chunk in items:
        asks = bool((REQUESTING | _WISHING) & {f for i, w in enumerate(chunk) for f in _stems(w)
                                               if not _schooled(chunk, i)
                                               and not _intensifier(chunk, i)})
        if asks or lead:
            found |= set(mentions)
        lead = asks and not mentions  # "Required: kangaroos", "Also, llamas"
    return found


def _intensifier(chunk: list[str], i: int) -> bool:
    """"too" before a word it grades ("there are far too many of them", "too similar") is no
    "also" (held-out set 57: "far" was asked for); "cats too", "cows too please" ask."""
    return chunk[i] == "too" and i + 1 < len(chunk) and chunk[i + 1] not in _AFTER_TOO


_AFTER_TOO = {"please", "pls", "plz", "thanks", "thx", "ideally", "maybe", "if", "and", "or"}


def _schooled(chunk: list[str], i: int) -> bool:
    """"class" after a possessive is a school's ("0 counts as even, my class insisted": asked
    for "insisted", set 49), not a label ("Class: kangaroos")."""
    return chunk[i] in ("class", "classes") and i > 0 and chunk[i - 1] in OWNERS


def _stems(word: str) -> set[str]:
    """``word`` and the verb it inflects ("recognised", "labelled", "identified" → "recognise",
    "label", "identify"), so that "the llamas should be recognised" asks."""
    forms = {word, re.sub(r"ied$", "y", word), re.sub(r"(?:ed|d)$", "", word),
             re.sub(r"(\w)\1ed$", r"\1", word), re.sub(r"ing$", "", word)}
    return forms | {f + "e" for f in forms}


def coordinated(items: list[Item]) -> set[str]:
    """The mentions of chunks joined to the one before by "and", "or", "vs", "&" or "+", or
    opening with "plus", "also", "and", whose mention opens the chunk: items asked for ("cats,
    dogs and guinea pig photos"), never the source of the images (an outside review: 27
    unknown animals dropped at 200)."""
    return {m for separator, mentions, chunk in items for m in mentions
            if (separator in _JOINING | {"vs", "vs.", "versus"}
                or chunk[:1] in (["plus"], ["also"], ["and"]))
            and _first(chunk) == _first(m.split())  # not "and the children hold up a card"
            and not OBJECTS & set(chunk)}  # nor "and the tablet reads it out"


def _first(chunk: list[str]) -> str | None:
    """The chunk's first word after words of ``_AROUND`` and style words."""
    return next((w for w in chunk if w not in _AROUND and not is_style(w)), None)
