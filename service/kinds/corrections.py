"""People correct themselves while they type: "sneakers and sandals, no wait, sneakers and ankle
boots", "cats, dogs and horses, drop the horses".

A correction marker ("no wait", "sorry, I mean", "scratch that", "actually, make that") takes
back what came before it in its sentence, or the sentence before when it opens one; a
retracting verb ("drop", "skip", "scrap", "forget", "remove", "minus", "leave … out") takes
back the classes it names, even those asked for earlier. A plain negation ("not horses")
stays what it was: a class both asked for and excluded is asked back (422), since nothing
says which came last on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.kinds.asides import later_items, participle_asides, wait_no_items
from service.kinds.pointing import pointed_at
from service.kinds.swaps import swapped
from service.kinds.tokens import singular_forms, words
from service.kinds.vocabulary import FILLER

_MARKER = re.compile(r"\bno,?\s+wait\b,?|\bwait,?\s+no\b,?|\bsorry,?\s+i\s+mean(?:t)?\b|"
                     r"\bno\s+sorry\b|\b(?:scra(?:tch|p)|strike)\s+that\b|\bcorrection\s*:|"
                     r"\bi\s+meant\b|"
                     r"(?:^|(?<=[.!?;]\s))correction\s*,|"  # "Targets: horse, dog. Correction,
                     # horse, dog, bird." (set 105); not "no colour correction, please"
                     r"(?:,|\ber\b|\bum\b|\buh\b),?\s*i\s+mean\b|"
                     r"\bno,\s+(?=(?:just|only|actually|instead)\b)|"  # "? no, just the even"
                     r"\b(?:actually|no|sorry|wait|oops),?\s+make\s+(?:that|it)\b,?|"  # not
                     r"\bmake\s+(?:that|it)\s+(?=(?:just|only)\b)|"  # "make it just the cats"
                     r"\b(?:edit|update|upd)\s*\d*\s*:\s*actually\b,?|"  # "edit: actually …"
                     # "make it fast", "make that one two"
                     r"\bon\s+second\s+thoughts?\b,?|\bchange\s+of\s+plans?\b[:,]?|"
                     r"\bor\s+rather\b(?!\s+(?:than|their|its|a|an|his|her)\b),?|"  # "X, or
                     # rather Y"; not "or rather their photos", "sheep or rather a cow"
                     r"\b(?:right|correct)\?\s*no\b(?=\s*[,.!;])[,.!;]?|"  # "…, right? no, …"
                     r"\b(?:(?-i:jk)|j/k|just\s+kidding)\b,?",  # "wait no birds. jk keep birds"
                     # (set 71); not the initials "JK asked for birds" (an outside review)
                     re.I)  # fmt: skip
# a question turned down takes back its own chunk: "Also elephant? no, lol", "bear only? no...
# bear and dog", "what do you call them, high-top boots? no, ankle boots" (stop 32)
# The question may run on after a comma ("Should we include birds, too? No.", "What about
# shirts, do we add those? No."); a "no" that goes on to agree ("No, go ahead", "No, same model
# please", "No, wait, yes") declines nothing (an outside review of stop 47: wrong 200s)
_DECLINED = re.compile(r"(?:^|(?<=[.!?,;]))(?!\s*(?:right|correct|ok|okay|yes|yeah)\s*\?)"
                       r"[^.!?,;]*(?:,\s*(?:too|as\s+well|also|then|(?:do|should|shall|can|could|"
                       r"would|will)\s+(?:we|i|you)\b[^.!?,;]*))?"
                       r"\?+\s*(?:(?:lol|haha|hmm|um)\s+)?(?:no|nope|nah|not\s+sure|no\s+idea(?:\s+yet)?|i'?d\s+"
                       r"say\s+no|not\s+yet|maybe\s+later)\b(?=\s*[,.!;?]|\s*$)"
                       r"(?![,.!;]?\s*(?:go\s+ahead|include|add|same|yes|keep\s+(?:them|both|those|all)|wait|sorry|why\s+"
                       r"not|of\s+course|please\s+(?:do|add|include))\b)[,.!;?]*",
                       re.I)  # a tag question ("cats and dogs, right? no, …") corrects  # fmt: skip
_SENTENCE_END = re.compile(r"[.!?]+\s+|\n")
_ADDING = {"also", "too", "plus", "add", "additionally", "another", "more"}
RETRACTING = {"drop", "skip", "scrap", "scratch", "forget", "remove", "omit", "cancel", "minus",
              "nvm", "nevermind",  # Slack's "edit 2: nvm dresses"
              "ditch", "lose", "ignore", "disregard"}  # fmt: skip
# "ignore any animal that isn't one of these", "drop everything else": a filter, not a class
_UNNAMED = {"any", "anything", "everything", "other", "others", "else", "rest", "all"}
LEADING = {"please", "pls", "so", "but", "and", "just", "then", "i", "we", "you", "d", "ll"}
NEGATING = {"no", "not", "except", "without", "excluding", "nor"}
_NEVER_MIND = re.compile(r"\bnever\s+mind\b", re.I)
_TAKE_BACK = re.compile(r"\b(?:actually|sorry),?\s+(?:not|no)\b(?!,?\s+(?:make|change|switch)\s+"
                        r"(?:it|that)\b)", re.I)  # "Actually, not dogs"; "actually no, make it
# …" is the marker's (set 48: the sentence before it was kept)
# "Not 3 actually.", "no horses actually": a negation that takes back, as "actually, not 3"
_TAKEN_BACK_AFTER = re.compile(r"\b(?:not|no)\s+([^.!?,;]{1,40}?),?\s+actually\b(?=\s*[.!?;]|\s*$)",
                               re.I)
# a second thought that turns down what was asked: "Actually we don't need the bear", "Ah no,
# the bear we don't need" (set 65: a clash, 422) takes it back as "drop the bear" would
_NOT_NEED = r"(?:we|i)\s+(?:don'?t|do\s+not|won'?t|will\s+not)\s+(?:need|want)"
_SECOND_THOUGHT = re.compile(r"(?:^|(?<=[.!?]))(\s*)(?:actually|(?:ah|oh|hmm+|um+),?\s+no)\s*,?\s+"
                             rf"(?:{_NOT_NEED}\s+(?P<a>[^.!?,;]{{1,40}})|(?P<b>[^.!?,;]{{1,30}}?)"
                             rf"\s+{_NOT_NEED}\b)", re.I)  # fmt: skip
# a forum post's "EDIT: not the birds, …" takes them back as "drop" would (set 66: a clash with
# the birds listed before, 422)
_EDIT_NOT = re.compile(r"\b((?:edit|update|upd|eta)\s*\d*\s*:)\s*(?:not|no)\s+(?!(?:sure|really|"
                       r"only|just|much|that|this|yet|quite|exactly)\b)", re.I)
# "Cats, dogs, horses. Actually I don't want anything but horses": a correction to only those
# (an outside review of stop 50: all three kept at 200)
_NOTHING_BUT = re.compile(r"(?:^|(?<=[.!?]))\s*(?:(?:actually|(?:ah|oh|hmm+|um+),?\s+no)\s*,?\s+)?"
                          rf"{_NOT_NEED}\s+any(?:thing|\s+(?:class|classes|other))?\s+(?:but|"
                          r"except|other\s+than|besides|apart\s+from)\s+", re.I)
# a retracting verb ending its line with no object takes back what its line named: "edit:
# bears aren't in the savanna lol, remove" (set 67: bear kept at 200) reads "remove them"
_BARE_RETRACT = re.compile(r"(?<=[\w)]),?\s+(remove|drop|delete|cut|skip)(?:\s+(?:pls|please))?"
                           r"(?=\s*[.!]*\s*(?:\n|$))", re.I)
# not after a subject, a modal or a negation: "the moderator should remove", "we can't skip"
_NOT_BARE = {"should", "to", "will", "can", "could", "would", "must", "may", "might", "shall",
             "cant", "cannot", "dont", "not", "never", "wont", "shouldnt", "we", "they", "i",
             "you", "he", "she", "who", "which", "that"}


def _only(m: re.Match, class_word: Callable[[str], bool] | None) -> str:
    """"I don't want anything but X" as "Actually, make it just X" when X is class words to its
    sentence's end; not "… anything but real photos for the horses" (an outside review)."""
    rest = re.split(r"[.!?\n]", m.string[m.end():], maxsplit=1)[0]
    names = class_word is not None and _names_only(words(rest), class_word)
    return " Actually, make it just " if names else m[0]


