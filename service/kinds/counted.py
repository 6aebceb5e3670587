"""Numbers in a description that name no digit class: counts of the classes ("three classes",
"the four digits"), the pronoun "one" ("that one", "make me one"), how many someone owns
("we have two") and how many images ("about 2500 each"). :func:`without_counts` takes them
out before the sentence reader sees them; :func:`declared_count` keeps how many classes the
text says it wants, so a task naming another number of classes is refused instead of guessed
at.
"""

from __future__ import annotations

import re

from service.kinds.ranges import NUMBER

_COUNT = re.compile(
    r"\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:(?:clothing|fashion|animal|"
    r"digit|different|distinct|separate)\s+)?(?:digits?|numbers?|numerals?|classes|categories|"
    r"kinds|types|animals|garments|things|items|labels)\b|"  # "three clothing items"
    r"\bfor\s+(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:(?:different|separate|"
    r"distinct|other)\s+)?(?:clients|customers|users|people|teams|shops|stores|sites|schools|"
    r"classes\s+of\s+kids|kids|children|students|weeks|days|months|years|hours|minutes)\b",
    re.I)  # "the digits one and two for three different clients" (an outside review)
# a count of the classes themselves, said as one ("exactly two classes", "three classes: …";
# not "two types of users", "we tried two classes before": an outside review): a task that
# names another number of classes is refused (stop 32)
_N = r"(2|3|4|5|6|7|8|9|10|two|three|four|five|six|seven|eight|nine|ten)"
_TASK = r"(?:task|classifier|classification|model|problem|split|sort|sorter)\b"
# "That's the two." closing a list (set 63: the digit two at 200): a count of what was named
_THATS = (r"\b(?:(?:that'?s|thats|that\s+is|those\s+are|these\s+are)\s+(?:the\s+|all\s+|both\s+)?|"
          r"(?:just|only)\s+(?:the|those|these)\s+)")  # "Just the two." (set 72: two at 200)
_CLOSE = r"(?=\s*(?:of\s+them\s*)?(?:[.!?]|$))"
# a child's age: "my son is 7 and draws animals", "My daughter (6) draws" (set 37 at 200)
_AGE = (r"\b(?:son|daughter|kid|child|boy|girl|grandson|granddaughter|nephew|niece|brother|"
        r"sister|he|she|who)(?:(?:\s+(?:is|was|turned|turns|just\s+turned)|['’]s)\s+(?:almost\s+|"
        r"nearly\s+|about\s+|just\s+|only\s+|barely\s+)?|\s*\()(?:[1-9]|1\d|two|"
        r"three|four|five|six|seven|eight|nine|ten)\b(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*y/?o)?"
        r"\)?|\b(?:[1-9]|1\d|two|three|four|five|six|seven|eight|nine|ten)[\s-]years?[\s-]old\b")
_DECLARED = re.compile(rf"\b(?:exactly|just|only)\s+{_N}\s+(?:different\s+|distinct\s+)?(?:classes|"
                       rf"categories|labels)\b|\b{_N}\s+(?:classes|categories|labels)\s*:"
                       rf"|\b{_N}[- ]way(?=\s+{_TASK})|\b(binary)\s+{_TASK}|{_THATS}{_N}{_CLOSE}",
                       re.I)  # fmt: skip  # "a ten-way classifier", "binary task" (set 45)
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"))}
_NUMBER_WORDS["binary"] = "2"
_WAY = re.compile(rf"\b{_N}[- ]way(?=\s+{_TASK})|\bbinary(?=\s+{_TASK})", re.I)  # a count
# how many someone owns, closing a sentence: "Oh and cats, we have two." (no digit asked)
_OWNED = re.compile(r"\b(?:we|i|they|she|he)\s+(?:have|own|got|keep)\s+(?:two|three|four|five|"
                    r"six|seven|eight|nine|[2-9])\b(?=\s*(?:[.!?]|$))", re.I)  # fmt: skip
