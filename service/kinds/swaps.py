"""One class for another: "replace coats with shirts", "swap the birds for dogs", "use sheep
instead of dogs", "not five but six". The class replaced is taken back in an aside of its own
("(drop coats) also shirts"), so that the retraction reaches no further; the correction steps
(:mod:`service.kinds.corrections`) read the asides like any other "drop".
"""

from __future__ import annotations

import re

# one class for another: "replace coats with shirts", "swap the birds for dogs" ("replace birds
# w horses": set 54), "use sheep instead of dogs", "instead of cats, dogs": the one replaced is
# taken back in an aside of its own, so that the retraction reaches no further ("dogs instead
# of cats, and horses")
_ITEM = r"(?:the\s+|a\s+|an\s+)?(?!(?:all|every|any|everything)\b)([a-z0-9][\w'\- ]{0,30}?)"
# "not five but six" swaps (set 63: five kept at 200); not a cleft ("it's not cats but dogs
# that confuse it"), a predicate ("not needed in v1 but needed now"), an adverb ("not only")
# or a hedge after "but" ("not horses but maybe cows later"): an outside review
_NOT_X = (r"(?<!\bit's\s)(?<!\bits\s)(?<!\bit\sis\s)\bnot\s+(?!(?:only|just|merely|simply|"
          r"solely|even|necessarily|really|quite|all|every|any|sure|needed|required|wanted|"
          r"necessary|important|relevant|in|for|at|on|as|to|by|with|from|yet|now|so|too|very|"
          r"that|this|it)\b)")
_BUT_Y = (r"\s*,?\s+but\s+(?:rather\s+|instead\s+)?(?!(?:maybe|perhaps|possibly|later|might)\b)"
          r"(?=[a-z0-9])(?![\w\s-]{1,30}?\s(?:that|which|who)\b)")
_SWAPS = [(re.compile(p, re.I), r) for p, r in [
    (rf"\b(?:replace|swap|substitute|exchange|switch)\s+{_ITEM}\s+(?:with|for|by)\b",
     r" (drop \1) also "),
    (rf"\b(?:replace|substitute)\s+{_ITEM}\s+w/?(?!\w)", r" (drop \1) also "),  # not "swap 6
    # w 9", which tells what users confuse (an outside review)
    (rf"\binstead\s+of\s+{_ITEM}(?=\s*(?:[,.;:!?)]|$))", r" (drop \1) "),
    (rf"\binstead\s+of\s+{_ITEM}\s*,", r" (drop \1) also "),
    (_NOT_X + _ITEM + _BUT_Y, r" (drop \1) also "),
    (r"\bnot\s+(?:only|just|merely)\s+([^.;:!?]{1,40}?)\s*,?\s+but\s+(?:also\s+)?", r"\1 and "),
]]


# "ignore (birds), keep cats": the classes a retracting verb takes back, out of their brackets
_BRACKETED = re.compile(r"\b(drop|skip|remove|ignore|omit|exclude|forget)\s*\(([^()]*)\)", re.I)


def swapped(text: str) -> str:
    """``text`` with each class replaced by another taken back in an aside of its own."""
    text = _BRACKETED.sub(r"\1 \2", text)
    for pattern, repl in _SWAPS:
        text = pattern.sub(repl, text)
    return text
