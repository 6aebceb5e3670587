"""A request written as a letter: its greeting and its signature are not about classes.

People paste emails and forum posts ("Dear support, our bank needs …  Best regards, Maria").
The name after "Dear" or "Best," is an unknown word to the resolver, so the whole request came
back 422. Only a greeting that opens the text and a closing that ends it are cut, and only when
they hold no word of a class name and ask for nothing ("Thanks! Also zebras" keeps zebras).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.tokens import plural, words
from service.kinds.vocabulary import REQUESTING

_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|howdy|dear|greetings|good\s+(?:morning|afternoon|evening)|"
    r"to\s+whom\s+it\s+may\s+concern)\b[^,.!?:;\n]{0,40}[,.!:;\n]", re.I)  # fmt: skip
_CLOSING = re.compile(
    r"(?:^|(?<=[.!?\n,]))\s*(?:many\s+|thanks\s+)?(?:kind\s+regards|best\s+regards|"
    r"warm\s+regards|best\s+wishes|thank\s+you|all\s+the\s+best|sent\s+from\s+my|thanks|thx|"
    r"cheers|best|regards|warmly|sincerely|yours)\b", re.I)  # longer first  # fmt: skip
_MAX_SIGNATURE_WORDS = 12


def strip_letter(text: str, class_word: Callable[[str], bool]) -> tuple[str, list[str]]:
    """``(text without its greeting and signature, what was cut)``. A part that names a class
    word, asks for something (``REQUESTING``: "thanks, and please add cows"), holds a plural
    after its opening word ("Thanks, and rabbits": a class asked for) or runs longer than a
    signature is kept."""
    cut = []
    greeting = _GREETING.match(text)
    if greeting and _inert(greeting.group(0), class_word) \
            and not any(map(plural, words(greeting.group(0)))):  # fmt: skip
        cut.append(greeting.group(0).strip(" ,.!:;\n"))
        text = text[greeting.end():]
    for closing in _CLOSING.finditer(text):  # the earliest closing that ends the text
        tail = text[closing.start():]  # the closing's own words ("thanks") are no plurals
        if len(words(tail)) <= _MAX_SIGNATURE_WORDS and _inert(tail, class_word) \
                and not any(map(plural, words(text[closing.end():]))):  # fmt: skip
            cut.append(tail.strip())
            text = text[: closing.start()]
            break
    return text, [c for c in cut if c]


def _inert(part: str, class_word: Callable[[str], bool]) -> bool:
    tokens = words(part)
    return not any(map(class_word, tokens)) and not (REQUESTING - {"like"}) & set(tokens)
