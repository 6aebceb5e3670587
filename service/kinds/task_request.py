"""A task request (``description`` or ``classes``) → its classes and domain, or a 422.

The request-level rules around :class:`service.kinds.resolution.ClassResolver`: which phrases
are mentions (parsed, respelt, repeated ones collapsed, context dropped), when a request is
ambiguous, unknown or too small, and the problem each answer carries.
"""

from __future__ import annotations

from typing import Any

from service.kinds import heads, leftovers
from service.kinds.corrections import RETRACTING
from service.kinds.domains import PLACES
from service.kinds.foils import NAMED_ONLY
from service.kinds.listed import listed
from service.kinds.lone_digits import without_lone_digit
from service.kinds.parsed import Marks
from service.kinds.parsing import parse
from service.kinds.repeats import (
    distinct,
    exact_clashes,
    in_context,
    kind_apart,
    kinds_of_one,
    repeated_apart,
)
from service.kinds.resolution import ClassResolver, Match
from service.kinds.tokens import is_number, plural, singular_forms, words
from service.kinds.vocabulary import (
    DROPPED,
    FILLER,
    GROUPS,
    NEEDED,
    NEGATIONS,
    NO_DOMAIN,
    SIZES,
    VENUES,
)
from service.kinds.whole_words import group_of

# words of a negated chunk that say it is excluded, not what is: "bags are out of scope"
_EXCLUSION_WORDS = NEEDED | DROPPED | RETRACTING | {"out", "scope", "handled", "leave",
                                                   "actually"}  # "actually the cows are not
# needed" left cow at 200: not a bare class, so it excluded nothing (stop 46)


def _mentions(resolver: ClassResolver, request: Any):
    """(mentions, domain from style words, context clauses dropped) of a ``description`` or
    ``classes`` request (see :mod:`service.kinds.leftovers`). A class that a negated chunk names
    bare ("but NOT horses, horses are handled elsewhere") is dropped from every other mention
    too (:func:`_excluded`)."""
    from service.core.problems import Problem

    if request.classes is not None:
        return listed(resolver, request.classes)
    parsed = parse(request.description or "", resolver.known)
    if parsed.refused:
        raise Problem(422, "unreadable-description", parsed.refused)
    context = _context(resolver, parsed)
    asked = {i for m in parsed.mentions if (i := resolver.exact(m)) is not None}
    excluded = _excluded(resolver, parsed.negated, asked)
    retracted = _excluded(resolver, parsed.retracted)  # "drop the horses": no clash, gone
    taken = {_content(text) for text in parsed.retracted}  # "skip the pigs": no class, gone
    taken |= {c for text in parsed.negated if (c := _content(text)) and resolver.term(c) is None
              and not resolver.classes_in(c)}  # "…bears and deer… actually the deer aren't
    # necessary": an unknown class turned down later is gone too (set 59, a 422), as is one
    # opening a negated clause ("skirts aren't supported by the vendor": set 63)
    taken |= {m for m in parsed.mentions for text in parsed.negated
              if f"{_content(text)} ".startswith(f"{m} ") and resolver.term(m) is None
              and not resolver.classes_in(m)}  # fmt: skip
    mentions = [m for mention in parsed.mentions if mention not in context
                for m in resolver.term_run(mention, mention in parsed.runs)
                if mention not in taken and not set(resolver.classes_in(m)) & retracted
                and resolver.exact(m) not in retracted
                and not _about_excluded(resolver, m, excluded)]  # fmt: skip
    tails = leftovers.tails(resolver, mentions)
    context += [before for _, before in tails if before] + parsed.fields
    covered = leftovers.groups(resolver, [m for m, _ in tails if m not in parsed.more])
    tails, context = [t for t in tails if t[0] not in covered], context + covered
    style = [w for w in parsed.style if w not in NO_DOMAIN]
    hinted = ["camera"] if parsed.hints else []  # every hint is a camera ("drone" alone
    domain = resolver.domain_of(style) or (resolver.domain_of(hinted) if set(style) <= PLACES
                                           else None)  # leaned to no domain: set 37); a place
    # leaves the hint ("night cam at the safari park", set 86); an emoji or a book does not
    kept = parsed.listed | parsed.asked | parsed.more  # never strays ("and other zoo animals")
    kept |= parsed.negating  # "6-9 are next sprint, NOT this one"
    phrases = distinct([m for m, _ in tails])
    repeated = in_context(resolver, phrases, parsed.runs)  # "mixed up with 3s" beside "3s"
    return [p for p in phrases if p not in repeated], domain, context + repeated, Marks(
        parsed.listed, kept, parsed.declared, parsed.sentence_of, tuple(parsed.sentences),
        frozenset(excluded | retracted))


