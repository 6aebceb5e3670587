"""Emoji in a request: "🐘🦒🦓 savanna speedrun!", "cat 🐱, bird 🐦, horse 🐴", "digits 4️⃣ 5️⃣ 6️⃣".

Held-out set 67 (a game-jam lead) wrote them in 10 of 60 requests; the reader saw them as
unknown words beside the classes and asked back. An emoji is read by its Unicode name (the
standard library's ``unicodedata``, so any catalogue's classes are covered without a table
here): one whose name names a class stands for it, unless a word of the request already names
that class ("cat 🐱", "cats n dogs pls 🐱🐶" are decoration); a keycap ("4️⃣") is its digit;
any other emoji ("😂", "📸", "🐾") is dropped, its meaning left to the words around it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from service.kinds.tokens import singular_forms

_KEYCAP = re.compile("([0-9])\ufe0f?\u20e3")
# pictographs, symbols and their joiners/modifiers (variation selectors, skin tones, ZWJ)
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff]"
                    "[\ufe0f\u200d\U0001f3fb-\U0001f3ff]*")
_NAME_NOISE = {"face", "womans", "mans", "sign", "symbol", "with"}
_WORD = re.compile(r"[a-z][a-z'-]*")


def _named(char: str, class_of: Callable[[str], str | None]) -> str | None:
    """The class an emoji's Unicode name names ("CAT FACE" → cat), else None."""
    name = unicodedata.name(char[0], "").lower()
    kept = " ".join(w for w in name.split() if w not in _NAME_NOISE)
    return class_of(kept) if kept else None


def read_emoji(text: str, class_of: Callable[[str], str | None]) -> str:
    """``text`` with keycaps as digits, class emoji as their class's word unless a word of the
    text names it, and any other emoji dropped."""
    text = _KEYCAP.sub(r" \1 ", text)
    if not _EMOJI.search(text):
        return text
    named = {class_of(f) for w in _WORD.findall(text.lower()) for f in (w, *singular_forms(w))}
    out, last = [], 0
    for m in _EMOJI.finditer(text):
        cls = _named(m[0], class_of)
        word = "" if cls is None or cls in named else cls
        joined = bool(out) and last == m.start() and out[-1].strip()  # "🐘🦒🦓": a list
        out += [text[last:m.start()], (", " if joined and word else " ") + word + " "]
        last = m.end()
    return re.sub(r"[ \t]{2,}", " ", "".join(out) + text[last:])
