"""Read a task description as an instruction, a set of class mentions and an optional style.

"I need to tell apart sketches of sneakers, 3s and ankle boots" → mentions ``["sneakers",
"3s", "ankle boots"]``, style words ``["sketches"]``. The instruction ("I need to tell apart"),
filler ("the", "pictures of", "which one is"; scikit-learn's English stop words plus this
domain's own) and counts ("the four digits", "3 kids", "version 2") are dropped *before*
matching, so they cannot stay glued to a class phrase. The text is read as sentences (bullets
and lines as list items, a parenthesis as an aside) and chunks; ranges are spelt out ("digits 0
through 4"); a clause introducing a list ("sort them into …") and a post-modifier ("… near the
feeder") are cut; misspelt class words are corrected (``Known.fix``); a mention under a
negation ("not horses", "anything but cats") is dropped; an injection-like string (quotes,
SQL, markup) is refused outright. Mentions that may be context about the app are marked
(``clauses``, ``asides``) for the resolver to drop. Which class a mention means, and which
domain the style words mean, is decided by the resolver (``service.kinds.resolution``) with
the text encoder.
"""

from __future__ import annotations

import re

from service.kinds import corrections, ranges
from service.kinds.chunks import (
    Known,
    compared_with,
    content,
    drop_numbers,
    is_style,
    join_modifiers,
    modifies_style,
    parallel,
    post_modifier,
    pre_clause,
)
from service.kinds.continued import continued
from service.kinds.corrections import retract_before_markers, retracted
from service.kinds.counted import (
    count_field,
    declared_count,
    one_bounded,
    parity_ones,
    without_counts,
)
from service.kinds.dictation import dictated, listed_runs, rejoined
from service.kinds.dismissals import dismissed, wave_off
from service.kinds.domains import either_style, taking_pictures
from service.kinds.emoji import read_emoji
from service.kinds.everything import counted_whole
from service.kinds.excepting import (
    needed_without,
    negated_slashes,
    now_turns,
    split_exceptions,
)
from service.kinds.glosses import equated, glossed, spelt_subgroups, without_descriptions
from service.kinds.letters import signed
from service.kinds.listing import asked, coordinated, list_items
from service.kinds.marks import business_before_task, is_aside, mark_context, said_of_images
from service.kinds.namely import namely
from service.kinds.negation import negated_before, negates
from service.kinds.numbers import digit_of
from service.kinds.parity import parity_filter, parity_range
from service.kinds.parsed import Parsed
from service.kinds.pasted import as_prose
from service.kinds.places import without_places
from service.kinds.pointing import point_back
from service.kinds.rewrites import (
    clipart,
    reporters,
    restyled,
    sounded,
    split_compounds,
    style_phrases,
    without_chatter,
    without_designators,
    without_purposes,
    without_tags,
)
from service.kinds.sentences import SENTENCE, SPLIT, one_line, read_header
from service.kinds.structured import Unreadable
from service.kinds.subgroup_words import spelt_subgroup_words
from service.kinds.tokens import is_number, singular_forms, words
from service.kinds.vocabulary import (
    ANY_STYLE,
    CLOCK_TIME,
    COMPARING,
    DATE,
    EXCEPTION_OF,
    EXCLUDING,
    NEGATIONS,
    OWNERS,
    REQUESTING,
    SIZES,
    STYLE_HINTS,
)
from service.kinds.whole_words import all_of_them, group_of
from service.kinds.wholes import spell_out

# A retraction goes on over "and"/"or" ("remove 0 and 1"), and over commas when nothing after
# adds or keeps ("Drop 9, 8, 7 from …"; not "skip birds, horses and cows too", "remove the
# bags, coats and dresses stay": an outside review)
_JOINED = {"and", "or", "nor", "&"}
_KEEPING = {"too", "also", "well", "instead", "are", "is", "stay", "stays", "remain", "fine", "ok",
            "okay", "keep", "add", "plus", "matter", "priority", "still", "only"}  # "no
# horses, we only have sheep and cows"
_LISTING = {",", "and", "or", "nor", "&", "n"}  # separators that continue a list
# "6-9 are next sprint, NOT this one": what is left out is not named (was read as all ten)
_POINTING = re.compile(r"\b(?:not|no)\s+(?:this|that|these|those)(?:\s+ones?)?\s*(?:[.,;!?]|$)|"
                       r"\b(?:skip|drop|remove|exclude|excluding|except|minus|without|not)\s+the\s+"
                       r"(?:last|first|final|second|third|middle|previous)\s+(?:one|ones|two|three|"
                       r"items?|class(?:es)?)\b", re.I | re.M)  # "skip the last one in that list"
