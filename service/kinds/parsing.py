"""Read a task description as an instruction, a set of class mentions and an optional style.

"I need to tell apart sketches of sneakers, 3s and ankle boots" → mentions ``["sneakers",
"3s", "ankle boots"]``, style words ``["sketches"]``. The instruction ("I need to tell apart"),
filler ("the", "pictures of", "which one is") and counts ("the four digits") are dropped
*before* matching, so they cannot stay glued to a class phrase; a mention under a negation
("not horses", "anything but cats") is dropped; an injection-like string (quotes,
SQL, markup) is refused outright. Which class a mention means, and which domain the style words
mean, is decided by the resolver (``service.kinds.resolution``) with the text encoder.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

NUMERALS = dict(zip("0123456789", ("zero", "one", "two", "three", "four", "five", "six",
                                     "seven", "eight", "nine"), strict=True))  # fmt: skip
# Quotes, markup and comment syntax: what injection attempts need and task wording never does
# (plain words such as "select" or "update" are not refused).
_INJECTION = re.compile(r"[\"<>={}\[\]\\|`]|--|/\*")
_SEPARATORS = re.compile(r",|;|&|\+|/|\band\b|\bor\b|\bnor\b|\bvs\b\.?|\bversus\b|\bfrom\b", re.I)
_HEADER = re.compile(r"^(.*)(?::|\s[—–-]\s)(.*)$", re.S)  # "pets: cat and dog", "paintings — …"
_COUNT = re.compile(
    r"\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:digits?|numbers?|numerals?|"
    r"classes|categories|kinds|types|animals|garments|things|items)\b", re.I)  # fmt: skip
_PRONOUN_ONE = re.compile(r"\b(which|this|that|each|every|any|no|the other)\s+one\b", re.I)
NEGATIONS = {"not", "no", "non", "never", "except", "excluding", "without", "but", "nor"}
_EXCLUDING = {"except", "excluding", "anything", "everything"}  # negate wherever they stand
STYLE_WORDS = {
    "sketch", "sketches", "sketched", "sketchy", "drawing", "drawings", "drawn", "doodle",
    "doodles", "pencil", "charcoal", "ink", "line", "painting", "paintings", "painted", "oil",
    "watercolour", "watercolours", "watercolor", "watercolors", "acrylic", "artwork", "artworks",
    "art", "museum", "canvas", "cartoon", "cartoons", "comic", "comics", "animated", "animation",
    "anime", "manga", "strips", "book", "photo", "photos", "photograph", "photographs",
    "photographic", "snapshot", "snapshots", "camera", "real", "realistic", "life", "catalogue",
    "safari",
}  # fmt: skip
FILLER = {
    "i", "id", "im", "we", "you", "my", "me", "our", "your", "us", "it", "its", "this", "these",
    "those", "that", "them", "they", "is", "are", "be", "am", "was", "a", "an", "the", "some",
    "any", "each", "every", "to", "of", "in", "on", "at", "for", "with", "into", "as", "by",
    "about", "between", "among", "apart", "please", "can", "could", "would", "should", "will",
    "may", "need", "needs", "want", "wants", "like", "have", "has", "do", "does", "help", "build",
    "make", "create", "train", "give", "get", "model", "models", "app", "apps", "application",
    "classifier", "system", "tool", "something", "classify", "classifies", "distinguish",
    "differentiate", "recognise", "recognize", "recognises", "recognizes", "identify", "detect",
    "sort", "separate", "tell", "label", "find", "spot", "guess", "decide", "whether", "which",
    "what", "difference", "differences", "picture", "pictures", "image", "images", "kind",
    "kinds", "type", "types", "sorts", "different", "various", "either", "neither", "just",
    "only", "also", "again", "too", "here", "there", "users", "user", "upload", "uploads", "sell",
    "run", "shop", "reader", "kid", "kids", "childrens", "children", "shows", "show", "showing",
    "featuring", "digit", "digits", "number", "numbers", "numeral", "numerals", "handwritten",
    "knows", "know", "if", "question", "task", "classes", "class", "categories", "s",
}  # fmt: skip


@dataclass
class Parsed:
    """A description, read: its class mentions (request order), style words, or why refused."""

    mentions: list[str]
    style: list[str] = field(default_factory=list)
    refused: str | None = None


def words(text: str) -> list[str]:
    """Lower-case word tokens, accents folded (apostrophes dropped, hyphens split): "kid's
    T-shirts" → ``["kids", "t", "shirts"]``, "ÉLÉPHANTS" → ``["elephants"]``."""
    folded = unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()
    return re.sub(r"[^0-9a-z]+", " ", folded.replace("'", "")).split()


def parse(text: str, names_a_class: Callable[[str], bool] | None = None) -> Parsed:
    """Split ``text`` into class mentions and style words (see the module docstring).

    ``names_a_class`` tells a header ("farm animals: cows, sheep") from a first mention ("cats:
    dogs, horses"): text before a colon or dash that names a class is a mention like the rest.
    """
    if _INJECTION.search(text):
        return Parsed([], refused="the description contains quotes, markup or code; describe the "
                      "task in plain words, e.g. 'classify cats and dogs'")  # fmt: skip
    style: list[str] = []
    header = _HEADER.match(text)
    if header and words(header.group(2)):
        head, rest = header.group(1), header.group(2)
        if names_a_class is not None and any(names_a_class(_content(c))
                                             for c in _SEPARATORS.split(head)):  # fmt: skip
            text = f"{head}, {rest}"
        else:
            style += [w for w in words(head) if w in STYLE_WORDS]
            text = rest
    text = _PRONOUN_ONE.sub(" ", _COUNT.sub(" ", text))
    mentions = []
    for chunk in _SEPARATORS.split(text):
        tokens = words(chunk)
        if negates(tokens):  # "not horses": that class is not asked for
            continue
        style += [t for t in tokens if t in STYLE_WORDS]
        if kept := _content(chunk):
            mentions.append(kept)
    return Parsed(mentions, style)


def _content(text: str) -> str:
    """The words of ``text`` that can name a class (no filler, no style words)."""
    return " ".join(t for t in words(text) if t not in STYLE_WORDS and t not in FILLER)


def negates(tokens: list[str]) -> bool:
    """A mention that asks for the absence of a class: "not horses", "no cats", "anything but
    dogs" (a negation first, or an excluding word anywhere); "a top with no collar" is not."""
    content = [t for t in tokens if t not in FILLER or t in NEGATIONS]
    return bool(content) and (content[0] in NEGATIONS or bool(_EXCLUDING & set(tokens)))


def singular_forms(word: str) -> list[str]:
    """``word`` and what it may be the plural of (cats, ponies, calves, boxes, 3s, zeroes)."""
    forms = [word]
    if word.endswith("ies") and len(word) > 4:
        forms.append(word[:-3] + "y")
    if word.endswith("ves"):
        forms += [word[:-3] + "f", word[:-3] + "fe"]
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s") and len(word) > 1:
        forms.append(word[:-1])
    return forms
