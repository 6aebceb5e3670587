"""A second, learned reading of every description: the tuned request reader beside the rules.

The rules read requests through word lists; on sets nobody had read they answered about 60 %
of natural requests exactly, with 5-8 % wrong 200s. The tuned reader
(``model_store.request_model``, trained by ``tailor train request-reader``) reads the whole
request at once. Neither is right often enough alone (docs/results-resolution.md, stop 57), so
each checks the other, from a confidence chosen on sets 78-89:

- the rules answer and the tuned reader, confident (at least ``threshold``), reads another
  class set or domain (or nothing to answer): 422 ``unsure-description``, with both readings,
  and the developer says which;
- the rules refuse a description they could not place (``reader.READ_AGAIN``) and the tuned
  reader, confident, reads two or more classes: that reading is the answer, with a note.

Where it is not confident, the rules stand as before. A reader trained for other classes or
domains is not used (logged once); one that fails is logged and the rules stand.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from service.core.problems import Problem

log = logging.getLogger(__name__)

THRESHOLD = 0.7  # chosen on sets 78-89 (stop 57); see the module docstring


@dataclass
class Tuned:
    """A loaded request reader and the confidence from which it overrules the rules."""

    reader: Any  # model_store.request_model.RequestReader
    threshold: float = THRESHOLD

    def fits(self, resolver: Any, domains: list[str]) -> bool:
        """Whether it was trained for this catalogue's classes (in order) and domains."""
        ok = list(self.reader.classes) == list(resolver.names) and \
            list(self.reader.domains) == list(domains)  # fmt: skip
        if not ok and not getattr(self, "_warned", False):
            self._warned = True
            log.warning("the tuned request reader was trained for other classes or domains: "
                        "it is not used (train it again: tailor train request-reader)")
        return ok

    def read(self, text: str) -> tuple[list[int], str | None, float] | None:
        """(class indices, domain, confidence), or None when the reader failed (logged)."""
        from model_store.request_model import reading

        try:
            pc, pd = self.reader.probabilities([text])
        except Exception:  # a reader's fault never turns an answer into a 500
            log.exception("the tuned request reader failed; the rules stand")
            return None
        return reading(pc[0], pd[0], self.reader.domains)


def configured(settings: Any) -> Tuned | None:
    """The tuned reader at ``settings.tuned_reader_path`` if one is there and loads."""
    path = settings.tuned_reader_path
    if path is None or not (Path(path) / "reader.json").is_file():
        return None
    from model_store.request_model import load_reader

    try:
        reader = load_reader(Path(path), "cpu")
    except Exception as exc:  # a stale or damaged folder: the rules answer alone
        log.error("not loading the tuned request reader: %s", exc)
        return None
    log.info("loaded the tuned request reader %s (overrules from %.2f)", path,
             settings.tuned_reader_threshold)
    return Tuned(reader, settings.tuned_reader_threshold)


def usable(tuned: Tuned | None, resolver: Any, request: Any, domains: list[str]) -> bool:
    """Whether the tuned reader reads this request: a description, not a class list."""
    return tuned is not None and request.description is not None and \
        request.classes is None and tuned.fits(resolver, domains)  # fmt: skip


def check(tuned: Tuned, resolver: Any, request: Any, matches: list[Any],
          domain: str | None) -> None:
    """Raise 422 ``unsure-description`` when the tuned reader, confident, reads otherwise
    than the rules' answer (``matches``, ``domain``); a domain the request fixed is kept."""
    read = tuned.read(request.description)
    if read is None or read[2] < tuned.threshold:
        return
    chosen, their_domain, confidence = read
    their_domain = request.domain or their_domain
    if sorted(chosen) == sorted(m.index for m in matches) and their_domain == domain:
        return
    names = [resolver.names[k] for k in chosen]
    rules = {"classes": [m.name for m in matches], "domain": domain}
    tuned_reading = {"classes": names, "domain": their_domain,
                     "confidence": round(confidence, 4)}
    said = ", ".join(names) if len(names) >= 2 else "no class set to answer"
    raise Problem(422, "unsure-description",
                  f"the rules read {', '.join(rules['classes'])} ({domain or 'any domain'}), "
                  f"the tuned reader reads {said} ({their_domain or 'any domain'}); send the "
                  f"classes you mean as a list", rules_reading=rules, reading=tuned_reading)


def rescue(tuned: Tuned, resolver: Any, request: Any, refusal: Problem
           ) -> tuple[list[int], str | None, float] | None:
    """The tuned reading of a refused description when it is confident and names two or
    more classes (``None`` otherwise): (class indices, domain, confidence)."""
    read = tuned.read(request.description)
    if read is None or read[2] < tuned.threshold or len(read[0]) < 2:
        return None
    return read[0], request.domain or read[1], read[2]