def _bare_retracted(text: str, class_word: Callable[[str], bool] | None) -> str:
    """``text`` with a bare retracting verb ending a line that names one class as "… them"."""
    def them(m: re.Match) -> str:
        line = re.split(r"[\n.!?]", m.string[:m.start()])[-1]
        toks = words(line)
        named = {(singular_forms(t) or [t])[0] for t in toks if class_word and class_word(t)}
        if toks and toks[-1] in _NOT_BARE or len(named) != 1:
            return m[0]
        return f", {m[1]} them"
    return _BARE_RETRACT.sub(them, text)
# "vacas and caballos... sorry, cows and horses" (set 44): a correction, as "sorry, I mean"
_TRAILING_SORRY = re.compile(r"\s*(?:\.{2,}|…|\s—|\s--)\s*sorry\b,?(?!\s+(?:for|if|about|to|"
                             r"that)\b)", re.I)
_INTERJECTIONS = {"hmm", "hm", "ok", "okay", "oh", "so", "um", "uh", "er", "ah", "well", "hmmm",
                  "wait"}  # "dog and cat. wait actually make it dog and sheep" (set 79)
# "elephant... scratch elephant": an ellipsis between words ends a sentence, unless what
# follows goes on with the list
_ELLIPSIS = re.compile(r"(?<=[a-z])\s*(?:\.{3,}|…)\s+(?=[a-z])(?!(?:and|or|nor|plus|maybe|"
                       r"oh|also|n)\b)", re.I)  # not "… and a hamster!", which goes on
