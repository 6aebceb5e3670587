"""A chunk's words: which can name a class, and what the words around them do to it.

The word-level steps of :mod:`service.kinds.parsing`, kept apart so each module stays short:
the clause that introduces a list ("sort them into …") and a post-modifier ("… near the
feeder") are cut, numbers that count or label something else ("3 kids", "phase 2") dropped,
filler and style words removed, and a chunk that asks for the absence of a class recognised
(:func:`negates`). ``Known`` is what the resolver tells the parser about its catalogue.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from service.kinds.tokens import NUMERALS, is_number, plural, singular_forms
from service.kinds.vocabulary import (
    ABOUT_APP,
    BIG_NUMBERS,
    COMPARING,
    DIGIT_CONTEXT,
    FILLER,
    GENERIC,
    ING_NOUNS,
    MADE_ON,
    PEOPLE,
    STORY_VERBS,
    STYLE_HINTS,
    STYLE_WORDS,
    TAKEN_BACK_WORDS,
    VENUES,
)

# a hyphenated modifier before a class word is one word: "button-down shirts", "high-top
# sneakers" (a class name may take one word before it, ClassResolver.exact)
_MODIFIER = re.compile(r"\b([a-z]+)-([a-z]+)(?=\s+([a-z]+))", re.I)
_CONFUSING = {"confuse", "confuses", "confused", "confusing", "mix", "mixes", "mixed", "mixing",
              "mistake", "mistakes", "mistaken", "swap", "swaps", "swapped"}
_WITH_PAIR = re.compile(r"\b([\w-]+)\s+with\s+(?=([\w-]+))", re.I)
_PRE = {"into", "as", "between", "among", "including", "namely", "like",
        "which", "where",  # "oil paintings in which horses, … appear" (set 49)
        # a verb of recognising, asked for, before its object: "an app to recognise cartoon
        # pictures of a puppy" (read set 11); not "the prototype recognises bears" (a story:
        # an outside review)
        "recognise", "recognize", "recognising", "recognizing", "classify", "classifying",
        "detect", "detecting", "identify", "identifying", "distinguish", "distinguishing",
        "sorting", "labelling", "labeling", "tagging",  # "sorting my … doodles of birds" (48)
        "selling", "sells", "stocking", "stocks",  # "a tiny Etsy store selling tote bags"
        "covering", "spanning",  # "footwear recognition covering sandals, sneakers" (set 66)
        "asked", "asks", "requested", "requests"}  # "Dr. Patel asked for birds" (set 69)
# A class word followed by one of these starts a post-modifier: "dogs near the feeder".
POST = {"in", "on", "at", "near", "with", "by", "under", "behind", "beside", "inside", "outside",
         "around", "during", "into", "onto", "over", "across", "along", "through", "within", "of",
         "that", "which", "who", "where", "when", "while", "per", "for",
         "so", "because", "cos", "coz", "cuz", "since"}  # "… into bags vs t-shirts so I can
# upload them faster" (set 45), "seven and one cos people write them similar" (set 46)
# a subject right after a class word opens a clause: "the number one they get mixed up a lot"
_SUBJECTS = {"they", "we", "i", "you"}
# filler that still marks its chunk as about the project: it counts toward a clause's length
# and labels a number next to it ("phase 2", "digit 5 comes in")
CONTEXT_WORDS = ABOUT_APP | STORY_VERBS
_RANGE_WORDS = {"to", "through", "thru", "till", "until"}  # "5 to 9 per photo" is no class list
# "don't need": a contraction that negates; not "don't forget", "can't tell", "haven't labelled"
_DETERMINERS = {"a", "an", "the", "my", "our", "your", "their", "his", "her", "its"}
_BOUNDS = {"after", "before", "since", "past", "around", "about", "over", "under", "at", "by"}
_COUNTED = {"thing", "things", "item", "items", "more", "of", "kind", "type", "time", "times",
            "way", "question"}  # "one thing", "one of them", "two more"


def _never(_: str) -> bool:
    return False


@dataclass(frozen=True)
class Known:
    """What the resolver knows that parsing needs: whether a phrase names a class outright,
    whether a word is part of some class name or alias (such a word is never filler, a style
    word or a negation: "fire truck", "top hat", a class called "none"), a spelling fix, and
    the catalogue's groups ("every animal", :mod:`service.kinds.wholes`)."""

    names_a_class: Callable[[str], bool] = _never
    class_word: Callable[[str], bool] = _never
    fix: Callable[[str], str] = str
    # the catalogue's groups (group → class names) and the class a phrase names exactly
    groups: Mapping[str, list[str]] = field(default_factory=dict)
    class_of: Callable[[str], str | None] = lambda _: None
    # words for several classes of one group ("footwear"), from the catalogue's "subgroups"
    subgroups: Mapping[str, list[str]] = field(default_factory=dict)
    # a word the encoder's vocabulary lacks, so likely another language's ("gato", "Pferd")
    foreign: Callable[[str], bool] = _never