def _context(resolver: ClassResolver, parsed: Any) -> list[str]:
    """The parsed description's mentions that are about the app (:func:`leftovers.context`),
    none when fewer than two mentions would remain (a run of class names counts each)."""
    named = sum(resolver.exact(m) is not None for m in parsed.mentions)
    context = leftovers.context(resolver, parsed.clauses, parsed.asides | parsed.sources,
                                parsed.wordy if named >= 2 else (),
                                parsed.roles | parsed.origins | {
                                    s for s in parsed.sources  # "fashion" sketches
                                    if set(words(s)) <= GROUPS | SIZES | VENUES})
    context = [c for c in context if not _listed_item(c, parsed)
               and not (c in parsed.asked and (_animal_foil(c.split()[0])
                                               or c.split()[0] in ("forgot", "forgotten")))]
    # "EDIT: lol forgot donkeys" asks for them (an outside review of stop 52: dropped at 200)
    context += [m for m in parsed.mentions if leftovers.people(m)  # "the photos the guests
                and not leftovers.within(m, parsed.listed)]  # upload"; not "cats and guests"
    left = sum(len(resolver.term_run(m, m in parsed.runs)) for m in parsed.mentions
               if m not in context)  # "cat dog bird photos from my phone": three and context
    return [] if context and left < 2 else context


def _listed_item(mention: str, parsed: Any) -> bool:
    """A list's item that stays a mention though it looks like context: a plural ("goats"),
    or one word asked for in the list and named again ("the pig also … Without the pig the
    app makes no sense": set 67, the pig dropped at 200)."""
    return mention in parsed.listed and (plural(mention.split()[0]) or (
        mention in parsed.asides and mention in parsed.asked and " " not in mention))


def _animal_foil(word: str) -> bool:
    """An animal named beside the catalogue's (``foils.NAMED_ONLY``): an item that asks and
    opens with one is asked for, not context ("and also the donkey which carries the water", set 33:
    cow and sheep at 200). Not any foil ("house door", "Sunflower group"), nor an item that
    does not ask ("sheep and cows, the wolf is just in the background")."""
    return any(form in NAMED_ONLY for form in singular_forms(word))


_OTHER = {"other", "others", "else", "rest", "remaining", "more", "further", "extra", "besides",
          "beyond", "apart", "except", "from", "wild", "farm", "those", "these"}  # not the whole


def _content(text: str) -> str:
    """A chunk's words as a mention reads them (no filler, negations or exclusion words)."""
    return " ".join(w for w in words(text) if w not in FILLER and w not in NEGATIONS
                    and w not in _EXCLUSION_WORDS)  # fmt: skip


def _excluded(resolver: ClassResolver, negated: list[str], asked: set[int] = frozenset()
              ) -> set[int]:  # fmt: skip
    """The classes a negated chunk names and nothing else ("but NOT horses", "bags are out of
    scope", "horses not needed"); "not hot dogs", "no teddy bears", "not sure if horses work"
    exclude nothing (an outside review: each dropped a class asked for, at 200). A whole
    group left out spares a sub-group of it that is exactly what the request names of that
    group (``asked``): "footwear only. No clothes, no bags" (stop 33, set 30); "no clothing at
    all … include sneakers" still clashes."""
    found = set()
    for text in negated:
        content = _content(text).split()  # a bare number word is a stop word: "three"
        idx = resolver.term(" ".join(content)) if content else None if set(
            words(text)) <= NEGATIONS else resolver.exact(text)  # "Nice-to-have: none" is
        # no zero left out (set 9)
        if idx is not None:
            found.add(idx)
        ws = words(text)
        groups = {g for w in ws if (g := group_of(w, resolver.known.groups))}
        whole = not {"every", "everything"} & set(ws) and all(  # not "Not all animals, just …"
            w != "all" or (i and ws[i - 1] == "at") for i, w in enumerate(ws))
        if len(groups) == 1 and not content and not _OTHER & set(ws) and whole:
            # "no clothing at all" (stop 32): all of it; not "no other animals needed"
            members = {resolver.names.index(n) for n in resolver.known.groups[groups.pop()]}
            found |= members - _spared(resolver, members, asked)
    return found