_HEDGED = re.compile(r"(?<=\w)\s+(?:--|-|—|–)?\s*((?:actually|oh|wait|no),?\s+(?:scratch|drop|"
                     r"remove|forget|skip|scrap|cancel|ditch)\b)", re.I)
# words that may open a retracting chunk before its verb ("but then actually drop …")
_LEAD = {"but", "then", "actually", "and", "also", "oh", "please", "pls", "ok", "okay", "so",
         "just", "maybe", "lets", "let", "us", "you", "can", "could", "we", "i", "ll", "d"}


# "dog, gato, sorry I mean cat, and horse": "I mean" right after a listed word that names no
# class corrects that word only (set 48: dog was taken back at 200)
_MEANT_ITEM = re.compile(r"(?<=,)\s*(?P<x>[^\W\d_]+)\s*,\s*sorry\s+i\s+mean\s+", re.I)


def _edit_not(m: re.Match, class_word: Callable[[str], bool] | None) -> str:
    """"EDIT: not X, …" as "EDIT: drop X, …" when the rest of its line names no other class
    ("EDIT: not birds, parrots only" stays a clash: parrots are birds)."""
    line = m.string[m.end():].split("\n", 1)[0]
    rest = line.split(",", 1)[1] if "," in line else ""
    if class_word is None or any(map(class_word, words(rest))):
        return m[0]
    return f"{m[1]} drop "


def retract_before_markers(text: str, class_word: Callable[[str], bool] | None = None
                           ) -> tuple[str, list[str]]:
    """``(text, taken back)``: for each correction marker, the text before it back to the
    start of its sentence (the sentence before, when the marker opens one) is dropped, unless
    what follows adds or takes back its own (:func:`_keeps_before`; "Correction: no horses,
    cows" then reads "(drop horses), cows", not a clash with the horses asked before). "Oh
    wait" is no marker: it adds more often than it takes back ("Oh wait, the zoo also has
    sheep"). ``class_word``: whether a word names a class (without it, no ``_MEANT_ITEM``)."""
    text = _TRAILING_SORRY.sub(", sorry I mean ", text)  # before an ellipsis ends a sentence
    text = _EDIT_NOT.sub(lambda m: _edit_not(m, class_word), text)  # "EDIT: not the birds"
    text = _bare_retracted(_NOTHING_BUT.sub(lambda m: _only(m, class_word), text), class_word)
    text = _SECOND_THOUGHT.sub(lambda m: f"{m[1]}drop {m['a'] or m['b']}" if class_word
                               and _names_only(words(m["a"] or m["b"]), class_word) else m[0],
                               text)  # not "Actually we don't need perfect accuracy on 7" (an
    # outside review: 7 dropped at 200), nor "… don't want that"
    if class_word is not None:
        text = participle_asides(text, class_word)  # "…, all rescued from bad situations"
        text = _MEANT_ITEM.sub(lambda m: m[0] if class_word(m["x"].lower()) else " ", text)
    text = _TAKEN_BACK_AFTER.sub(r" (drop \1) ", _ELLIPSIS.sub(". ", swapped(text)))
    dropped, text = [], _TAKE_BACK.sub("drop", _NEVER_MIND.sub("nvm", text))  # not a clash
    text = later_items(wait_no_items(text))  # "bear, bird, and— wait, no bird — horse"
    dropped += [m[0].strip() for m in _DECLINED.finditer(text)]
    text = _DECLINED.sub(" ", text)
    text = _HEDGED.sub(r", \1", text)  # "and 7 -- actually scratch the 4": its own chunk
    while match := _MARKER.search(text):
        ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, match.start())]
        start = ends[-1] if ends else 0
        if _keeps_before(words(text[match.end():]), words(text[start:match.start()])):
            after = _OPENING_NO.sub(r" (drop \1) ", _OPENING_NO_BUT.sub(
                r" (drop \1) also ", text[match.end():]))  # "Correction: no X(, but Y)"
            text = text[:match.start()] + " " + after
            continue
        if not set(words(text[start:match.start()])) - _INTERJECTIONS:  # the marker opens
            # its sentence ("Hmm, make it just the cats")
            start = ends[-2] if len(ends) > 1 else 0
        dropped.append(text[start:match.end()].strip())
        rest = text[match.end():].lstrip()  # a sentence of its own: "Remove 0 and 1"
        text = text[:start] + " " + rest[:1].upper() + rest[1:]
    return text, dropped


