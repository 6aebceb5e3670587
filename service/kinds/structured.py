"""Requests written as data or markup, read as plain words; injection refused.

Developers paste what they have: ``["kitten", "puppy", "pony"]``, ``{"classes": [...], "style":
"cartoon"}``, ``labels: ['T-shirt', 'Dress']``, a checklist, class names in quotes. The stop-25
parser refused every quote and bracket as a possible injection, so "the model distinguishes
"sandal" and "sneaker"" was a 422. Now quotes, backticks, brackets and braces are list
punctuation, and a JSON document is read when it is a list of strings or an object: a class
list (``classes``, ``labels``, ``want``, …), groups (``include_groups``), exclusions
(``exclude``, ``not``, …) and style words (``style``, ``domain``, ``images``, …); a
known metadata field ("version", "app", "…_id") is left out when it holds one plain value,
and so is a note ("notes", "comment") that names no class. Anything else is unreadable (422):
a field that may hold classes ("also", "negative_examples"), a note naming a class, or a
non-string item; dropping such keys once turned exclusions into inclusions. A whole
environment file ("TAILOR_CLASSES=cat,dog") is read as such a document (:func:`environment`).

Refused before anything is read (an outside review, stop 26): markup tags, SQL statements,
comparisons and assignments (``OR 1=1``, ``cats=1``, ``2>1``), template syntax (``{{``,
``${``, ``#{``), ``||``, pipes and backslashes, comment syntax (``/*``, and ``--`` ending the
text, a line or a statement); and the same again on a document's decoded strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

INJECTION = re.compile(
    r"<\s*/?\s*[a-z!][^>]*>"  # markup tags: <script>, </b>, <!-- -->
    r"|\b(?:drop|truncate|alter)\s+table\b|\bunion\s+(?:all\s+)?select\b|\binsert\s+into\b"
    r"|\bdelete\s+from\b|\bselect\b[^.]*\bfrom\b[^.]*\bwhere\b|\bexec(?:ute)?\s*\("
    r"|[=|\\]|\d\s*[<>]\s*\d|\{\{|\$\{|#\{"  # assignments, comparisons, templates, pipes
    r"|;\s*--|--\s*$|^\s*--|/\*", re.I | re.M)  # fmt: skip
# Not code, though INJECTION's characters are in them: a sample size ("(n=40)") and a budget
# with its unit ("p95 < 200ms"). Blanked before the check; "1=1", "a=b" and "1 < 2" are still
# refused.
# The underline of a document's title ("Specification\n=====") is dropped; any other underline
# stays refused, since its heading may negate ("Out of scope\n====\ncows").
UNDERLINE = re.compile(r"\A(\s*[^\n]+)\n[ \t]*[=\-~]{3,}[ \t]*(?=\n|\Z)")
BENIGN = re.compile(r"\(\s*n\s*=\s*\d+\s*\)|\bfrom\s+scratch\b"
                    r"|(?:\bp(?:50|90|95|99)\s*)?[<>]=?\s*\d+(?:\.\d+)?\s*"
                    r"(?:ms|s|sec|seconds|mb|gb|kb|%|px)\b",
                    re.I | re.M)  # fmt: skip
# Assignments that are no code: an environment file's lines ("TAILOR_CLASSES=dress,bag") and a
# spaced "=" glossing a class word ("jumpers = what you call sweaters", read as "means");
# "cats=1", "a=b", "1=1" and "cats = yes" stay refused (stop 32's held-out sets and reviews).
_ENV_LINE = re.compile(r"^[ \t]*([A-Z][A-Z0-9_]{2,})[ \t]*=[ \t]*(\S.*?)[ \t]*$")
_SPACED_EQUALS = re.compile(r"\b([a-z][\w-]*)[ \t]+=[ \t]+(?=([a-z]+)\b)", re.I)
_LIST_KEYS = {"apparel", "clothing", "clothes", "garments", "outerwear", "footwear", "animals",
              "digits", "numbers", "classes", "categories", "labels"}
_GLOSSING = {"the", "a", "an", "what", "those", "these", "that", "ones", "one", "any", "our"}
_QUOTES = re.compile(r"[\"`“”„«»]")
_BRACKETS = re.compile(r"[\[\]{}]")
_CLASS_FIELDS = {"classes", "class", "labels", "label", "categories", "category", "class_names",
                 "names", "targets", "items", "want", "wanted", "include", "included"}
_GROUP_FIELDS = {"groups", "group", "include_groups", "included_groups"}
_EXCLUDE_FIELDS = {"exclude", "excluded", "exclusions", "except", "not", "without", "skip",
                   "exclude_classes", "excluded_classes", "negative", "negatives"}
_STYLE_FIELDS = {"style", "domain", "images", "image_type", "type", "kind", "task", "input",
                 "image_style", "images_style", "art_style"}
# parts of a compound field name about the images: "input_style", "imageStyle", "source_domain"
_STYLE_PARTS = {"style", "styles", "domain", "domains", "medium", "look"}


def _style_field(field: str) -> bool:
    """A style field by name, or by a part of its name ("input_style": held-out set 38)."""
    parts = re.sub(r"([a-z])([A-Z])", r"\1_\2", field).lower().split("_")
    return field.lower() in _STYLE_FIELDS or len(parts) == 2 and parts[1] in _STYLE_PARTS \
        and parts[0] in _OF_IMAGES  # not "forbidden_styles", "old_style", "domain_owner"


_OF_IMAGES = {"input", "image", "images", "img", "picture", "pictures", "photo", "art", "visual"}


_FREE_TEXT = {"notes", "note", "comment", "comments", "reason", "description"}
_META_FIELDS = {"id", "app", "device", "project", "owner", "version", "team", "platform",
                "store", "user", "author", "date", "priority", "ticket", "deadline", "env",
                "environment", "region", "locale", "language", "contact", "email", "customer",
                "client", "title", "os"}
_MAX_DOCUMENT = 4096  # characters; a larger request is prose, not a pasted list


class Unreadable(ValueError):
    """A document whose meaning is more than a class list: the request is refused (422)."""


_LEAD = re.compile(r"^([^\[\]{}\n:]{1,60}):\s*([\[{].*)$", re.S)


_KEY_LINE = re.compile(r"^\s*(?:-\s+\S|[\w-]+:(?:\s|$))", re.M)  # "classes:", "  - sneaker"
_COMMENTED_ITEM = re.compile(r"^[ \t]*#[ \t]*-[ \t][^\n]*\n?", re.M)  # "# - bag  (disabled)"
_TRAILING = re.compile(r"(?<=\S)[ \t]+#[ \t][^\n]*$", re.M)  # "- penguin   # kids love these"


_SAYS_SO = re.compile(r"\b(?:not|no|never|except|without|only|isn'?t|aren'?t|don'?t)\b", re.I)


def uncommented(text: str, class_word: Callable[[str], bool] = lambda _: False) -> str:
    """A YAML-like config without its comments: a commented-out item ("# - bag") is off, and
    a trailing "# note" says nothing about the classes (held-out set 68: the bag asked for at
    200, "penguin # kids love these" dropped as context at 200). Text with no key or list
    lines is left as it is ("# Cats and dogs" may be a Markdown heading), and so is a trailing
    comment that names a class or negates ("windbreaker_jacket  # NOT a coat": set 64)."""
    if len(_KEY_LINE.findall(text)) < 2:
        return text
    return _TRAILING.sub(lambda m: m[0] if _SAYS_SO.search(m[0]) or any(
        class_word(w.lower()) for w in re.findall(r"[A-Za-z][\w-]*", m[0])) else "",
        _COMMENTED_ITEM.sub("", text))


def plain(text: str, class_word: Callable[[str], bool] = lambda _: False) -> str:
    """``text`` as words and list punctuation: a JSON document flattened (see the module
    docstring; after a label too, "API request body: {…}"), quotes dropped, brackets and
    braces turned into commas.

    Raises:
        Unreadable: a document with other fields or non-string items, or injection syntax in
            its decoded strings.
    """
    lead = _LEAD.match(text)  # "API request body: {…}": a label, then the document
    document = _document(lead[2] if lead else text)
    if document is not None:
        text = (f"{lead[1]}. " if lead else "") + _flatten(document, class_word)
        if INJECTION.search(text):
            raise Unreadable("the description contains markup, SQL or code")
    return _BRACKETS.sub(", ", _QUOTES.sub(" ", text))


_ITEM = r"[a-z][a-z'-]*(?:[ \t][a-z][a-z'-]*){0,2}"
_PIPED = re.compile(rf"\b{_ITEM}(?:[ \t]*\|[ \t]*{_ITEM})+\b", re.I)


def piped(text: str, class_word: Callable[[str], bool]) -> str:
    """"Dress | Coat | Trouser | Bag" as a comma list when every word of every item is a class
    word (held-out set 44: refused as a shell pipe); any other pipe stays for the injection
    check ("cat | grep dog", "ls cats | grep dogs": an outside review)."""
    def listed(m: re.Match) -> str:
        named = all(map(class_word, re.findall(r"[a-z]+", m[0].lower())))
        return ", ".join(i.strip() for i in m[0].split("|")) if named else m[0]
    return _PIPED.sub(listed, text)


_FIELD_SEGMENT = re.compile(r"^\s*[A-Za-z][\w /-]{0,40}:\s*\S")  # "subjects: cow, horse"


def piped_fields(text: str, is_style: Callable[[str], bool]) -> str:
    """A line of "key: value" fields split by pipes as one field per line ("source: paintings |
    subjects: cow, horse | owner: KM", a ticket's "Ticket #4821 | Subject: … | Priority: low":
    set 75 and tickets were refused as shell pipes), when every segment after the first is a
    field and no key is a style ("Photos: cats | Sketches: dogs" pairs styles with classes: an
    outside review); "cat | grep dog" stays for the injection check."""
    def split(line: str) -> str:
        segments = line.split("|")
        fields = len(segments) > 1 and all(map(_FIELD_SEGMENT.match, segments[1:])) and not any(
            is_style(w.lower()) for x in segments for w in re.findall(r"\w+", x.split(":")[0]))
        return "\n".join(x.strip() for x in segments) if fields else line
    return "\n".join(map(split, text.split("\n")))


def environment(text: str) -> str:
    """``text`` read as a document when it is an environment file ("TAILOR_CLASSES=cat,dog",
    "TAILOR_VERSION=2": fields as in a JSON object), else as it is; before the injection
    check, which refuses any other assignment."""
    lines = [line for line in text.splitlines() if line.strip()]
    env = [_ENV_LINE.match(line) for line in lines]
    if not lines or not all(env) or len({_env_field(m[1]) for m in env}) < len(env):
        return text  # not an environment file, or two settings for one field: refused
    try:
        return _flatten({_env_field(m[1]): m[2].split(",") if "," in m[2] else m[2]
                         for m in env})  # fmt: skip
    except Unreadable:
        return text  # refused as an assignment


# values that set a style on or off, not say what it is: "cartoon = no" stays refused (an
# outside review: it read as cartoon)
_FLAGS = {"no", "yes", "false", "true", "none", "null", "off", "on", "n", "y", "not", "never",
          "nope", "nah", "maybe"}


def equals_as_means(text: str, class_word: Callable[[str], bool],
                    style: Callable[[str], bool] = lambda w: False) -> str:
    """A spaced "=" between a class word and a gloss as "means" ("jumper = the knitted thing",
    "Sweater = pullover"), a list word's "=" as a colon ("apparel = coats, …"), and a note's
    "images = phone camera" (a style word, then no class word: set 43, refused as code) as
    "images: phone camera"; any other "=" stays, refused
    as an assignment ("cats = wanted", "current = cats, dogs": an outside review)."""
    def gloss(m: re.Match) -> str:
        acronym = re.fullmatch(r"[A-Z]{2,5}", m[1]) and style(m[2].lower())  # "UGC = photos
        # from Instagram" (set 63: refused as code)
        if (style(m[1].lower()) or acronym) and not class_word(m[1].lower()) \
                and m[2].lower() not in _FLAGS and not any(
                map(class_word, re.findall(r"[a-z]+", m.string[m.end():].split("\n")[0].lower()))):
            return f"{m[1]}: "  # fmt: skip
        if m[1].lower() in _LIST_KEYS and class_word(m[2].lower()) and text.count("=") == 1:
            return f"{m[1]}: "  # "outbound apparel = coats, …" (set 69: refused as code); not
        # "Was: animals = cats, dogs. Now: animals = horses, cows" (an outside review)
        return f"{m[1]} means " if class_word(m[1].lower()) and (
            m[2].lower() in _GLOSSING or class_word(m[2].lower())) else m[0]
    return _SPACED_EQUALS.sub(gloss, text)


def _env_field(key: str) -> str:
    """The document field an environment variable is: a class, group, exclusion or style
    field named outright, or after "TAILOR_" ("CLASSES", "TAILOR_DOMAIN"); any other setting
    is metadata ("MAX_CLASSES", "OLD_CLASSES", "TAILOR_DISABLED_CLASSES": an outside review
    found last-word readings adding or overwriting classes)."""
    name = key.lower().removeprefix("tailor_")
    fields = _CLASS_FIELDS | _GROUP_FIELDS | _EXCLUDE_FIELDS | _STYLE_FIELDS
    return name if name in fields else f"{name}_id"


def _document(text: str) -> list | dict | None:
    """The JSON list or object ``text`` is, when the whole of it is one; else None. JSON only:
    YAML's aliases expand exponentially (a 385-character request made 290 MB)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{" or len(stripped) > _MAX_DOCUMENT:
        return None
    try:
        document = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, list | dict) else None


