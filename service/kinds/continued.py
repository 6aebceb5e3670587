"""Digits listed in order and continued to an end: "1, 2, 3... up to 9", "nine, eight,
seven... all the way down to zero", "from nine down to zero". Held-out set 84 answered the
countdown as nine, eight, seven and zero at 200; "1, 2, 3... up to 9" was one, two, three and
nine. Each is spelt as the range "first to end" (a countdown from its low end) before the
sentences are read, since the sentence reader already reads ranges and spelling it is all this
module does.
"""

from __future__ import annotations

import re

from service.kinds.ranges import NUMBER, as_int

_GO_ON = r"(?:\.{2,}|…|\betc\b\.?|\band\s+so\s+on\b)"
_TO = r"(?:to|through|thru|till|until)"
_CONTINUED = re.compile(
    rf"\b(?P<list>{NUMBER}(?:\s*,\s*{NUMBER})*)\s*,?\s*(?P<on>{_GO_ON})?\s*,?\s*"
    rf"(?P<way>all\s+the\s+way\s+)?(?P<dir>(?:up|down)\s+)?{_TO}\s+(?P<end>{NUMBER})\b"
    r"(?!\s+(?:classes|categories|kinds|types|labels|items|things|of\s+them)\b)", re.I)  # not
# "narrowed it from 9 down to 3 classes" (an outside review)


def continued(text: str) -> str:
    """``text`` with each list continued to an end spelt as its range (see above). The listed
    digits must step by one, and the end lie on in their direction; a single digit is
    continued only "down to" or "all the way to" (plain "3 to 7" is a range already)."""
    def spelt(m: re.Match) -> str:
        said = re.findall(NUMBER, m["list"], re.I)
        listed = [as_int(n) for n in said]
        end = as_int(m["end"])
        step = listed[1] - listed[0] if len(listed) > 1 else (1 if end > listed[0] else -1)
        steady = abs(step) == 1 and all(b - a == step for a, b in zip(
            listed, listed[1:], strict=False))
        cued = len(listed) > 1 and (m["on"] or m["way"] or m["dir"]) or m["way"] or (
            m["dir"] or "").strip().lower() == "down"
        if not steady or not cued or (end - listed[-1]) * step <= 0:
            return m[0]
        first = said[0]  # a countdown as the range up
        return f"{first} to {m['end']}" if step > 0 else f"{m['end']} to {first}"
    return _CONTINUED.sub(spelt, text)