# "horses and zebras, cartoon ones from my fav show" (set 61: one at 200): the style stays;
# not in a list of digits ("fours, sevens and pencil ones", "digits: … photo ones": a review)
_DIGIT_LIST_BEFORE = re.compile(r"(?:\d+'?s|zeroe?s|twos|threes|fours|fives|sixes|sevens|eights|"
                                r"nines)\s*(?:,|&|and|or|vs\.?|versus)\s*$", re.I)
_STYLED_ONES = re.compile(r"\b(cartoon|cartoony|comic|animated|anime|photo|pencil|watercolou?r|oil)"
                          r"\s+ones\b(?!\s*(?:[,&]|and|or)\s*(?:\d|zero|zeroe?s|twos|threes|fours|fives|"
                          r"sixes|sevens|eights|nines)\b)", re.I)
_PRONOUN_ONE = re.compile(
    r"\b(which|this|that|each|every|every\s+single|each\s+single|any|no|the other|quick|last|"
    r"next|new|same|only|"
    r"right|wrong|good|big|small)\s+one\b"
    rf"(?!\s+{NUMBER}\b|\s+(?:and|or)\s+{NUMBER}\b)|"  # "make that one two three"
    r"\b(?:make|build|create|train|get|need|want|give|have)\s+(?:me\s+|us\s+)?one\b"
    rf"(?!\s*[,&]|\s+(?:and|or)\b|\s+{NUMBER}\b)|"
    r"\b(?:the|even|odd|which|these|those|new|similar|other|right|wrong)\s+ones\b|"
    r"\b(?:real|actual|genuine|live|living|wild|fake|toy|stuffed|plush|cute|young|baby|adult|"
    r"big|small|little|tiny)\s+ones\b|"  # "bears (real ones, not teddies!)" (set 49)
    r"\b(?:hand-?written|written|printed|typed|scanned|hand-?drawn|drawn|painted|sketched)\s+"
    r"ones\b(?!\s*(?:[,&]|and|or|from|vs\.?|versus)\s*(?:\d|zero|two|three|four|five|six|seven|eight|nine|"
    r"twos|threes|fours|fives|sixes|sevens|eights|nines|zeroe?s)\b)|"  # "numbers from four up
    # to eight um handwritten ones" (set 50: one at 200); not "handwritten ones and sevens"
    r"\b[a-z]+-[a-z]+\s+ones\b|"  # "shirts (button-up ones, not tees)": no digit
    r"\b(?:clothes|clothing|animal|fashion|shoe|footwear|farm|wild|pet|zoo)\s+ones\b|"
    r"\b(?:these|those)\s+[2-9]\b(?!\s*(?:[,&]|and|or)\s*\d)|"  # "classifier for those 4"
    r"\b(?:[2-9]|two|three|four|five|six|seven|eight|nine|ten)\s+(?:in\s+total|total|in\s+all)\b|"
    r"\ball\s+ten\b|"  # "All ten digits (0 through 9)": a count (set 66: "ten" asked back)
    rf"{_THATS}(?:two|three|four|five|six|seven|eight|nine|ten){_CLOSE}|"
    rf"{_AGE}|"
    r"\bone\s+of\s+(?:these|those|them|the\s+above|the\s+following)\b|"  # "isn't one of these"
    r"\bthe\s+(?:two|three|four|five)\s+(?=apart\b)|"  # "tells the two apart" (set 51): the
    # classes just named, not the digit two
    r"\bthe\s+(?:only\s+)?(?:two|three|four|five)\s+(?:that|which|who|we|i|you)\b[^,.;:!?]*?"
    r"(?=\s+(?:are|is|were)\b|[,.;:!?]|$)|"  # "the three that always get mixed up", "just the
    # two you wear most": a count and its clause; not what follows "are" ("the three that I
    # need are cats, dogs and birds")
    r"\bthis\s+(?:two|three|four|five|six|ten)\b(?=\s*(?:[.!?]|$))|"  # "tell this two from a
    # seven" (an outside review) is the digit
    r"\b(?:these|those|both|all|(?:the\s+)?(?:other|remaining|first|last|latter|former))\s+"
    rf"(?:two|three|four|five|six|ten)\b(?!\s*[,&]\s*{NUMBER}|\s+(?:and|or|&)\s+(?:the\s+)?{NUMBER}\b|"
    rf"\s+{NUMBER}\b)",
    re.I)  # "make one for 4 vs 9", "even ones only", "just those two", "only this two" (set
