"""A request written as a letter: its greeting and its signature are not about classes.

People paste emails and forum posts ("Dear support, our bank needs …  Best regards, Maria";
"… -Ana"; "EDIT: thanks for the award").
The name after "Dear" or "Best," is an unknown word to the resolver, so the whole request came
back 422. Only a greeting that opens the text and a closing that ends it are cut, and only when
they hold no word of a class name and ask for nothing ("Thanks! Also zebras" keeps zebras).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds import senses
from service.kinds.chunks import is_style
from service.kinds.corrections import NEGATING, RETRACTING
from service.kinds.tokens import plural, words

# greetings in the languages writers of English also greet in ("Guten Tag, I want …": set 44
# read "guten" as a class)
_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|howdy|dear|greetings|good\s+(?:morning|afternoon|evening|day)|"
    r"to\s+whom\s+it\s+may\s+concern|guten\s+(?:tag|morgen|abend)|hallo|bonjour|bonsoir|"
    r"salut|hola|buenos\s+d[ií]as|buenas(?:\s+tardes)?|ciao|buongiorno|ol[aá]|bom\s+dia|"
    r"namaste|salaam)\b(?P<who>[^,.!?:;\n]{0,40})[,.!:;\n]", re.I)  # fmt: skip
# the words that close a letter, inline ("… horses. Best, Maria") and on a line of their own
_CLOSINGS = (r"kind\s+regards|respectfully|best\s+regards|warm\s+regards|best\s+wishes|"
             r"thank\s+you|all\s+the\s+best|thanks|thx|cheers|best|regards|warmly|sincerely|"
             r"yours|ta")
_CLOSING = re.compile(r"(?:^|(?<=[.!?\n,]))\s*(?:many\s+|thanks\s+|with\s+)?(?:sent\s+from\s+my|"
                      r"with\s+thanks|" + _CLOSINGS + r")\b", re.I)
# a name signed with a dash at the very end: "… sheep, cows, horses. -Ana", "— Dr. K. Osei"
# (set 66: "ana" asked back); the dash touches the name, so a last bullet ("- Hamster") is none
_DASHED = re.compile(r"(?<=[.!?])\s*(?:-|--|–|—|~)(?=[A-Z])[A-Z][\w'.]*"
                     r"(?:\s+[A-Z][\w'.]*){1,2}\s*\Z")  # two words or more: "-Hamster", "-Koala"
# are things asked for as often as names (an outside review: both dropped at 200)
# one word signed so, when no dictionary thing: "… from a phone camera. - Kev" (set 87: "kev"
# matched dog at 200); "- Hamster" is asked for
_DASHED_ONE = re.compile(r"(?<=[.!?])\s*(?:-|--|–|—|~)\s*(?P<name>[A-Z][a-z']{1,14})\s*\Z")
_BULLETED = re.compile(r"^\s*(?:[-*•–—]|\d{1,2}[.)])", re.M)  # "- dog.\n-Hamster": an item
# a forum post's last "EDIT:" / "Update:" / "ETA:" paragraph that names no class and asks for
# nothing ("EDIT: thanks for the award kind stranger", "EDIT: typo in title"): set 66 kept its
# words as mentions (asked back); one that changes the request stays ("EDIT: add horses")
_POSTSCRIPT = re.compile(r"\n\s*(?:edit|update|upd|eta)\s*\d*\s*:[^\n]*\s*\Z", re.I)
_CHANGING = RETRACTING | NEGATING | {
    "add", "added", "adding", "also", "too", "plus", "dropped", "removed", "only", "just",
    "include", "included", "exclude", "those", "these", "them", "they", "instead", "more", "rest",
    "else", "all", "every", "dont", "never", "none", "nothing", "forgot",
    "footwear", "mammals", "animals", "clothes", "clothing", "digits", "numbers", "shoes",
}  # fmt: skip  # groups: "EDIT: no shoes"; "forgot": "EDIT: lol forgot donkeys" asks
# what such a note is about (the post, its readers): "EDIT: hamsters" is a class asked for
_ABOUT_POST = {"thanks", "thank", "thx", "award", "gold", "typo", "typos", "title", "formatting",
               "spelling", "upvotes", "replies", "comments", "people", "everyone", "kind",
               "stranger", "wow", "lol", "asking", "clarify", "mobile", "sub"}
_MAX_SIGNATURE_WORDS = 12
# Words a greeting or a signature holds besides names (which are capitalised): anything else
# ("Hey could we get a hamster", "Thanks, and the ferret", "thanks, in sketch style") is kept
_LETTER_WORDS = {
    "team", "all", "everyone", "everybody", "there", "folks", "guys", "support", "sir", "madam",
    "mr", "mrs", "ms", "dr", "yall", "in", "advance", "so", "much", "very", "again", "for",
    "your", "you", "help", "time", "the", "from", "my", "iphone", "android", "phone", "regards",
    "wishes", "best", "kind", "warm", "many", "thanks", "thank", "a", "lot", "loads", "of",
    "x", "xx", "xxx", "agency", "mum", "mom", "dad", "mother", "father", "teacher", "owner",
    "manager", "volunteer", "curator", "archivist", "with",
    "faithfully", "truly", "sincerely", "respectfully", "retd", "ret", "jr", "sr", "esq", "phd",
}  # fmt: skip  # "Yours faithfully, N. Hargreaves (retd.)" (set 63: "hargreaves" asked back)
# capitalised words that still ask ("PS a ferret", "Oh and a rabbit", "Could we …")
_ASKING = {"ps", "p", "and", "also", "oh", "plus", "please", "could", "can", "add"}


# An email's signature block: after the standard delimiter line ("-- ", RFC 3676), or after a
# closing that stands on a line of its own ("Thanks,\nDana\n\nDana Whitfield | Operations
# Lead\nBear Creek Wildlife Rescue …": set 74 refused the pipes or asked its names back).
_DELIMITER = re.compile(r"^[ \t]*--[ \t]*$", re.M)
_CLOSING_LINE = re.compile(  # alone on its line, a closing may also be warmer ("Love,", "xx")
    r"^[ \t]*(?:(?:many\s+|with\s+)?(?:yours\s+(?:sincerely|truly|faithfully)|warm\s+wishes|"
    r"xx+|xo+|love|" + _CLOSINGS + r")[ \t]*[,.!]*[ \t]*|sent\s+from\s+my\b[^\n]*)$",
    re.I | re.M)  # fmt: skip
# Lines a signature block is made of (an outside review: anything after "Thanks," was cut,
# "Forgot to mention, Rabbits are the main thing" and "Sorry - Ankle Boots as well!" with it):
# contact lines (a phone number or postcode, "@", "www", "|", an address or company word), a
# mail client's or lawyer's boilerplate, or a short line of names and titles: no class word, no
# "!"/"?", no lower-case word beyond a few title words ("Head of Ecommerce").
_CONTACT = re.compile(r"\d{3}|\+\s?\d|\(\d|@|\bwww\.|https?:|\||\b(?:ltd|inc|llc|gmbh|plc|rd|st|"
                      r"street|ave|avenue|road|suite|unit|tel|phone|fax|mobile|direct|email|"
                      r"linkedin)\b", re.I)
_BOILERPLATE = re.compile(r"^\W*(?:this\s+(?:e-?mail|message)|confidential|please\s+consider\s+the"
                          r"\s+environment|sent\s+from|the\s+information|if\s+you\s+(?:have\s+)?"
                          r"received|pronouns|opening\s+hours|subscribe|our\s+offices)", re.I)
_TITLE_WORDS = {"of", "and", "the", "for", "at", "de", "van", "von", "da", "la", "le", "on"}


def _signature_line(line: str, class_word: Callable[[str], bool]) -> bool:
    """Whether one line of a block after a closing is a signature's (see ``_CONTACT``)."""
    if re.search(r"[<>{};`$]", line):  # code is no signature: left for the injection check
        return False
    found = re.findall(r"[A-Za-z][\w'-]*", line)
    if not found or _CONTACT.search(line) or _BOILERPLATE.match(line):
        return True
    named = [w.lower() for w in found if class_word(w.lower())]
    title = len(found) <= 6 and not named and not re.search(r"[!?]", line) and all(
        w[0].isupper() or w.lower() in _TITLE_WORDS for w in found)  # "Head of Ecommerce"
    organisation = len(found) >= 3 and all(w[0].isupper() for w in found) \
        and not re.search(r"[!?,:]", line) and not any(map(plural, named))
    return title or organisation  # "Bear Creek Wildlife Rescue"; "Ankle Boots As Well" asks