_NARROWING = {"only", "just", "except", "apart", "no", "not", "half", "none", "without"}


def content(tokens: list[str], known: Known) -> str:
    """The tokens that can name a class: no filler, no adverbs, no style words (unless a
    class word)."""
    kept = [t for t in tokens if (not is_style(t) and t not in FILLER and not adverb(t))
            or known.class_word(t)]
    after = tokens[len(tokens) - tokens[::-1].index("but"):] if "but" in tokens else []
    closed = kept[-1:] == ["but"] and after and not _NARROWING & set(after)  # "sheep but its
    return " ".join(kept[:-1] if closed else kept)  # all cartoon style" (set 63): the "but"
    # of a clause that was all filler; not "the 0-9 thing but only the top half" (a clash)


def adverb(token: str) -> bool:
    """An adverb in "-ly" ("literally", "simply", "correctly"): it names no class. Not the
    nouns that end so ("butterfly", "family", "supply", "assembly", "anomaly")."""
    return len(token) >= 6 and token.endswith("ly") \
        and not token.endswith(("fly", "ply", "mily", "mbly", "maly", "poly"))


def modifies_style(kept: str, raw: list[str], known: Known) -> bool:
    """Whether the mention ``kept`` only says where the images come from: one or two words
    with no class word, right before a style or capture word ("trail cameras", "phone pics",
    "product shots"), or a business ("a small shoe shop", "the pet app"). "cat photos" names a
    class; "photos of hamsters" is no modifier.
    Still context only if it leans to no class (``leftovers.context``): "birdie cartoons"."""
    tokens = kept.split()
    if len(tokens) > 2 or any(known.class_word(t) and t not in GENERIC for t in tokens):
        return False  # "shoe" shop: a word for several classes
    if len(tokens) > 1 and tokens[-1] in VENUES:  # "icons like in a shopping game" (set 43)
        return True  # ("a store of shoes" as one, set 69, made "A store of shoes and bags;
    # classify sneakers vs sandals" a bag at 200: an outside review)
    after = _followers(tokens, [t for t in raw if t not in _DETERMINERS  # "my phone camera",
                                and t not in STORY_VERBS])  # "a laundry sorting app"
    return any(is_style(w) or w in STYLE_HINTS or w in VENUES for w in after)  # "shoe shop"


def parallel(sources: set[str], tokens: list[str], known: Known) -> set[str]:
    """The ``sources`` whose style word also follows a class word ("cat pics, dog pics, fox
    pics"): the same shape as a class asked for, so no source."""
    after_class = {singular_forms(b)[-1] for a, b in zip(tokens, tokens[1:], strict=False)
                   if known.class_word(a) and is_style(b)}  # fmt: skip
    return {s for s in sources
            if any(singular_forms(w)[-1] in after_class for w in _followers(s.split(), tokens))}


def _followers(run: list[str], tokens: list[str]) -> list[str]:
    """The word right after each place ``run`` stands side by side in ``tokens`` ("deer in
    our field cameras" has no "deer field" run)."""
    n = len(run)
    return [tokens[i + n] for i in range(len(tokens) - n) if tokens[i : i + n] == run]


def is_style(token: str) -> bool:
    """A word about how the images look ("sketches", "cameras"), singular or plural."""
    return any(form in STYLE_WORDS for form in singular_forms(token))


# what the people around an app do with the images: "drivers write them by hand", "my daughter
# doodles cats" (the person is no class: set 69)
_MAKING = {"draw", "draws", "drew", "doodle", "doodles", "doodled", "write", "writes", "wrote",
           "scribble", "scribbles", "paint", "paints", "upload", "uploads", "send", "sends",
           "snap", "snaps", "like", "likes", "love", "loves", "collect", "collects", "bring",
           "brings", "make", "makes", "show", "shows", "flip", "flips", "mix", "mixes",
           "confuse", "confuses", "swap", "swaps"}  # not "hold up number cards 7, 8"