# 53), "those two: cats, dogs", "just the other three" and "those two and, while you are at it,
# the 4" (set 64) are no digits; "those two, three and four" and "ones and sevens" are


# how many images of each class, not a class: "about 2500 each", "~300 apiece", "40 per
# class" (two or more digits: no digit class; stop 33, set 30). Not "~40 stores" or "about
# 12,000 images total", whose unit the reader keeps as context
_AMOUNT = re.compile(r"(?:\b(?:about|around|approx(?:imately)?|roughly|nearly|over|under)\s+|~\s*)?"
                     r"\b\d{2,}\s+(?:each|apiece|per\s+class)\b|"
                     r"(?<=[a-z])\s+[x×]\s?\d+\b(?!\s*[x×]|\s*(?:cm|mm|in|px|m)\b)",
                     re.I)  # "sandals x2" in a lot's listing: how many, not the digit (set 66)


# "Number of classes: 3" as a field of a spec (an outside review of stop 50: the digit three
# at 200), read as "exactly 3 classes" before fields are read
_NUMBER_OF = re.compile(rf"(?:\b(?:number|num|no\.|count|n)|#)[\s_]+(?:of[\s_]+)?(?:classes|"
                        rf"categories|labels)\s*(?::|is|-|=)?\s*{_N}\b", re.I)  # "num_classes: 2"


def count_field(text: str) -> str:
    """``text`` with "Number of classes: 3" as "exactly 3 classes", a declared count."""
    return _NUMBER_OF.sub(r"exactly \1 classes", text)


# one number bounded, not named: "a number bigger than five", "the next digit below 3" (an
# outside review of stop 50: read as the range 6-9 at 200); "any number over 5", "numbers
# bigger than five" and "digits above 6" are ranges
_ONE_BOUNDED = re.compile(r"\b(?:a|an|one|the\s+(?:first|next|only))\s+(?:single[- ]digit\s+)?"
                          r"(?:digit|number|numeral|integer)\s+(?:that\s+is\s+|that'?s\s+|which"
                          r"\s+is\s+)?(?:bigger|greater|larger|higher|more|smaller|lower|less|"
                          r"above|below|over|under)\b", re.I)


_A_DIGIT = re.compile(rf"\b{NUMBER}\b", re.I)


def one_bounded(text: str) -> bool:
    """Whether ``text`` asks for one number by a bound instead of naming it (refused); not
    when it names digits elsewhere ("… if it is a number bigger than five. Need all digits
    0-9": an outside review)."""
    m = _ONE_BOUNDED.search(text)
    if m is None:
        return False
    after = re.sub(r"^\s*(?:than\s+)?[\w-]+", " ", text[m.end():])  # past the bound's number
    return not _A_DIGIT.search(text[:m.start()] + after)


def declared_count(text: str) -> tuple[int | None, str]:
    """(how many classes the text says it wants ("exactly two classes: …", "a ten-way
    classifier") when it says one number, else None ("shows three classes. Expected: two");
    the text without "ten-way" and "binary", which name no digit and stand in no group
    phrase: "a ten-way classifier covering all of the apparel" lost its group, set 45)."""
    said = {_NUMBER_WORDS.get(n.lower(), n) for m in _DECLARED.finditer(text)
            for n in m.groups() if n}  # fmt: skip
    return (int(said.pop()) if len(said) == 1 else None), _WAY.sub(" ", text)


