"""Models from unlabeled images (issue 18): images-only requests, /refine, /observe streams.

An images-only request and /refine are one draft each (``service.kinds.unlabeled``), recorded
like any other model. A stream follows what the app sees: each observed batch is
pseudo-labelled by the all-class model; per-image posteriors are kept in SQL (so a restart or
another worker continues the same stream), with weights that halve every
``observe_half_life`` images and at most ``observe_max_images`` images kept. After every batch
the task is re-estimated from the whole kept stream; when it differs from the model's recipe
(and the stream holds at least ``observe_min_images``), the caller gets the model of the new
task (a new one has ``parent_id`` = the old; one the caller already had keeps its own), and
the stream goes on there.

Concurrent calls on one model (two workers) never lose images: a write succeeds only at the
revision it read, otherwise the call re-reads and re-applies its batch.
"""

from __future__ import annotations

import random
import time
from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from model_store.kinds import TAPER
from service.core.auth import Principal
from service.core.models import Observation, PersonalizedModel, utcnow
from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.kinds import unlabeled
from service.kinds.base import Draft, ModelKind
from service.kinds.unlabeled import StreamState
from service.personalization import Personalizer

ATTEMPTS = 16


class Observer:
    """Models from what the app sees: images-only personalization, /refine, and the streams
    of /observe, through the orchestrator's sessions, caches and kinds."""

    def __init__(self, personalizer: Personalizer) -> None:
        self.p, self.settings = personalizer, personalizer.settings

    def personalize_images(self, req: PersonalizeCreate, raw: list[bytes], names: list[str],
                           principal: Principal) -> dict[str, Any]:
        """An images-only request: the model of the task the images show; its stream starts
        with them."""
        kind = self.images_kind()
        draft = kind.draft_images(req, kind.preprocess(raw, names, self.settings), self.settings)
        row, tier = self.p.create(kind, draft, principal)
        self.seed(row, draft)
        public = {k: v for k, v in draft.extra.items() if not k.startswith("_")}
        return {**self.p.public(row).model_dump(), **public, "cache": tier}

    def images_kind(self) -> ModelKind:
        """The kind that makes models from unlabeled images (TAPER), or 409."""
        kind = self.p.kinds.get(TAPER)
        if kind is None or kind.version is None:
            raise Problem(409, "kind-not-deployed", "no TAPER artifact is deployed, so models "
                          "cannot be made from images alone")  # fmt: skip
        return kind

    def refine(self, row: PersonalizedModel, batch: Any, principal: Principal) -> dict[str, Any]:
        """``row`` improved by what unlabeled images show, or ``row`` itself when nothing
        would improve (``changed: false``); the parent's own predictions as a histogram."""
        kind = self.p.kinds.of(row)
        names = row.recipe["classes"]  # the parent's forward first: 409 for another artifact
        counts = self.p.probabilities(row, batch).argmax(dim=1).bincount(minlength=len(names))
        draft, changed = kind.refine(row, batch, self.settings)
        hist = {n: int(c) for n, c in zip(names, counts.tolist(), strict=True)}
        if changed:
            new, tier = self.p.create(kind, draft, principal, parent_id=row.id)
        else:
            new, tier = row, self.p.ensure(row)[1]
        return {**self.p.public(new).model_dump(), "notes": draft.extra["notes"],
                "pseudo_labels": hist, "changed": changed, "cache": tier}

    def seed(self, row: PersonalizedModel, draft: Draft) -> None:
        """Start ``row``'s stream with the images that made it (images-only requests). A model
        that already has a stream keeps it as it is: repeating a request must not count its
        images twice (send new images with /observe)."""
        probs, doms, est = draft.extra["_scores"]
        state = StreamState.empty(probs.shape[1], None if doms is None else doms.shape[1])
        state.add(probs, doms, self.settings.observe_half_life, self.settings.observe_max_images)
        k = None if est.k_estimated else len(est.classes)
        self._insert(row.id, k, state, len(probs))

    def observe(self, row: PersonalizedModel, batch: Any, principal: Principal) -> dict[str, Any]:
        """Add a batch to ``row``'s stream; answer with the model to use from now on."""
        kind = self._kind(row)
        probs, doms = unlabeled.scores(kind, batch)
        obs, state = self._append(row, probs, doms)
        est = self._estimate(kind, state, obs.k)
        info = unlabeled.inferred(kind, est)
        current, tier, changed = row, None, False
        recipe = self._proposal(kind, row, est, info["domain"])
        if recipe is not None and est.images >= self.settings.observe_min_images:
            draft = Draft(recipe, row.method, f"observed stream of {row.id}: " + ", ".join(
                c["name"] for c in info["classes"]), kind.rounded(kind.mixers(recipe)))
            current, tier = self.p.create(kind, draft, principal, parent_id=row.id)
            if not self._insert(current.id, obs.k, state, obs.images_seen):
                self._append(current, probs, doms)  # it has its own stream: add this batch
            changed = True
        tier = tier or self.p.ensure(current)[1]
        model = {**self.p.public(current).model_dump(), "cache": tier,
                 "notes": unlabeled.method_notes(kind, current.method,
                                                 current.recipe.get("domain"), None)}
        return {"model_id": current.id, "changed": changed, "added": len(probs),
                "estimate": info, "model": model}

    def observations(self, row: PersonalizedModel) -> dict[str, Any]:
        """The stream's current estimate (``estimate`` null before the first image)."""
        kind = self._kind(row)
        with self.p.sessions() as s:
            obs = s.get(Observation, row.id)
        if obs is None:
            return {"model_id": row.id, "images_seen": 0, "images_kept": 0, "estimate": None,
                    "matches_model": True}
        state = StreamState.decode(obs.state)
        est = self._estimate(kind, state, obs.k)
        info = unlabeled.inferred(kind, est)
        return {"model_id": row.id, "images_seen": obs.images_seen,
                "images_kept": int(len(state.weights)), "estimate": info,
                "matches_model": self._proposal(kind, row, est, info["domain"]) is None}

    # ---- helpers --------------------------------------------------------------------------

    def _estimate(self, kind: Any, state: StreamState, k: int | None) -> Any:
        """The task a kept stream points to (its weighted posteriors)."""
        doms = None if state.doms is None else state.doms.astype("float64")
        return unlabeled.estimate(kind, state.probs.astype("float64"), doms, self.settings, k,
                                  weights=state.weights)

    def _kind(self, row: PersonalizedModel) -> Any:
        """The TAPER kind serving ``row`` (409 for other kinds and other artifact versions:
        a stream's posteriors are over the deployed artifact's classes)."""
        kind = self.p.kinds.of(row)
        if kind is not self.p.kinds.get(TAPER):
            raise Problem(409, "observe-unsupported-kind", f"model {row.id} is a {row.kind!r} "
                          "model; streams of images follow TAPER models", kind=row.kind)
        if row.recipe.get("artifact_version") != kind.version:
            raise Problem(409, "artifact-version-mismatch", f"model {row.id} was built from "
                          f"TAPER artifact {row.recipe.get('artifact_version')}, but this "
                          f"deployment serves {kind.version}; personalize again for a model of "
                          "the current artifact")  # fmt: skip
        return kind

    @staticmethod
    def _proposal(kind: Any, row: PersonalizedModel, est: Any,
                  domain: str | None) -> dict[str, Any] | None:
        """The recipe the stream points to, or None when it is ``row``'s own task. The domain
        only moves for methods that use it (under ``selection`` it changes no weight)."""
        same_classes = set(est.classes) == set(row.recipe["class_indices"])
        keep_domain = row.method != "taper" or domain is None or domain == row.recipe.get(
            "domain")  # no confident estimate (mixed, or no domain head) keeps the model's
        if same_classes and keep_domain:
            return None
        classes = row.recipe["class_indices"] if same_classes else est.classes
        return kind.recipe(classes, method=row.method,
                           domain=row.recipe.get("domain") if keep_domain else domain)

    def _append(self, row: PersonalizedModel, probs, doms) -> tuple[Observation, StreamState]:
        """Add a batch to the stored stream (optimistic concurrency); the new row and state."""
        n, d = probs.shape[1], None if doms is None else doms.shape[1]
        for attempt in range(ATTEMPTS):
            if attempt:  # another worker won the race: back off a little, with jitter
                time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))
            with self.p.sessions() as s:
                obs = s.get(Observation, row.id)
                gone = obs is None and s.get(PersonalizedModel, row.id) is None
            if gone:  # deleted meanwhile (maybe on another replica)
                raise Problem(404, "model-not-found", f"no personalized model with id {row.id!r}")
            if obs is None:
                state = StreamState.empty(n, d)
                state.add(probs, doms, self.settings.observe_half_life,
                          self.settings.observe_max_images)
                if self._insert(row.id, len(row.recipe["classes"]), state, len(probs)):
                    return self._read(row.id), state
                continue
            state = StreamState.decode(obs.state)
            state.add(probs, doms, self.settings.observe_half_life,
                      self.settings.observe_max_images)
            with self.p.sessions.begin() as s:
                done = s.execute(update(Observation).where(
                    Observation.model_id == row.id, Observation.revision == obs.revision
                ).values(state=state.encode(), images_seen=obs.images_seen + len(probs),
                         revision=obs.revision + 1,
                         updated_at=utcnow())).rowcount  # fmt: skip
            if done == 1:
                return self._read(row.id), state
        raise Problem(503, "stream-busy", "too many concurrent observations of this model; "
                      "retry", model_id=row.id)  # fmt: skip

    def _read(self, model_id: str) -> Observation:
        with self.p.sessions() as s:
            obs = s.get(Observation, model_id)
        if obs is None:  # deleted between our write and this read
            raise Problem(404, "model-not-found", f"no personalized model with id {model_id!r}")
        return obs

    def _insert(self, model_id: str, k: int | None, state: StreamState, seen: int) -> bool:
        """Store a new stream for ``model_id``; False when it has one (or the model is gone:
        the caller's next read says which)."""
        values = dict(k=k, state=state.encode(), images_seen=seen, updated_at=utcnow())
        try:
            with self.p.sessions.begin() as s:
                if s.get(Observation, model_id) is not None:
                    return False
                s.add(Observation(model_id=model_id, revision=0, **values))
        except IntegrityError:
            return False
        return True
