"""A pronoun after a retracting verb points back at the classes named before it: "the horses I
don't paint anymore, remove them please", "Birds were considered but the team decided against
them", "Trousers were in the v1 deck but we cut them" (held-out sets 78 and 82: each class kept
at 200). Only a pronoun that ends its chunk counts, after no negation or hypothetical ("no
reason to drop them"). It takes back the classes named before the verb in its own chunk, else
those of the chunk just before it (:func:`point_back`); a style or thing named there is what it
points at instead ("sketches were considered but we decided against them").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.kinds import senses
from service.kinds.chunks import is_style
from service.kinds.tokens import words

POINTING = {"them", "it", "those", "these", "em", "both"}
_AGAINST = {("decided", "against"), ("voted", "against"), ("ruled", "out")}
_ALSO = {"exclude", "excluded"}  # "exclude them": a verb here, elsewhere an excluding word
_TRAILING = {"please", "pls", "too", "all", "anyway"}
_JOINING = {"and", "or", "&", "+", ","}
# before the verb anywhere in its chunk, these leave the retraction undone or hypothetical: "don't
# forget them", "no reason to drop them", "it would be a mistake to remove them", "why would
# anyone skip them?" (an outside review's probes); "… then re-added them" takes them back again
_UNDONE = {"dont", "not", "never", "no", "cant", "cannot", "wont", "shouldnt", "didnt", "nobody",
           "doesnt", "wouldnt", "mustnt", "reason", "mistake", "why", "would", "if", "should",
           "shall", "whether", "noone", "unless"}
_AGAIN = {"back", "readded", "re", "reinstated", "restored", "again", "returned"}


def pointed_at(content: list[str], verbs: set[str]) -> list[str] | None:
    """The words before the verb and the pronoun, when one of ``verbs`` (or "decided
    against") takes a pronoun that ends the chunk's ``content`` words ("… but the team decided
    against them" → ``["the", "team", "them"]``; "Dresses go to a charity so skip those");
    else None. :func:`point_back` reads them."""
    tail = [t for t in content if t not in _TRAILING]
    if len(tail) < 2 or tail[-1] not in POINTING:
        return None
    verb = 3 if tuple(tail[-3:-1]) in _AGAINST else 2 if tail[-2] in verbs | _ALSO else 0
    if not verb or _UNDONE & set(tail[:-verb]):
        return None
    return [*tail[:-verb], tail[-1]]


def point_back(parsed: Any, taken: int, chunks: list[tuple[str, list[str], list[str]]],
               separator: str, class_word: Callable[[str], bool]) -> None:
    """The last retracted entry, when a chunk added it (``taken``: the count before) and it
    ends in a pronoun: the classes named before the verb in its own chunk ("Dresses go to a
    charity so skip those"), or else those of the chunk just before it, and of the chunks
    joined by "and"/"or" ("Bears and birds were in the old app but we cut them"); "it", the
    last of them ("… the owner's horse shows up sometimes but ignore it"). A thing named after
    the last class is what the pronoun points at ("cows and sheep sometimes include fences,
    just leave those out"), as is a chunk naming no class ("- ~~lion~~ not in catalogue,
    skip"). ``chunks``: (separator before, mentions, words) of the sentence's chunks so far;
    ``separator``: the one before the pronoun's chunk."""
    if len(parsed.retracted) <= taken or words(parsed.retracted[-1])[-1:] == [] \
            or words(parsed.retracted[-1])[-1] not in POINTING:  # fmt: skip
        return
    *head, pronoun = words(parsed.retracted[-1])
    named = _runs(head, class_word)  # "Birds were considered but the team …": birds
    if not named and _thing_after(head, class_word, pronoun):  # "sketches were considered
        return  # but we decided against them": the sketches
    if not named or separator in _JOINING:
        for before, mentions, raw in reversed(chunks):
            here = [m for m in mentions if any(map(class_word, words(m)))]
            if not here and before == "from" and not named:  # "The zebras from the old
                continue  # brief, we scrapped them"
            if not here or not named and _thing_after(raw, class_word, pronoun):
                break
            named = here + named
            if before not in _JOINING:
                break
    if not _AGAIN & set(_rest_of_sentence(parsed)):
        parsed.retracted[-1:] = (named[-1:] if pronoun == "it" else named) or [pronoun]


def _runs(tokens: list[str], class_word: Callable[[str], bool]) -> list[str]:
    """The runs of class words in ``tokens`` ("t shirts and shirts were …" → "t shirts",
    "shirts"), each one mention."""
    runs: list[list[str]] = [[]]
    for t in tokens:
        if class_word(t):
            runs[-1].append(t)
        elif runs[-1]:
            runs.append([])
    return [" ".join(r) for r in runs if r]


def _rest_of_sentence(parsed: Any) -> list[str]:
    """The words of the sentence being read ("… then re-added them" reinstates)."""
    return words(parsed.sentences[-1]) if parsed.sentences else []


def _thing_after(raw: list[str], class_word: Callable[[str], bool], pronoun: str) -> bool:
    """Whether, after the last class word of ``raw`` (or anywhere, with none), a word names
    what the pronoun points at: a plural thing or style for "them" ("fences", "sketches"), a
    thing for "it" ("a watermark"); not the verb "paint" in "the horses I don't paint
    anymore"."""
    last = max((i for i, t in enumerate(raw) if class_word(t)), default=-1)
    return any(not class_word(t) and (senses.thing(t) or is_style(t)) and (
        pronoun == "it" or t.endswith("s") and not t.endswith("ss")) for t in raw[last + 1:])
