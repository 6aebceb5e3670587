"""The TAPER kind from unlabeled images (issue 18): images-only drafts, /refine, stream state.

An app with a camera or a scanner sends images, not a description. The all-class generic model
(the artifact's ``selection`` model over every class) pseudo-labels them and, when the artifact
has a domain head, says which domain they look like, in one forward; ``model_store.unlabeled``
turns those posteriors into a task (classes by their EM prior, their number, the domain). The
task becomes an ordinary recipe, so an images-only model is the same model (same id for the
same owner, same bytes) as the class-list request it amounts to.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

from model_store.unlabeled import TaskEstimate, estimate_task, generic_scores, pick_domain
from service.core.problems import Problem
from service.core.settings import Settings
from service.kinds.base import Draft

RUNNERS_UP = 3
# benchmarks/self_improvement.py: below 32 images the inferred model is on average worse than
# the all-class model on 5- and 10-way tasks (the class set is usually wrong); say so.
FEW_IMAGES = 32


def scores(kind: Any, batch: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """All-class posteriors (n, N) and domain posteriors (n, D) or None, one forward."""
    return generic_scores(kind.generic_module, batch, kind.bundle.domain_head)


def estimate(kind: Any, probs: np.ndarray, doms: np.ndarray | None, settings: Settings,
             k: int | None, weights: np.ndarray | None = None) -> TaskEstimate:
    """The task the posteriors describe, with the service's validation-chosen thresholds."""
    n = len(kind.class_names)
    if k is not None and k > n:
        raise Problem(422, "k-too-large", f"k={k} but the catalogue has {n} classes", k=k)
    return estimate_task(probs, doms, k=k, min_share=settings.infer_min_share,
                         min_domain_conf=settings.infer_min_domain_conf, weights=weights)


def inferred(kind: Any, est: TaskEstimate) -> dict[str, Any]:
    """The public ``Inferred`` of an estimate (chosen classes by share, then runners-up)."""
    names = kind.class_names

    def entry(i: int) -> dict[str, Any]:
        return {"name": names[i], "share": round(float(est.prior[i]), 4),
                "count": int(round(float(est.counts[i])))}

    chosen = sorted(est.classes, key=lambda i: -est.prior[i])
    rest = [int(i) for i in np.argsort(-est.prior, kind="stable") if int(i) not in est.classes]
    conf = None
    if est.domain_probs is not None:
        conf = round(float(est.domain_probs[est.domain if est.domain is not None
                                            else int(np.argmax(est.domain_probs))]), 4)
    return {"classes": [entry(i) for i in chosen],
            "runners_up": [entry(i) for i in rest[:RUNNERS_UP]],
            "k_estimated": est.k_estimated, "images": round(est.images, 2),
            "domain": kind.domains[est.domain] if est.domain is not None else None,
            "domain_confidence": conf}


def method_notes(kind: Any, method: str, domain: str | None, asked: str | None) -> list[str]:
    """What a request asked for that has no effect, and method choices worth knowing."""
    notes = []
    if domain is not None and method == "selection":
        notes.append(f"domain {domain!r} does not change the weights: method 'selection' keeps "
                     "the generic model's classifier rows for the task's classes, whatever the "
                     "domain (it is recorded on the model as a label only)")
    if asked is not None and asked != kind.default_method:
        mine, best = kind.method_accuracy(asked), kind.method_accuracy(kind.default_method)
        if mine is not None and best is not None:
            notes.append(f"method {asked!r} was asked for; this artifact's evaluation rates "
                         f"{kind.default_method!r} higher ({best:.3f} vs {mine:.3f})")
    return notes


