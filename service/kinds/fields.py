"""Requests written as specs: tables, field lines and ``classes = …``, read as what they mean.

Outside writers of requirements (issue 13's sets 7, 9, 11) paste what a spec holds: a Markdown
table or a CSV whose first column is the class, ``classes = three, eight, nine``, and field
lines ("Domain: cartoons", "Platform: iOS", "Input: phone camera photos", "Latency budget:
<50 ms"). Read as prose, the tables were refused (pipes and ``=`` are injection syntax) and the
field values became class mentions ("ios", "phone"): 422s for requests that named their classes
plainly. Here

- a table becomes its class column, chosen by its header ("class", "label", …), before the
  injection check; a table without one, with a column that is not descriptive ("include",
  "status"), a cell that asks or excludes, numbers or prose in the class column, or injection
  syntax in any cell is left as it is, and its pipes are refused;
- a CSV block needs a header of field names and rows of its width ("Labels, in order of
  priority:" is prose);
- ``key = value`` for a known key (classes, labels, style, domain, input, output) is ``key:``;
- a field about the project (platform, priority, deadline, team, …) is dropped whole, and one
  about the images (input, source, style, …) keeps only its style words ("Input: phone camera
  photos" → "camera photos"), when the value names no class, holds no plural and asks for
  nothing ("Priority: alpacas", "Images: mostly ferrets" stay); what is dropped is context;
- a field that lists classes ("Classes needed:", "Must have:") keeps its value and the key's
  style words ("Cartoon animals: bear, zebra"); one that excludes ("Won't have:", "Out of
  scope:") negates each item of its value; a Markdown heading in a multi-line text, and a
  first line naming a kind of document ("User story #19", "Product spec (v0.3)"), keep only
  their style words.

Any other line is left to the parser as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from service.kinds.structured import INJECTION
from service.kinds.tokens import plural

_CLASS_HEADERS = {"class", "classes", "label", "labels", "name", "names", "category",
                  "categories", "item", "items", "class_name", "class name", "digit", "digits",
                  "animal", "animals", "subject", "subjects", "object", "objects", "tag",
                  "tags"}  # fmt: skip  # "| subject |" (set 63: refused as pipes)
# a yes/no column choosing rows ("class_name,include / sandal,no"): its "no" rows are dropped
_CHOOSING = {"include", "included", "needed", "wanted", "keep", "selected", "use", "required",
             "in scope"}
_YES, _NO = {"yes", "y", "true", "1", "x", "✓"}, {"no", "n", "false", "0", "-", ""}
# the other columns a table may have: they describe the class and are not read
_DESCRIBING = {"example", "examples", "notes", "note", "description", "descriptions",
               "definition", "alias", "aliases", "synonyms", "details", "e.g.", "id", "#",
               "no", "sku", "units", "qty", "quantity", "count", "price", "cost", "stock",
               "order_id", "order", "desc", "size", "color", "colour", "brand", "vendor",
               "date", "reason"}  # fmt: skip  # a stock list's columns (set 73: refused)
# a cell of another column that asks or excludes: the table is refused, not half read
_ASKING = re.compile(r"\b(?:no|not|n|yes|y|drop|exclude|excluded|skip|remove|removed|omit|"
                     r"out|add|also|plus|include|train|ignore|instead|other|only)\b", re.I)
_FIELD_NAME = re.compile(r"[a-z_#?]+(?: [a-z_]+)?")  # "label", "class name", "id"
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_ASSIGNED = re.compile(r"(^|[:;,.]\s*)(classes|labels|categories|style|domain|input|output)"
                       r"\s*=(?!=)", re.I | re.M)  # fmt: skip
FIELD = re.compile(r"^\s*(?:[-*•]\s+)?\(?\**([A-Za-z][A-Za-z0-9 _/()'’-]{0,40}?)\**\s*:"
                   r"\s*\**\s*(.*)$")  # "- Domain: cartoons", "**Must have:** sneakers"
# "Won't have: dresses", "Excluded: bags": every item of the value is excluded
_NEGATING = {"wont", "not", "no", "never", "exclude", "excluded", "excluding", "except", "out",
             "without", "dont", "removed", "dropped", "omitted", "skipped",
             "deprecated", "non"}  # fmt: skip
_ITEMS = re.compile(r",|;|/|\band\b|\bor\b", re.I)
# words of a document's title line ("Lesson plan (Grade 1 numeracy)", "Project charter - …")
_TITLE = {"spec", "specs", "specification", "story", "stories", "plan", "protocol", "requirements",
          "requirement", "doc", "document", "epic", "ticket", "feature", "proposal", "prd",
          "brief", "charter", "section", "bug", "todo", "changelog", "memo", "rfc", "issue"}
# a field naming the product or document: "Feature: Closet Sorter.", "App: Sketch-a-Zoo"
_NAMING = {"feature", "epic", "app", "product", "project", "title", "name", "codename"}
_PROPER = re.compile(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3}\.?")  # "Sheep Counter"
_HEADING = re.compile(r"^\s*#{1,6}\s")
# a second field on the same line: "Digits needed: 3 and 8. Style: cartoon."
_NEXT_FIELD = re.compile(r"(?<=[.;])\s+(?=[A-Z][A-Za-z -]{0,30}:)")
ABOUT_IMAGES = {"input", "inputs", "domain", "domains", "style", "styles", "source", "sources",
                "media", "medium", "images", "image", "format", "data", "imagery", "material",
                "photos", "pictures", "creative", "creatives", "art", "artwork", "assets",
                "visuals"}  # fmt: skip  # "Creative: hand-painted watercolour assets" (set 63)
_IMAGE_NOUNS = {"assets", "visuals", "creatives", "renders", "files", "uploads", "images"}
# a GitHub issue's own labels ("Label: `enhancement`"): no class (set 63: asked back)
_ISSUE_LABELS = {"enhancement", "bug", "feature", "documentation", "question", "wontfix",
                 "duplicate", "invalid", "triage", "good", "first", "issue", "help", "wanted",
                 "request", "p0", "p1", "p2", "p3"}
ABOUT_PROJECT = {"platform", "platforms", "priority", "deadline", "due", "latency", "budget",
                 "owner", "team", "status", "version", "author", "date", "sprint", "reporter",
                 "assignee", "environment", "device", "devices", "hardware", "runtime",
                 "framework", "language", "metric", "metrics", "timeline", "effort", "estimate",
                 "persona", "reason", "source", "requester", "contact", "customer", "client",
                 "store", "location", "region", "ticket"}  # fmt: skip
# who asks and where from: a value there may end in "s" ("owner: qa-jonas", "source: user
# uploads") and still be no class (stop 32)
_PEOPLE = {"owner", "reporter", "assignee", "author", "requester", "contact", "customer",
           "client", "persona", "source"}
# who speaks in a pasted chat; not "Owner:", "Client:" or "Source:", fields a spec repeats
_ROLES = {"customer", "agent", "user", "support", "bot", "assistant", "operator", "rep"}
LISTS_CLASSES = {"classes", "labels", "categories", "class", "needed", "must", "scope",
                 "recognise", "recognize", "detect", "digits", "animals", "garments", "items",
                 "include", "includes", "required", "requirements", "output", "goal",
                 "goals"}  # fmt: skip


def tabular(text: str) -> str:
    """``text`` with its Markdown tables and CSV blocks replaced by their class column, one item
    a line, and ``classes = …`` as ``classes: …``."""
    lines, out, i = _tabs_as_commas(text.splitlines()), [], 0
    while i < len(lines):
        block = _table_block(lines, i)
        if block:
            out += _class_column(lines[i : i + block])
            i += block
        else:
            out.append(lines[i])
            i += 1
    return _ASSIGNED.sub(lambda m: f"{m[1]}{m[2]}:", "\n".join(out))


def _tabs_as_commas(lines: list[str]) -> list[str]:
    """A tab-separated block (pasted from a spreadsheet: "class\tinclude\nCoat\tyes") as CSV:
    lines with tabs and no comma, when two or more lines have them (set 39: a 422)."""
    tabbed = [("\t" in line and "," not in line) for line in lines]
    if sum(tabbed) < 2:
        return lines
    return [re.sub(r"\t+", ",", line) if t else line for line, t in zip(lines, tabbed, strict=True)]


def _table_block(lines: list[str], start: int) -> int:
    """How many lines from ``start`` form a table: Markdown rows (``| a | b |``, two or more,
    one of them a rule) or a CSV (a header of field names, then rows with as many commas)."""
    if lines[start].lstrip().startswith("|"):
        n = next((k for k in range(start, len(lines)) if not lines[k].lstrip().startswith("|")),
                 len(lines)) - start  # fmt: skip
        rows = lines[start : start + n]
        return n if n >= 2 and any(_TABLE_RULE.match(r) for r in rows) else 0
    header = [c.strip().lower() for c in lines[start].split(",")]
    if len(header) < 2 or not _CLASS_HEADERS & set(header) \
            or not all(_FIELD_NAME.fullmatch(c) for c in header):  # fmt: skip
        return 0  # "Labels, in order of priority:" is prose, not a header
    n = next((k for k in range(start + 1, len(lines))
              if lines[k].count(",") != len(header) - 1
              or max(len(c.split()) for c in lines[k].split(",")) > 4), len(lines)) - start
    # a sentence after the rows ends the table ("please drop bag, accessories team handles
    # that separately": set 73 refused the table as one of its rows)
    return n if n >= 2 else 0


def _class_column(rows: list[str]) -> list[str]:
    """The cells of the class column (see :func:`tabular`), as bullet lines; the rows as they
    were when any cell holds injection syntax, so that the whole request is refused."""
    sep = "|" if rows[0].lstrip().startswith("|") else ","
    table = [[c.strip() for c in r.strip().strip("|").split(sep)] for r in rows
             if not _TABLE_RULE.match(r)]  # fmt: skip
    header = [c.lower().rstrip("?").strip() for c in table[0]]  # "Include?" chooses
    col = next((k for k, h in enumerate(header) if h in _CLASS_HEADERS), None)
    if col is None or any(INJECTION.search(cell) for row in table for cell in row):
        return rows  # no class column, or injection syntax: left to be refused (pipes)
    table = _chosen_rows(table, header)
    if table is None:
        return rows  # a choosing column with other values ("maybe"): refused
    cells = [row[col] for row in table[1:] if col < len(row) and row[col]]
    others = [c for row in table[1:] for k, c in enumerate(row)
              if k != col and header[k] not in _CHOOSING]  # fmt: skip
    if not all(h in _CLASS_HEADERS | _DESCRIBING | _CHOOSING for h in header) \
            or any(_ASKING.search(c) for c in others + cells) \
            or any(c.strip().isdigit() or len(c.split()) > 3 for c in cells):  # fmt: skip
        return rows  # an include/status column, an ask, numbers or prose: refused
    return [f"- {c}" for c in cells]


def _chosen_rows(table: list[list[str]], header: list[str]) -> list[list[str]] | None:
    """The header and the rows a yes/no column keeps ("Needed? Y"); the table as it is when it
    has no such column, None when its column holds anything else ("maybe": refused)."""
    col = next((k for k, h in enumerate(header) if h in _CHOOSING), None)
    if col is None:
        return table
    values = {row[col].strip().lower() if col < len(row) else "" for row in table[1:]}
    if not values <= _YES | _NO:
        return None
    return [table[0]] + [row for row in table[1:]
                         if col < len(row) and row[col].strip().lower() in _YES]


def read_fields(text: str, class_word: Callable[[str], bool], style_word: Callable[[str], bool],
                tokens: Callable[[str], list[str]], asks: set[str],
                class_of: Callable[[str], str | None] = lambda _: None) -> tuple[str, list[str]]:
    """``(text, context)``: field lines rewritten as the module docstring says, and the values
    dropped. ``asks``: words that make a value a request ("Goal: also lions")."""
    words = _Words(class_word, style_word, tokens, asks, class_of)
    lines = [line for line in text.splitlines() if line.strip()]
    context = _title(lines, words)
    fields = [f for line in lines if (f := FIELD.match(line))]
    keys = [f[1].lower() for f in fields]
    bare = any(re.fullmatch(r"\s*(?:yes|no|nope|nah|yep|yeah)\W*", f[2], re.I)
               for f in fields)  # a turn answering a question  # fmt: skip
    speakers = set() if bare else {k for k in keys if k in _ROLES and keys.count(k) > 1}
    # "Customer: … Agent: … Customer: product photos": a chat's turns, not a field about the
    # project (set 59); one answering "no" is left to the fields' reading (an outside review)
    body = _named("\n".join(line for line in lines if not _HEADING.match(line)), words)
    out = []
    for line in lines:
        if _HEADING.match(line) and len(lines) >= 2 and (not any(map(class_word, tokens(line)))
                                                         or _titled(line, body, words)):
            out.append(" ".join(w for w in tokens(line) if style_word(w)))  # "## Requirements",
            continue  # "## Bug: classifier misses birds" over a body naming them (set 63); one
            # line, or one naming classes the body does not, is a code comment: "# TODO: cats…"
        if (field := FIELD.match(line)) and field[1].lower() in speakers:
            out.append(line)
            continue
        parts = [_read_field(part, words, context) for part in _NEXT_FIELD.split(line)]
        out.append(" ".join(p for p in parts if p))
    return "\n".join(out), context


class _Words(NamedTuple):
    """What :func:`read_fields` knows of words: the parser's, passed in (no import cycle)."""

    class_word: Callable[[str], bool]
    style_word: Callable[[str], bool]
    tokens: Callable[[str], list[str]]
    asks: set[str]
    class_of: Callable[[str], str | None]