# "Correction: no horses, cows": one item taken back in an aside, the rest read on
_OPENING_NO_BUT = re.compile(r"^\s*(?:no|not)\s+([^,.;:!?]+?)\s*,?\s*but\b", re.I)
_OPENING_NO = re.compile(r"^\s*(?:no|not)\s+([^,.;:!?]+?)(?=\s*(?:[,.;:!?]|\bbut\b|$))", re.I)


def _keeps_before(after: list[str], before: list[str]) -> bool:
    """Whether a marker leaves what came before it (only the marker goes): what follows adds
    ("no wait, also horses") or takes back its own ("Correction: no horses, cows", "on second
    thought remove 0 and 1"), or what came before already took back ("scratch the horses -
    make it bears, sheep"). Not "on second thought, leave out 4 and 5": an outside review
    found "leave … out" read inverted there; it drops the sentence before, as any marker."""
    return bool((_ADDING | RETRACTING) & set(after[:3])
                or (after[:1] in (["no"], ["not"]) and len(after) > 1)
                or RETRACTING & set(before))


def _names_only(item: list[str], class_word: Callable[[str], bool]) -> bool:
    """Whether ``item`` names a class and says nothing else ("the bear", not "perfect accuracy
    on 7" or "that")."""
    return any(map(class_word, item)) and all(w in FILLER or class_word(w) for w in item)


# a retraction told as done: "they dropped ankle boot", "we cut the trousers" (sets 81, 82:
# the class kept at 200); "cut" only here, where it opens a chunk or takes a pronoun
_DONE = {"dropped", "removed", "scrapped", "skipped", "cancelled", "canceled", "ditched",
         "omitted", "cut", "nixed"}
# "they dropped off dogs", "removed in 2021": a verb with a particle is no retraction (an
# outside review's probes); "cut paper silhouettes" neither: "cut" opens a retraction only
# as an imperative's "cut them"
_PARTICLES = {"off", "by", "in", "out", "into", "onto", "back", "up", "down", "over", "from"}


def retracted(tokens: list[str]) -> list[str] | None:
    """The words a chunk takes back, when it opens (after "but", "then", "actually", "they",
    …) with a retracting verb, done or to do, or reads "leave … out" ("actually forget the
    birds" → ``["the", "birds"]``; "they dropped ankle boot"); or a pronoun that any
    retracting verb in it takes ("the team decided against them", "we cut them" →
    ``["them"]``, resolved by the parser); else None."""
    content = _unreported([t for t in tokens if t not in _LEAD | {"they"}])
    if content[1:2] and content[1] in _UNNAMED:
        return None
    if (pointed := pointed_at(content, RETRACTING | _DONE)) is not None:
        return pointed
    if (passive := _passive(content)) is not None:
        return passive
    if _opens_retraction(content) or content[:1] == ["leave"] and "out" in content:
        taken = [t for t in content[1:] if t != "out"]
        cut = next((i for i, t in enumerate(taken) if t in _WHY and i), len(taken))
        return taken[:cut]  # "skip 7 because it is rare in our data" (an outside review)
    return None


def _opens_retraction(content: list[str]) -> bool:
    """Whether the chunk opens with a retracting verb: to do ("drop"), or done ("dropped") and
    followed by no particle ("dropped off")."""
    if not content:
        return False
    done = content[0] in _DONE - {"cut"} and content[1:2] != [] and content[1] not in _PARTICLES
    return content[0] in RETRACTING or done


