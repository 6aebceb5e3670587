"""Training throughput of Tailor's TAPER loops against bare PyTorch (issue 14 §8).

    .venv/bin/python benchmarks/train_throughput.py [--steps 20] [--repeats 3] [--device cpu]
        [--precision auto]

On CUDA both loops run the same way (bf16 autocast and channels_last unless --precision fp32);
the data lives on the device in both.

Two ratios, each measured in one run with the yardstick on the same device, interleaved
(Tailor, bare, Tailor, bare, …) so a busy machine slows both alike; medians over repeats:
  - full-way training (stage 1, stage 2, baselines): images/s of ``train_full_way`` ÷ images/s
    of a bare loop (same stock ResNet-18, batch, SGD-Nesterov, augmentation off in both);
    goal ≥ 0.9;
  - stage 3: time per step of ``train_stage3`` (T tasks of b images, Q bases mixed by a mixer)
    ÷ T × one forward + backward of a plain ResNet-18 on b images; goal ≤ 1.5.
Synthetic uint8 images (the loops' cost does not depend on pixel values). Writes
``benchmarks/results/train_throughput.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from tqdm import tqdm  # noqa: E402

from model_store.mixer import MixerPredictor  # noqa: E402
from trainer.data.catalogue import catalogue_for  # noqa: E402
from trainer.taper.data import Split, TaskBatcher, normalise  # noqa: E402
from trainer.taper.device import PRECISIONS, Runtime, describe, make_runtime  # noqa: E402
from trainer.taper.loops import train_full_way, train_stage3  # noqa: E402
from trainer.taper.mixing import Bases  # noqa: E402
from trainer.taper.nets import build_net  # noqa: E402
from trainer.taper.tasks import neighbour_task_fn  # noqa: E402

N_CLASSES = 30


def synthetic_split(n: int, size: int, seed: int = 0) -> Split:
    g = torch.Generator().manual_seed(seed)
    return Split(x=torch.randint(0, 256, (n, 3, size, size), generator=g, dtype=torch.uint8),
                 y=torch.randint(0, N_CLASSES, (n,), generator=g),
                 d=torch.randint(0, 4, (n,), generator=g))


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _bare_step_inputs(split: Split, rng: np.random.Generator, batch: int, rt: Runtime):
    idx = torch.from_numpy(rng.integers(0, len(split), batch))
    return rt.images(normalise(split.x[idx.to(split.device)])), split.y[idx].to(rt.device)


def full_way_pair(split: Split, steps: int, batch: int, rt: Runtime):
    """(Tailor seconds, bare seconds) for ``steps`` full-way steps each."""
    device = rt.device

    def tailor() -> float:
        model = build_net(N_CLASSES)
        t0 = time.perf_counter()
        train_full_way(model, split, epochs=steps * batch / len(split), lr=0.05,
                       batch_size=batch, weight_decay=5e-4, seed=0, augment=False, rt=rt)
        sync(device)
        return time.perf_counter() - t0

    def bare() -> float:
        model = rt.module(build_net(N_CLASSES)).train()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4,
                              nesterov=True)
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        for _ in range(steps):
            x, y = _bare_step_inputs(split, rng, batch, rt)
            with rt.autocast():
                logits = model(x)
            loss = F.cross_entropy(logits.float(), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sync(device)
        return time.perf_counter() - t0

    return tailor(), bare()


def stage3_pair(split: Split, steps: int, tasks: int, task_batch: int, q: int, rt: Runtime):
    """(Tailor seconds per stage-3 step, bare seconds per T x (forward + backward))."""
    names = list(catalogue_for([f"c{i}" for i in range(N_CLASSES)]))
    table = torch.nn.functional.normalize(torch.randn(N_CLASSES, 384), dim=1)

    device = rt.device

    def tailor() -> float:
        bases = Bases([build_net(N_CLASSES).state_dict() for _ in range(q)],
                      rt.module(build_net(N_CLASSES)))
        mixer = MixerPredictor(384, q, hidden=64)
        batcher = TaskBatcher(split, neighbour_task_fn(names, 5), 0.5, seed=0)
        t0 = time.perf_counter()
        train_stage3(bases, batcher, mixer=mixer, embed=lambda c, d: table[c].mean(0),
                     epochs=steps * tasks * task_batch / len(split), lr=1e-3, mixer_lr=1e-3,
                     tasks_per_step=tasks, task_batch=task_batch, aux_weight=0.5,
                     weight_decay=5e-4, bn_mode="train", augment=False, rt=rt)
        sync(device)
        return (time.perf_counter() - t0) / steps

    def bare() -> float:
        model = rt.module(build_net(N_CLASSES)).train()
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        for _ in range(steps * tasks):
            x, y = _bare_step_inputs(split, rng, task_batch, rt)
            with rt.autocast():
                logits = model(x)
            F.cross_entropy(logits.float(), y).backward()
        sync(device)
        return (time.perf_counter() - t0) / steps

    return tailor(), bare()


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--task-batch", type=int, default=64)
    p.add_argument("--bases", type=int, default=3)
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--device", default="cpu")
    p.add_argument("--precision", default="auto", choices=PRECISIONS)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--out", default="benchmarks/results/train_throughput.json")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    rt = make_runtime(args.device, args.precision)
    device = rt.device
    split = synthetic_split(4096, args.size).to(device)
    full, s3 = [], []
    if device.type == "cuda":  # untimed: cuDNN autotuning, allocator growth, lazy init
        full_way_pair(split, 5, args.batch, rt)
        stage3_pair(split, 2, args.tasks, args.task_batch, args.bases, rt)
    for _ in tqdm(range(args.repeats), desc="interleaved repeats"):
        t, b = full_way_pair(split, args.steps, args.batch, rt)
        full.append({"tailor_s": t, "bare_s": b, "ratio": b / t})
        t, b = stage3_pair(split, args.steps, args.tasks, args.task_batch, args.bases, rt)
        s3.append({"tailor_step_s": t, "bare_s": b, "ratio": t / b})
    result = {"command": "python benchmarks/train_throughput.py " + " ".join(argv or
                                                                              sys.argv[1:]),
              "device": str(device), "runtime": describe(rt),
              "threads": torch.get_num_threads(), "args": vars(args),
              "full_way": full, "stage3": s3,
              "full_way_ratio": statistics.median(r["ratio"] for r in full),
              "stage3_ratio": statistics.median(r["ratio"] for r in s3)}
    imgs = args.steps * args.batch
    print(f"| figure ({describe(rt)}, {result['threads']} threads, medians of "
          f"{args.repeats}) | value | goal |\n|---|---|---|")
    print(f"| full-way: Tailor {imgs / statistics.median(r['tailor_s'] for r in full):.0f} img/s"
          f" ÷ bare {imgs / statistics.median(r['bare_s'] for r in full):.0f} img/s | "
          f"{result['full_way_ratio']:.2f} | ≥ 0.9 |")
    print(f"| stage-3 step ÷ {args.tasks} × (forward + backward of {args.task_batch}) | "
          f"{result['stage3_ratio']:.2f} | ≤ 1.5 |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
