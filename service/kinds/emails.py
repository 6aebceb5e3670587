"""A pasted email reply: the new message is the request; its quoted thread is history.

People forward the whole thread: "Following up on the thread below: just sheep and cows, no
horses. Thanks, Dana | PastureSense  > On Tue, Tom wrote: > Proposed classes: sheep, cows,
horses". Read as one text, the older list adds what the reply took back (a union at 200, or
a clash), and the signature's "|" reads as code (a 422 for the whole request). So in a
top-posted reply (one quoted block under the new message) whose new message names a class,
the quoted block goes, unless the new message adds to it ("also", "add", "too", "as well",
"plus": then both are read, as before); and the new message loses its signature: a ``--``
line and what follows, or a closing ("Thanks,") and up to four lines after it, when those
hold no class, style or asking word ("Thanks,\nP.S. sketches only" keeps its style).
Attribution lines ("On Tue, Tom wrote:") and a reply's "Subject: RE: …" go too. A reply
answering inline ("> Also dogs?\nNo") and a text whose unquoted lines name no class (it
quotes the request itself: "Slack, from Tom: > can we get shirts and trousers") are left as
they are. Stop 33: four rows of set 31 were such replies; an outside review found reading
the thread oldest first answered hedges ("Not sure about horses") with the older list.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.chunks import is_style
from service.kinds.letters import strip_letter
from service.kinds.tokens import words

_QUOTED = re.compile(r"^[ \t]*>[ \t]?", re.M)
_ATTRIBUTION = re.compile(r"^[ \t]*(?:on\b[^\n]{0,120}\bwrote:|-{2,}\s*original message\s*-{2,}"
                          r"|subject:\s*(?:re|fwd?|aw|sv):[^\n]*)[ \t]*$", re.I | re.M)
_SIGNATURE = re.compile(r"^--[ \t]*$", re.M)
_FIELD = re.compile(r"^[ \t]*(?:>[ \t]*)+(?:from|to|cc|sent|date):[^\n]*\n?", re.I | re.M)
# a closing on its own line ("Thanks,", "Best regards,"), then up to four lines (name, title,
# phone, web site) to the end of the message
_SIGNED = re.compile(r"^[ \t]*(?:thanks|thank you|many thanks|cheers|best|best regards|"
                     r"kind regards|regards|sincerely|warmly)[ \t]*[,.!]?[ \t]*\n"
                     r"(?:[^\n]*\n?){1,4}\Z", re.I | re.M)
_ADDING = {"also", "add", "adding", "added", "too", "plus", "additionally", "extra", "more"}
_ADDING_PHRASE = re.compile(r"\bas\s+well\b|\bin\s+addition\b", re.I)
_ASKING = {"also", "ps", "p", "only", "please", "pls", "add", "plus", "and", "but", "just",
           "not", "no", "except", "without", "too"}  # fmt: skip


def newest(text: str, class_word: Callable[[str], bool]) -> tuple[str, list[str]]:
    """``(the reply's new message, what was cut)``; any other text comes back as it is, its
    quoted block kept where the new message adds to it (see the module docstring)."""
    lines = text.splitlines()
    quoted = [i for i, line in enumerate(lines) if _QUOTED.match(line)]
    if not quoted or any(line.strip() for line in lines[quoted[0]:] if not _QUOTED.match(line)):
        return text, []  # no quote, or an inline reply
    newer, older = "\n".join(lines[: quoted[0]]), "\n".join(lines[quoted[0]:])
    if not any(map(class_word, words(newer))):  # "Requirements doc: > The model should …"
        fields = _FIELD.findall(older)  # quotes the request itself: no thread; its
        return _FIELD.sub("", text), [f.strip(" \t>") for f in fields]  # "> From: Maria" goes
    cut = _ATTRIBUTION.findall(newer)
    newer = _ATTRIBUTION.sub("", newer).strip()
    for signature in (_SIGNATURE.search(newer), _SIGNED.search(newer)):
        if signature is not None and _inert(newer[signature.start():], class_word):
            cut.append(newer[signature.start():].strip())
            newer = newer[: signature.start()].strip()
    newer, letter = strip_letter(newer, class_word)
    if _ADDING & set(words(newer)) or _ADDING_PHRASE.search(newer):
        return f"{newer}\n\n{older}", [c.strip() for c in cut + letter if c.strip()]
    return newer, [c.strip() for c in cut + letter + [older] if c.strip()]


def _inert(signature: str, class_word: Callable[[str], bool]) -> bool:
    """A signature holds no class, style or asking word (a phone number's "1" is no one)."""
    return not any(class_word(w) or is_style(w) or w in _ASKING
                   for w in words(signature) if w.isalpha())
