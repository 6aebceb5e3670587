"""Which mentions may be context about the app rather than classes: marks for
:mod:`service.kinds.leftovers`, which decides with the encoder. Split from ``parsing.py`` at
stop 38 (over 300 lines): the reader finds mentions, this module says what each chunk's shape
suggests about them ("As a teacher", "from the ranch trail cams", a sentence with no class).
"""

from __future__ import annotations

from service.kinds.chunks import CONTEXT_WORDS, POST, Known, content, is_style
from service.kinds.parsed import Parsed
from service.kinds.tokens import plural
from service.kinds.vocabulary import OBJECTS, REQUESTING, SELLING

_ROLE = (["as", "a"], ["as", "an"], ["im", "a"], ["im", "an"], ["i", "am"])  # "I'm a teacher"
_PURPOSE = {"so"}  # "so the app can praise her" ("though ferrets would be nice" asks)


def is_aside(tokens: list[str], known: Known) -> bool:
    """A sentence about the app: three or more words, no class word (misspelt ones count:
    "giraff, zebr and elefant" lost "zebr" as an aside, set 59), and it asks for nothing.
    "We'd also like raccoons.", "Thanks, and rabbits." and "P.S. the tortoise as well" ask;
    "Night shots too." is about the images."""
    pairs = list(zip(tokens, tokens[1:], strict=False))
    adds = {"ps", "also", "plus"} & set(tokens) or ("p", "s") in pairs or ("as", "well") in pairs \
        or tokens[:1] == ["add"] and len(tokens) <= 4 and "classifier" not in tokens  # "(drop
    # horses), add a donkey": a swap's new class; not "feat: add farm animal classifier"
    asks = (REQUESTING - {"too"}) & set(tokens) and any(map(plural, tokens))
    listed = any(a in ("and", "or") and plural(b) and not known.class_word(known.fix(b))
                 for a, b in pairs)  # "Thanks, and rabbits.", "Oh, and lions if you can."
    return len(tokens) >= 3 and not any(known.class_word(known.fix(t)) for t in tokens) \
        and not adds \
        and not asks and not listed  # fmt: skip


def mark_context(raw: list[str], kept: str, parsed: Parsed, aside: bool,
                 after_from: str | None, known: Known) -> None:
    """Mark ``kept`` (from the chunk ``raw``) as maybe about the app, for
    :mod:`service.kinds.leftovers` to decide: a clause (five or more words); a wordy chunk
    (four or more words) where its mention does not end the chunk, as list items do ("animals
    like elefant, giraffe", "…, as well as lions"), unless it follows a preposition ("photos
    from the ranch trail cams"); an aside: a sentence without class words, or a chunk opening
    with a preposition, a source's "from", a user story's role ("As a teacher") or a purpose
    ("so the app can praise her") that has none. A chunk that asks ("we would also like to
    see raccoons"), holds a plural ("and hamsters in our photos") or is compared ("filter
    horses from deer") is never wordy."""
    tokens = kept.split()
    if len(raw) >= 5 and len(tokens) + len(CONTEXT_WORDS & set(raw)) >= 3:
        parsed.clauses.add(kept)
    placed = any(t in POST for t in raw[: raw.index(tokens[0]) if tokens[0] in raw else 0])
    last = tokens[-1] == next((t for t in reversed(raw) if not is_style(t)), None)
    if len(raw) >= 4 and (not last or placed) and not REQUESTING & set(raw) \
            and (not any(map(plural, tokens)) or OBJECTS & set(raw)) \
            and after_from != "compared":  # fmt: skip
        parsed.wordy.add(kept)
    opener = after_from == "source" or raw[0] in POST or raw[:2] in _ROLE \
        or (raw[0] in _PURPOSE and not any(map(plural, tokens)))  # fmt: skip
    if (aside and after_from != "compared") or (opener and not any(map(known.class_word, tokens))):
        parsed.asides.add(kept)
    if after_from == "source" and not any(map(known.class_word, raw)):
        parsed.origins.add(kept)
    if (raw[:2] in _ROLE and kept == " ".join(content(raw[2:], known).split()[:2])) \
            or (raw[-1:] == ["here"] and len(raw) <= 4 and parsed.mentions == [kept]):  # fmt: skip
        parsed.roles.add(kept)  # the chunk is the role and nothing else: "Zookeeper here."


def business_before_task(items: list, parsed: Parsed, first: int, picking: set[str]) -> None:
    """What a business sells, before a chunk that opens with the task's verb, is about the
    business ("a farm selling horses, classify cows and sheep": horse was added at 200, an
    outside review of stop 37): its mentions go. "a shop selling tote bags and tees" has no
    task verb after it and keeps them, "we sell cats, classify dogs too" adds to them, "we
    sell pullovers, coats and bags; label them" points back to them.
    ``first``: the index in ``parsed.mentions`` of the sentence's first mention; ``picking``:
    the verbs that state a task (with "tell", "distinguish"). Moved from ``parsing.py``."""
    task = next((i for i, (_, _, raw) in enumerate(items)
                 if raw[:1] and raw[0] in picking | {"tell", "distinguish"}), None)
    sells = next((i for i, (_, _, raw) in enumerate(items[:task or 0]) if SELLING & set(raw)),
                 None)  # fmt: skip
    if task is None or sells is None or items[task][2][1:2] in (["them"], ["those"], ["these"]) \
            or any({"too", "also", "well"} & set(raw) for _, _, raw in items[task:]):
        return  # "we sell purses and gowns, tell them apart": the goods are the classes
    at = first + sum(len(mentions) for _, mentions, _ in items[:sells])
    end = at + sum(len(mentions) for _, mentions, _ in items[sells:task])
    parsed.mentions[at:end] = []


_BEING = {"are", "were", "is", "was", "get", "gets", "got", "being", "been", "will", "be"}
_PARTICIPLES = {"shot", "made", "done", "sent", "kept", "drawn", "held", "caught", "built", "taken",
                "given", "written", "shown", "seen", "chosen", "hidden"}  # not "chicken"


def said_of_images(raw: list[str], kept: str, known: Known) -> bool:
    """Whether ``kept`` is said of the images, after a style word and a form of "be" ("the
    photos are taken from a drone": set 44 read "taken" as a class), naming no class. "Could a
    small model …" is dropped beside it (set 43). Moved from ``parsing.py`` at stop 53."""
    at = next((i for i, t in enumerate(raw[:-1]) if is_style(t) and raw[i + 1] in _BEING), None)
    first = kept.split()[0] if kept else ""
    return at is not None and raw[at + 2:at + 3] == [first] \
        and (first.endswith("ed") or first in _PARTICIPLES) \
        and not any(map(known.class_word, kept.split()))  # not "the photos are of foxes"
