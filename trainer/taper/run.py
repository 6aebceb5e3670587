"""One seed of the TAPER comparison: train (resumably) every method, then score them all.

Methods share stage 1; the generic baseline continues it for the epochs TAPER spends on stages
2-3, so every method gets the same budget (``TaperConfig.budget``). All methods get the same BN
treatment (``evaluate.calibrate`` on the same training task batches) and the same test tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from trainer.taper import stages
from trainer.taper.config import TaperConfig
from trainer.taper.data import Split, TaskFn
from trainer.taper.describe import Describer
from trainer.taper.evaluate import (
    EvalTask,
    Method,
    constant_router,
)
from trainer.taper.mixing import Bases
from trainer.taper.tasks import make_eval_tasks, neighbour_task_fn, random_task_fn

TEST_SEED, VAL_SEED = 1234, 4321


@dataclass
class Env:
    """Data and text shared by every seed of a run."""

    cfg: TaperConfig
    train: Split
    val: Split
    test: Split
    catalogue: list[dict]
    domains: list[str]
    groups: list[int]
    class_text: dict[str, torch.Tensor]
    task_fn: TaskFn
    out_dir: Path
    fingerprint: str = ""
    catalogue_doc: dict | None = None  # the artifact's catalogue.json (user data); None: built-in

    def eval_tasks(self, k: int, n: int, split: str = "test",
                   cross: bool = False) -> list[EvalTask]:
        """Fixed held-out tasks: neighbour tasks (same group first), or with ``cross`` tasks
        whose other classes are drawn from all groups (their own table, issue 14 §7)."""
        data, seed = (self.test, TEST_SEED) if split == "test" else (self.val, VAL_SEED)
        fn = (random_task_fn(len(self.catalogue), k) if cross
              else neighbour_task_fn(self.catalogue, k))
        per_class = max(4, 60 // max(k, 1))  # ~60 images per task keeps TAPER's eval cheap
        return make_eval_tasks(data, fn, k, n, per_class, self.cfg.domain_task_prob,
                               seed + k + (7919 if cross else 0))


class MixerRouter:
    """Task -> (4, Q) mixers from a trained mixer in eval mode (1-block mixers broadcast)."""

    def __init__(self, mixer, describer: Describer, domain_aware: bool = True):
        self.mixer, self.describer, self.domain_aware = mixer.eval(), describer, domain_aware

    def __call__(self, classes, domain) -> torch.Tensor:
        desc = self.describer(classes, domain if self.domain_aware else None)
        return self.mixer.predict(desc).expand(4, -1)

    def with_describer(self, describer: Describer, domain_aware: bool) -> MixerRouter:
        """Same mixer fed by other descriptions (e.g. free-language definitions)."""
        return MixerRouter(self.mixer, describer, domain_aware)


def mixer_router(mixer_state: dict, describer: Describer, q: int, norm: str,
                 blockwise: bool = True) -> MixerRouter:
    """Rebuild a trained mixer from its state dict and wrap it as a router."""
    from model_store.mixer import MixerPredictor

    hidden = mixer_state["net.0.weight"].shape[0]
    mixer = MixerPredictor(describer.dim, q, num_blocks=4 if blockwise else 1, hidden=hidden,
                           norm=norm)
    mixer.load_state_dict(mixer_state)
    return MixerRouter(mixer, describer)


def _method(ctx: stages.Context, name: str, states: list, router=None, selection=True) -> Method:
    bases = Bases(states, ctx.net())
    return Method(name, bases, router or constant_router(len(states)), selection)


def _routed(ctx: stages.Context, specs: list) -> Method:
    """Stage-2 specialists routed one-hot by the task's shard (uniform if it spans shards)."""
    q = len(specs)

    def route(classes, domain):
        shard = stages.shard_of(ctx, list(classes), domain)
        if shard is None:
            return torch.full((4, q), 1.0 / q)
        return torch.nn.functional.one_hot(torch.tensor(shard), q).float().expand(4, q)

    route.cacheable = True
    return _method(ctx, "routed", specs, route)


def train_all(ctx: stages.Context, env: Env, describer: Describer,
              ablations: bool) -> dict[str, Method]:
    """Train (or resume) every method of this seed and return them, BN not yet calibrated."""
    s1 = stages.stage1(ctx)
    base = stages.baseline(ctx, s1)
    specs = stages.stage2(ctx, s1)
    taper_states, mixer_state = stages.stage3(ctx, specs, describer, "taper")
    one = stages.one_basis_control(ctx, s1) if ctx.cfg.controls else None
    ctx.save_curves()
    q = len(specs)
    router = mixer_router(mixer_state, describer, q, ctx.cfg.mixer_norm)
    methods = {
        "standard": _method(ctx, "standard", [base], selection=False),
        "selection": _method(ctx, "selection", [base]),
        "stage1": _method(ctx, "stage1", [s1], selection=False),
        "taper": _method(ctx, "taper", taper_states, router),
        "taper_no_selection": _method(ctx, "taper_no_selection", taper_states, router, False),
        "routed": _routed(ctx, specs),
        "uniform": _method(ctx, "uniform", [stages.average_states(specs)]),
    }
    if one is not None:
        methods["one_basis"] = _method(ctx, "one_basis", [one])
    if ablations:
        methods.update(train_ablations(ctx, env, describer, s1, specs))
    ctx.save_curves()
    return methods


def train_ablations(ctx: stages.Context, env: Env, describer: Describer, s1,
                    specs) -> dict[str, Method]:
    """Table 6 rows that need their own training (naive, no description, BoW, one mixer)."""
    cfg, q = ctx.cfg, len(specs)
    torch.manual_seed(ctx.seed + 77)
    rand = [ctx.net().state_dict() for _ in range(q)]
    naive, naive_mix = stages.stage3(ctx, rand, describer, "naive",
                                     epochs=cfg.naive_epochs or cfg.budget,
                                     lr=cfg.stage1_lr)
    nodesc = stages.stage3(ctx, [stages.average_states(specs)], None, "no_description")[0]
    bow_desc = Describer(env.class_text, "bow")
    bow, bow_mix = stages.stage3(ctx, specs, bow_desc, "bow")
    flat, flat_mix = stages.stage3(ctx, specs, describer, "not_blockwise", blockwise=False)
    return {
        "naive": _method(ctx, "naive", naive,
                         mixer_router(naive_mix, describer, q, cfg.mixer_norm)),
        "no_description": _method(ctx, "no_description", nodesc),
        "bow": _method(ctx, "bow", bow, mixer_router(bow_mix, bow_desc, q, cfg.mixer_norm)),
        "not_blockwise": _method(ctx, "not_blockwise", flat,
                                 mixer_router(flat_mix, describer, q, cfg.mixer_norm,
                                                  blockwise=False)),
    }