def pre_clause(tokens: list[str], known: Known) -> list[str]:
    """The tokens after the clause that introduces a class ("want to auto-sort our listings
    into sneakers" → "sneakers"), when no class word comes before that clause's last
    ``into``/``as``/``between``/… ("bags of dog food" keeps its head), or after a person's
    doing (``_MAKING``: "my daughter doodles cats" → "cats")."""
    verbs = [t for t in tokens if t not in _OFTEN]  # "my kiddos always flip 6 and 9" (set 72)
    at = next((p for p in range(len(verbs) - 1) if verbs[p] in PEOPLE
               and verbs[p + 1] in _MAKING), None)  # "My daughter doodles cats" (set 42)
    if at is not None and not any(map(known.class_word, verbs[:at])):
        rest = verbs[at + 2:]  # "drivers write them by hand on parcel labels": about them
        if rest[:1] in (["them"], ["it"], ["those"], ["these"], ["em"]):
            return []
        if any(map(known.class_word, rest)):  # not "students write digits on tablets", a
            return rest  # clause about the app
    for p in range(len(tokens) - 1, -1, -1):
        if tokens[p] in _PRE and (any(map(known.class_word, tokens[p + 1 :])) or (
                p == len(tokens) - 2 and plural(tokens[-1]))):  # "pile into joggers, tees"
            return tokens if any(map(known.class_word, tokens[:p])) else tokens[p + 1 :]
    return tokens


def post_modifier(tokens: list[str], known: Known) -> list[str]:
    """``tokens`` up to a post-modifier of the class word before it: "dogs near the feeder" →
    "dogs"; kept whole when another class word follows ("cats with dogs") or none precedes,
    unless it is the business the request is for: "fish for the pet store app" → "fish", an
    unknown (set 43: glued to the app, it was dropped as context and cats, dogs, birds came
    back at 200)."""
    for p, token in enumerate(tokens):
        if p and _participle(token, tokens[p - 1], known) and (  # "a sheepdog lying by the
                p + 1 == len(tokens) or tokens[p + 1] in POST):  # gate"; not "dog walking service"
            return tokens[:p]
        if p and token in ("are", "is", "were", "was", "get", "gets") and known.class_word(
                tokens[p - 1]) and _passive(tokens[p + 1:]):  # "seven and one are always
            return tokens[:p]  # confused by our OCR" (set 48)
        after = tokens[p + 1 :]  # "for a shoe store": a business, no class (set 42)
        venue = token == "for" and after and after[-1] in VENUES and any(  # "fish for the pet
            t not in FILLER for t in tokens[:p])  # store app"; not "it is for our shop"
        subject = token in _SUBJECTS and p > 0 and known.class_word(tokens[p - 1])
        if (token in POST or subject) and (venue or any(map(known.class_word, tokens[:p]))):
            if not any(known.class_word(t) and not set(after[i + 1 : i + 2]) & VENUES
                       for i, t in enumerate(after)) or _reason_about(tokens, p, known):
                return tokens[:p]
            break
    return tokens


_REASONS = {"so", "because", "cos", "coz", "cuz", "since"}


def _reason_about(tokens: list[str], p: int, known: Known) -> bool:
    """Whether ``tokens[p]`` opens a reason that names only the classes before it again ("also
    dogs since the farm dogs show up in everything": set 69), never a new one."""
    if tokens[p] not in _REASONS:
        return False
    named = {singular_forms(t)[-1] for t in tokens[:p] if known.class_word(t)}
    again = [singular_forms(t)[-1] for t in tokens[p + 1:] if known.class_word(t)]
    return bool(again) and set(again) <= named


_OFTEN = {"always", "often", "usually", "sometimes", "constantly", "frequently", "easily", "so",
          "very", "too", "getting", "being", "commonly", "regularly", "mostly"}


def _passive(after: list[str]) -> bool:
    """Whether ``after`` opens with a past participle, after adverbs ("always confused"), that
    takes nothing back ("are dropped", "were removed", "are being discontinued": an outside
    review of stop 39)."""
    word = next((w for w in after if w not in _OFTEN), "")
    return len(word) > 4 and word.endswith("ed") and word not in TAKEN_BACK_WORDS


def _participle(token: str, before: str, known: Known) -> bool:
    """A present participle right after a class word, starting what is said of it ("cows
    grazing", "a sheepdog lying by the gate": set 43), not a noun in "-ing" ("cat bedding",
    "dog clothing") nor a style word ("horse painting")."""
    return len(token) >= 5 and token.endswith("ing") and known.class_word(before) \
        and not known.class_word(token) and token not in ING_NOUNS and not is_style(token)


# verbs whose object may be a digit itself: "kids write 2, 4, 6 and 8" (stop 32: lost the 2)
_WRITING = {"write", "writes", "wrote", "draw", "draws", "drew", "scribble", "scribbles", "read",
            "reads", "recognise", "recognize", "detect", "classify", "identify", "spot"}