def _flatten(document: list | dict, class_word: Callable[[str], bool] = lambda _: False) -> str:
    """A list of strings as one comma list; an object's class fields as lists, its groups as
    "every animal", its exclusions after "except" (a group's) or "not", its style fields as
    sentences. A metadata field with one plain value ("farm_id", "app", "owner": stop 32's
    held-out sets pasted such documents), or a note naming no class, is left out; any other
    field, a note naming a class ("also coats", "horses were removed in v2": which is meant
    is unclear), or one holding a list or an object, is refused."""
    if isinstance(document, list):
        return _strings(document, "the list")
    classes, groups, excluded, styles = [], [], [], []
    for key, value in document.items():
        field = str(key).lower().replace("-", "_")
        values = value if isinstance(value, list) else [value]
        if field in _CLASS_FIELDS:
            classes.append(_strings(values, key))
        elif field in _GROUP_FIELDS:
            groups += [f"every {g}" for g in _strings(values, key).split(", ")]
        elif field in _FREE_TEXT and isinstance(value, str) and not INJECTION.search(value):
            if any(class_word(w) for w in re.findall(r"[a-z]+", value.lower())):
                raise Unreadable(f"field {key!r} names a class; put the classes you want in "
                                 "'classes' and those you do not in 'exclude'")
            continue  # a note naming no class: left out ("frames come from the video")
        elif field in _EXCLUDE_FIELDS:
            excluded.append(_strings(values, key))
        elif _style_field(str(key).replace("-", "_")) and isinstance(value, str):
            styles.append(f"Style: {value}")  # a field of its own: "1,2,3. Style: cartoon"
        elif not _metadata(field) or isinstance(value, list | dict) \
                or INJECTION.search(str(value)):  # fmt: skip
            raise Unreadable(f"field {key!r} is not a class list, an exclusion or a style; "
                             "send {'classes': [...]} or describe the task in words")
    if excluded and len(groups) > 1:
        raise Unreadable("exclusions with several groups: say which group each leaves out")
    if excluded and groups:  # "every animal except cow, sheep, horse"
        groups, excluded = [f"{groups[0]} except {', '.join(excluded)}"], []
    unwanted = [f"Not {', not '.join(', '.join(excluded).split(', '))}"] if excluded else []
    wanted = [", ".join(classes).lower()] if classes else []
    parts = wanted + [p[:1].upper() + p[1:] for p in groups + unwanted + styles]
    return ". ".join(parts)  # each part a sentence


def _metadata(field: str) -> bool:
    """Whether a field names who or what the request is for, never which classes ("also":
    "horse" is no metadata, so it is refused rather than dropped)."""
    return field in _META_FIELDS or field.endswith(("_id", "_name", "_by", "_at", "_date"))


def _strings(items: list, where: str) -> str:
    if not all(isinstance(x, str) for x in items):
        raise Unreadable(f"every item of {where} must be a class name in quotes")
    return ", ".join(items)
