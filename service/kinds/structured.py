"""Requests written as data or markup, read as plain words; injection refused.

Developers paste what they have: ``["kitten", "puppy", "pony"]``, ``{"classes": [...], "style":
"cartoon"}``, ``labels: ['T-shirt', 'Dress']``, a markdown table or checklist, class names in
quotes. The stop-25 parser refused every quote, bracket and pipe as a possible injection, so
"the model distinguishes "sandal" and "sneaker"" was a 422. Now a JSON or YAML document's strings
are collected (a list of strings is one class list; other strings are sentences, where style
words and context are found as usual; keys are field names and dropped), and quotes, brackets,
braces, pipes, ``#`` and ``=`` are list punctuation. What an injection needs and task wording
never has is still refused before anything is read: markup tags, SQL statements, ``OR 1=1``,
comment syntax (``/*``, and ``--`` ending the text or a statement).
"""

from __future__ import annotations

import json
import re
from typing import Any

INJECTION = re.compile(
    r"<\s*/?\s*[a-z!][^>]*>"  # markup tags: <script>, </b>, <!-- -->
    r"|\b(?:drop|truncate|alter)\s+table\b|\bunion\s+(?:all\s+)?select\b|\binsert\s+into\b"
    r"|\bdelete\s+from\b|\bselect\b[^.]*\bfrom\b[^.]*\bwhere\b"
    r"|\bor\s+['\"]?\w+['\"]?\s*=\s*['\"]?\w+"  # OR 1=1, OR 'a'='a'
    r"|;\s*--|--\s*$|/\*|\bexec(?:ute)?\s*\(", re.I)  # fmt: skip
_QUOTES = re.compile(r"[\"`“”„«»]")
_PUNCTUATION = re.compile(r"[\[\]{}|#=<>\\]")


def plain(text: str) -> str:
    """``text`` as words and list punctuation: a JSON/YAML document flattened, quotes dropped,
    brackets, braces, pipes, ``#`` and ``=`` turned into commas."""
    document = _document(text)
    if document is not None:
        text = _flatten(document)
    return _PUNCTUATION.sub(", ", _QUOTES.sub(" ", text))


def _document(text: str) -> list | dict | None:
    """The list or mapping ``text`` is, when the whole of it is one (JSON, or YAML flow style
    such as ``{task: classify, labels: ['T-shirt', 'Dress']}``); else None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    import yaml

    for load in (json.loads, yaml.safe_load):
        try:
            document = load(stripped)
        except (ValueError, yaml.YAMLError):
            continue
        if isinstance(document, list | dict):
            return document
    return None


def _flatten(document: Any) -> str:
    """Lists of strings joined by commas, other strings as sentences of their own."""
    lists: list[str] = []
    sentences: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list) and node and all(isinstance(x, str) for x in node):
            lists.append(", ".join(node))
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str):
            sentences.append(node)

    walk(document)
    return ". ".join([*lists, *sentences])