def signature_block(text: str, class_word: Callable[[str], bool]) -> tuple[str, list[str]]:
    """``(text, [the block cut])``: an email's signature block (``_DELIMITER``,
    ``_CLOSING_LINE``) with what follows it, when text comes before it and every line after
    the mark is a signature's (:func:`_signature_line`). Runs before the injection check,
    which a signature's pipes and "--" would trip."""
    for mark in (_DELIMITER.search(text), _CLOSING_LINE.search(text)):
        if mark is None or not words(text[: mark.start()]):
            continue
        block = text[mark.start():]
        if all(_signature_line(line, class_word) for line in block.splitlines()[1:]):
            return text[: mark.start()], [block.strip()]
    return text, []


def signed(part: str) -> bool:
    """Whether a part cut from a description is a signature block, which says nothing about
    the images ("Sent from my iPhone" is no photo)."""
    return bool(_DELIMITER.match(part) or _CLOSING_LINE.match(part) or _CLOSING.match(part))


def strip_letter(text: str, class_word: Callable[[str], bool]) -> tuple[str, list[str]]:
    """``(text without its greeting and signature, what was cut)``. Beside its opening word, a
    greeting or signature may hold only names (capitalised words) and letter words
    (``_LETTER_WORDS``); "Thanks, and the ferret" asks for a ferret, "Hey could we get a
    hamster, …" is no greeting. A forum post's closing note about the post and a name signed
    with a dash go too (:func:`_sign_off`)."""
    cut = []
    greeting = _GREETING.match(text)
    if greeting and _inert(greeting["who"], class_word):
        cut.append(greeting.group(0).strip(" ,.!:;\n"))
        text = text[greeting.end():]
    text, signed = _sign_off(text, class_word)
    for closing in _CLOSING.finditer(text):  # the earliest closing that ends the text
        tail = text[closing.start():]
        if len(words(tail)) <= _MAX_SIGNATURE_WORDS and _inert(text[closing.end():], class_word):
            cut.append(tail.strip())
            text = text[: closing.start()]
            break
    return text, [c for c in cut + signed if c]


