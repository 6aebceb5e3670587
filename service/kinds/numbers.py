"""Digits described by arithmetic or order: "the number after six", "half of eighteen", "3 + 4".

People who describe a digit without naming it often compute it. A sentence encoder does not
compute ("one less than ten" is as near to *one* as to *nine*), so such a mention is evaluated
here and, when it comes to a whole number from 0 to 9, names that digit outright. Only a
mention that is nothing but the computation (and filler such as "the number", "that comes",
"you get") is read; anything else is left to the encoder. "and", "-" and "/" are not
operators: they separate classes and ranges ("four and five", "0-4", "cats/dogs").
"""

from __future__ import annotations

import functools
import re

from service.kinds import arithmetic, counts, numerals

# "how many wheels a bicycle has": a count is accepted only as a near paraphrase of a catalogue
# fact (a description). The encoder answers counts by association: "the number of months in a
# year" is 0.78 from four's "the number of seasons in a year"; right counts in the outside sets
# score 0.80 or more 77 times of 89, and no wrong one does (docs/results-resolution.md, stop 26).
COUNTING = re.compile(r"\b(?:how many|number of|count of|amount of|total of)\b", re.I)
# "months in a year" counts too, but only where a number class is chosen: the same shape is a
# verb's in "sleeps in a cave all winter" (bear) and "tweets in the trees" (bird), which the
# count threshold refused (17 animal definitions of the tuning pool; stop 28).
COUNTED = re.compile(r"\b\w+s\s+(?:in|on|of)\s+(?:a|an|the|one)\s|\bcount(?:s|ing|ed)?\b",
                      re.I)  # "count the fingers on both hands and take away three"
_SUM = re.compile(r"\b(?:minus|plus(?!\s+signs?\b)|subtract\w*|take\s+away|divided\s+by|"
                  r"multiplied\s+by)\b", re.I)
# "a number bigger than five" (set 65: five at 200) bounds a value, it names none
_COMPARED = re.compile(r"\b(?:bigger|greater|larger|higher|more|smaller|lower|less|fewer)\s+"
                       r"than\b", re.I)
_ONE_OF = re.compile(r"\b(?:smallest|largest|biggest|lowest|highest|least|first|next|only)\b")
COUNT_MIN_SIMILARITY = 0.80

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
          "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split()
_VALUES = {w: i for i, w in enumerate(_UNITS)} | {"dozen": 12, "a dozen": 12, "nothing": 0}
_A_NUMBER = re.compile(r"\b(?:\d+|" + "|".join(_UNITS) + r")\b")
_NUM = r"(\d{1,2}|" + "|".join(sorted(_VALUES, key=len, reverse=True)) + ")"
_LEAD = (r"^(?:(?:it is|its|what is|whats|what you get (?:from|when you|if you)|"
         r"what do you get (?:when|if) you|the result of|the answer to|if you|when you|"
         r"(?:the number |what )?you get (?:by|from|when you|if you)|"
         r"take|count)\s+)?"
         r"(?:the\s+)?(?:(?:number|digit|numeral|value|answer)\s+)?"
         r"(?:(?:that|which)\s+)?(?:(?:comes?|is|you get|equals?)\s+)?"
         r"(?:(?:right|just|immediately|directly)\s+)?")
_HEDGE = r"(?:\s+(?:i think|i guess|i believe|obviously|of course|right|together|in total))?"
_MINUS = r"(?:minus|take away|less|then take away|and take away|subtract)"
# (pattern after the lead-in, function of the captured numbers)
_FORMS = [
    (rf"(?:after|following|next after|succeeding)\s+{_NUM}", lambda a: a + 1),
    (rf"(?:after|following)\s+{_NUM}\s+(?:and|but)\s+before\s+{_NUM}",  # "… and before 6"
     lambda a, b: a + 1 if b - a == 2 else -1),
    (rf"between\s+{_NUM}\s+and\s+{_NUM}", lambda a, b: a + 1 if b - a == 2 else -1),
    (rf"(?:before|preceding|prior to)\s+{_NUM}", lambda a: a - 1),
    (rf"(?:one|1)\s+(?:more|greater|bigger|higher)\s+than\s+{_NUM}", lambda a: a + 1),
    (rf"(?:one|1)\s+(?:less|fewer|smaller|lower)\s+than\s+{_NUM}", lambda a: a - 1),
    (rf"half\s+(?:of\s+)?(?:a\s+)?{_NUM}", lambda a: a / 2),
    (rf"(?:double|twice)\s+(?:of\s+)?{_NUM}", lambda a: 2 * a),
    (rf"{_NUM}\s+(?:squared)", lambda a: a * a),
    (rf"(?:take\s+)?(?:the\s+)?square\s+root\s+of\s+{_NUM}", lambda a: a ** 0.5),
    (rf"{_NUM}\s*(?:plus|\+|added to|add)\s*{_NUM}", lambda a, b: a + b),
    (rf"(?:add|the sum of|adding)\s+{_NUM}\s+(?:and|to|plus)\s+{_NUM}(?:\s+together)?",
     lambda a, b: a + b),
    (rf"{_NUM}\s+and\s+{_NUM}\s+(?:added\s+)?together", lambda a, b: a + b),
    (rf"{_NUM}\s*{_MINUS}\s*{_NUM}", lambda a, b: a - b),
    (rf"(?:take|taking|subtract|subtracting)\s+(?:away\s+)?{_NUM}\s+(?:away\s+)?from\s+{_NUM}",
     lambda a, b: b - a),
    (rf"{_NUM}\s*(?:times|x|\*|multiplied by|lots of)\s*{_NUM}", lambda a, b: a * b),
    (rf"(?:multiply|multiplying)\s+{_NUM}\s+(?:by|and)\s+{_NUM}", lambda a, b: a * b),
    (rf"(?:the product of)\s+{_NUM}\s+and\s+{_NUM}", lambda a, b: a * b),
    (rf"{_NUM}\s*(?:divided by|over|shared between)\s*{_NUM}", lambda a, b: a / b if b else -1),
    (rf"divide\s+{_NUM}\s+by\s+{_NUM}", lambda a, b: a / b if b else -1),
    (rf"(?:how many\s+)?{_NUM}", lambda a: a),  # only a count fact, rewritten to a number
]
_COMPILED = [(re.compile(_LEAD + form + _HEDGE + r"\s*$"), fn) for form, fn in _FORMS]


