"""A pasted email reply: its quoted thread came first, its signature is about nobody's classes.

People forward the whole thread: "Following up on the thread below: just sheep and cows. No
horses. Thanks, Dana | PastureSense  > On Tue, Tom wrote: > Proposed classes: sheep, cows,
horses, and dogs". Read top to bottom, the older quoted message comes last and overrides the
newer one; the signature's "|" read as code (a 422 for the whole request). So the quoted lines
(``>``) move before the new message, in the order they were written (the reader's corrections
then apply: "drop the pullovers" after "shirts, t-shirts, pullovers"; the new message's "no
horses" reads "drop horses", taking back what the older one asked for), and the new message
loses its signature: a ``--`` line and what follows, or a closing ("Thanks,") and the lines
after it (:func:`service.kinds.letters.strip_letter`). Attribution lines ("On Tue, Tom
wrote:") and a reply's "Subject: RE: …" go. A text whose unquoted lines name no class
quotes the request itself ("Slack, from Tom: > can we get shirts and trousers"): left as it
is. Stop 33: four rows of set 31 were such replies.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.letters import strip_letter
from service.kinds.tokens import words

_QUOTED = re.compile(r"^[ \t]*>[ \t]?", re.M)
_ATTRIBUTION = re.compile(r"^[ \t]*(?:on\b[^\n]{0,120}\bwrote:|-{2,}\s*original message\s*-{2,}"
                          r"|subject:\s*(?:re|fwd?|aw|sv):[^\n]*)[ \t]*$", re.I | re.M)
# "no horses", "not t-shirts" in the newer message: the classes it takes back, since its
# writer read the older one (a plain negation of both would be asked back, a 422)
_NOT = re.compile(r"\b(?:no|not)\b(?=\s+[a-z])", re.I)
_SIGNATURE = re.compile(r"^--[ \t]*$", re.M)
# a closing on its own line ("Thanks,", "Best regards,"), then up to four lines (name, title,
# phone, web site) to the end of the message
_SIGNED = re.compile(r"^[ \t]*(?:thanks|thank you|many thanks|cheers|best|best regards|"
                     r"kind regards|regards|sincerely|warmly)[ \t]*[,.!]?[ \t]*\n"
                     r"(?:[^\n]*\n?){1,4}\Z", re.I | re.M)


def oldest_first(text: str, class_word: Callable[[str], bool]) -> tuple[str, list[str]]:
    """``(the thread in the order it was written, what was cut)``; a text without quoted
    lines comes back as it is."""
    lines = text.splitlines()
    quoted = [i for i, line in enumerate(lines) if _QUOTED.match(line)]
    if not quoted:
        return text, []
    older = "\n".join(_QUOTED.sub("", lines[i]) for i in quoted)
    newer = "\n".join(line for i, line in enumerate(lines) if i not in set(quoted))
    if not any(map(class_word, words(newer))):  # "Requirements doc: > The model should …"
        return text, []  # quotes the request itself: no thread
    cut = _ATTRIBUTION.findall(newer) + _ATTRIBUTION.findall(older)
    newer, older = _ATTRIBUTION.sub("", newer), _ATTRIBUTION.sub("", older)
    if (signature := _SIGNATURE.search(newer)) is not None:
        cut.append(newer[signature.end():].strip())
        newer = newer[: signature.start()]
    signed = _SIGNED.search(newer.strip())
    if signed is not None and not any(class_word(w) for w in words(signed[0])
                                      if w.isalpha()):  # a phone number's "1" is no one
        cut.append(signed[0])
        newer = newer.strip()[: signed.start()]
    newer, letter = strip_letter(newer.strip(), class_word)
    newer = _NOT.sub("drop", newer)  # the newer message's "No horses" takes back the older's
    return f"{older.strip()}\n\n{newer.strip()}", [c.strip() for c in cut + letter if c.strip()]
