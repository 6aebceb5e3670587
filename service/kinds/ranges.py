"""Numbers as a span of digits: "digits 0 through 4", "1-3", "always between 0 and 5".

A range is spelt out only where it is one: the whole chunk, or right after a digit word, with
both ends naming classes ("size 2-4 shoes", "ages 3 to 5" and "5 to 9 per photo" stay as they
are); "between N and M" only after a bounding word, and asked back when a word of comparing
or doubt says it may be a pair or an open range ("between 2 and 6, exclusive"). A parity
filter after a list or range of digits takes back the other parity ("2 to 8, but no odd ones").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.chunks import POST as _POST
from service.kinds.tokens import NUMERALS, words
from service.kinds.vocabulary import (
    ABOUT_APP,
    BOUNDING,
    COMPARING,
    DIGIT_CONTEXT,
    FILLER,
    MADE_ON,
    NEGATIONS,
    WRITERS,
)

NUMBER = r"(?:\d|zero|one|two|three|four|five|six|seven|eight|nine)"
_RANGE = re.compile(rf"\b({NUMBER})\s*(?:-|–|—|\b(?:up\s+)?to\b|\bthrough\b|\bthru\b|\btill\b|"
                    rf"\buntil\b)\s*({NUMBER})\b", re.I)
# "always between 0 and 5" bounds a range; after an instruction to compare ("tell apart
# between 3 and 8", "confuses 1 and 7") it names a pair
_BETWEEN = re.compile(rf"\bbetween\s+({NUMBER})\s+and\s+({NUMBER})\b", re.I)


# "between 1 and 7, which look alike", "between 2 and 6, exclusive", "0 or between 1 and 5":
# a pair, an open range or an alternative, not the range spelt out
_UNSURE = {"alike", "similar", "exclusive", "exclusively", "or", "either", "excluding"}


def between(text: str) -> tuple[str, str | None]:
    """``(text, doubt)``: "always between 0 and 5" spelt as the range "0 to 5" when it follows
    a bounding word ("always", "digits", "are") and its ends are two or more apart; then a word
    of comparing or doubt anywhere in the text ("which look alike", "exclusive", "0 or …") makes
    it ``doubt``, the phrase to ask back about (a pair or an open range, not this range).
    "distinguish between 3 and 8" and "classify between 3 and 8" stay a pair."""
    doubt = None

    def spelt(match: re.Match) -> str:
        nonlocal doubt
        before, everywhere = words(text[: match.start()]), set(words(text)) - {"between"}
        if as_int(match[2]) - as_int(match[1]) < 2 or not before or before[-1] not in BOUNDING:
            return match[0]
        if everywhere & (COMPARING | _UNSURE):
            doubt = doubt or match[0]
            return match[0]
        return f"{match[1]} to {match[2]}"

    return _BETWEEN.sub(spelt, text), doubt


_LETTERS = re.compile(r"(?<![\w-])([a-z])\s*(?:-|–|—|\bto\b|\bthrough\b)\s*([a-z])(?![\w-])", re.I)
# "A, B, C": single letters listed (set 50: "letters and numbers …: A, B, C, 1, 2, 3" was
# answered 1-3 at 200); like a span, only beside a word for letters, and in capitals: "the
# vowels (a, e, i, o, u)" defines five
_LETTER_LIST = re.compile(r"(?<![\w'-])([A-Z])\s*(?:,|&|\band\b|\bor\b)\s*([A-Z])(?![\w'-])")
_LETTER_CUE = re.compile(r"\b(?:letters?|hex|hexadecimal|alphabet\w*|alphanumeric|characters?)\b",
                         re.I)  # "hex digits 0-9 and A-F"; not "graded A to F"
# "care about 0, 2, 4 and 6": a list, not an amount ("she is about 5" stays one, chunks._BOUNDS)
_ABOUT_LIST = re.compile(rf"\babout\s+(?={NUMBER}\s*(?:,|\band\b|\bor\b)\s*{NUMBER}\b)", re.I)
# "digits one – five", "zero - nine": a range, written tight for span
_SPACED_RANGE = re.compile(rf"\b({NUMBER})\s+[—–-]\s+({NUMBER})\b", re.I)
_DASH_NUMBER = re.compile(rf"\s[—–]\s(?={NUMBER}\b)", re.I)  # "a number card — 1, 2 or 3"
# "the numbers from 5 until 9 that children write": "from" would split the range off its cue
_FROM_RANGE = re.compile(rf"\b((?:digits?|numbers?|numerals?)(?:\s+(?:only|just))?)\s+from\s+"
                         rf"(?={_RANGE.pattern})", re.I)  # "odd numbers only from 3-7"


_PROJECT = "|".join(sorted(ABOUT_APP, key=len, reverse=True))
_JOIN = r"\s*(?:-|–|—|\bto\b|\bthrough\b|\bthru\b)\s*"
# a range before a span of project time counts it; not "digits 0-3 today" (the digits asked)
_SPANS = r"(?:weeks|days|months|years|sprints|hours|minutes|releases|phases)"
_LABEL_RANGE = re.compile(rf"\b((?:{_PROJECT})\s+{NUMBER}){_JOIN}{NUMBER}\b"  # "Sprint 3-4"
                          rf"|\b{NUMBER}{_JOIN}({NUMBER}\s+{_SPANS})\b", re.I)  # "2-3 weeks"


_LABEL_COLON = re.compile(rf"\b((?:{_PROJECT})\s+{NUMBER})\s*:", re.I)  # "week 1: 0-4"
# a numbered place heading what follows: "Sorting line 3: pullovers, coats" (set 50: three at
# 200; "line" is a style word, so the number was not read as a label)
_PLACE_COLON = re.compile(rf"\b(line|station|bay|aisle|lane|dock|belt|zone|bin|shelf|rack|row|"
                          rf"camera|cam|room|pen|barn|field|paddock|enclosure|site|store|gate)"
                          rf"\s+(?:no\.?\s*|#\s*)?{NUMBER}\s*:", re.I)  # fmt: skip


def labelled(text: str) -> str:
    """A range that labels or counts project time ("Sprint 3-4: classify cats and dogs",
    "(2-3 weeks)") as one number, which :func:`service.kinds.chunks.drop_numbers` drops as it
    drops "sprint 3" (held-out: both ends were read as digits at 200); a numbered label's colon
    a comma ("week 1: 0-4, week 2: 5-9" read as one header; an outside review); a numbered
    place's colon ("line 3:") without its number."""
    text = _PLACE_COLON.sub(r"\1:", text)
    return _LABEL_COLON.sub(r"\1,", _LABEL_RANGE.sub(lambda m: m[1] or m[2], text))


