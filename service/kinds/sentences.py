"""Where a description's sentences end, where its list items are split, and whether its
opening before a colon or dash is a header (a label such as "farm animals:") or content.

Split from ``parsing.py`` at stop 32; ``parse`` uses :data:`SENTENCE`, :data:`SPLIT`,
:func:`read_header` and :func:`one_line` (moved here from ``rewrites.py`` at stop 49: how a
multi-line text's lines end is where its sentences end).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.chunks import Known, content, is_style
from service.kinds.counted import without_counts
from service.kinds.fields import ABOUT_IMAGES
from service.kinds.ranges import span
from service.kinds.tokens import NUMERALS, words
from service.kinds.vocabulary import STYLE_HINTS
from service.kinds.wholes import names_a_group

# List separators, not inside a hyphenated compound ("black-and-white"). Not a spaced dash:
# tried at stop 29, it split "pets — cats and dogs" and "Fashion-MNIST style – bags" apart.
# "plus" between two numbers is arithmetic ("the digit 3 plus 4"), not a list; after a number
# and before an article it joins ("numbers zero to nine plus a cat", set 50: the digits lost)
_NUMBER_BEFORE = "".join(rf"(?<!\b{n}\s)" for n in NUMERALS.values()) + r"(?<!\d\s)(?<!\d)"
SEPARATORS = re.compile(
    r",|;|&|\+|/|(?<![-\w])(?:and|or|nor|n|und|oder|ou|aur|et|vs\.?|(?-i:v)\.?|versus|from|"
    + _NUMBER_BEFORE
    + r"plus(?!\s+(?:sizes?|signs?|symbols?|(?:and|or)\s+minus|some|a\s+few|more|"
    r"others?|any\w*|the\s+(?:odd|even|rest|others?)|(?:the\s+)?(?:digits?|numbers?|numerals?|"
    r"animals?|clothes|clothing|garments?|apparel|fashion))\b)|"
    r"but(?=\s+(?:not|no|never|skip|drop|remove|exclude|omit|leave|ditch|scrap|forget|"
    r"ignore)\b)|"  # "the cow and horse but skip the bird" (set 63: one chunk, a 422)
    r"plus(?=\s+(?:an?|the)\s+(?!few\b|couple\b|\d|(?:zero|one|two|three|four|five|six|seven|"
    r"eight|nine)\b)))"
    r"(?![-\w])", re.I)  # "cats n dogs", "horses but not the dogs we discussed", "Sandalen
# und Sneaker" (set 46: class words a reader knows, joined in German); "aur" (Hindi), "et"
# (French, Latin: "Felis catus et Canis familiaris") and a lower-case "v" ("trainers v
# sandals": sets 72-75; not "a V shaped back": an outside review)
SPLIT = re.compile(f"({SEPARATORS.pattern})", re.I)  # the same, separators kept
# A full stop ends a sentence only after a word of four or more letters ("Dr. Smith" and
# "Version 2." do not end one); a parenthesis is a sentence of its own (an aside).
# A shorter lower-case word ends one before a capital unless it is an abbreviation: "cat vs dog.
# Also rabbits" is two sentences (stop 32: "dog rabbits" read as one mention); "Mr. Li", "esp.
# Cows" and "Ask Bo. He wants" are one.
_ABBREVIATION = "".join(f"(?<!\\b{a})" for a in ("mr", "ms", "dr", "st", "vs", "no", "mrs", "fig",
                                                  "co", "inc", "ltd", "jr", "sr", "ft", "mt", "esp",
                                                  "ie", "eg", "cf", "viz", "aka"))
# a short word of one case ends a sentence; a capitalised one is a name ("Ask Bo. He …"); a
# quoted word ends one too ("'zero'. Nice-to-have: none": set 9, zero read as taken back)
_SHORT = "|".join(f"(?<=\\b(?-i:[{c}]{{{n}}}))" for c in ("a-z", "A-Z") for n in (2, 3))
SENTENCE = re.compile(r"(?<=\bplease)(?=\s+(?:my|i|we|our|it'?s|thanks?|thx)\s)|"  # "0 TO 9 PLEASE
                      # MY EYES ARE BAD" (set 66: "eyes bad" asked back)
                      r"(?<=[a-z]{4})\.(?=\s|$)|(?<=[a-z]{4}['\"\u2019\u201d])\.(?=\s|$)|"
                      r"(?<=\d)\.(?=\s+(?-i:[A-Z]))|[!?]+(?=\s|$)|[()]"
                      r"|(?<=\b\d)\.(?=\s+(?:we|i|also|please|pls|plus|oh|actually|but|thanks|thx|"
                      r"digits?|numbers?|numerals?|sprint|week|phase|then|read|sort|classify|"
                      r"detect|recognise|recognize|tell|need|want|make|build)\b)"  # "digits 0-4.
                      # digits 5-9" was one chunk (an outside review); "8, 9, 0. read em" lost
                      # the 0 as a count of "read" (set 66)
                      rf"|(?<=\w){_ABBREVIATION}\.(?=\s+(?:ok|okay|so|oh|then|actually|that'?s|"
                      r"thats|nothing|thanks|thx|please|pls|we|i)\b)"
                      rf"|(?<=[a-z]){_ABBREVIATION}(?<!\betc)\.(?=\s+(?:drop|remove|scratch|skip|"
                      r"delete|forget|ditch|nix|lose|minus|replace|swap)\b)"
                      rf"|(?:{_SHORT}){_ABBREVIATION}"
                      r"\.(?=\s+(?-i:[A-Z]))"
                      r"|,(?=\s*(?:those|these|they)\s+(?:are|were|will|get|go|have|already)\b)"
                      r"|(?<=\bit|\bus|\bme)\.(?=\s)|(?<=\bthem)\.(?=\s)|(?<=\bgot)\.(?=\s)"
                      # "the game guesses it. need all ten digits" (set 52: "game" glued to the
                      # digits); "Everything you got. all 30 classes" (set 107: zero counted)
                      r"|(?<=\s\s)\.(?=\s+(?-i:[A-Z]))",  # a full stop left alone by words removed
                      # ("None of the wild ones. Cats, dogs": set 56, the cats were excluded); two
                      # spaces, not a quote's ('"sweaters". They are pullovers': one mention)
                      re.I)  # "mixing up 6 and 9. Please rebuild": a digit ends one too, and
# before a lower-case opener ("digits 1 to 5. we also need 6"; not "1. cats 2. dogs"), as any
# word does before "ok", "so", "then" ("hippo? skip that too. ok just the first three") and
# before a word that takes back after a word ("zebra, cat. scratch the cat": was "cat scratch
# cat"; not "1. drop the old model", a numbered list; not "no": "cat. no, dog" corrects), and
# a comma before a pronoun and its verb ("except 0 and 1, those are handled by another module")
# "pets: cat and dog", "paintings — …"; not a spaced range ("digits 1 - 4" was one, four)
_HEADER = re.compile(r"^(.*)(?::|(?<!\d)\s[—–-]\s|\s[—–-]\s(?!\d))(.*)$", re.S)
_LEAVES_OUT = re.compile(r"\b(?:no|without|except)\s+(?:the\s+|any\s+)?[a-z]{3,}", re.I)
_UPDATE = {"update", "updated", "edit", "correction", "addendum", "ps", "p", "s", "also",
           "amendment", "amended", "revision", "revised", "change"}  # "Amendment (14:20): please
# add trousers" (set 61: the classes before it were lost); a time or number in it is no word
_NOT = {"not", "never", "dont", "doesnt", "shouldnt", "wont", "cannot", "cant"}  # in a header


_FORWARD = re.compile(r"\b(?:following|below|these|this\s+list)\b", re.I)  # points ahead


def read_header(text: str, known: Known) -> tuple[list[str], str]:
    """``(style words and hints, text)``: a header before a colon or dash ("farm animals: cows,
    sheep", "paintings — …") gives only those words, unless it names a class ("cats: dogs,
    horses")."""
    header = _HEADER.match(text)
    if not header or not words(header.group(2)):
        return [], text
    head, rest = header.group(1), header.group(2)
    ends = [m.end() for m in SENTENCE.finditer(head)]  # "digits 1 to 5. Update: also 6":
    if ends and _UPDATE >= {w for w in words(head[ends[-1]:]) if not w.isdigit()} != set():
        # "Update" heads what follows only
        styles, text = read_header(head[ends[-1]:] + text[header.end(1):], known)
        return styles, f"{head[:ends[-1]]} {text}"
    def names(part: str) -> bool:  # a class, or a range of them ("… numbers 0 through 9 -
        return any(known.names_a_class(content(words(c), known))  # all ten of them", set 45)
                   or span(c, known.names_a_class) for c in SEPARATORS.split(part))
    if names(without_counts(head)) or (names_a_group(head, known.groups) and not names(rest)):
        return [], f"{head}, {rest}"  # "cats: dogs", "even digits only (…): for a checker"
    last = head[ends[-1]:] if ends and not _FORWARD.search(head[:ends[-1]]) else head
    if _NOT & set(words(last)) and any(map(is_style, words(last))):  # "Not photos this time
        return [], f"{head}. {rest}"  # — I've been scanning charcoal studies" (set 83): the
    # header turns down its own style, not what follows
    if _negates_rest(last, rest, text[header.end(1):].lstrip().startswith(":")):
        return [], f"not {rest}"  # "The model shall not classify any of the following: cats";
    # not "(don't ask). classify:" (set 67: all negated)
    if _LEAVES_OUT.search(head):  # "Only clothing, no shoes of any kind - I need …": content
        return [], f"{head}, {rest}"
    return [w for w in words(head) if is_style(w) or w in STYLE_HINTS], rest


def _negates_rest(last: str, rest: str, colon: bool) -> bool:
    """Whether a header's last sentence turns down the list after it ("The model shall not
    classify any of the following: cats", "We do not stock - sandals, sneakers", "Not needed
    for launch - birds, bears"): a "not" in it, unless a dash leads to "just"/"only", which
    asks again ("let's not boil the ocean - just dogs and cats": set 66, all negated)."""
    if not _NOT & set(words(last)):
        return False
    return colon or bool(_FORWARD.search(last)) or (words(rest) or [""])[0] not in ("just", "only")


# "- cow", "1) giraffe", "(b)"
_BULLET = re.compile(r"^\s*(?:[-*•·>]|\d{1,2}[.)]|\(?[a-h]\))\s+")


def one_line(text: str, class_word: Callable[[str], bool] = lambda _: False) -> str:
    """A multi-line request as one line: bullets, quote marks ("> ") and list numbers dropped
    ("1) giraffe"), a line that ends without punctuation continued as a list item."""
    lines = [_BULLET.sub("", line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    return " ".join(line if line[-1] in ".!?:;," else line + _end(after, class_word)
                    for line, after in zip(lines, lines[1:], strict=False)) \
        + (" " + lines[-1] if lines else "")  # fmt: skip


# a line opening with a note of its own ("- Update: coats handled by partner; remove coats") is
# a sentence of its own, not the list's next item (set 63: "update" read as a class, a 422);
# not an images field, read already where it says a style only: "Classes: cats, dogs / Images:
# mostly ferrets" asks for ferrets
_KEYED = re.compile(r"(?P<key>[A-Z][\w'-]*(?:\s[\w'-]+){0,2}):\s")
_STYLE_LINE = re.compile(r"[A-Z][\w-]*(?:\s[\w-]+){0,2}\.")  # a field's style, kept: "Photography."


def _end(after: str, class_word: Callable[[str], bool]) -> str:
    """How a line without punctuation ends: as a list item, unless the next line is one of
    its own (a field, or a field's style kept: "Photography."). A class keyed ("- Dog:
    puppies count as dogs", "- Sneakers: handled by old model") is the list's next item."""
    keyed = _KEYED.match(after)
    return "." if keyed and keyed["key"].lower() not in ABOUT_IMAGES \
        and not any(map(class_word, words(keyed["key"]))) \
        or _STYLE_LINE.fullmatch(after) else ","  # fmt: skip