def _sign_off(text: str, class_word: Callable[[str], bool]) -> tuple[str, list[str]]:
    """``(text, what was cut)``: a last "EDIT:" line about the post that changes nothing
    ("EDIT: thanks for the award kind stranger"; not "EDIT: hamsters", "EDIT: no shoes"),
    then a name signed with a dash ("… horses. -Ana"; not a bullet list's last "-Hamster")."""
    cut = []
    postscript = _POSTSCRIPT.search(text)
    if postscript and _ABOUT_POST & set(said := words(postscript[0])) and not any(
            class_word(w) or w in _CHANGING or is_style(w) or plural(w) and w not in _ABOUT_POST
            for w in said):  # "EDIT: thanks for the gold! lions" asks for lions
        cut.append(postscript[0].strip())
        text = text[: postscript.start()]
    dashed = _DASHED.search(text) or ((one := _DASHED_ONE.search(text)) and not plural(
        name := one["name"].lower()) and not senses.thing(name) and one)  # "- Jeggings"
    if dashed and _inert(dashed[0], class_word) and not _BULLETED.search(text[: dashed.start()]):
        cut.append(dashed[0].strip())
        text = text[: dashed.start()]
    return text, cut


def _inert(part: str, class_word: Callable[[str], bool]) -> bool:
    """Only names and letter words, no class word."""
    found = re.findall(r"[A-Za-z][\w'-]*", part)
    return all((w[0].isupper() and w.lower() not in _ASKING) or w.lower() in _LETTER_WORDS
               for w in found) and not any(class_word(w.lower()) for w in found)