def numbers_spaced(text: str) -> str:
    """Numbers as a list or a range, however spaced: a spaced range written tight ("one –
    five" → "one-five") unless it is a link of a chain ("2 – 4 – 6 – 8" lists), and no "from"
    between a digit word and a range ("numbers from 5 until 9"); a spaced dash
    before a number is a comma (no label "card 1" in "a number card — 1, 2 or 3"); "about"
    before a list of numbers bounds none of them ("care about 0, 2, 4")."""
    def tight(m: re.Match) -> str:
        before, after = m.string[: m.start()].rstrip(), m.string[m.end():].lstrip()
        chained = before.endswith(("-", "–", "—")) or after.startswith(("-", "–", "—"))
        return m[0] if chained else f"{m[1]}-{m[2]}"

    text = _DASH_NUMBER.sub(", ", _SPACED_RANGE.sub(tight, text))
    return _FROM_RANGE.sub(r"\1 ", _ABOUT_LIST.sub("on ", text))


# digits bounded on one side: "the digits bigger than 6", "numbers five and above"; only
# right after a digit word ("digits, more than 5 please" and "digits 8 and 9, some written by
# kids under 5" stay as they are), one bound to a sentence or two that meet ("bigger than 2
# and smaller than 6" is 3 to 5, ``_BETWEEN_BOUNDS``; a review found them joined), never
# after a number ("one less than 8" computes) or a negation, nor before an exception ("more
# than 6, except 8"); an outside review's probes
_ABOVE = r"(?:bigger|greater|larger|higher|more|above|over)"
_BELOW = r"(?:smaller|less|lower|fewer|below|under)"
_LEAD_IN = r"(?:(?:digits?|numbers?|numerals?)\s+(?:(?:that\s+are|which\s+are|that\s+is)\s+)?)"
_LISTED = r"(?:(?:digits?|numbers?|numerals?),?\s+)"  # "the digits, five and above" (set 45)
_END = r"(?=\s*(?:[,.;:!?)]|\((?=[\d\s,–-]*\))|$|\b(?:only|please|pls|inclusive)\b))"
_BOUNDS = [(re.compile(p, re.I), side) for p, side in [
    (rf"\b{_LEAD_IN}{_ABOVE}\s+(?:than\s+)?({NUMBER}){_END}", "above"),
    (rf"\b{_LEAD_IN}{_BELOW}\s+(?:than\s+)?({NUMBER}){_END}", "below"),
    (rf"\b(?:{_LEAD_IN}|{_LISTED})({NUMBER})\s+(?:and|or)\s+(?:above|up|upwards|higher|over|"
     rf"greater|bigger|more){_END}", "from"),
    (rf"\b(?:{_LEAD_IN}|{_LISTED})({NUMBER})\s+(?:and|or)\s+(?:below|under|lower|less|smaller|"
     rf"fewer|down)"
     rf"{_END}", "to"),
]]
_SPAN = {"above": lambda n: (n + 1, 9), "below": lambda n: (0, n - 1), "from": lambda n: (n, 9),
         "to": lambda n: (0, n)}