def _named(text: str, words: _Words) -> set[str]:
    """The classes ``text``'s words name one by one."""
    return {c for w in words.tokens(text) if (c := words.class_of(w)) is not None}


# a title or heading that says what happens to its classes is content: "Spec: v2 drops horses",
# "PRD: Remove horses", "## Dropped: dogs", "Spec: Cats only" (an outside review of stop 49)
_ACTING = {"drop", "drops", "dropped", "remove", "removes", "removed", "no", "not", "only",
           "just", "without", "except", "excluding", "exclude", "excluded", "minus", "skip",
           "skipped", "add", "adds", "added", "plus", "also", "needed", "wanted", "out", "cut",
           "deprecated", "dont", "never", "instead", "new"}


def _titled(line: str, body: set[str], words: _Words) -> bool:
    """Whether a title or heading naming classes only names the body's, and acts on none."""
    named = _named(" ".join(w for w in words.tokens(line) if not w.isdigit()), words)
    return not named or named <= body and not _ACTING & set(words.tokens(line))


def _title(lines: list[str], words: _Words) -> list[str]:
    """A first line naming a kind of document ("User story #19", "Product spec (v0.3)", "PRD:
    Summer Edit"; its numbers are no digits asked for) keeps only its style words, in place;
    the rest is returned as context. A title naming classes names no more than the body does
    ("PRD: Bottoms & Dresses" over "- trousers, dresses"; set 63: 422s)."""
    first = words.tokens(lines[0]) if lines else []
    if len(lines) < 2 or not _TITLE & set(first) or ":" in lines[0] and first[0] not in _TITLE \
            or not _titled(lines[0], _named("\n".join(lines[1:]), words), words):  # fmt: skip
        return []
    lines[0] = " ".join(w for w in first if words.style_word(w))
    return [" ".join(w for w in first if not words.style_word(w))]


