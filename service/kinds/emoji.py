"""Emoji in a request: "🐘🦒🦓 savanna speedrun!", "cat 🐱, bird 🐦, horse 🐴", "digits 4️⃣ 5️⃣ 6️⃣".

Held-out set 67 (a game-jam lead) wrote them in 10 of 60 requests; the reader saw them as
unknown words beside the classes and asked back. An emoji is read by its Unicode name (the
standard library's ``unicodedata``, so any catalogue's classes are covered without a table
here): one whose name names a class stands for it, unless a word of the request already names
that class ("cat 🐱", "cats n dogs pls 🐱🐶" are decoration); a keycap ("4️⃣") is its digit;
any other emoji ("😂", "📸", "🐾") is dropped, its meaning left to the words around it,
unless it touches a class emoji: in "🐐🐑🐄" the goat is asked for too (and asked back).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from service.kinds.tokens import singular_forms, words

_KEYCAP = re.compile("([0-9])\ufe0f?\u20e3")
# pictographs, symbols and their joiners/modifiers (variation selectors, skin tones, ZWJ)
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff]"
                    "[\ufe0f\u200d\U0001f3fb-\U0001f3ff]*")
_NAME_NOISE = {"face", "womans", "mans", "sign", "symbol", "with"}


def _name(char: str) -> str:
    """An emoji's Unicode name as words ("CAT FACE" → "cat")."""
    name = unicodedata.name(char[0], "").lower()
    return " ".join(w for w in name.split() if w not in _NAME_NOISE)


def _named(char: str, class_of: Callable[[str], str | None]) -> str | None:
    """The class an emoji's Unicode name names ("CAT FACE" → cat), else None."""
    return class_of(kept) if (kept := _name(char)) else None


def _in_run(found: list[re.Match], classes: list[str | None], i: int) -> bool:
    """Whether emoji ``i`` touches a class emoji: one of a list of them ("🐐🐑🐄")."""
    return any(0 <= j < len(found) and classes[j] is not None
               and (found[j].end() == found[i].start() or found[i].end() == found[j].start())
               for j in (i - 1, i + 1))


_CROSS = "\u274c\u274e\u2716\u2717\u2718\U0001f6ab\U0001f44e\u26d4"  # ❌ ❎ ✖ ✗ ✘ 🚫 👎 ⛔
_TICK = "\u2705\u2714\u2611\U0001f44d\u2713"  # ✅ ✔ ☑ 👍 ✓
_MARK = f"[{_CROSS}{_TICK}]\ufe0f?"
_WORDS = r"[^\W\d_][\w'-]*(?:[ \t]+(?!(?:and|or|but|not|no)\b)[^\W\d_][\w'-]*){0,2}"  # 1-3
_ITEM = rf"(?:{_WORDS}|(?!{_MARK})[\U0001f300-\U0001faff]\ufe0f?)"  # words, or an emoji: "🐴 ❌"
_AFTER = re.compile(rf"(?P<item>{_ITEM})[ \t]*(?P<mark>{_MARK})")  # "birds ❌"
_BEFORE = re.compile(rf"(?P<mark>{_MARK})[ \t]*(?P<item>{_ITEM})")  # "❌ birds"


def _ticked(text: str) -> str:
    """A checklist of ticks and crosses as words: "cats ✅ dogs ✅ birds ❌" → "cats, dogs, not
    birds," (the cross turns its item down; set 67's leftover: birds at 200). A mark goes with
    the item before it, or after it when a line opens with one ("✅ cat\\n❌ horse")."""
    if not re.search(_MARK, text):
        return text
    marked = _BEFORE if re.search(rf"^[ \t]*{_MARK}", text, re.M) else _AFTER
    def said(m: re.Match) -> str:
        return (", not " if m["mark"][0] in _CROSS else ", ") + m["item"] + ", "
    return marked.sub(said, text)


def read_emoji(text: str, class_of: Callable[[str], str | None]) -> str:
    """``text`` with keycaps as digits, checklist marks as words (:func:`_ticked`), class emoji
    as their class's word unless a word of the text names it, and any other emoji dropped."""
    text = _ticked(_KEYCAP.sub(r" \1 ", text))
    if not _EMOJI.search(text):
        return text
    named = {class_of(f) for w in words(text) for f in (w, *singular_forms(w))}
    found = list(_EMOJI.finditer(text))
    classes = [_named(m[0], class_of) for m in found]
    out, last = [], 0
    for i, (m, cls) in enumerate(zip(found, classes, strict=True)):
        word = "" if cls is None or cls in named else cls
        if cls is None and _in_run(found, classes, i):  # "🐐🐑🐄": the goat is asked for too
            word = _name(m[0])
        joined = bool(out) and last == m.start() and out[-1].strip()  # "🐘🦒🦓": a list
        out += [text[last:m.start()], (", " if joined and word else " ") + word + " "]
        last = m.end()
    return re.sub(r"[ \t]{2,}", " ", "".join(out) + text[last:])