_EXCEPT = {"except", "excluding"}  # "every item in our shop except sandals, sneakers": not those
_MORE = {"other", "others", "more", "additional", "etc", "rest", "further"}
# verbs after which "from" picks classes out ("recognise cats from llamas"), not a source
_PICKING = {"recognise", "recognize", "identify", "pick", "filter", "sort", "detect",
            "classify", "label", "spot", "find", "separate", "select", "flag", "tag", "mark"}
def parse(text: str, known: Known = Known()) -> Parsed:  # noqa: B008 (immutable default)
    """Split ``text`` into class mentions and style words (see the module docstring)."""
    text = continued(without_designators(clipart(text)))  # "Style: clip art", "Amendment No.
    # 1"; "1, 2, 3... up to 9" as a range before "..." ends a sentence
    text = counted_whole(all_of_them(text, known.groups), known.groups)  # "animals, all of
    # them", "all 30 classes", before a field is read
    text = EXCEPTION_OF.sub("except", dictated(read_emoji(text, known.class_of)))  # "🐘🦒"
    text = count_field(CLOCK_TIME.sub("", DATE.sub(" ", text)))  # "Amendment (14:20): please
    # add …", "(review of 3 March)"
    if one_bounded(text):  # "a number bigger than five"
        return Parsed([], refused="a bound ('a number bigger than five') names no number; "
                                  "name the digits, e.g. 'the digits 6 to 9'")
    any_style = ANY_STYLE.search(text) or either_style(text)  # "no particular image type",
    # "photo or sketch": no domain
    camera = taking_pictures(text)  # "I'm taking pictures of the kids' old clothes"
    try:
        text, cut = as_prose(text, known)  # a thread, a chat, a config, a letter
    except Unreadable as exc:
        return Parsed([], refused=f"{exc}; e.g. 'classify cats and dogs'")
    text = without_places(now_turns(negated_slashes(needed_without(text))), known.class_word,
                          is_style)
    # "not many of those in Iowa"; "without the pig the app makes no sense"; "no cat/dog"
    text, taken_back = retract_before_markers(restyled(style_phrases(text), is_style,
                                                       known.class_word), known.class_word)
    declared, text = declared_count(text)  # "exactly two classes: …", before a header goes
    letters = ranges.letter_range(text, known.names_a_class)  # "hex digits: 0-9 and A-F"
    text = without_tags(text, lambda w: known.class_word(w) or is_style(w))  # "#SafariWeek"
    text = without_purposes(reporters(without_chatter(text), known.class_word), known.class_word,
                            is_style)  # "so I can …", "Maya says"
    text = split_compounds(sounded(text, known.class_word), known.class_word)
    text = listed_runs(rejoined(text, known.class_word, known.subgroups), known.class_word)
    # "pull overs", "foot wear"; "DRESSES COATS PULLOVERS SHIRTS" as a list
    text = equated(text, known.class_word, known.class_of)  # "jumper = the knitted thing"
    text = glossed(text, known.foreign, known.class_of)  # "bag (handbag)", "gato (cat)"
    text = without_descriptions(text, known.class_of, is_style)  # "shirts (with buttons)"
    text = join_modifiers(compared_with(text, known), known)  # "1s with 7s": a pair
    text = ranges.multiples(ranges.range_less(ranges.labelled(text)))  # "Sprint 3-4:"
    text = ranges.bounded(ranges.numbers_spaced(text))
    text = parity_range(text)  # "the even numbers, handwritten, 0 through 8"
    text = namely(text, lambda w: known.class_word(w) or w in ("even", "odd") or group_of(
        w, known.groups) is not None or is_number(w))  # "wardrobe contents, i.e. coats, …"
    header, text = read_header(one_line(text, known.class_word), known)
    style, hints = [w for w in header if is_style(w)], [w for w in header if w in STYLE_HINTS]
    hints += [w for field in cut if not signed(field) for w in words(field)
              if w in STYLE_HINTS]  # "Source: product
    # flat-lays shot with a DSLR": a field cut as context still says how images were taken
    text, doubt = ranges.between(text)
    text = spelt_subgroups(text, known.class_word)  # "except the footwear (sandals, …)"
    text = spelt_subgroup_words(text, known.subgroups, known.class_of)  # "footwear only"
    text = parity_ones(text)  # "the odd digits and the even ones"
    text, excepted, unclear = spell_out(text, known.groups, known.class_of)  # "all but cows"
    text, filtered = parity_filter(text, known.groups)  # "2 to 8, but no odd ones"
    text = split_exceptions(text, known)  # "cats, dogs, birds excluding horses"
    pointing = _POINTING.search(text)  # "NOT this one"
    chooser = corrections.left_open(text)  # "cats, dogs, and whatever else, you choose"
    unclear = unclear and f"{unclear[0]!r} leaves open which classes are left out; name the " \
        "classes you want"  # "all the animals and numbers, except zebras"
    refused = letters or unclear or pointing and f"{pointing[0].strip(' .,;!?')!r} leaves " \
        "open what is left out; name the classes you do not want" or chooser and (
        f"{chooser!r} leaves the classes open; name each class you want") or doubt and (
        f"{doubt!r} could be a range, an open range or a pair here; list the digits you want, "
        "e.g. '3, 4 and 5'")  # fmt: skip
    if refused:
        return Parsed([], refused=refused)
    text = without_counts(text)
    parsed = Parsed([], style, fields=cut + taken_back, negated=excepted,
                    hints=hints + (["camera"] if camera else []), retracted=filtered,
                    declared=declared)
    for i, sentence in enumerate(SENTENCE.split(text)):
        before = len(parsed.mentions)
        parsed.sentences.append(sentence)
        _read_sentence(sentence, known, parsed)
        for mention in parsed.mentions[before:]:
            parsed.sentence_of.setdefault(mention, i)
    parsed.style = parsed.style or [w for t in taken_back for w in words(t) if is_style(w)]
    parsed.sources -= parallel(parsed.sources, [known.fix(t) for t in words(text)], known)
    if any_style:
        parsed.style, parsed.hints = [], []
    return parsed  # ("Photos of sheep and cows? No, just sheep": still photos)


