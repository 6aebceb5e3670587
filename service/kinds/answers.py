"""A question in a thread that proposes classes and is answered "no".

Threads and chats paste the discussion with the request: "Let's do coats, pullovers and ankle
boots. >> Should we add trousers? > No, keep it to those three." (held-out set 58: trousers
answered at 200). The question offers classes; the answer turns them down, so they are not
asked for: the question goes (kept for the response's notes) and so does the bare "No". Only
a question that offers (add, include, also, too, what/how about, should we, do we need/want)
and names a class, answered by "No"/"Nope"/"Nah" standing alone before a mark or the line's
end: "No idea", "no problem" and "no bags" answer nothing (the last is an exclusion, read as
one). The offer is in the questioned clause itself (no comma between): in "I want sneakers
and, um, high-top boots? no, ankle boots" the "no" corrects a word (read set 23). A question
with no answer, or a "yes", is left as it is. An answer that waves the question's classes off
by a pronoun and ends its sentence ("Trousers? Don't include them.", "Bags? Leave them out")
turns down even a bare question: the pronoun can only mean what was just asked (an outside
review of stop 47: trousers at 200). When the question is nothing but the classes ("Sevens?",
"What about the trousers?") they are skipped, even from a range asked for elsewhere ("Digits
0-9. Sevens? skip them."); otherwise only the question goes, since the pronoun may mean some of
their images ("Cats, dogs and birds. Got some blurry dog pics? Drop them.": a review of stop
48 found 12 such wrong 200s when every question's classes were skipped).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.tokens import words

_OFFERING = (r"\b(?:add|adding|include|including|also|too|plus|what\s+about|how\s+about|"
             r"should\s+we|shall\s+we|do\s+we\s+(?:need|want)|do\s+you\s+(?:need|want)|"
             r"want)\b")
# "Do we want to leave out zebras? No", "Is it a problem to include cats? Nope", "bags in a
# separate model? No": the "no" keeps the class (an outside review of stop 47)
_NOT_AN_OFFER = {"leave", "out", "without", "separate", "separately", "exclude", "excluding",
                 "drop", "skip", "remove", "problem", "different", "another", "instead", "not",
                 "never", "other", "elsewhere", "own"}
_PRONOUN = r"(?:those|them|these|that|it)"
_WAVED_OFF = (rf"(?:(?:no|nope|nah)\s*[,.!]\s*)?(?:please\s+)?(?:do\s*n[o']?t\s+(?:include|need|"
              rf"want)\s+{_PRONOUN}|leave\s+{_PRONOUN}\s+out|(?:skip|drop|forget)\s+{_PRONOUN})")
_ANSWERED_NO = re.compile(
    rf"(?P<question>[^.?!\n>,]*{_OFFERING}[^.?!\n,]*\?)(?P<gap>[ \t]*\n?[ \t>]*)"
    r"(?P<no>\b(?:no|nope|nah)\b)[ \t]*(?:[,.!;]+|(?=\n)|$)|"
    rf"(?P<bare>[^.?!\n>,]*\?)(?P<gap2>[ \t]*\n?[ \t>]*)(?P<away>\b{_WAVED_OFF})\b[ \t]*"
    r"(?:[.!;]+|(?=\n)|$)",
    re.I)


def answered_no(text: str, class_word: Callable[[str], bool]) -> tuple[str, list[str]]:
    """``(text without the questions turned down, those questions)`` (module docstring)."""
    cut: list[str] = []

    def drop(m: re.Match) -> str:
        question = m["question"] or m["bare"]
        asked = set(words(question))
        if not any(map(class_word, asked)) or asked & _NOT_AN_OFFER:
            return m[0]
        cut.append(question.strip())
        named = [w for w in words(question) if class_word(w)]
        if m["bare"] and asked <= {*named, "the", "and", "or", "also", "what", "about", "any"}:
            return f"{m['gap2']}skip {' and '.join(named)}."  # "Digits 0-9. Sevens? skip them."
        return m["gap"] or m["gap2"] or ""
    return _ANSWERED_NO.sub(drop, text), cut
