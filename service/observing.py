"""Streams of unlabeled images (``/observe``): a model that follows what the app sees.

Each observed batch is pseudo-labelled by the all-class model (``service.kinds.unlabeled``);
per-image posteriors are kept in SQL (so a restart or another worker continues the same
stream), with weights that halve every ``observe_half_life`` images and at most
``observe_max_images`` images kept. After every batch the task is re-estimated from the whole
kept stream; when it differs from the model's recipe (and the stream holds at least
``observe_min_images``), the caller gets a new model whose ``parent_id`` is the old one, and
the stream moves on with the new model.

Concurrent calls on one model (two workers) never lose images: a write succeeds only at the
revision it read, otherwise the call re-reads and re-applies its batch.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from service.core.auth import Principal
from service.core.models import Observation, PersonalizedModel, utcnow
from service.core.problems import Problem
from service.kinds import unlabeled
from service.kinds.base import Draft
from service.kinds.unlabeled import StreamState
from service.personalization import Personalizer

ATTEMPTS = 16


class Observer:
    """Reads and advances models' streams through the orchestrator's sessions and kinds."""

    def __init__(self, personalizer: Personalizer) -> None:
        self.p, self.settings = personalizer, personalizer.settings

    def seed(self, row: PersonalizedModel, draft: Draft) -> None:
        """Start ``row``'s stream with the images that made it (images-only requests); an
        existing stream is left as it is (the same request again adds nothing)."""
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
        est = unlabeled.estimate(kind, state.probs.astype("float64"),
                                 None if state.doms is None else state.doms.astype("float64"),
                                 self.settings, obs.k, weights=state.weights)
        info = unlabeled.inferred(kind, est)
        current, tier, changed = row, None, False
        recipe = self._proposal(kind, row, est, info["domain"])
        if recipe is not None and est.images >= self.settings.observe_min_images:
            draft = Draft(recipe, row.method, f"observed stream of {row.id}: " + ", ".join(
                c["name"] for c in info["classes"]), kind.rounded(kind.mixers(recipe)))
            current, tier = self.p.create(kind, draft, principal, parent_id=row.id)
            self._insert(current.id, obs.k, state, obs.images_seen, replace=True)
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
        est = unlabeled.estimate(kind, state.probs.astype("float64"),
                                 None if state.doms is None else state.doms.astype("float64"),
                                 self.settings, obs.k, weights=state.weights)
        info = unlabeled.inferred(kind, est)
        return {"model_id": row.id, "images_seen": obs.images_seen,
                "images_kept": int(len(state.weights)), "estimate": info,
                "matches_model": self._proposal(kind, row, est, info["domain"]) is None}

    # ---- helpers --------------------------------------------------------------------------

    def _kind(self, row: PersonalizedModel) -> Any:
        kind = self.p.kinds.of(row)
        if kind is not self.p.kinds.get("taper"):
            raise Problem(409, "observe-unsupported-kind", f"model {row.id} is a {row.kind!r} "
                          "model; streams of images follow TAPER models", kind=row.kind)
        return kind

    @staticmethod
    def _proposal(kind: Any, row: PersonalizedModel, est: Any,
                  domain: str | None) -> dict[str, Any] | None:
        """The recipe the stream points to, or None when it is ``row``'s own task. The domain
        only moves for methods that use it (under ``selection`` it changes no weight)."""
        same_classes = set(est.classes) == set(row.recipe["class_indices"])
        keep_domain = row.method != "taper" or domain == row.recipe.get("domain")
        if same_classes and keep_domain:
            return None
        classes = row.recipe["class_indices"] if same_classes else est.classes
        return kind.recipe(classes, method=row.method,
                           domain=row.recipe.get("domain") if keep_domain else domain)

    def _append(self, row: PersonalizedModel, probs, doms) -> tuple[Observation, StreamState]:
        """Add a batch to the stored stream (optimistic concurrency); the new row and state."""
        n, d = probs.shape[1], None if doms is None else doms.shape[1]
        for _ in range(ATTEMPTS):
            with self.p.sessions() as s:
                obs = s.get(Observation, row.id)
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
                         weight=float(state.weights.sum()), revision=obs.revision + 1,
                         updated_at=utcnow())).rowcount  # fmt: skip
            if done == 1:
                return self._read(row.id), state
        raise Problem(503, "stream-busy", "too many concurrent observations of this model; "
                      "retry", model_id=row.id)  # fmt: skip

    def _read(self, model_id: str) -> Observation:
        with self.p.sessions() as s:
            return s.get(Observation, model_id)

    def _insert(self, model_id: str, k: int | None, state: StreamState, seen: int,
                replace: bool = False) -> bool:
        """Store a stream for ``model_id``; False when one exists (and ``replace`` is off)."""
        values = dict(k=k, state=state.encode(), images_seen=seen,
                      weight=float(state.weights.sum()), updated_at=utcnow())
        try:
            with self.p.sessions.begin() as s:
                obs = s.get(Observation, model_id)
                if obs is None:
                    s.add(Observation(model_id=model_id, revision=0, **values))
                elif replace:
                    for name, value in values.items():
                        setattr(obs, name, value)
                    obs.revision += 1
                else:
                    return False
        except IntegrityError:
            return False
        return True
