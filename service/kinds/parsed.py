"""What ``parsing.parse`` makes of a description: its class mentions in request order, style
words, and the marks the resolver reads to tell a class asked for from context about the app
(``service.kinds.leftovers``). Split from ``parsing.py`` at stop 35 to keep that module about
reading."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple


@dataclass
class Parsed:
    """A description, read: its class mentions (request order), style words, or why refused.
    Mentions that may be context about the app rather than a class: ``clauses`` came from a
    chunk of five or more words, ``asides`` from a sentence of three or more words that has no
    class word at all ("We run a wildlife NGO.")."""

    mentions: list[str]
    style: list[str] = field(default_factory=list)
    refused: str | None = None
    clauses: set[str] = field(default_factory=set)
    asides: set[str] = field(default_factory=set)
    negated: list[str] = field(default_factory=list)  # "not horses": no horse anywhere
    retracted: list[str] = field(default_factory=list)  # "drop the horses" (corrections.py)
    # from a chunk of four or more words, not at its end, that asks for nothing: context
    # when the request names two classes outright (leftovers.context)
    wordy: set[str] = field(default_factory=set)
    fields: list[str] = field(default_factory=list)  # field values about the app (fields.py)
    more: set[str] = field(default_factory=set)  # from a chunk saying "other", "more", "etc"
    hints: list[str] = field(default_factory=list)  # "phone": a domain when no style word
    runs: set[str] = field(default_factory=set)  # words side by side in the text: "bears birds"
    listed: set[str] = field(default_factory=set)  # a list's items: "cows, sheep and goats"
    asked: set[str] = field(default_factory=set)  # from a chunk that asks: "also raccoons"
    sources: set[str] = field(default_factory=set)  # "trail" cameras: context, see chunks
    roles: set[str] = field(default_factory=set)  # "As a birdwatcher": context, see leftovers
    # where the images come from, after "from", with no class word ("from the safari park"):
    # context however near a class it reads ("park" is near "parka": coat at 200, set 49)
    origins: set[str] = field(default_factory=set)
    negating: set[str] = field(default_factory=set)  # in a sentence that says "not": no strays
    sentence_of: dict[str, int] = field(default_factory=dict)  # mention → its sentence's index
    sentences: list[str] = field(default_factory=list)  # as read, after the rewrites
    declared: int | None = None  # "exactly two classes: …": how many classes the text says


class Marks(NamedTuple):
    """What the resolver needs of a request besides its mentions: the list items, the
    mentions never dropped as strays, the count it declares, each parsed mention's sentence
    (for repeats across sentences) and the class indices it excludes or takes back."""

    listed: set[str]
    kept: set[str]
    declared: int | None
    sentence_of: Mapping[str, int] = MappingProxyType({})
    sentences: tuple[str, ...] = ()
    gone: frozenset[int] = frozenset()