def draft_from_images(kind: Any, batch: Any, request: Any, settings: Settings) -> Draft:
    """An images-only request → the recipe of the classes (and domain) the images show."""
    probs, doms = scores(kind, batch)
    est = estimate(kind, probs, doms, settings, request.k)
    info = inferred(kind, est)
    method = request.method or kind.default_method
    # an estimated domain enters the recipe only where it changes the weights (same id and
    # bytes as the class-list request otherwise); it is reported under ``inferred`` anyway
    domain = request.domain or (info["domain"] if method == "taper" else None)
    if request.domain is not None and request.domain not in kind.domains:
        raise Problem(422, "unknown-domain", f"unknown domain {request.domain!r}",
                      known=kind.domains)  # fmt: skip
    recipe = kind.recipe(est.classes, domain=domain, method=method)
    mixers = kind.mixers(recipe)
    notes = method_notes(kind, method, domain, request.method)
    if est.k_estimated:
        notes.append(f"k={len(est.classes)} was estimated: the classes holding at least "
                     f"{settings.infer_min_share:.0%} of the images; pass 'k' to fix it")
    if len(probs) < FEW_IMAGES:
        notes.append(f"only {len(probs)} images: below {FEW_IMAGES} the inferred classes are "
                     "often wrong; send more, or add them later with /observe")
    if request.domain is None and info["domain"] is None and kind.bundle.domain_head is None:
        notes.append("this artifact has no domain head, so no domain was estimated")
    desc = f"inferred from {len(probs)} images: " + ", ".join(
        f"{c['name']} {c['share']:.0%}" for c in info["classes"])
    return Draft(recipe, method, desc, kind.rounded(mixers), hint=mixers,
                 extra={"inferred": info, "notes": notes, "_scores": (probs, doms, est)})


def refine_draft(kind: Any, row: Any, batch: Any, settings: Settings) -> tuple[Draft, bool]:
    """/refine: the parent's classes and method, plus what the images add; (draft, changed).

    Only what the images can tell without labels is changed: the domain, when the model has
    none, its method uses one and the batch is confidently of one domain. Everything else
    would be a guess that the artifact's own validation does not back (re-weighting the task
    embedding by pseudo-label counts and switching to ``taper`` made 14 of 20 models worse).
    """
    recipe, notes = dict(row.recipe), []
    _, doms = scores(kind, batch) if kind.bundle.domain_head is not None else (None, None)
    found = None if doms is None else pick_domain(doms.mean(0), settings.infer_min_domain_conf)
    est_domain = kind.domains[found] if found is not None else None
    if recipe.get("domain") is None and est_domain is not None:
        if row.method == "taper":
            recipe = kind.recipe(row.recipe["class_indices"], domain=est_domain,
                                 method="taper", class_weights=recipe.get("class_weights"))
            notes.append(f"the images look like {est_domain!r}: the refined model's task "
                         "embedding uses that domain's prompts")
        else:
            notes.append(f"the images look like {est_domain!r}, but method {row.method!r} "
                         "does not depend on the domain")
    changed = recipe != row.recipe
    if not changed:
        notes.append("nothing the images show would improve this model (same classes, method "
                     "and domain); this is the parent model, unchanged")
    mixers = kind.mixers(recipe) if changed else None
    desc = f"refined from {row.id}: domain {recipe.get('domain')!r}"
    return Draft(recipe, row.method, desc, kind.rounded(mixers), hint=mixers,
                 extra={"notes": notes, "domain_estimate": est_domain}), changed


@dataclass
class StreamState:
    """A model's kept observations: per image a weight and its posteriors (float16)."""

    weights: np.ndarray  # (M,) float64, newest last
    probs: np.ndarray  # (M, N) float16
    doms: np.ndarray | None  # (M, D) float16

    @classmethod
    def empty(cls, n: int, d: int | None) -> StreamState:
        return cls(np.zeros(0), np.zeros((0, n), np.float16),
                   None if d is None else np.zeros((0, d), np.float16))

    def add(self, probs: np.ndarray, doms: np.ndarray | None, half_life: float,
            max_images: int) -> None:
        """Age the kept images by ``len(probs)`` arrivals, append the new ones, keep the newest
        ``max_images`` (exponential decay: a camera's scene changes)."""
        self.weights = np.concatenate([self.weights * 0.5 ** (len(probs) / half_life),
                                       np.ones(len(probs))])[-max_images:]
        self.probs = np.concatenate([self.probs, probs.astype(np.float16)])[-max_images:]
        if self.doms is not None and doms is not None:
            self.doms = np.concatenate([self.doms, doms.astype(np.float16)])[-max_images:]

    def encode(self) -> bytes:
        buf = io.BytesIO()
        extra = {} if self.doms is None else {"doms": self.doms}
        np.savez(buf, weights=self.weights, probs=self.probs, **extra)
        return buf.getvalue()

    @classmethod
    def decode(cls, blob: bytes) -> StreamState:
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            return cls(z["weights"], z["probs"], z["doms"] if "doms" in z else None)