def _spared(resolver: ClassResolver, members: set[int], asked: set[int]) -> set[int]:
    """The classes of a group left out that the request asks for, when they are exactly one
    of its sub-groups (:func:`_excluded`)."""
    named = asked & members
    subgroups = ({resolver.names.index(n) for n in sub}
                 for sub in resolver.known.subgroups.values())
    return named if any(named == sub for sub in subgroups) else set()


def _about_excluded(resolver: ClassResolver, mention: str, excluded: set[int]) -> bool:
    """A mention that is about an excluded class without asking for it ("horses are handled
    by another service"); a mention that asks for it ("… horses, not just horses") is a
    clash, 422."""
    from service.core.problems import Problem

    named = (set(resolver.classes_in(mention)) | {resolver.exact(mention)}) & excluded
    if named and resolver.exact(mention) in named:
        raise Problem(422, "ambiguous-classes", f"{mention!r} is both asked for and excluded; "
                      "name each class you want once")  # fmt: skip
    return bool(named)


def resolve_request(
    resolver: ClassResolver, request: Any, domains: list[str], ignored: list[str] | None = None,
    notes: list[str] | None = None, trace: dict[str, Any] | None = None,
) -> tuple[list[Match], str | None]:
    """A ``description``/``classes`` request → its distinct classes (request order) and domain.

    A description's context clauses ("visitors point the camera at an enclosure") are dropped,
    and appended to ``ignored``, when at least two mentions remain (:mod:`service.kinds.leftovers`);
    several kinds of one class ("stallions, foals") become that class, said in ``notes``.
    ``trace`` gets the rules' pass (``marks``, ``matches``, ``domain``) for a second reading
    of a refusal (:mod:`service.kinds.reader`).

    Raises:
        Problem: 422 ``unreadable-description`` / ``unreadable-classes``, ``unknown-domain``,
            ``unknown-classes`` (with suggestions per phrase), ``ambiguous-classes`` or
            ``too-few-classes``.
    """
    from service.core.problems import Problem

    phrases, domain, context, marks = _mentions(resolver, request)
    listed, kept = marks.listed, marks.kept
    domain = request.domain or domain
    trace = {} if trace is None else trace
    trace.update(marks=marks, domain=domain, matches=[])
    if domain is not None and domain not in domains:
        raise Problem(422, "unknown-domain", f"unknown domain {domain!r}", domains=domains)
    notes = [] if notes is None else notes
    phrases = repeated_apart(resolver, kinds_of_one(resolver, phrases, notes), marks, notes)
    _refuse_ambiguous(resolver, phrases, listed=request.classes is not None)
    matches = _about_gone(resolver, resolver.match_many(
        phrases, listed=request.classes is not None), marks.gone, notes)
    trace["matches"] = matches
    matches, strays = _without_strays(resolver, matches, listed, kept) \
        if request.classes is None else (matches, [])  # a listed class is asked for
    if ignored is not None:
        ignored += context + strays
    if request.classes is None:  # a listed definition may name another class in passing
        matches = heads.rescued(resolver, matches, request.description or "", notes)
        matches = without_lone_digit(matches, request.description or "", notes, listed,
                                     marks.declared)
    unknown = [m for m in matches if m.name is None]
    if unknown:
        raise Problem(
            422, "unknown-classes", "no catalogue class matches " + ", ".join(
                repr(m.phrase) + (f" (it reads as {m.looks_like}, which the catalogue lacks)"
                                  if m.looks_like else "") for m in unknown),
            unknown=[{"phrase": m.phrase, "did_you_mean": m.suggestions}
                     | ({"looks_like": m.looks_like} if m.looks_like else {})
                     for m in unknown],
        )  # fmt: skip
    declared = marks.declared
    if declared is not None and len({m.name for m in matches}) != declared:
        raise Problem(422, "ambiguous-classes", f"the description says {declared} classes but "
                      f"names {len(matches)}: " + ", ".join(str(m.name) for m in matches)
                      + "; name exactly the classes you want")  # fmt: skip
    if (apart := kind_apart(resolver, marks)) is not None:
        raise Problem(422, "ambiguous-classes", f"{apart[0]!r} asks for a kind of {apart[1]} as "
                      f"a class of its own; the catalogue has one class, {apart[1]}, for both: "
                      "ask for it once, or train a catalogue that has it")  # fmt: skip
    if len(matches) < 2:
        raise Problem(422, "too-few-classes",
                      "a task needs at least 2 distinct classes; resolved: "
                      + ", ".join(str(m.name) for m in matches))  # fmt: skip
    return matches, domain


