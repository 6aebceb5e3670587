"""Arithmetic in words, read as an expression: what :mod:`service.kinds.numbers`' fixed shapes
miss ("the digit you get from 3 x 3", "two cubed", "7 squared minus 42", "the digit after the
digit after seven", "a baker's dozen minus four").

Those shapes are one operation each, between fixed lead-ins; outsiders chain operations, put
them after lead-ins the shapes lack, and use powers. Here the phrase becomes tokens (numbers,
operators, words such as "the" or "digit" that say nothing), and a small precedence parser
evaluates them. The rule that keeps it safe is the shapes': every word must be a number, an
operator or one of those empty words, and at least one operator must be used, so "two cats",
"the 3 of us" or a bare "six" compute nothing. Python's ``ast`` would parse "2 + 3" but none of
the words, and an expression library would be a dependency for forty lines.
"""

from __future__ import annotations

import re

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
          "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split()
_TENS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90, "hundred": 100}
NUMBERS = {w: i for i, w in enumerate(_UNITS)} | _TENS | {
    "dozen": 12, "nothing": 0, "nought": 0, "naught": 0}
# Several words for one operator, joined first so each is one token. Order matters: longer first.
_PHRASES = [
    (r"\b(?:after|when|by|if) (?=add|subtract|multipl|divid|tak|doubl|halv)", " "),  # "after
    # adding 3 and 4": a time, not one more
    (r"\ba baker s dozen\b|\bbaker s dozen\b", "13"), (r"\bhalf a dozen\b", "6"),
    (r"^\s*(?:two|2) pairs\s*$", "2 * 2"), (r"^\s*(?:three|3) pairs\s*$", "3 * 2"),
    (r"^\s*(?:four|4) pairs\s*$", "4 * 2"),
    # a whole definition only ("two pairs": set 66), not "two pairs of socks" in a story
    (r"\b(?:a|one) hundred\b", "100"),
    (r"\bdoubled\b", " * 2 "), (r"\btripled\b", " * 3 "), (r"\bhalved\b", " / 2 "),  # "four,
    # doubled" (set 69)
    (r"\b(?:the )?square root of\b", " sqrt "), (r"\bthe square of\b", " sq "),
    (r"\b(?:multiplied by|times|lots of)\b", " * "), (r"(?<=\d)x(?=\d)|\bx\b", " * "),
    (r"\b(?:divided by|shared between)\b", " / "), (r"\bto the power of\b", " ^ "),
    (r"\b(?:plus|added to)\b", " + "), (r"\b(?:minus|take away|subtract|less)\b", " - "),
    (r"\b(?:half(?: of)?|halfway to)\b", " half "), (r"\b(?:double|twice)\b", " double "),
    (r"\b(?:one more than|(?:comes? )?(?:right |just |immediately )?after|following)\b",
     " after "),
    (r"\b(?:one less than|(?:comes? )?(?:right |just |immediately )?(?:before|below))\b",
     " before "),
]
_PHRASES = [(re.compile(p), r) for p, r in _PHRASES]
# Whole operations whose operands come in another order: "subtract 3 from 10", "add 3 and 4".
_N = r"(\S+)"
_REORDER = [(re.compile(p), r) for p, r in [
    (rf"\b(?:take|taking|subtract|subtracting) (?:away )?{_N} (?:away )?from {_N}", r"\2 - \1"),
    (rf"\b(?:add|adding|the sum of|sum of) {_N} (?:and|to|plus) {_N}(?: together)?", r"\1 + \2"),
    (rf"\b{_N} and {_N} added together\b", r"\1 + \2"),
    (rf"\b(?:multiply|multiplying|the product of) {_N} (?:by|and) {_N}", r"\1 * \2"),
    (rf"\b(?:divide|dividing) {_N} by {_N}", r"\1 / \2"),
]]
# "after 4 and before 6", "between 4 and 6": the one number between, if there is one
_BETWEEN = re.compile(r"\bafter (\w+) (?:and|but) before (\w+)\b|\bbetween (\w+) and (\w+)\b")