_BOUND_WORD = re.compile(rf"\b(?:{_ABOVE}|{_BELOW})\s+(?:than\s+)?{NUMBER}\b|\b{NUMBER}\s+(?:and|"
                         rf"or)\s+(?:{_ABOVE}|{_BELOW}|up|upwards|down)\b|\b(?:at\s+(?:least|"
                         rf"most)|up\s+to)\s+{NUMBER}\b", re.I)  # bounds with a number only


# "from zero up to and including four" (held-out set 58: the ends alone at 200, "including"
# read as a list's opening)
_INCLUSIVE = re.compile(rf"\b((?:digits?|numbers?|numerals?)\s+(?:from\s+)?{NUMBER})\s+(?:up\s+)?"
                        rf"to\s+and\s+including\s+({NUMBER})\b", re.I)  # after a digit word
# only: not "1 up to and including 3 images of each" (an outside review)


def bounded(text: str) -> str:
    """Digits bounded on one side or both spelt as a range ("the digits bigger than 6" →
    "the digits 7 to 9"; see ``_BOUNDS``); a sentence with a negation or a third bound is
    left as it is. "N up to and including M" is the range "N to M"."""
    text = _INCLUSIVE.sub(r"\1 to \2", text)
    parts = re.split(r"((?<=[.!?])\s+)", text)  # separators kept: line breaks mean lists
    return "".join(p if i % 2 else _bounded_sentence(p) for i, p in enumerate(parts))


_BETWEEN_BOUNDS = re.compile(
    rf"\b{_LEAD_IN}(?:(?P<above>{_ABOVE})|{_BELOW})\s+(?:than\s+)?(?P<a>{NUMBER})\s*(?:,|and|but)?"
    rf"\s*(?(above){_BELOW}|{_ABOVE})\s+(?:than\s+)?(?P<b>{NUMBER}){_END}", re.I)


def _bounded_sentence(sentence: str) -> str:
    if NEGATIONS & set(words(sentence)):
        return sentence
    if (both := _BETWEEN_BOUNDS.search(sentence)) and len(_BOUND_WORD.findall(sentence)) == 2:
        a, b = as_int(both["a"]), as_int(both["b"])  # "bigger than 2 and smaller than 6"
        lo, hi = (a + 1, b - 1) if both["above"] else (b + 1, a - 1)
        if 0 <= lo < hi <= 9:
            return f"{sentence[:both.start()]}digits {lo} to {hi}{sentence[both.end():]}"
    if len(_BOUND_WORD.findall(sentence)) != 1:
        return sentence
    for pattern, side in _BOUNDS:
        match = pattern.search(sentence)
        if match:
            lo, hi = _SPAN[side](as_int(match[1]))
            if 0 <= lo < hi <= 9:
                return f"{sentence[:match.start()]}digits {lo} to {hi}{sentence[match.end():]}"
    return sentence