# a remark about the request ("note: ~4k imgs, no multi-label", "NB: pencil; some 7s have a
# crossbar") is context, its style words kept, unless it asks or changes something
_REMARKS = {"note", "notes", "nb", "comment", "comments", "remark", "remarks", "fyi", "ps"}
_CHANGING = _NEGATING | {"remove", "drop", "skip", "instead", "delete", "mistake", "scratch",
                         "only", "just", "forget", "need", "needed", "arent", "isnt", "cut",
                         "ignore", "want", "wanted", "typo", "wrong", "scrap", "cancel", "ditch",
                         "omit", "disregard", "lose"}  # "NB: forget the dress", "fyi: … dropped"


def _read_field(part: str, words: _Words, context: list[str]) -> str:
    """One field (``Key: value``) rewritten; what it drops is appended to ``context``."""
    field = FIELD.match(part)
    if field is None:
        return part
    key, value = set(words.tokens(field[1])), words.tokens(field[2])
    named_then = re.match(r"([^.!?]+[.!?])\s+(\S.*)$", field[2])  # "Feature: Sorter. The model…"
    if key & _NAMING and _PROPER.fullmatch(field[2].strip()):  # "Codename: Zebra."
        context.append(field[2].strip())
        return ""
    if key & _NAMING and named_then:
        return " ".join([_read_field(f"{field[1]}: {named_then[1]}", words, context),
                         named_then[2]]).strip()  # fmt: skip
    if key & _REMARKS and len(key) == 1:  # "note: drone photos, farm survey" (set 67: 422s)
        if (words.asks | _CHANGING) & set(value):
            return f"Note: {field[2].strip()}"  # "note: remove the horses": a sentence of
            # its own (a keyed line ends the list before it, sentences._end)
        context.append(field[2].strip())
        return " ".join(w for w in value if words.style_word(w)).capitalize() + "."
    about_project = bool(key & (ABOUT_PROJECT | _NAMING)) and not key & LISTS_CLASSES \
        and (key & _PEOPLE or not any(map(plural, value)))  # "Priority: alpacas" asks
    unowned = words.tokens(re.sub(r"\b\w+s['’](?=\s)", " ", field[2]))  # "for the kids' line"
    about_images = bool(key & ABOUT_IMAGES) and any(map(words.style_word, value)) and not any(
        plural(w) and not words.style_word(w) and w not in _IMAGE_NOUNS
        for w in unowned)  # "Images: mostly ferrets" asks
    if key & {"label", "labels"} and value and set(value) <= _ISSUE_LABELS:
        context.append(field[2].strip())
        return ""
    named = any(map(words.class_word, words.tokens(field[1])))
    if (about_project or about_images) and not any(map(words.class_word, value)) \
            and not words.asks & set(value):  # fmt: skip
        kept = [w for w in value if words.style_word(w)] if about_images else []
        dropped = " ".join(w for w in value if not words.style_word(w) or about_project)
        context += [dropped] if dropped else []
        return " ".join(kept).capitalize() + "." if kept else ""  # a sentence: "3. Cartoon."
    excluding = key & _NEGATING or key in ({"exclusions"}, {"exclusion"}) and value[:1] not in (
        ["none"], ["nothing"], ["na"], ["n"])  # "3. Exclusions: T-shirts and pullovers …"
    # (set 71); not "Update on exclusions:", "Exclusions: none" (an outside review)
    if excluding and not named:  # "Won't have: dresses, bags"
        inner = re.search(r"\(([^()]*)\)", field[2])  # "all summer items (sandals, t-shirts)"
        listed = inner[1] if inner and any(map(words.class_word, words.tokens(inner[1]))) \
            else field[2]  # fmt: skip
        return ", ".join(f"not {item.strip()}" for item in _ITEMS.split(listed)
                         if item.strip()) + ";"  # the next line's list is not excluded
    if key & LISTS_CLASSES and not named:
        style = [w for w in words.tokens(field[1]) if words.style_word(w)]  # "cartoon animals:"
        return "; ".join([" ".join(style), field[2]]) if style else field[2]
    return part
