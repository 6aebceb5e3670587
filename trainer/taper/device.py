"""Where and how TAPER trains: device, precision, memory format and the process group.

One ``Runtime`` is made per process and travels in ``stages.Context``. Defaults reproduce the
CPU trainer exactly (fp32, contiguous, one process), so CPU results do not change. On CUDA the
defaults are bf16 autocast (the weights and the optimiser stay fp32: bf16 has fp32's range, so no
loss scaling is needed) and channels_last activations (cuDNN's fast NHWC convolutions).

Distributed: under ``torchrun`` (``WORLD_SIZE`` > 1) each process joins a process group (NCCL on
CUDA, gloo on CPU) and trains a slice of every step: full-way stages shard each batch across
ranks under DistributedDataParallel, stage 3 shards the step's tasks (``tasks_of``) and sums the
folded gradients with ``all_reduce``. Every rank draws the same random batches, so one process
computes exactly what it computed before this existed. Rank 0 writes checkpoints, scores and
saves the artifact; the others wait at ``barrier``.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
import torch.distributed as dist

from model_store.device import pick_device

PRECISIONS = ("auto", "fp32", "bf16")


@dataclass(frozen=True)
class Runtime:
    """Device, autocast dtype (None = fp32), memory format and this process's rank."""

    device: torch.device = torch.device("cpu")
    amp: torch.dtype | None = None
    channels_last: bool = False
    rank: int = 0
    world: int = 1

    @property
    def is_main(self) -> bool:
        """Rank 0: the process that writes files and scores."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """More than one process trains together."""
        return self.world > 1

    def autocast(self) -> contextlib.AbstractContextManager:
        """bf16 autocast when configured, else a no-op."""
        if self.amp is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.amp)

    def images(self, x: torch.Tensor) -> torch.Tensor:
        """A batch on this device, in the memory format the model runs in."""
        x = x.to(self.device, non_blocking=True)
        return x.contiguous(memory_format=torch.channels_last) if self.channels_last else x

    def module(self, model: torch.nn.Module) -> torch.nn.Module:
        """``model`` moved to this device and memory format (in place)."""
        model.to(self.device)
        return model.to(memory_format=torch.channels_last) if self.channels_last else model

    def tasks_of(self, num_tasks: int) -> range:
        """The stage-3 task slots this rank computes (all of them on one process)."""
        return range(self.rank, num_tasks, self.world)

    def shard(self, idx: torch.Tensor) -> torch.Tensor:
        """This rank's slice of a global batch of indices."""
        return idx[self.rank :: self.world] if self.distributed else idx

    def all_reduce_(self, tensors: Sequence[torch.Tensor]) -> None:
        """Sum ``tensors`` in place over ranks (nothing on one process)."""
        if self.distributed:
            for t in tensors:
                dist.all_reduce(t)

    def barrier(self) -> None:
        """Wait for every rank (nothing on one process)."""
        if self.distributed:
            dist.barrier()


def _device(name: str) -> torch.device:
    """``model_store.device.pick_device`` (auto: CUDA when present), its errors as CLI exits."""
    try:
        return pick_device(name)
    except ValueError as err:
        raise SystemExit(f"--device: {err}") from None


def make_runtime(device: str = "auto", precision: str = "auto",
                 channels_last: bool | None = None) -> Runtime:
    """The runtime of this process; joins the torchrun process group when there is one.

    ``precision`` auto means bf16 on CUDA, fp32 elsewhere (bf16 convolutions on CPU are slower
    than fp32 ones); ``channels_last`` None means on for CUDA only.
    """
    if precision not in PRECISIONS:
        raise SystemExit(f"--precision must be one of {PRECISIONS}, got {precision!r}")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    dev = _device(device)
    if world > 1 and dev.type == "cuda":
        dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(dev)
    if world > 1 and not dist.is_initialized():
        # Scoring runs on rank 0 alone while the others wait: allow it hours, not minutes.
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo",
                                timeout=datetime.timedelta(hours=6))
    cuda = dev.type == "cuda"
    amp = torch.bfloat16 if precision == "bf16" or (precision == "auto" and cuda) else None
    return Runtime(device=dev, amp=amp, channels_last=cuda if channels_last is None
                   else channels_last, rank=dist.get_rank() if world > 1 else 0, world=world)


def describe(rt: Runtime) -> str:
    """One line for logs and the report: where this run trained."""
    name = torch.cuda.get_device_name(rt.device) if rt.device.type == "cuda" else "CPU"
    precision = "bf16 autocast" if rt.amp is not None else "fp32"
    layout = ", channels_last" if rt.channels_last else ""
    return f"{rt.world} x {name} ({rt.device.type}), {precision}{layout}"


@contextlib.contextmanager
def main_first(rt: Runtime) -> Iterator[bool]:
    """Rank 0 does the body first (e.g. writes a file); the others then do theirs."""
    if not rt.is_main:
        rt.barrier()
    yield rt.is_main
    if rt.is_main:
        rt.barrier()


def shutdown(rt: Runtime) -> None:
    """Leave the process group (torchrun waits for every rank to exit cleanly)."""
    if rt.distributed and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