# "yes count 0 as even": the verb goes, "0 as even" stays (stop 34, set 34); "should count
# as a third class" keeps it, an extra class asked back
_COUNT_AS = re.compile(r"\bcount(?:s|ed|ing)?\s+(?=\S+\s+as\b)", re.I)
# "a pig or two", "a horse or so": how many, not the digit two (stop 34, a read set)
_OR_TWO = re.compile(r"\b((?:a|an)\s+(?!one\b)[a-z]+)\s+or\s+(?:two|so)\b", re.I)  # not "a
# one or two"


# "the odd digits and the even ones": a second parity group, not a pronoun (the even digits
# were lost at 200); only after "and"/"or", since "1-9, even ones only" narrows a range
_PARITY_ONES = re.compile(r"(\b(?:and|or|plus)\s+(?:also\s+)?(?:the\s+|all\s+)?(?:even|odd))"
                          r"\s+ones\b", re.I)
_PARITY_GROUP = re.compile(r"\b(?:even|odd)\s+(?:digits?|numbers?|numerals?)\b", re.I)


def parity_ones(text: str) -> str:
    """"… and the even ones" as "… and the even digits" after a parity group ("the odd
    digits"); not "Digits 0-9 and odd ones only" or "… and the odd ones go to review" (an
    outside review: all ten at 200), which name no group before."""
    def spelt(m: re.Match) -> str:
        return m[1] + " digits" if _PARITY_GROUP.search(text, 0, m.start()) else m[0]
    return _PARITY_ONES.sub(spelt, text)


# a count closing its sentence, in a request that names no other digit: "a classifier for the
# two.", "Total is four." (sets 84 and 87: two, four at 200); "digits 5 and 6, we struggle
# most with the two." asks for the digit (an outside review)
_THE_N = re.compile(r"\b(?:for|into|between|of|on|with)\s+(?:the|these|those)\s+(?:only\s+)?"
                    rf"(?:two|three|four|five|six|ten){_CLOSE}|\btotal\s+(?:is|of|=|:)\s*"
                    rf"(?:two|three|four|five|six|seven|eight|nine|ten|[2-9]){_CLOSE}", re.I)
_DIGIT_TALK = re.compile(rf"\b{NUMBER}\b|\b(?:digit|number|numeral)s?\b|\b(?:zero|one|two|three|"
                         r"four|five|six|seven|eight|nine)e?s\b", re.I)


def _counted_close(text: str) -> str:
    """``text`` without a closing count (:data:`_THE_N`) when nothing else in it is a digit."""
    without = _THE_N.sub(" ", text)
    return text if _DIGIT_TALK.search(without) else without


# a thread's numbering, "1/ … 2/ … 3/" (set 86: the digits one and two at 200), when it counts
# from 1/ to 2/ at least with words between; not "1/2", a fraction, nor a list of digits
# written "1/ 2/ 3/ 4" (an outside review: a 422 in this rule's first version)
_THREAD = re.compile(r"(?:^|(?<=\s))[1-9]\d?/(?=\s)")
_BARE_MARKS = re.compile(r"(?:^|(?<=\s))[1-9]\d?/\s+[1-9]\d?/(?=\s)")


def without_counts(text: str) -> str:
    """``text`` without counts of classes, pronoun "one"s, owned counts and amounts, and a
    thread's numbering (each mark ends a sentence)."""
    marks = [m[0] for m in _THREAD.finditer(text)]
    if marks[:2] == ["1/", "2/"] and not _BARE_MARKS.search(text):
        text = _THREAD.sub(". ", text)
    text = _OR_TWO.sub(r"\1", _PRONOUN_ONE.sub(" ", _styled_ones(_COUNT.sub(" ", text))))
    text = _counted_close(text)
    return _COUNT_AS.sub("", _AMOUNT.sub(" ", _OWNED.sub(" ", text)))


def _styled_ones(text: str) -> str:
    """``text`` with "cartoon ones" as "cartoon", unless digits are listed with it (above)."""
    return _STYLED_ONES.sub(lambda m: m[0] if _DIGIT_LIST_BEFORE.search(text[:m.start()])
                            else m[1], text)