# "that's" unspelt is no plural: "numbers one … five thats all" dropped five (set 78, at 200)
_CONTRACTED = frozenset({"thats", "whats", "theres", "heres", "lets", "hes", "shes", "wheres",
                         "pls", "thx", "thanks"})  # "3, 5 and 8 pls" (set 101: lost the 8)


def drop_numbers(tokens: list[str], known: Known) -> list[str]:
    """Without numbers that count, label or bound something else: "3 kids", "7 days", "one
    piece swimsuits", "version 2", "size 4", "aged 1 to 3", "from after 6" (a number followed
    by a content word or a plural, or preceded by a content word, a range word or a bound such
    as "after"; numbers and digit words such as "handwritten", "digits", "written" do not
    count)."""
    def counts(i: int) -> bool:
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        before = tokens[i - 1] if i > 0 else None
        ranged = before in _RANGE_WORDS and i > 1 and is_number(tokens[i - 2])  # "1 to 3"
        if ranged or before in _BOUNDS or after in _RANGE_WORDS or after in _COUNTED:
            return True
        if before is not None and is_number(before) and after is not None and is_style(after):
            return False  # a list's last digit before its style: "0 2 4 6 8 photos"
        if after in MADE_ON and not (i + 2 < len(tokens) and (known.class_word(tokens[i + 2])
                                                          or plural(tokens[i + 2]))):
            return False  # "the digits 3, 5 and 9 drawn in a comic book style" (set 71); not
        # "4 painted cows" (an outside review)
        if after is not None and (adverb(after) or tokens[i] not in NUMERALS  # "wrote a seven
                                  and tokens[i] not in NUMERALS.values()  # correctly"; "9s
                                  and tokens[i] not in BIG_NUMBERS):
            after = None  # keep getting mixed up": a plural digit counts nothing after it
        if after is not None and not is_number(after) and after not in DIGIT_CONTEXT and (
                after not in FILLER or after in CONTEXT_WORDS
                or (after.endswith("s") and after not in ENGLISH_STOP_WORDS | _CONTRACTED)
        ) and not (before is None and after.endswith("ed") and len(after) > 4):
            # "3 kids", "5 comes in", "our 2 licensed photographers"; not "nine apart", "9 is"
            # nor a chunk opening "5 recognized" ("the numbers 1 and 5 recognized")
            return True
        return before is not None and (before not in FILLER or before in CONTEXT_WORDS) \
            and not is_style(before) and not is_number(before) \
            and before not in DIGIT_CONTEXT and before not in _WRITING  # "phase 2", not "write 2"
    def compared(i: int) -> bool:  # "confuses 1s": a digit, whatever follows
        return i > 0 and tokens[i - 1] in COMPARING
    return [t for i, t in enumerate(tokens)  # "about forty ewes" counts too; "…, nine, ten"
            if not (is_number(t) or t in BIG_NUMBERS) or compared(i) or not counts(i)]


def join_modifiers(text: str, known: Known) -> str:
    """A hyphenated modifier before a class word made one word ("button-down shirts" →
    "buttondown shirts"), unless a part is a class or style word ("t-shirts", "oil-painted
    zebras") or together they name a class."""
    def join(m: re.Match) -> str:
        first, second, head = m[1].lower(), m[2].lower(), m[3].lower()
        keep = not known.class_word(head) or known.names_a_class(f"{first} {second}") \
            or any(known.class_word(w) or is_style(w) for w in (first, second))  # fmt: skip
        return m[0] if keep else m[1] + m[2]
    return _MODIFIER.sub(join, text)


def compared_with(text: str, known: Known) -> str:
    """"confuses 1s with 7s and 4s with 9s" → "1s and 7s …": in a sentence that confuses or
    mixes up classes and compares nothing "from" or "vs" another, "with" between two class
    words pairs them (read as a post-modifier, "1s" was lost: a wrong 200). "Tell dogs with
    coats on from cats" and "photos of cats with collars" are left alone."""
    def pair(sentence: str) -> str:
        tokens = {f for t in re.findall(r"[a-z]+", sentence.lower()) for f in singular_forms(t)}
        if not tokens & _CONFUSING or tokens & {"from", "vs", "versus", "between"}:
            return sentence
        return _WITH_PAIR.sub(lambda m: f"{m[1]} and " if known.class_word(m[1].lower())
                              and known.class_word(m[2].lower()) else m[0], sentence)
    return "".join(pair(s) for s in re.split(r"(?<=[.!?\n])", text))
