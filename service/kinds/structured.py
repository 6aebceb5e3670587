"""Requests written as data or markup, read as plain words; injection refused.

Developers paste what they have: ``["kitten", "puppy", "pony"]``, ``{"classes": [...], "style":
"cartoon"}``, ``labels: ['T-shirt', 'Dress']``, a checklist, class names in quotes. The stop-25
parser refused every quote and bracket as a possible injection, so "the model distinguishes
"sandal" and "sneaker"" was a 422. Now quotes, backticks, brackets and braces are list
punctuation, and a JSON document is read when it is a list of strings or an object whose
fields are all known: a class list (``classes``, ``labels``, …) and style words (``style``,
``domain``, ``images``, …). Any other field ("exclude", "version", "negative_examples") or a
non-string item makes it unreadable (422): dropping keys turned exclusions into inclusions.

Refused before anything is read (an outside review, stop 26): markup tags, SQL statements,
comparisons and assignments (``OR 1=1``, ``cats=1``, ``2>1``), template syntax (``{{``,
``${``, ``#{``), ``||``, pipes and backslashes, comment syntax (``/*``, and ``--`` ending the
text, a line or a statement); and the same again on a document's decoded strings.
"""

from __future__ import annotations

import json
import re

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
_QUOTES = re.compile(r"[\"`“”„«»]")
_BRACKETS = re.compile(r"[\[\]{}]")
_CLASS_FIELDS = {"classes", "class", "labels", "label", "categories", "category", "class_names",
                 "names", "targets", "items"}
_STYLE_FIELDS = {"style", "domain", "images", "image_type", "type", "kind", "task", "input"}
_MAX_DOCUMENT = 4096  # characters; a larger request is prose, not a pasted list


class Unreadable(ValueError):
    """A document whose meaning is more than a class list: the request is refused (422)."""


def plain(text: str) -> str:
    """``text`` as words and list punctuation: a JSON document flattened (see the module
    docstring), quotes dropped, brackets and braces turned into commas.

    Raises:
        Unreadable: a document with other fields or non-string items, or injection syntax in
            its decoded strings.
    """
    document = _document(text)
    if document is not None:
        text = _flatten(document)
        if INJECTION.search(text):
            raise Unreadable("the description contains markup, SQL or code")
    return _BRACKETS.sub(", ", _QUOTES.sub(" ", text))


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


def _flatten(document: list | dict) -> str:
    """A list of strings as one comma list; an object's class fields as lists and its style
    fields as sentences."""
    if isinstance(document, list):
        return _strings(document, "the list")
    parts = []
    for key, value in document.items():
        field = str(key).lower().replace("-", "_")
        if field in _CLASS_FIELDS:
            parts.insert(0, _strings(value if isinstance(value, list) else [value], key))
        elif field in _STYLE_FIELDS and isinstance(value, str):
            parts.append(f"Style: {value}")  # a field of its own: "1,2,3. Style: cartoon"
        else:
            raise Unreadable(f"field {key!r} is not a class list or a style; send "
                             "{'classes': [...]} or describe the task in words")
    return ". ".join(parts)


def _strings(items: list, where: str) -> str:
    if not all(isinstance(x, str) for x in items):
        raise Unreadable(f"every item of {where} must be a class name in quotes")
    return ", ".join(items)
