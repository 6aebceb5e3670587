"""A second, learned reading of every description: the tuned request reader beside the rules.

The rules read requests through word lists; on sets nobody had read they answered about 60 %
of natural requests exactly, with 5-8 % wrong 200s. The tuned reader
(``model_store.request_model``, trained by ``tailor train request-reader``) reads the whole
request at once. Neither is right often enough alone (docs/results-resolution.md, stops 57
and 58), so each checks the other:

- the rules answer and the tuned reader, confident (at least ``threshold``), reads another
  class set or domain (or nothing to answer): 422 ``unsure-description``, with both readings,
  and the developer says which;
- the rules answer and the tuned reader, even unsure, finds their reading less than ``veto``
  times as likely as its own: 422 as above. Why: most wrong 200s left at stop 57 were answers
  the reader read otherwise without confidence, and it seldom finds a right answer that
  unlikely. A ratio, not a bare chance: a reader unsure of everything finds every reading
  unlikely;
- the rules refuse a description they could not place (``reader.READ_AGAIN``) and the tuned
  reader, confident (at least ``rescue_from``), reads two or more classes (as many as a count
  the request declares): that reading is the answer, with a note. A wrong rescue is a wrong
  200 where the rules were safe, so it asks for more confidence than asking back does;
- the same from ``seconded_from`` on, when the learned forest reader of refusals
  (:mod:`service.kinds.reader`, built from the rules' own pass, not from this model) reads
  the same classes. Two readers that share no weights agreeing was right far more often than
  the tuned reader alone at that confidence (docs/results-resolution.md, stop 58).

The four were chosen on sets 90-93 with readers trained without them (stop 58; the veto on
sets 78-89). Where it is not confident (and the veto does not apply), where the request is
longer than it reads (its tail, often a correction, would be cut), or where it fails or gives
no finite probabilities, the rules stand. A reader trained for other classes or domains is
not used (logged once). Probabilities are kept per text in a small LRU: a description sent
again costs no second pass.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from service.core.lru import BoundedLRU
from service.core.problems import Problem
from service.kinds.reader_features import term_hits
from service.kinds.tokens import words

log = logging.getLogger(__name__)

THRESHOLD = 0.5  # see the module docstring (docs/results-resolution.md, stop 58)
RESCUE = 0.9
SECONDED = 0.7
VETO = 0.03
Read = tuple[list[int], str | None, float]  # (class indices, domain, confidence)


@dataclass
class Tuned:
    """A loaded request reader; the confidence from which it asks back an answer it reads
    otherwise; the likelihood ratio (the answer's to its own reading's) below which it asks it
    back anyway; the confidence from which it answers a refusal, alone or read alike by the
    forest."""

    reader: Any  # model_store.request_model.RequestReader
    threshold: float = THRESHOLD
    veto: float = VETO
    rescue_from: float = RESCUE
    seconded_from: float = SECONDED
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
        """(class indices, domain, confidence), or None when the reader cannot say
        (:meth:`probabilities`). With ``domain_fixed`` (the request names its domain) the
        confidence leaves the domain out."""
        from model_store.request_model import reading

        if (got := self.probabilities(text)) is None:
            return None
        return reading(*got, self.reader.domains, with_domain=not domain_fixed)

    def chance(self, text: str, chosen: list[int], domain: str | None,
               domain_fixed: bool = False) -> float | None:
        """The reader's chance that ``chosen`` and ``domain`` are the request's reading
        (each class's call and the domain taken as independent, as in the confidence), or
        None when it cannot say or the reading is not one of its classes and domains."""
        from model_store.request_model import chance

        known = domain is None or domain in self.reader.domains
        if not known or any(not 0 <= k < len(self.reader.classes) for k in chosen) or \
                (got := self.probabilities(text)) is None:  # fmt: skip
            return None
        return chance(*got, self.reader.domains, chosen, domain, with_domain=not domain_fixed)

    def probabilities(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(P(class), P(domain)) of ``text``, or None: the text is longer than the reader
        reads, it failed (logged) or gave probabilities that are not finite."""
        if (hit := self.cache.get(text)) is not None:
            return hit or None
        try:
            got = self._probabilities(text)
        except Exception:  # a reader's fault never turns an answer into a 500; not kept, so
            log.exception("the tuned request reader failed; the rules stand")  # it is tried
            return None  # again next time
        for array in got or ():
            array.setflags(write=False)  # shared by every later request for this text
        self.cache.put(text, got or ())
        return got

    def _probabilities(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        if self.reader.length(text) > self.reader.max_length:
            return None
        pc, pd = self.reader.probabilities([text])
        if not (np.isfinite(pc[0]).all() and np.isfinite(pd[0]).all()):
            log.error("the tuned request reader gave no finite confidence; the rules stand")
            return None
        return pc[0], pd[0]


def configured(settings: Any) -> Tuned | None:
    """The tuned reader at ``settings.tuned_reader_path`` if one is there, loads and may act
    (confidences above 1 and no veto never do: then it is not loaded at all)."""
    path = settings.tuned_reader_path
    idle = min(settings.tuned_reader_threshold, settings.tuned_reader_rescue,
               settings.tuned_reader_seconded) > 1 and settings.tuned_reader_veto == 0
    if path is None or idle or not (Path(path) / "reader.json").is_file():
        return None
    from model_store.request_model import load_reader

    try:
        reader = load_reader(Path(path), "cpu")
    except Exception as exc:  # a stale or damaged folder: the rules answer alone
        log.error("not loading the tuned request reader: %s", exc)
        return None
    runtime = reader.use_onnx() if settings.text_runtime == "onnx" else reader.runtime
    log.info("loaded the tuned request reader %s on %s (asks back from %.2f, veto %.3g, "
             "answers refusals from %.2f, or %.2f read alike by the forest)", path, runtime,
             settings.tuned_reader_threshold, settings.tuned_reader_veto,
             settings.tuned_reader_rescue, settings.tuned_reader_seconded)
    return Tuned(reader, settings.tuned_reader_threshold, settings.tuned_reader_veto,
                 settings.tuned_reader_rescue, settings.tuned_reader_seconded)


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
    """Raise 422 ``unsure-description`` when the tuned reader reads otherwise than the
    rules' answer (``matches``, ``domain``) and is confident, or finds that answer less than
    ``veto`` times as likely as its own reading; a domain the request fixed is kept."""
    fixed = bool(request.domain)  # "" fixes nothing: the rules read it as no domain
    read = tuned.read(request.description, domain_fixed=fixed)
    if read is None:
        return
    chosen, their_domain, confidence = read
    their_domain = request.domain or their_domain
    if sorted(chosen) == sorted(m.index for m in matches) and their_domain == domain:
        return
    if not confidence >= tuned.threshold:
        theirs = tuned.chance(request.description, [m.index for m in matches], domain, fixed)
        if theirs is None or not theirs < tuned.veto * confidence:
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


def rescue(tuned: Tuned, resolver: Any, request: Any, trace: dict[str, Any],
           forest: Callable[[], tuple[list[int], float] | None] | None = None) -> Read | None:
    """The tuned reading of a refused description, in request order, when it names two or
    more classes, as many as a count the request declares ("three classes: …"), and it is
    confident (``rescue_from``), or fairly confident (``seconded_from``) and ``forest`` (the
    forest reader's (classes, confidence), asked only then) reads the same classes; ``None``
    otherwise. The domain is the request's, else the tuned reader's (its confidence weighs
    it; the forest seconds the classes only)."""
    read = tuned.read(request.description, domain_fixed=bool(request.domain))
    if read is None or len(read[0]) < 2:
        return None
    if not read[2] >= tuned.rescue_from:
        if not read[2] >= tuned.seconded_from or forest is None:
            return None
        if (seconded := forest()) is None or sorted(seconded[0]) != sorted(read[0]):
            return None
    declared = getattr(trace.get("marks"), "declared", None)
    if declared is not None and declared != len(read[0]):
        return None
    chosen = in_request_order(resolver, request.description, read[0])
    return chosen, request.domain or read[1], read[2]
