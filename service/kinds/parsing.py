"""Read a task description as an instruction, a set of class mentions and an optional style.

"I need to tell apart sketches of sneakers, 3s and ankle boots" → mentions ``["sneakers",
"3s", "ankle boots"]``, style words ``["sketches"]``. The instruction ("I need to tell apart"),
filler ("the", "pictures of", "which one is"; scikit-learn's English stop words plus this
domain's own) and counts ("the four digits") are dropped *before* matching, so they cannot
stay glued to a class phrase; ranges of numbers are spelled out ("digits 0 through 4");
"and"/"or" inside a hyphenated compound ("black-and-white") do not split; misspelt words are
corrected against the words the resolver knows (``fix``); a mention under a negation ("not
horses", "anything but cats") is dropped; an injection-like string (quotes, SQL, markup) is
refused outright. Which class a mention means, and which domain the style words
mean, is decided by the resolver (``service.kinds.resolution``) with the text encoder.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

NUMERALS = dict(zip("0123456789", ("zero", "one", "two", "three", "four", "five", "six",
                                     "seven", "eight", "nine"), strict=True))  # fmt: skip
# Quotes, markup and comment syntax: what injection attempts need and task wording never does
# (plain words such as "select" or "update" are not refused).
_INJECTION = re.compile(r"[\"<>={}\[\]\\|`]|--|/\*")
_SEPARATORS = re.compile(  # not inside a hyphenated compound: "black-and-white", "either-or"
    r",|;|&|\+|/|(?<![-\w])(?:and|or|nor|vs\.?|versus|from)(?![-\w])|[.!?](?=\s|$)", re.I)
_NUMBER = r"(?:\d|zero|one|two|three|four|five|six|seven|eight|nine)"
_RANGE = re.compile(rf"\b({_NUMBER})\s*(?:-|–|—|\bto\b|\bthrough\b|\bthru\b|\btill\b|"
                    rf"\buntil\b)\s*({_NUMBER})\b(\s+\w+)?", re.I)
_HEADER = re.compile(r"^(.*)(?::|\s[—–-]\s)(.*)$", re.S)  # "pets: cat and dog", "paintings — …"
_COUNT = re.compile(
    r"\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:digits?|numbers?|numerals?|"
    r"classes|categories|kinds|types|animals|garments|things|items)\b", re.I)  # fmt: skip
_PRONOUN_ONE = re.compile(r"\b(which|this|that|each|every|any|no|the other)\s+one\b", re.I)
NEGATIONS = {"not", "no", "non", "never", "except", "excluding", "without", "but", "nor", "none",
             "nothing"}
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
    "knows", "know", "if", "question", "task", "classes", "class", "categories", "s", "pls",
    "plz", "animal", "animals", "creature", "creatures", "clothes", "clothing", "garment",
    "garments", "item", "items", "object", "objects", "thing", "things", "shown", "pictured",
    "depicted", "draw", "did", "tag", "tags", "recognizer", "recogniser", "detector",
}  # fmt: skip
# Stop words a class may still be named by ("one", "top") are kept where they name a class.
FILLER |= ENGLISH_STOP_WORDS - NEGATIONS


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


def parse(text: str, names_a_class: Callable[[str], bool] | None = None,
          fix: Callable[[str], str] | None = None) -> Parsed:
    """Split ``text`` into class mentions and style words (see the module docstring).

    ``names_a_class`` tells a header ("farm animals: cows, sheep") from a first mention ("cats:
    dogs, horses"): text before a colon or dash that names a class is a mention like the rest;
    it also keeps a stop word that names a class ("one"). ``fix`` corrects a misspelt token.
    """
    if _INJECTION.search(text):
        return Parsed([], refused="the description contains quotes, markup or code; describe the "
                      "task in plain words, e.g. 'classify cats and dogs'")  # fmt: skip
    names_a_class = names_a_class or (lambda _: False)
    fix = fix or (lambda t: t)
    text = expand_ranges(text, names_a_class)
    style: list[str] = []
    header = _HEADER.match(text)
    if header and words(header.group(2)):
        head, rest = header.group(1), header.group(2)
        if any(names_a_class(_content(words(c), names_a_class))
               for c in _SEPARATORS.split(head)):  # fmt: skip
            text = f"{head}, {rest}"
        else:
            style += [w for w in words(head) if is_style(w)]
            text = rest
    text = _PRONOUN_ONE.sub(" ", _COUNT.sub(" ", text))
    mentions = []
    for chunk in _SEPARATORS.split(text):
        tokens = [fix(t) for t in words(chunk)]
        if negates(tokens):  # "not horses": that class is not asked for
            continue
        style += [t for t in tokens if is_style(t)]
        if kept := _content(tokens, names_a_class):
            mentions.append(kept)
    return Parsed(mentions, style)


def _content(tokens: list[str], names_a_class: Callable[[str], bool]) -> str:
    """The tokens that can name a class: no filler, no style words (unless one names a class)."""
    return " ".join(t for t in tokens
                    if (not is_style(t) and t not in FILLER) or names_a_class(t))


def is_style(token: str) -> bool:
    """A word about how the images look ("sketches", "cameras"), singular or plural."""
    return any(form in STYLE_WORDS for form in singular_forms(token))


def expand_ranges(text: str, names_a_class: Callable[[str], bool]) -> str:
    """"digits 0 through 4", "1-3", "six to nine" → the numbers spelt out, comma-separated,
    when both ends name classes; not "two to three dogs" (a count of something that does)."""
    def spell(match: re.Match) -> str:
        lo, hi = (_as_int(match.group(i)) for i in (1, 2))
        after = match.group(3) or ""
        counted = bool(words(after)) and names_a_class(words(after)[0])
        ends = all(names_a_class(match.group(i).lower()) for i in (1, 2))
        if counted or not ends or lo >= hi:
            return match.group(0)
        return ", ".join(str(n) for n in range(lo, hi + 1)) + after
    return _RANGE.sub(spell, text)


def _as_int(number: str) -> int:
    number = number.lower()
    return int(number) if number.isdigit() else list(NUMERALS.values()).index(number)


def edit_distance(a: str, b: str, limit: int) -> int:
    """Edits (insertions, deletions, substitutions, adjacent swaps) between ``a`` and ``b``;
    ``limit + 1`` when the lengths alone rule out ``limit``. Written here, not imported: two
    short words are a dozen lines, and no library this project depends on has it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2, prev = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if prev2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


class Speller:
    """Corrects a misspelt word ("sneekers", "classifer") to the nearest word of
    ``vocabulary``, if it is within 1 edit (2 from 8 letters) and no other word is as near.
    A word the text encoder's own vocabulary knows (``known``: "goats", "boats"), or one
    inflected from such a word ("buttoned"), is real and never corrected into a class; nor
    are words shorter than 5 letters or with digits."""

    def __init__(self, vocabulary: Iterable[str], known: Iterable[str]) -> None:
        self.vocabulary = {w for w in vocabulary if w.isalpha()}
        self.known = set(known) | self.vocabulary

    def __call__(self, token: str) -> str:
        if len(token) < 5 or not token.isalpha() or self._real(token):
            return token
        limit = 1 if len(token) < 8 else 2
        dist = {w: edit_distance(token, w, limit) for w in self.vocabulary}
        best = min(dist.values(), default=limit + 1)
        near = {w for w, d in dist.items() if d == best}
        return near.pop() if best <= limit and len(near) == 1 else token

    def _real(self, token: str) -> bool:
        """A known word, or one inflected from a known word ("buttoned", "grazing")."""
        stems = singular_forms(token) + [token[: -len(end)] for end in ("ed", "d", "ing", "er",
                                                                        "ers", "ly", "est")
                                         if token.endswith(end)]  # fmt: skip
        return any(stem in self.known for stem in stems)


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
