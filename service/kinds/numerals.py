"""Digits described by what they are or how they are drawn: "the smallest prime", "the
multiplicative identity", "the loneliest number", "looks like a snowman", "a straight stick
with a little flag", "a 6 turned upside down".

The catalogue's own definitions say much of this, yet the encoder ranks such a definition's
digit first and still below the described threshold, or ranks a neighbour first: "the smallest
prime number" sat nearest three, "the loneliest number" nine, "the digit for a couple of
things" zero (stop 34: 141 of the read pool's definition items asked back were digits, most
of these kinds). Digits are few and their properties and shapes are fixed, so a table reads
them, as :mod:`service.kinds.counts` reads known counts.

Only listed definitions are read here (:func:`service.kinds.numbers.digit_in`), each a class
of its own, and a definition that names a class or foil of another kind ("a bird that looks
like a swan") is left to the encoder.
"""

from __future__ import annotations

import re

# (pattern, digit); the first that matches wins, so the specific shapes come first
_PROPERTIES = [
    (r"\b(?:only even prime|(?:smallest|lowest|first|least) prime)\b", 2),
    (r"\b(?:smallest|lowest|first|least) odd prime\b", 3),
    (r"\b(?:largest|biggest|highest|greatest) prime (?:digit|below ten|under ten|less than "
     r"ten|under 10|below 10)\b", 7),
    (r"\b(?:largest|biggest|highest|greatest) (?:single |one )?(?:digit|single digit "
     r"number|one digit number)\b", 9),
    (r"\b(?:largest|biggest|highest|greatest) odd digit\b", 9),
    (r"\b(?:largest|biggest|highest|greatest) even digit\b", 8),
    (r"\b(?:smallest|lowest|first|least) odd (?:digit|number|positive)", 1),
    (r"\b(?:smallest|lowest|first|least) (?:positive|counting) (?:integer|whole number|number|"
     r"digit)\b|\bfirst counting number\b", 1),
    (r"\b(?:smallest|lowest) (?:whole number|digit|non negative)\b", 0),
    (r"\bsmallest composite\b", 4), (r"\bsmallest perfect number\b", 6),
    (r"\badditive identity\b|\bneither positive nor negative\b", 0),
    (r"\bmultiplicative identity\b|\bloneliest number\b|\bnumber divided by itself\b", 1),
    (r"\b(?:highest|largest|biggest|most) (?:number|dots|pips|face) on (?:a|an|the) "
     r"(?:normal |standard |ordinary |regular |six sided )?(?:die|dice)\b", 6),
    (r"\b(?:a|the) (?:pair|couple|duo)\b(?! of (?!(?:things|items|objects)\b))", 2),
    (r"\b(?:a|the) (?:trio|triple)\b(?! of (?!(?:things|items|objects)\b))", 3),
    (r"\ba quartet\b", 4), (r"\ba quintet\b", 5),
    (r"\bnothing at all\b|\bnone left\b|\b(?:completely |an )empty (?:box|basket|jar|shape)\b",
     0),
]
# "the digit cero", "the number drei": a number word of another language, after a word that
# says it is one (alone, "dos" or "acht" may be anything)
_FOREIGN = {w: d for d, ws in enumerate([
    "cero zero null nul", "uno eins un una yksi", "dos zwei deux due", "tres drei trois tre",
    "cuatro vier quatre quattro", "cinco funf fuenf cinq cinque", "seis sechs sei",
    "siete sieben sept sette", "ocho acht huit otto", "nueve neun neuf nove"]) for w in ws.split()}
