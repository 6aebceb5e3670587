"""A second, learned reading of every description: the tuned request reader beside the rules.

The rules read requests through word lists; on sets nobody had read they answered about 60 %
of natural requests exactly, with 5-8 % wrong 200s. The tuned reader
(``model_store.request_model``, trained by ``tailor train request-reader``) reads the whole
request at once. Neither is right often enough alone (docs/results-resolution.md, stop 57), so
each checks the other, from one confidence chosen on sets 78-89 for both directions:

- the rules answer and the tuned reader, confident (at least ``threshold``), reads another
  class set or domain (or nothing to answer): 422 ``unsure-description``, with both readings,
  and the developer says which;
- the rules refuse a description they could not place (``reader.READ_AGAIN``) and the tuned
  reader, confident, reads two or more classes (as many as a count the request declares):
  that reading is the answer, with a note.

Where it is not confident, where the request is longer than it reads (its tail, often a
correction, would be cut), or where it fails or gives no finite confidence, the rules stand.
A reader trained for other classes or domains is not used (logged once). Readings are kept
per text in a small LRU: a description sent again costs no second pass.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.core.lru import BoundedLRU
from service.core.problems import Problem
from service.kinds.reader_features import term_hits
from service.kinds.tokens import words

log = logging.getLogger(__name__)

THRESHOLD = 0.7  # chosen on sets 78-89 (stop 57); see the module docstring
Read = tuple[list[int], str | None, float]  # (class indices, domain, confidence)


@dataclass
class Tuned:
    """A loaded request reader and the confidence from which it overrules the rules."""

    reader: Any  # model_store.request_model.RequestReader
    threshold: float = THRESHOLD
    cache: BoundedLRU = field(default_factory=lambda: BoundedLRU(4096, name="tuned readings"))
    warned: bool = False

    def fits(self, resolver: Any, domains: list[str]) -> bool:
        """Whether it was trained for this catalogue's classes (in order) and domains."""
        ok = list(self.reader.classes) == list(resolver.names) and \
            list(self.reader.domains) == list(domains)  # fmt: skip
        if not ok and not self.warned:
            self.warned = True
            log.warning("the tuned request reader was trained for other classes or domains: "
                        "it is not used (train it again: tailor train request-reader)")
        return ok

    def read(self, text: str, domain_fixed: bool = False) -> Read | None:
        """(class indices, domain, confidence), or None when the reader cannot say: the text
        is longer than it reads, it failed (logged) or its confidence is not finite. With
        ``domain_fixed`` (the request names its domain) the confidence leaves the domain out."""
        key = f"{int(domain_fixed)}|{text}"
        if (hit := self.cache.get(key)) is not None:
            return hit or None
        try:
            got = self._read(text, domain_fixed)
        except Exception:  # a reader's fault never turns an answer into a 500; not kept, so
            log.exception("the tuned request reader failed; the rules stand")  # it is tried
            return None  # again next time
        self.cache.put(key, got or ())
        return got

    def _read(self, text: str, domain_fixed: bool) -> Read | None:
        from model_store.request_model import reading

        if self.reader.length(text) > self.reader.max_length:
            return None
        pc, pd = self.reader.probabilities([text])
        chosen, domain, confidence = reading(pc[0], pd[0], self.reader.domains,
                                             with_domain=not domain_fixed)
        if not math.isfinite(confidence):
            log.error("the tuned request reader gave no finite confidence; the rules stand")
            return None
        return chosen, domain, confidence


def configured(settings: Any) -> Tuned | None:
    """The tuned reader at ``settings.tuned_reader_path`` if one is there, loads and may
    overrule (a threshold above 1 never does: then it is not loaded at all)."""
    path = settings.tuned_reader_path
    if path is None or settings.tuned_reader_threshold > 1 \
            or not (Path(path) / "reader.json").is_file():  # fmt: skip
        return None
    from model_store.request_model import load_reader

    try:
        reader = load_reader(Path(path), "cpu")
    except Exception as exc:  # a stale or damaged folder: the rules answer alone
        log.error("not loading the tuned request reader: %s", exc)
        return None
    runtime = reader.use_onnx() if settings.text_runtime == "onnx" else reader.runtime
    log.info("loaded the tuned request reader %s on %s (overrules from %.2f)", path, runtime,
             settings.tuned_reader_threshold)
    return Tuned(reader, settings.tuned_reader_threshold)


def usable(tuned: Tuned | None, resolver: Any, request: Any, domains: list[str]) -> bool:
    """Whether the tuned reader reads this request: a description, not a class list."""
    return tuned is not None and request.description is not None and \
        request.classes is None and tuned.fits(resolver, domains)  # fmt: skip


def in_request_order(resolver: Any, text: str, chosen: list[int]) -> list[int]:
    """``chosen`` in the order the text names them (as the rules answer); a class it does not
    name by a term goes last."""
    tokens = words(text)
    hits = term_hits(resolver, tokens)
    return sorted(chosen, key=lambda k: hits[k][0] if hits[k] else len(tokens) + k)


def check(tuned: Tuned, resolver: Any, request: Any, matches: list[Any],
          domain: str | None) -> None:
    """Raise 422 ``unsure-description`` when the tuned reader, confident, reads otherwise
    than the rules' answer (``matches``, ``domain``); a domain the request fixed is kept."""
    read = tuned.read(request.description, domain_fixed=request.domain is not None)
    if read is None or not read[2] >= tuned.threshold:
        return
    chosen, their_domain, confidence = read
    their_domain = request.domain or their_domain
    if sorted(chosen) == sorted(m.index for m in matches) and their_domain == domain:
        return
    names = [resolver.names[k] for k in in_request_order(resolver, request.description, chosen)]
    said = ", ".join(names) if len(names) >= 2 else "no class set to answer"
    raise Problem(422, "unsure-description",
                  f"the rules read {', '.join(m.name for m in matches)} "
                  f"({domain or 'any domain'}), the tuned reader reads {said} "
                  f"({their_domain or 'any domain'}); send the classes you mean as a list, "
                  f"and the domain if one matters",
                  rules_reading={"classes": [m.name for m in matches], "domain": domain},
                  reading={"classes": names, "domain": their_domain,
                           "confidence": round(confidence, 4)})


def rescue(tuned: Tuned, resolver: Any, request: Any, trace: dict[str, Any]) -> Read | None:
    """The tuned reading of a refused description, in request order, when it is confident
    and names two or more classes, as many as a count the request declares ("three
    classes: …"); ``None`` otherwise."""
    read = tuned.read(request.description, domain_fixed=request.domain is not None)
    if read is None or not read[2] >= tuned.threshold or len(read[0]) < 2:
        return None
    declared = getattr(trace.get("marks"), "declared", None)
    if declared is not None and declared != len(read[0]):
        return None
    chosen = in_request_order(resolver, request.description, read[0])
    return chosen, request.domain or read[1], read[2]