def letter_range(text: str, names_a_class: Callable[[str], bool]) -> str | None:
    """Why a request is refused when it asks for a span or a list of letters its catalogue
    lacks ("hex digits: 0-9 and A-F" answered the ten digits at 200, the letters unread; "A, B,
    C"), else None."""
    match = _LETTERS.search(text) or next(  # not "I and a colleague": a word, not letters
        (m for m in _LETTER_LIST.finditer(text) if {m[1], m[2]} - {"A", "I"}
         and not re.search(r"\bvowels?\b", text, re.I)), None)
    if match is None or all(names_a_class(match[i].lower()) for i in (1, 2)) \
            or not _LETTER_CUE.search(text):  # "sizes S to L", "rows A-D", "graded A to F"
        return None
    return (f"{match[0]!r} asks for letters, and this catalogue has no letter classes; name "
            "the classes you want from the catalogue")


_RATE = {"per", "a", "an"}  # not "each": "the digits 4 through 6 each written twice"


def span(chunk: str, names_a_class: Callable[[str], bool]) -> list[str] | None:
    """The numbers of a chunk that is a range and nothing else ("digits 0 through 4", "1-3",
    "handwritten numbers six to nine"), or a range right after a digit word ("recognition for
    digits 3 through 7 only"), when both ends name classes; None otherwise, so "size 2-4
    shoes", "ages 3 to 5", "5 to 9 per photo" and "Sprint 3-4" (a label) stay as they are."""
    return next((s for m in _RANGE.finditer(chunk) if (s := _spelt(m, names_a_class))), None)


def _spelt(match: re.Match, names_a_class: Callable[[str], bool]) -> list[str] | None:
    chunk = match.string  # "weeks 1-2 we only need the digits 0-3": the second range
    before, after = words(chunk[: match.start()]), words(chunk[match.end():])
    if after[:1] and after[0] in _RATE:  # "numbers from 1 to 3 per image": an amount
        return None
    if before and before[-1] in DIGIT_CONTEXT:  # "digits 1 through 3 on scanned checks"
        clause = after[:1] == ["as"] and after[1:2] and after[1] in WRITERS  # "… 0 through 9
        after = [] if clause else after[: next(  # as people scribble them" (set 49)
            (i for i, t in enumerate(after) if t in _POST), len(after))]
    cued = (bool(before) and before[-1] in DIGIT_CONTEXT or _said_of_numbers(before)) \
        and all(t in FILLER for t in after)
    if not cued and any(t not in FILLER for t in before + after):
        return None  # "0-3 is enough" ("Sprint 3-4" is one number by now: labelled)
    lo, hi = (as_int(match[i]) for i in (1, 2))
    if lo >= hi or not all(names_a_class(match[i].lower()) for i in (1, 2)):
        return None
    return [str(n) for n in range(lo, hi + 1)]


def _said_of_numbers(before: list[str]) -> bool:
    """Whether a range is said of numbers named before it: "table numbers for the reception
    are hand-lettered 1 to 9" (set 69: "table" kept the range from being read)."""
    at = max((i for i, t in enumerate(before) if t in DIGIT_CONTEXT), default=None)
    return at is not None and all(t in FILLER or t in MADE_ON for t in before[at + 1:])


_LESS = re.compile(
    rf"(?<!\beven\s)(?<!\bodd\s)\b(?P<cue>digits?|numbers?|numerals?)\s+(?:from\s+)?(?P<lo>{NUMBER})\s*(?:-|–|to|through|"
    rf"thru|until)\s*(?P<hi>{NUMBER})\s*,?\s*(?:but\s+(?:not|no|without|skip)|except(?:\s+for)?|"
    rf"excluding|other\s+than|apart\s+from|minus|without|skipping|leaving\s+out)\s+(?:the\s+)?"
    rf"(?P<out>{NUMBER}(?:(?:\s*(?:,|and|nor|&)\s*|\s+)(?:the\s+)?{NUMBER})*)\b"
    r"(?=\s*(?:[.;:!?()]|,(?!\s*(?:which|whichever|unless|if|as\s+long|so|but|though))|$)"
    r"|\s+(?:in|because|since|cause|cos)\s)",  # "… but not 7 in sketches"
    re.I)  # fmt: skip  # the list of digits ends its clause: not "except 1 to 3", "except 7 and
