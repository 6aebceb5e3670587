"""Glosses in a description: a word explained by another ("jumpers means sweaters", "bag
(handbag)", "gato (cat)", "shirts (the button-up kind)") and a group word explained by its
classes ("shoes (sandals, trainers, boots)", "except the footwear (sandals, sneakers, ankle
boots)"). Each is rewritten to the classes it names, so the reader sees one mention per class.
Split from ``rewrites.py`` at stop 37 (over 300 lines).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.tokens import words
from service.kinds.vocabulary import FILLER, GENERIC

# "except the footwear (sandals, sneakers, ankle boots)": the group left out, spelt out
_ITEMS = re.compile(r",|\b(?:and|or)\b")
_SUBGROUP = re.compile(r"\b(except(?:\s+for)?|excluding|other\s+than)\s+(?:the\s+|any\s+)?"
                       r"[a-z][\w -]{0,30}?\s*\(([^()]+)\)(?!\s*(?:too|as\s+well|also)\b)", re.I)
# "all animals but the farm ones (cow, …)" (set 44); not "cats and dogs, but also the wild ones
# (bear, zebra)", "… (horse, cow) too" (an outside review)
_ALL_BUT = re.compile(r"\b(all\s+(?:the\s+)?[a-z]+,?\s+)but(?:\s+not)?(?!\s+(?:also|especially|"
                      r"even|only|just|not\s+(?:only|just))\b)\s+(?:the\s+|any\s+)?"
                      r"[a-z][\w -]{0,30}?\s*\(([^()]+)\)(?!\s*(?:too|as\s+well|also)\b)", re.I)
# "Smaller ones we don't need (bird, cat)": the brackets name what is not needed
_UNNEEDED = re.compile(r"(\b(?:don'?t|do\s+not|doesn'?t|not)\s+(?:need|want|care\s+about)"
                       r"(?:\s+(?:them|those|these|it))?)\s*\(([^()]+)\)", re.I)
_GLOSS = re.compile(r"\b([a-z][\w-]*(?: [a-z][\w-]*)?)\s*\(\s*([a-z][\w -]{0,24}?)\s*\)", re.I)
_MEANS = re.compile(r"\b([a-z][\w-]*)\s+means\s+([^.,;:!?()]*)", re.I)
# "shirts (the button-up kind)": the brackets say which sort of that class (set 43: a 422)
_KIND = {"kind", "kinds", "type", "types", "sort", "sorts", "variety", "style", "ones", "one"}


def equated(text: str, class_word: Callable[[str], bool],
            class_of: Callable[[str], str | None]) -> str:
    """"jumpers means what you call sweaters" (a spaced "=" reads "means") as "jumpers": the
    writer says what a class of theirs is, in words that name no class or the same one
    (stop 32: three rows of the read sets, each a 422); "boots means the short ankle ones"
    keeps its words, which tell which class."""
    def said(m: re.Match) -> str:
        rest = [w for w in words(m[2]) if class_word(w)]
        named = class_of(m[1].lower())
        same = named is not None and (not rest or class_of(" ".join(rest)) == named)
        return m[1] if same else m[0]
    return _MEANS.sub(said, text)


# words before a class word that keep it the class ("domestic equine (horse)": set 57, a 422)
_PLAIN = {"domestic", "common", "regular", "ordinary", "normal", "plain", "everyday", "usual"}


def glossed(text: str, foreign: Callable[[str], bool],
            class_of: Callable[[str], str | None]) -> str:
    """"bag (handbag)", "jumpers (sweaters)" as the word outside the brackets when both name
    the same class: a gloss, not a second mention of it (stop 32: a 422 on set 28). A word of
    another language glossed by a class ("gato (cat)", "Turnschuhe (sneakers)": seven 422s of
    stop 33's set 30) as the class, and a class glossed in another language ("shirts
    (chemises)") as the class; a class glossed by its sort ("shirts (the button-up
    kind)") as the class; an English word stays ("wolves (dogs)", "exclude (cats)",
    "maybe (birds)": an outside review's wrong 200s when read so)."""
    def gloss(m: re.Match) -> str:
        inside = re.sub(r"^(?:the|a|an|our|my)\s+", "", m[2].lower())  # "dogs (the sheepdogs)"
        word = m[1].split()[-1].lower()  # not a compound of a class ("hotdogs (dogs)")
        lead = m[1].lower().split()[:-1]  # "also dogs (…)", not "big cats (cats)"
        named = class_of(m[1].lower()) or (class_of(word) if set(lead) <= FILLER | _PLAIN
                                           else None)
        inner = class_of(inside)
        if inner is not None and foreign(word) and not any(
                class_of(word[i:]) for i in range(1, len(word) - 2)):  # fmt: skip
            return " ".join([*m[1].split()[:-1], m[2]])  # "and inu (dog)" → "and dog"
        if named is not None and inner is None and re.fullmatch(r"[a-z]+", inside) \
                and foreign(inside):  # "the shirts (chemises)": set 74, the gloss asked back
            return m[1]
        if words(m[2])[-1] in _KIND and not any(class_of(w) for w in words(m[2])[:-1]) \
                and class_of(word) is not None:  # fmt: skip
            return m[1]  # "recognise shirts (the button-up kind)"
        return m[1] if named is not None and inner == named else m[0]
    return _GLOSS.sub(gloss, text)


# "shirts (with buttons and collar)", "(like in a kids' counting show)": brackets that describe
_DESCRIBING = re.compile(r"\(\s*(?:with|in|on|at|like|that|which|for|from|made|having)"
                         r"\b[^()]{0,80}\)", re.I)  # not "(without footwear)": it leaves out


# "(the horses are semi-feral ponies)": brackets saying what a class named before them is
_RESTATED = re.compile(r"\(\s*(?:the\s+|our\s+|my\s+)?(?P<w>[a-z]+)\s+(?:are|is|were|was)\b"
                       r"[^()]{0,80}\)", re.I)


_NEGATING = re.compile(r"\b(?:not|no|never|out|excluded|drop\w*|remov\w*|skip\w*|unnecessary|"
                       r"discontinu\w*|optional|actually|also|add\w*|plus|instead|teddy|teddies|"
                       r"toys?|stuffed|plush|fake|statues?|models?|costumes?|really)\b|n't\b",
                       re.I)  # "(the cows are not needed)", "(… are dropped)": they say more
# than what the class is (an outside review of stop 39)


def _restates(m: re.Match, class_of: Callable[[str], str | None]) -> bool:
    """Whether brackets only say what a class named before them is ("… and horses (the horses
    are semi-feral ponies)", set 49): no other class, nothing taken back or added."""
    name = class_of(m["w"].lower())
    return name is not None and any(class_of(w) == name for w in words(m.string[:m.start()])) \
        and not _NEGATING.search(m[0]) \
        and {class_of(w) for w in re.findall(r"[a-z][\w-]*", m[0].lower())} <= {name, None}


# "horses (which we don't need)", "cows (out of scope)": the class before is taken back
_UNWANTED = re.compile(r"\b([a-z][\w-]*)\s*\((?P<inner>(?:which\s+|that\s+|those\s+|they\s+)?"
                       r"(?:we\s+|i\s+)?(?:are\s+|is\s+)?(?:not\s+(?:needed|required|wanted|included|"
                       r"in\s+scope)|do\s*n[o']?t\s+(?:need|want)(?:\s+(?:them|those|it))?|out\s+of\s+"
                       r"scope|excluded)(?:\s+(?:at\s+all|anymore|for\s+now|here))?)\s*\)", re.I)
# the brackets say nothing else: not "(breed not needed)", "(not needed in v1 but needed now)"


def without_descriptions(text: str, class_of: Callable[[str], str | None],
                         is_style: Callable[[str], bool]) -> str:
    """Without brackets that open with a preposition or "like" and name no class or style:
    they describe what is around them ("shirts (with buttons and collar)"), and their words
    read as classes asked for ("buttons", "counting": two 422s on set 46). A class followed
    by brackets that turn it down ("horses (which we don't need)", "cows (out of scope)") is
    taken back (an outside review: kept at 200)."""
    text = _UNWANTED.sub(lambda m: f"{m[1]} (drop {m[1]})" if class_of(m[1].lower()) else m[0],
                         text)
    text = _RESTATED.sub(lambda m: " " if _restates(m, class_of) else m[0], text)
    return _DESCRIBING.sub(lambda m: m[0] if any(class_of(w) or is_style(w) or w in GENERIC
                                                 for w in words(m[0])) else " ", text)


# "the kinds of shoes you have (sandals, trainers, boots)": the brackets say which (set 42)
_GENERIC_GLOSS = re.compile(r"\b(?P<g>[a-z]+)(?:\s+(?:you|we)\s+(?:have|offer|sell|carry))?\s*"
                            r"\((?P<inner>[^()]{1,80})\)", re.I)  # not "all animals (e.g. …)"
# a negation or "any" before the word, or a verb after the brackets: what they list is not
# simply asked ("no footwear (sandals) needed", "shoes (sandals) are out": an outside review)
_GLOSS_SCOPE = re.compile(r"\b(?:no|not|without|any|except|excluding|skip|drop)\s+(?:\w+\s+){0,2}$",
                          re.I)
_GLOSS_SAID = re.compile(r"\s*(?:are|is|were|was|we|already|not|out|needed|aren|isn|don)\b", re.I)
_TOTAL_BEFORE = re.compile(r"\b(?:all|every|any|whole|entire)\s+(?:the\s+|of\s+the\s+)?$", re.I)
_EXAMPLES = re.compile(r"\b(?:e\.?\s?g|especially|mostly|say|such|like|including|etc)\b|\.\.\.|…",
                       re.I)  # brackets that give examples, not the classes


def spelt_subgroups(text: str, class_word: Callable[[str], bool]) -> str:
    """"except the footwear (sandals, sneakers, ankle boots)" as "except sandals, sneakers,
    ankle boots" when the brackets name a class: the reader then excludes those classes (it
    read the brackets as an aside, whose classes were asked for: a wrong set at 200). Likewise
    "we don't need (bird, cat)" (stop 32), and a word for several classes glossed by its
    classes ("shoes (sandals, boots)") is those classes."""
    def names(inner: str) -> bool:  # every item a short class phrase: "sandals, sneakers"
        items = [words(item) for item in _ITEMS.split(inner) if words(item)]
        return bool(items) and all(any(map(class_word, item)) and len(item) <= 3
                                   for item in items)  # fmt: skip

    text = _SUBGROUP.sub(lambda m: f"{m[1]} {m[2]}" if names(m[2]) else m[0],
                         text)  # not "except for one case (we also need pullovers)"
    text = _ALL_BUT.sub(lambda m: f"{m[1]}except {m[2]}" if names(m[2]) else m[0], text)
    def gloss(m: re.Match) -> str:  # "shoes (sandals, boots)": not examples, not after
        before, after = m.string[:m.start()], m.string[m.end():]  # "all"/"no", not "… are out"
        plain = not (_EXAMPLES.search(m["inner"]) or _TOTAL_BEFORE.search(before)
                     or _GLOSS_SCOPE.search(before) or _GLOSS_SAID.match(after))
        return m["inner"] if m["g"].lower() in GENERIC and names(m["inner"]) and plain else m[0]
    text = _GENERIC_GLOSS.sub(gloss, text)
    return _UNNEEDED.sub(lambda m: f"{m[1]}, except {m[2]}" if names(m[2]) else m[0],
                         text)  # "… we don't need, except bird, cat": both excluded