def _read_sentence(sentence: str, known: Known, parsed: Parsed) -> None:
    """Read a sentence chunk by chunk. After a chunk that excludes a class ("but not
    horses"), the bare class names listed next are excluded too ("…, zebras and cows")."""
    tokens = words(sentence)
    aside = is_aside(tokens, known)
    pieces = SPLIT.split(sentence)  # chunk, separator, chunk, …
    comparing = any(f in COMPARING | _PICKING for t in tokens for f in singular_forms(t))
    excluding, refusing, items, where = False, False, [], []
    start, styles, origin = len(parsed.mentions), len(parsed.style), False
    for i in range(0, len(pieces), 2):  # "tell cats from dogs", "picks out … from …"
        separator = pieces[i - 1].strip().lower() if i else ""
        if refusing and separator in ("or", "nor") and words(pieces[i]):
            parsed.negated.append(" ".join(words(pieces[i])))  # "not lions or buffalo"
            continue
        if excluding and (separator in (_LISTING if excluding is True else _JOINED)
                          or separator == "," and not _KEEPING & set(words("".join(pieces[i:])))) \
                and not {"just", "only"} & set(words(pieces[i])) \
                and (bare := _bare_class(pieces[i], known)):  # "…, just cats"; "and 1"
            (parsed.retracted if excluding == "retracted" else parsed.negated).append(bare)
            continue
        after_from = separator == "from"  # after a class word, "from" may compare
        raw = [known.fix(t) for t in words(pieces[i])]
        comparing_here = comparing and known.class_word(known.fix(
            (words(pieces[i - 2]) or [""])[-1] if i else "")) \
            and raw[:1] != [] and raw[0] not in OWNERS  # not "… that they upload from",
        negated, before = len(parsed.negated), len(parsed.mentions)  # "zebras from my trip"
        taken = len(parsed.retracted)
        origin = not any(map(known.class_word, raw)) and (after_from and not comparing_here or (
            origin and separator in ("and", "or", "&")))  # "from the zoo and the safari park"
        _read_chunk(pieces[i], known, parsed, aside, "compared" if after_from and comparing_here
                    else "source" if after_from or origin else None)
        point_back(parsed, taken, items, separator, known.class_word)
        items.append((separator, parsed.mentions[before:], raw))
        where.append((len("".join(pieces[:i])), len("".join(pieces[:i + 1])),
                      parsed.mentions[before:]))
        refusing = len(parsed.negated) > negated
        if refusing and raw[:1] and known.class_word(raw[0]):  # "Cows and sheep are excluded"
            negated_before(items, parsed, lambda r: _bare_class(" ".join(r), known) is not None)
        excluding = _excludes_next(parsed, known, raw, (negated, before, taken))
    business_before_task(items, parsed, start, _PICKING)  # "a farm selling horses, classify cows …"
    parsed.listed |= list_items(items, comparing)
    parsed.asked |= asked(items)
    joined = coordinated(items)  # "cats, dogs and guinea pig photos": items, not sources
    parsed.sources, parsed.wordy = parsed.sources - joined, parsed.wordy - joined
    if NEGATIONS & set(tokens):  # "numbers 6-9 are next sprint, NOT this one"
        parsed.negating |= {m for _, mentions, _ in items for m in mentions}
    if (scope := dismissed(sentence, known.class_word)) is not None:  # "… dogs and cats,
        wave_off(sentence, scope, known.class_word, parsed, (start, styles), where)  # but I
        # don't need
        # those": not