_FOREIGN_NUMBER = re.compile(r"\b(?:digit|number|numeral)\s+(" + "|".join(_FOREIGN) + r")\b")
_SHAPES = [
    (r"\bsnowman\b|\bhourglass\b|\binfinity\b|\b(?:two|pair of|2) (?:stacked )?(?:circles|"
     r"loops|rings|balls|zeros|os)\b|\b(?:circles|loops|rings) (?:stacked|on top of each)", 8),
    (r"\bupside[ -]?down (?:6|six)\b|\b(?:6|six) (?:turned |rotated |flipped )?upside[ -]?down"
     r"\b|\bupside[ -]?down\b.*\b(?:becomes?|turns? into|looks like) (?:a |an )?(?:6|six)\b",
     9),
    (r"\bupside[ -]?down (?:9|nine)\b|\b(?:9|nine) (?:turned |rotated |flipped )?upside[ -]?"
     r"down\b|\bupside[ -]?down\b.*\b(?:becomes?|turns? into|looks like) (?:a |an )?(?:9|nine)"
     r"\b", 6),
    (r"\b(?:loop|circle|ring) (?:on|at) (?:the )?top\b.*\b(?:tail|stem|stick|line|stroke)\b",
     9),
    (r"\b(?:loop|circle|ring) (?:on|at) (?:the )?bottom\b", 6),
    (r"\bswan\b", 2), (r"\bsail\b|\bsailboat\b", 4),
    (r"\b(?:backwards?|reversed|flipped|mirrored) (?:capital |letter )?e\b|\be (?:backwards|"
     r"reversed|flipped)\b", 3),
    (r"\bflat (?:hat|cap|top)\b.*\bbelly\b", 5),
    (r"^(?=.*\b(?:triangle|open angle|corner)\b)(?=.*\b(?:cross|vertical))", 4),
    (r"\b(?:horizontal|flat) (?:top|bar|line|stroke)\b.*\b(?:diagonal|slant)", 7),
    (r"\b(?:straight|vertical|upright|up and down) (?:vertical )?(?:line|stick|stroke)\b|"
     r"\bstick with (?:a )?(?:little |small )?flag\b|\blike (?:a |an )?(?:single |lone |thin |"
     r"straight )?(?:stick|pole|"
     r"matchstick|pencil|candle|spear)\b", 1),
    (r"\b(?:circle|oval|egg|donut|doughnut|ring|letter o)\b", 0),
]
_PROPERTIES = [(re.compile(p), d) for p, d in _PROPERTIES]
_SHAPES = [(re.compile(p), d) for p, d in _SHAPES]
# a comparison or any arithmetic: "the smallest prime greater than five", "the smallest prime
# squared", "the loneliest number plus one", "the last digit of 2023" are no table entry
# (an outside review's probes, stop 34); :mod:`.arithmetic` reads what it can of them
_COMPARED = re.compile(r"\b(?:greater|more|bigger|larger|higher|less|fewer|smaller|lower) than\b|"
                       r"\b(?:above|after|over|before|below|under|next|plus|minus|times|squared|"
                       r"cubed|doubled?|twice|half|power|sum|product|factor)\b|\d|[+*/^]")
# a shape, a count word ("a pair") or "nothing at all" is a digit's only where the definition
# is about a digit, said first ("the digit that looks like a snowman", "a numeral made of two
# stacked circles"): "an hourglass-figure gown", "a pair you wear on the beach", "a tote
# with nothing at all printed on it" and "the letter l, a single vertical line" are not
_ABOUT_A_DIGIT = re.compile(r"^(?:it is |its |i am |im )?(?:the |a |an |this |that )?(?:[a-z]+ )"
                            r"?(?:digit|numeral|number)s?\b(?! of\b)")  # "the curly digit …"
_NOT_DIGIT = re.compile(r"\b(?:letter|alphabet|symbol|sign|character|hashtag|emoji|icon)s?\b")
_COUNT_WORDS = 4  # the pair, trio, quartet and quintet entries (before "nothing") need it
# "a tote with nothing at all printed on it": nothing said of a thing, not a count
_OF_A_THING = re.compile(r"\bwith nothing\b|\bprinted\b|\bwritten on\b")


def digit_named(definition: str) -> int | None:
    """The digit ``definition`` states a known property or shape of, or None."""
    text = re.sub(r"[^0-9a-z]+", " ", definition.lower()).strip()
    about_a_digit = bool(_ABOUT_A_DIGIT.match(text)) and not _NOT_DIGIT.search(text)
    if match := _FOREIGN_NUMBER.search(text):
        return None if _COMPARED.search(text) else _FOREIGN[match[1]]
    for k, (pattern, digit) in enumerate(_PROPERTIES):
        if pattern.search(text):
            counting = len(_PROPERTIES) - 1 - _COUNT_WORDS <= k < len(_PROPERTIES) - 1
            refused = _COMPARED.search(text) or (counting and not about_a_digit) or (
                k == len(_PROPERTIES) - 1 and _OF_A_THING.search(text))
            return None if refused else digit
    if not about_a_digit:
        return None
    return next((digit for pattern, digit in _SHAPES if pattern.search(text)), None)