def _middle(match: re.Match) -> str:
    low, high = (match[1], match[2]) if match[1] else (match[3], match[4])
    a, b = (NUMBERS.get(w, int(w) if w.isdigit() else None) for w in (low, high))
    return f" after {a} " if a is not None and b is not None and b - a == 2 else " unknowable "


# Words that say nothing about the value: "the digit you get from", "I am the number".
EMPTY = set("the a an digit number numeral figure value answer result it its is i am you we "
            "get got gets when if that which what equal equals to comes come right just "
            "exactly immediately directly sitting from written handwritten single whole "
            "do does make makes give gives then by of think guess obviously together total "
            "in as counts".split())
_OPERATORS = {"+", "-", "*", "/", "^", "sqrt", "sq", "half", "double", "after", "before",
              "squared", "cubed"}


def evaluate(text: str, facts: int = 0) -> float | None:
    """The value ``text`` (lower case) computes, or None when it is not only a computation;
    ``facts``: how many known counts :func:`service.kinds.counts.rewrite` put in it (a count
    alone is a value: "I am the number of days in a week")."""
    if re.search(r"\S/|/\S", text):  # "8/2", "cats/dogs": a list, not a division
        return None
    text = _BETWEEN.sub(_middle, re.sub(r"(?<=\w)'(?=s\b)", " ", text))
    text = re.sub(r"\s([-–−])\s|(?<=\d)([+*^÷])|([+*^÷])(?=\d)", lambda m: f" {m[0].strip()} ",
                  text).replace("÷", "/").replace("–", "-").replace("−", "-")
    for pattern, repl in _PHRASES:
        text = pattern.sub(repl, text)
    for pattern, repl in _REORDER:
        text = pattern.sub(repl, text)
    tokens = [t for t in re.findall(r"\d+|[a-z]+|[-+*/^()]", text) if t not in EMPTY]
    if not tokens or not (facts or _OPERATORS & set(tokens)) or not all(
            t.isdigit() or t in NUMBERS or t in _OPERATORS or t in "()" for t in tokens):
        return None
    try:
        value, rest = _sum(tokens)
    except (IndexError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return None if rest else value


def _sum(tokens: list[str]) -> tuple[float, list[str]]:
    value, rest = _product(tokens)
    while rest and rest[0] in "+-":
        right, after = _product(rest[1:])
        value, rest = (value + right if rest[0] == "+" else value - right), after
    return value, rest


def _product(tokens: list[str]) -> tuple[float, list[str]]:
    value, rest = _unary(tokens)
    while rest and rest[0] in ("*", "/"):
        right, after = _unary(rest[1:])
        value, rest = (value * right if rest[0] == "*" else value / right), after
    return value, rest


_PREFIX = {"sqrt": lambda v: v ** 0.5, "sq": lambda v: v * v, "half": lambda v: v / 2,
           "double": lambda v: 2 * v, "after": lambda v: v + 1, "before": lambda v: v - 1}


def _unary(tokens: list[str]) -> tuple[float, list[str]]:
    if tokens[0] in _PREFIX:
        value, rest = _unary(tokens[1:])
        return _PREFIX[tokens[0]](value), rest
    value, rest = _atom(tokens)
    while rest and rest[0] in ("squared", "cubed", "^"):
        if rest[0] == "^":
            power, rest = _atom(rest[1:])
            value = value ** min(power, 12)
        else:
            value, rest = value ** (2 if rest[0] == "squared" else 3), rest[1:]
    return value, rest


def _atom(tokens: list[str]) -> tuple[float, list[str]]:
    token, rest = tokens[0], tokens[1:]
    if token == "(":
        value, rest = _sum(rest)
        if not rest or rest[0] != ")":
            raise ValueError("unclosed bracket")
        return value, rest[1:]
    if token.isdigit():
        return float(token), rest
    if token in NUMBERS:
        return float(NUMBERS[token]), rest
    raise ValueError(f"not a number: {token}")