def _excludes_next(parsed: Parsed, known: Known, raw: list[str],
                   counts: tuple[int, int, int]) -> bool | str:
    """Whether the bare class names listed after a chunk are excluded too: True after "not
    horses" or "except bears" (not "NOT part of it"), "retracted" after "Remove 0" ("Remove 0
    and 1"). ``counts``: negated, mentions and retracted before the chunk was read."""
    negated, before, taken = counts
    return len(parsed.negated) > negated and known.class_word(
        (words(parsed.negated[-1]) or [""])[-1]) or (
        _EXCEPT & set(raw) and known.class_word(raw[-1]) and len(parsed.mentions) == before) \
        or len(parsed.retracted) > taken and sum(map(known.class_word, words(
            parsed.retracted[-1]))) == 1 and "retracted"


_MATERIALS = {"canvas"}  # "a few canvas bags" (set 71: art_painting at 200), not "canvas
# horses" (a painting: an outside review)
_MADE_OF = {"bag", "bags", "shoe", "shoes", "sneaker", "sneakers", "tote", "totes", "trousers"}
_REPLACING = {"make", "instead", "replace", "keep", "add"}  # "scratch the horses - make it bears"


def _bare_class(chunk: str, known: Known) -> str | None:
    """The class term a chunk is and nothing else but filler ("and the zebras"), if any; a
    chunk that asks ("and also cows") is none."""
    raw = [known.fix(t) for t in words(chunk)]
    kept = content(raw, known)
    if (REQUESTING | _REPLACING) & set(raw) or not kept or not known.names_a_class(kept) \
            or len(kept.split()) > 3:  # fmt: skip
        return None
    return kept


def _read_chunk(chunk: str, known: Known, parsed: Parsed, aside: bool,
                after_from: str | None = None) -> None:
    """Add one chunk's mention (or a range's numbers) and style words to ``parsed``.
    ``after_from``: "source" when the chunk follows "from" in a sentence that compares
    nothing ("photos from our design team"), "compared" in one that does ("filter horses
    from deer": never context)."""
    raw = [known.fix(t) for t in words(chunk)]
    styles = [t for t, after in zip(raw, [*raw[1:], ""], strict=False) if is_style(t)
              and not known.class_word(t) and not (t in _MATERIALS and after in _MADE_OF)]
    if (numbers := ranges.span(chunk, known.names_a_class)) is not None:
        parsed.mentions += numbers
        parsed.style += styles  # "pencil sketches of digits 2 to 4" (no domain before stop 39)
        return
    if (digit := digit_of(chunk, cued=True)) is not None and known.names_a_class(str(digit)):
        parsed.mentions.append(str(digit))  # "the number after six": not "six"
        parsed.style += styles
        return
    if (taken := retracted(raw)) is not None:  # "drop the horses": even if asked for before
        parsed.retracted.append(" ".join(taken))
        return
    if negates(raw, known.class_word):  # "not horses": that class is not asked for
        if not EXCLUDING & set(raw):  # "calling everything 'bag'" excludes no bag elsewhere
            parsed.negated.append(" ".join(raw))
        elif not {"but", "except", "excluding", "exclude", "other", "besides"} & set(raw):
            parsed.style += styles  # "take photos of everything for the website" (set 49)
        return
    parsed.style += styles
    parsed.hints += [t for t in raw if t in STYLE_HINTS]
    kept = content(drop_numbers(post_modifier(pre_clause(raw, known), known), known), known)
    kept = "" if set(kept.split()) <= SIZES or said_of_images(raw, kept, known) else kept
    if not kept:
        if len(raw) <= 4 and any(a in _MORE and group_of(b, known.groups)
                                 for a, b in zip(raw, raw[1:], strict=False)):  # fmt: skip
            parsed.refused = (f"{' '.join(raw)!r} leaves open which classes; name them, or ask "
                              "for all of them ('all the other animals')")  # fmt: skip
        return
    parsed.mentions.append(kept)
    if modifies_style(kept, raw, known):
        parsed.sources.add(kept)
    if f" {kept} " in f" {' '.join(raw)} ":  # "zebra giraffe elephant", not "cats then dogs"
        parsed.runs.add(kept)
    if _MORE & set(raw):  # "and other farm animals": more classes, never a covered group
        parsed.more.add(kept)
    mark_context(raw, kept, parsed, aside, after_from, known)
