"""A mention that failed only because context stayed glued to its one class word.

The reader cannot always cut a class from the words around it: "the volunteers keep mixing up
shirts and t-shirts" leaves "volunteers mixing shirts", "the dresses, the coats people wear to
winter weddings" leaves "coats people wear winter weddings". Matched whole, such a mention is
far from every class (the context words dilute it) and the request is a 422, though its class
word is plain. Here an unknown mention of a natural request is read as the class its words
name, when that is safe:

- its words name exactly one class, and that class word stands in the plural ("shirts",
  "coats"): a plural is what people ask for; a singular class word is often a modifier ("horse
  carriages", "cat ears") or a count ("a dog" in a story);
- no word right before it makes it another thing ("hot dogs", "teddy bears", "rain boots");
- the request takes nothing back, excludes, compares, defers or counts nothing ("not",
  "drop", "dropped", "don't", "out of scope", "from", "later", "per", ...): in such requests
  the unread mention may be the class being taken back, and a 422 that names it is the safe
  answer. On the read pool of ``benchmarks/resolution.py`` the rule without this guard made
  5 new wrong answers at 200, each a request whose retraction or comparison the 422 had been
  hiding; with it, none;
- the whole answer is one list in the text (:func:`_lists`): a class word in a clause of its
  own is about something else ("cats and dogs, avoid flagging horses"), and a possessive is
  no item ("the dog's").

What was read this way is said in the response's ``notes``.
"""

from __future__ import annotations

import re

from service.kinds.corrections import RETRACTING
from service.kinds.resolution import ClassResolver, Match
from service.kinds.tokens import plural, words
from service.kinds.vocabulary import DROPPED, NEGATIONS, TAKEN_BACK_WORDS

# words that take back, exclude, compare, defer or count: a request with any of them keeps
# its 422 ("horses sent to v2", "maybe later horses", "in multiples of 2 per image": guards
# written at earlier stops)
_UNSAFE = NEGATIONS | RETRACTING | DROPPED | TAKEN_BACK_WORDS | {
    "dont", "doesnt", "scope", "from", "instead", "anymore", "later", "maybe",
    "perhaps", "eventually", "future", "phase", "sprint", "v2", "next", "postponed",
    "deferred", "multiples", "per"}


_TOKEN = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*'?|[,&/]")  # "dog's", "owners'" kept whole
_JOINS = {",", "&", "/", "and", "or", "nor", "vs", "versus", "plus", "the", "a", "an"}

# words that make the class word after them another thing ("hot dogs", "teddy bears", "rain
# boots"). The encoder cannot tell: "hot dogs" is as near dog (0.62) as "mixing shirts" is to
# shirt (0.58), so the modifiers are listed; an outside review of stop 29 found "frozen food
# aisle hot dogs" and "unicorn horse" answered at 200.
MAKES_ANOTHER = {"hot", "big", "corn", "prairie", "sea", "teddy", "gummy", "jelly", "rocking",
                 "hobby", "toy", "stuffed", "plush", "tea", "sleeping", "bean", "rain", "snow",
                 "ski", "wellington", "unicorn", "polo", "sheep", "lap", "clothes", "fire", "water"}


def head_class(resolver: ClassResolver, phrase: str) -> int | None:
    """The class a mention's words name, when they name exactly one, in the plural, and no
    word before it makes it another thing (``MAKES_ANOTHER``)."""
    found = resolver.classes_in(phrase)
    if len(found) != 1:
        return None
    tokens = words(phrase)
    heads = [i for i, t in enumerate(tokens) if plural(t) and resolver.term(t) == found[0]]
    safe = [i for i in heads if not (i and tokens[i - 1] in MAKES_ANOTHER)]
    return found[0] if heads and safe == heads else None


def rescued(resolver: ClassResolver, matches: list[Match], description: str,
            notes: list[str] | None = None) -> list[Match]:
    """``matches`` with each unknown mention read as its :func:`head_class` where the
    request allows it (module docstring); a class read twice is kept once."""
    if not any(m.name is None for m in matches) or _UNSAFE & set(words(description)):
        return matches
    kept: list[Match] = []
    said: list[str] = []
    for m in matches:
        idx = head_class(resolver, m.phrase) if m.name is None else None
        if idx is not None:
            m = Match(m.phrase, resolver.names[idx], idx, 1.0)
            said.append(f"read {m.phrase!r} as {m.name}: the only class it names")
        if m.name is None or m.name not in {k.name for k in kept}:
            kept.append(m)
    if not said or not _one_list(resolver, kept, description):
        return matches
    if notes is not None:
        notes += said
    return kept


def _one_list(resolver: ClassResolver, kept: list[Match], description: str) -> bool:
    """Whether the whole answer is one list in the text (:func:`_lists`). The mentions this
    module is for are items of such a list ("mixing up shirts and t-shirts", "confuses coats,
    pullovers and shirts"); a class word in a clause of its own is about something else
    ("cats and dogs, avoid flagging horses", "coats and dresses, the kind the fashion house's
    top dogs approve": an outside review of this module found 27 such wrong answers at 200).
    A class read here that another mention also named must pass too: the 422 it lifts may
    have held back a third ("v1 shipped with birds and horses, v3 needs birds and dogs")."""
    answer = {m.index for m in kept if m.index is not None}
    return any(answer <= run for run in _lists(resolver, description))


def _lists(resolver: ClassResolver, description: str) -> list[set[int]]:
    """The classes of each list in ``description``: class terms (not possessives: "the dog's
    bowl") joined only by commas, "and", "or", "vs", … and articles. Any other word ends the
    list, even an adjective: "cows and sheep, and the robotic dogs" is no list of three."""
    tokens = _TOKEN.findall(description.lower().replace("\u2019", "'"))
    runs, current, i = [], set(), 0
    while i < len(tokens):
        n = next((n for n in (3, 2, 1) if i + n <= len(tokens) and "'" not in tokens[i + n - 1]
                  and resolver.term(" ".join(tokens[i:i + n])) is not None), 0)
        if n:
            current.add(resolver.term(" ".join(tokens[i:i + n])))
            i += n
            continue
        if tokens[i] not in _JOINS and current:
            runs.append(current)
            current = set()
        i += 1
    return [*runs, current] if current else runs