def _about_gone(resolver: ClassResolver, matches: list[Match], gone: frozenset[int],
                notes: list[str]) -> list[Match]:
    """The matches without those read only by similarity as a class the request excludes or
    takes back: "actually scrap the cows, the dairy side already has its own system" ("dairy"
    is near cow), "an online shop of shoes … but not sneakers" ("shoes" is near sneaker). The
    words are about the class turned down, not a new ask (held-out sets 52/53: cow and sneaker
    at 200). A mention naming the class outright still clashes (:func:`_about_excluded`)."""
    about = [m for m in matches if m.index in gone and resolver.exact(m.phrase) is None]
    notes += [f"ignored {m.phrase!r}: it reads as {m.name}, which the request leaves out"
              for m in about]
    return [m for m in matches if m not in about]


def _without_strays(resolver: ClassResolver, matches: list[Match], listed: set[str],
                    kept: set[str]) -> tuple[list[Match], list[str]]:
    """``(matches, dropped)``: the unknown mentions that stand outside the request's lists
    dropped as context (:func:`service.kinds.leftovers.strays`; ``kept``: the mentions never
    dropped), when two or more distinct classes remain and each came from a list item
    (``listed``); else the matches as they are. A class
    from outside the lists ("Lot 2 (bear enclosure) has been withdrawn", "one model") may be
    a misreading that the unknown's 422 would have shown."""
    known = [m for m in matches if m.name is not None]
    unknown = [m.phrase for m in matches if m.name is None]
    if not unknown or len({m.name for m in known}) < 2 \
            or not all(leftovers.within(m.phrase, listed) for m in known):  # fmt: skip
        return matches, []
    strays = leftovers.strays(resolver, unknown, kept, listed)
    strays += [p for p in leftovers.headings(resolver, unknown, {m.name for m in known},
                                             listed) if p not in strays]
    if not any(is_number(w) for m in known for w in words(m.phrase)):  # "she is 4 years":
        strays += [p for p in leftovers.abstract(resolver, unknown, listed) if p not in strays]
    # a number's unit is no thing, and its 422 is all that shows the 4 misread as a class
    return [m for m in matches if m.phrase not in strays], strays


def _refuse_ambiguous(resolver: ClassResolver, phrases: list[str], listed: bool = False) -> None:
    """422 ``ambiguous-classes`` for a mention naming several classes ("cats then dogs"; not a
    listed definition, which may compare: "a wild grazer related to the horse, with a
    striped coat") or several mentions naming one class exactly ("kittens and cats")."""
    from service.core.problems import Problem

    several = {p: [resolver.names[i] for i in resolver.classes_in(p)] for p in phrases
               if not (listed and resolver.describes(p, listed=True))}  # "related to the horse"
    several = {p: names for p, names in several.items() if len(names) > 1}
    if several:
        raise Problem(422, "ambiguous-classes", "these mentions name several classes at once; "
                      "separate the classes with commas: " + "; ".join(
                          f"{p!r} → {', '.join(ns)}" for p, ns in several.items()),
                      several_classes=several)  # fmt: skip
    clashes = exact_clashes(resolver, phrases)
    if clashes:
        raise Problem(422, "ambiguous-classes",
                      "these mentions name the same class; keep one of each: " + "; ".join(
                          f"{', '.join(map(repr, ps))} → {name}" for name, ps in clashes.items()),
                      same_class=clashes)  # fmt: skip
