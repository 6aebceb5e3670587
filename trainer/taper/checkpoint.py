"""Mid-stage snapshots: an interrupted stage resumes at the step it reached, not from scratch.

A finished stage is one safetensors file (``stages._cached``). While a stage trains, its loop
writes ``<stage>.partial.safetensors`` every ``every_s`` seconds: the weights, the optimiser's
state tensors, and (in the file's metadata, as JSON) the step, the random generators' states, the
data order position and the curve so far. Restoring all of it makes a resumed run draw the same
batches and reach the same weights as an uninterrupted one (tested on CPU). The snapshot is
deleted when the stage's final file is written. Weights stay in safetensors, never pickles.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from trainer.taper.device import Runtime

Tensors = dict[str, torch.Tensor]
POLL_STEPS = 20  # under torchrun, ranks agree on "snapshot now?" once per this many steps


def optimizer_tensors(opt: torch.optim.Optimizer, prefix: str) -> tuple[Tensors, dict]:
    """An optimiser's per-parameter state as flat tensors + its param-group settings."""
    state = opt.state_dict()
    tensors = {f"{prefix}.{i}.{name}": value.detach().cpu().contiguous()
               for i, per_param in state["state"].items()
               for name, value in per_param.items() if torch.is_tensor(value)}
    groups = [{k: v for k, v in g.items() if k != "params"} for g in state["param_groups"]]
    return tensors, {"groups": groups}


def restore_optimizer(opt: torch.optim.Optimizer, prefix: str, tensors: Tensors,
                      meta: dict) -> None:
    """Inverse of ``optimizer_tensors`` (the optimiser must hold the same parameters)."""
    current = opt.state_dict()
    per_param: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith(prefix + "."):
            index, name = key[len(prefix) + 1 :].split(".", 1)
            per_param.setdefault(int(index), {})[name] = value
    groups = [{**saved, "params": g["params"]}
              for saved, g in zip(meta["groups"], current["param_groups"], strict=True)]
    opt.load_state_dict({"state": per_param, "param_groups": groups})


def generator_state(gen: torch.Generator) -> torch.Tensor:
    """A CPU torch generator's state as a tensor (stored next to the weights)."""
    return gen.get_state().clone()


class Checkpoint:
    """The snapshot file of one stage; ``path`` None disables snapshots."""

    def __init__(self, path: Path | None, every_s: float = 300.0, rt: Runtime | None = None):
        self.path, self.every_s, self.rt = path, every_s, rt or Runtime()
        self._last = time.monotonic()
        self._calls = 0

    def restore(self) -> tuple[Tensors, dict] | None:
        """(tensors, metadata) of the last snapshot, or None when there is none."""
        if self.path is None or not self.path.exists():
            return None
        from safetensors import safe_open

        with safe_open(str(self.path), framework="pt") as f:
            meta = json.loads(f.metadata()["state"])
        return load_file(str(self.path)), meta

    def due(self) -> bool:
        """True every ``every_s`` seconds. Under torchrun rank 0 decides and broadcasts, only
        every ``POLL_STEPS`` calls: a broadcast is a device sync, not something for every step."""
        if self.path is None:
            return False
        if not self.rt.distributed:
            return time.monotonic() - self._last >= self.every_s
        self._calls += 1
        if self._calls % POLL_STEPS:
            return False
        flag = torch.tensor(float(time.monotonic() - self._last >= self.every_s),
                            device=self.rt.device)
        torch.distributed.broadcast(flag, 0)
        return bool(flag)

    def save(self, tensors: Tensors, meta: dict) -> None:
        """Write the snapshot atomically (rank 0 only)."""
        self._last = time.monotonic()
        if self.path is None or not self.rt.is_main:
            return
        tmp = self.path.with_suffix(".tmp")
        save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, str(tmp),
                  metadata={"state": json.dumps(meta)})
        os.replace(tmp, self.path)

    def clear(self) -> None:
        """Remove the snapshot once the stage's final checkpoint exists."""
        if self.path is not None and self.rt.is_main and self.path.exists():
            self.path.unlink()