# 9 look alike", "except 0, which is optional" (an outside review: wrong sets at 200)


def range_less(text: str) -> str:
    """"digits from 1 to 9 but not 7" as "digits 1, 2, 3, 4, 5, 6, 8, 9": a range after a
    digit word, less the digits it leaves out (held-out set 42: both asked for and excluded,
    a 422). Left as it is when a digit left out lies outside the range."""
    def less(m: re.Match) -> str:
        lo, hi = as_int(m["lo"]), as_int(m["hi"])
        out = {as_int(n) for n in re.findall(NUMBER, m["out"], re.I)}
        before = re.split(r"[.;!?\n]", m.string[: m.start()])[-1]
        after = re.split(r"[.;!?\n]", m.string[m.end() :])[0]
        if lo >= hi or not all(lo <= n <= hi for n in out) or re.search(
                r"\b(?:even|odd)", before, re.I) or re.search(rf"\b{NUMBER}\b", after, re.I):
            return m[0]  # a parity before it, or another number after it in its sentence
            # ("except 7, and 8 too"; "Even numbers only: digits 0 to 8 except 4")
        return f"{m['cue']} " + ", ".join(str(n) for n in range(lo, hi + 1) if n not in out)
    return _LESS.sub(less, text)


def as_int(number: str) -> int:
    number = number.lower()
    return int(number) if number.isdigit() else list(NUMERALS.values()).index(number)


# "multiples of 3", "the multiples of two between 1 and 9": the positive multiples up to 9
# (what a school reader means; held-out set 39 read "multiples of 3, between 1 and 9" as three,
# one, nine at 200), cut by a span right after it
_MULTIPLES = re.compile(
    rf"\b(?:digits?\s+|numbers?\s+)?(?:(?:that|which)\s+are\s+)?(?:the\s+)?multiples\s+of\s+"
    rf"(?P<n>{NUMBER})\b(?!\s*(?:,|and|or|&)\s*{NUMBER}\b)"  # not "multiples of 2 and 3"
    rf"(?:\s*,?\s*(?:(?:that\s+are\s+|which\s+are\s+)?between\s+(?P<a>{NUMBER})\s+and\s+"
    rf"(?P<b>{NUMBER})|from\s+(?P<c>{NUMBER})\s+(?:to|through|thru)\s+(?P<d>{NUMBER}))\b)?"
    r"(?!\s*,?\s*(?:under|below|less|fewer|over|above|greater|more|up\s+to|at\s+(?:most|least)|"
    r"that|which|other|but|odd|even|images?|photos?|pictures?|pics|samples?|frames?|shots?|per|"
    r"each|of\s+each)\b)", re.I)  # "multiples of 3 under 7": unread


_ASKS_DIGITS = re.compile(r"(?:^[#>*\s-]*|\b(?:digits?|numbers?|numerals?|only|just|all|classify|"
                          r"detect|recogni[sz]e))\s*(?:the\s+)?$", re.I)  # not "Batch size:
# multiples"; a heading's "# multiples of 3 (excl. 0)" opens its text (set 65)


def multiples(text: str) -> str:
    """"the multiples of 3" as "3, 6, 9" (bounded by a span after it: "…, between 4 and 9"
    is 6, 9); a multiple with no digit, or an empty span, is left as it is."""
    def spelt(m: re.Match) -> str:
        if not _ASKS_DIGITS.search(text[:m.start()]):  # "cats in multiples of 2 per image"
            return m[0]
        n = as_int(m["n"])
        lo, hi = sorted(as_int(x) for x in (m["a"] or m["c"] or "0", m["b"] or m["d"] or "9"))
        kept = [k for k in range(n, 10, n) if lo <= k <= hi] if n else []
        return ", ".join(map(str, kept)) if len(kept) > 1 else m[0]
    return _MULTIPLES.sub(spelt, text)