def _value(token: str) -> int:
    return int(token) if token.isdigit() else _VALUES[token]


# signs spoken as words: a spaced dash is a minus ("10 - 8"; "10-8" may be a range), "÷" a
# division ("8/2" may be a list); the other signs are read by the patterns above
_OPERATORS = re.compile(r"\s[-–]\s|[−÷]")
_SPOKEN = {"-": " minus ", "–": " minus ", "−": " minus ", "÷": " divided by "}
_CUED = re.compile(r"\b(?:number|digit|numeral|plus|minus|times|multiplied|divided|squared|"
                   r"root)\b|[+*]")


def digit_of(phrase: str, cued: bool = False) -> int | None:
    """The digit 0–9 that ``phrase`` computes, or None when it is not purely a computation
    of one ("the number after six" → 7, "half of eighteen" → 9, "eleven minus two" → 9,
    "take eight away from nine" → 1, "the number of months in a year minus four" → 8,
    "two cats" → None, "the number after ten" → None). With ``cued`` (a chunk of a longer
    description, not a class of its own), only a phrase that says it is a number or uses an
    operator counts: "from after 6" and "half of 10" there are times and amounts."""
    value = value_of(phrase, cued)
    return int(value) if value is not None and value.is_integer() and 0 <= value <= 9 else None


@functools.lru_cache(maxsize=4096)
def value_of(phrase: str, cued: bool = False) -> float | None:
    """What ``phrase`` computes, any number (:func:`digit_of`): "the number of months in a
    year" → 12.0, which no digit class can be. Memoised: a request's mention is asked again
    while it is matched (``ClassResolver.similarities`` and ``_match``)."""
    text = _OPERATORS.sub(lambda m: _SPOKEN[m[0].strip()], phrase.lower())  # "10 - 8"
    signs = re.sub(r"[^0-9a-z+*/^() ]+", " ", text.replace("half a dozen", "half of 12"))
    text = re.sub(r"\s+", " ", re.sub(r"[/^()]", " ", signs)).strip()
    if cued and not _CUED.search(text):
        return None
    text, facts = counts.rewrite(text)  # "months in a year" → 12
    for pattern, fn in _COMPILED[: None if facts else -1]:  # a bare number only from a fact
        match = pattern.match(text)
        if match:
            return float(fn(*(_value(g) for g in match.groups())))
    return arithmetic.evaluate(*counts.rewrite(signs))  # chains, powers, other lead-ins


@functools.lru_cache(maxsize=4096)
def uncomputed(phrase: str) -> bool:
    """A sum of numbers or counts that :func:`value_of` could not compute ("legs on a spider
    plus some" was eight at 200, "fingers on both hands minus a pair" nine): it names its
    value or nothing. "What you get when you subtract a number from itself" has no number; "a
    number bigger than five" bounds one and names none.
    Memoised as :func:`value_of` is: it re-runs the count patterns, on each match of a phrase."""
    text = re.sub(r"[^0-9a-z]+", " ", phrase.lower())  # "a spider's legs" as counts reads it
    compared = _COMPARED.search(text) and not _ONE_OF.search(text)  # "the smallest prime
    # greater than five" names one
    return bool(_SUM.search(text) or compared) and value_of(phrase) is None \
        and (bool(_A_NUMBER.search(text)) or counts.rewrite(text)[1] > 0)


def digit_in(definition: str) -> int | None:
    """The digit a definition computes or names (:mod:`service.kinds.numerals`) in one of its
    clauses, the rest describing it in words: "Fingers on one human hand; half of ten." → 5,
    "Half of four, or the count of shoes you put on each morning" → 2, "the loneliest number"
    → 1. A parenthesis may gloss it in another language ("the number after five (paanch ke
    baad)"). Clauses that give different digits → None."""
    bare = re.sub(r"\([^)]*\)", " ", definition)
    for text in dict.fromkeys((definition, bare)):
        if (whole := digit_of(text)) is not None:
            return whole
    clauses = re.split(r"[;.:!?]|,?\s+\bor\b|,\s+(?:also|and also)\b", bare, flags=re.I)
    found = {d for c in clauses if (d := digit_of(c)) is not None}
    named = numerals.digit_named(bare)  # the whole first: "a stroke …, with a diagonal or
    if named is None:  # open corner" is a four, its first clause alone a seven
        named = _one({numerals.digit_named(c) for c in clauses} - {None})
    return _one(found | ({named} - {None}))


def _one(digits: set[int]) -> int | None:
    return next(iter(digits)) if len(digits) == 1 else None