_BEEN = {"was", "were", "got", "been"}  # done: "the horses are dropped" stays unclear
_OUT_OF_SCOPE = {"descoped", "deprioritized", "deprioritised"}  # never an event


# words that keep or want the class after all: "… deprioritized last sprint but they're back
# in scope now" (an outside review's probe)
_KEPT_AFTER = {"but", "back", "still", "again", "more", "keep", "need", "needs", "want", "wants",
               "mistake", "accident", "accidentally", "however", "yet", "though", "because",
               "to", "just", "only"}  # "Our scope was descoped to just cats and dogs"


def _passive(content: list[str]) -> list[str] | None:
    """The words before "was descoped", "were deprioritized" ("Dress was descoped in grooming",
    set 86: dress at 200), unless the chunk keeps it after all. Not "were dropped", "were
    skipped", "were omitted": in an outside review's probes these were events as often as
    retractions ("were dropped at our door", "were omitted from the old model by mistake")."""
    at = next((i for i, t in enumerate(content) if t in _BEEN and i), None)
    if at and content[at + 1 : at + 2] and content[at + 1] in _OUT_OF_SCOPE \
            and not set(content[at + 2 :]) & _KEPT_AFTER:  # fmt: skip
        return content[:at]
    return None


_WHY = {"because", "since", "cos", "coz", "cuz", "as", "so", "which", "it", "its", "they",
        "after", "following", "per"}  # "removed bird after discussion with @maintainer"


_SAYING = {"said", "says", "told", "tells", "asked", "asks", "wants", "suggested"}
_TO = {"me", "us", "to", "that", "we", "should", "you"}
_UNSAID = {"nobody", "noone", "no", "not", "never", "who", "didnt", "doesnt", "dont", "hasnt",
           "havent", "wasnt", "wouldnt", "hardly", "why", "whoever"}


def _unreported(content: list[str]) -> list[str]:
    """Reported speech unwrapped: "she said drop the cats", "my boss told us to forget the
    cats" → "drop the cats" (set 69: "actually she said forget the cats" kept cat at 200).
    The speaker is at most three words before the verb of saying."""
    at = next((i for i, t in enumerate(content[:4]) if t in _SAYING), None)
    if at is None or _UNSAID & set(content[:at]):  # "Nobody said to drop the birds", "she
        return content  # never said to remove the horses", "Who said to forget the coats?"
    rest = content[at + 1:]
    while rest[:1] and rest[0] in _TO:
        rest = rest[1:]
    return rest if rest[:1] and rest[0] in RETRACTING else content


# the classes left to the service or to later: "cats, dogs, and whatever else, you choose",
# "not sure yet, maybe dogs. Will get back to you" (stop 34: wrong sets at 200 on set 35, 36)
_LEFT_OPEN = re.compile(r"\b(?:whatever|anything)\s+else\b(?!\s+(?:is|are|you|we|shows?|"
                         r"appears?)\b)|\byou\s+(?:choose|pick|decide)\b|\bup\s+to\s+you\b|"
                         r"\bwhatever\s+you\s+(?:think|like|want|prefer)\b|\bnot\s+sure\s+yet\b|"
                         r"\b(?:i'?ll|will|we'?ll)\s+get\s+back\s+to\s+you\b|\bstill\s+deciding\b|"
                         r"\bhaven'?t\s+decided\b|\b(?:can'?t|cannot|can\s+not)\s+decide\b|"
                         r"\beither\s+(?:one\s+)?(?:is|would\s+be)\s+fine\b", re.I)  # or leaves
# them undecided ("zebra and giraffe. Or maybe zebra and horse... I cannot decide. Either is fine":
# set 72, three classes at 200)


_NOT_ANY = re.compile(r"\b(?:not|no|don'?t|doesn'?t|never)\s+(?:\w+\s+){0,2}?(?:need|want|care|"
                      r"fussed|bothered|interested|required|necessary)\b", re.I)  # not "don't
# know about anything else", "no idea about …" (an outside review of stop 39)


def left_open(text: str) -> str | None:
    """The phrase by which ``text`` leaves its classes open, if any (then asked back); not
    "anything else" turned down ("Not fussed about anything else": set 49)."""
    for match in _LEFT_OPEN.finditer(text):
        before = re.split(r"[.;!?\n]", text[: match.start()])[-1]
        if not (match[0].lower().startswith("anything") and _NOT_ANY.search(before)):
            return match[0]
    return None
