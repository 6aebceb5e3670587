"""Issue 14 §3: where TAPER trains. Mid-stage resume, torchrun ranks, CUDA + bf16.

Resume: an interruption is simulated right after a snapshot (a ``Checkpoint`` whose ``save``
raises once the snapshot is on disk); the resumed loop must end with the very weights of an
uninterrupted run (CPU, one thread: bit-reproducible). Ranks: two gloo processes fold a stage-3
step exactly as one process does, and ``torchrun -m tailor.cli train taper`` with two CPU
processes writes a loadable artifact. CUDA tests run where a GPU is present.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from model_store.taper import load_taper
from trainer.taper.checkpoint import Checkpoint
from trainer.taper.data import Split, TaskBatcher
from trainer.taper.device import Runtime, make_runtime
from trainer.taper.loops import train_full_way, train_stage3
from trainer.taper.mixing import Bases, TaskBatch, accumulate_task_grads
from trainer.taper.nets import build_net

ROOT = Path(__file__).resolve().parents[2]
CLASSES = 6


class Interrupted(Exception):
    pass


class StopAfter(Checkpoint):
    """Snapshots every step and 'crashes' once the snapshot of ``step`` is written."""

    def __init__(self, path: Path, step: int):
        super().__init__(path, every_s=0.0)
        self.stop = step

    def save(self, tensors, meta):
        super().save(tensors, meta)
        if meta["step"] == self.stop:
            raise Interrupted


def _split(n: int = 96, seed: int = 0) -> Split:
    g = torch.Generator().manual_seed(seed)
    return Split(x=torch.randint(0, 256, (n, 3, 32, 32), generator=g, dtype=torch.uint8),
                 y=torch.arange(n) % CLASSES, d=torch.arange(n) % 2)


def _full_way(checkpoint: Checkpoint | None, init: int = 0) -> dict[str, torch.Tensor]:
    torch.manual_seed(init)
    model = build_net(CLASSES, 4)
    curve: list = []
    train_full_way(model, _split(), epochs=2.5, lr=0.05, batch_size=16, weight_decay=5e-4,
                   seed=3, curve=curve, checkpoint=checkpoint)
    return {**model.state_dict(), "curve": torch.tensor([p["loss"] for p in curve])}


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_an_interrupted_full_way_stage_resumes_mid_stage_to_the_same_weights(tmp_path,
                                                                               one_thread):
    reference = _full_way(None)
    path = tmp_path / "stage1.partial.safetensors"
    with pytest.raises(Interrupted):
        _full_way(StopAfter(path, step=7))  # 15 steps in all; crosses an epoch boundary later
    assert path.exists()
    # Another initialisation: only a restored snapshot can bring it back to the reference.
    assert not torch.equal(_full_way(None, init=1)["conv1.weight"], reference["conv1.weight"])
    resumed = _full_way(Checkpoint(path, every_s=1e9), init=1)
    for key, value in reference.items():
        torch.testing.assert_close(resumed[key], value, rtol=0, atol=0, msg=key)


def _stage3(checkpoint: Checkpoint | None, init: int = 0) -> dict[str, torch.Tensor]:
    from model_store.mixer import MixerPredictor

    torch.manual_seed(init)
    bases = Bases([build_net(CLASSES, 4).state_dict() for _ in range(2)], build_net(CLASSES, 4))
    mixer = MixerPredictor(8, 2, hidden=8, norm="layer")
    table = torch.nn.functional.normalize(  # task descriptions: fixed, whatever ``init``
        torch.randn(CLASSES, 8, generator=torch.Generator().manual_seed(9)), dim=1)
    batcher = TaskBatcher(_split(), lambda label, _d, _rng: [label, (label + 1) % CLASSES],
                          0.5, seed=5)
    train_stage3(bases, batcher, mixer=mixer, embed=lambda c, d: table[c].mean(0), epochs=3,
                 lr=1e-2, mixer_lr=1e-2, tasks_per_step=2, task_batch=8, aux_weight=0.5,
                 weight_decay=5e-4, bn_mode="train", augment=True, checkpoint=checkpoint)
    out = {f"p.{n}": p.detach() for n, p in bases.params.items()}
    out.update({f"m.{k}": v for k, v in mixer.state_dict().items()})
    return out


def test_an_interrupted_stage3_resumes_mid_stage_to_the_same_bases_and_mixer(tmp_path,
                                                                           one_thread):
    reference = _stage3(None)
    path = tmp_path / "taper_bases.partial.safetensors"
    with pytest.raises(Interrupted):
        _stage3(StopAfter(path, step=9))  # 18 steps in all
    resumed = _stage3(Checkpoint(path, every_s=1e9), init=1)  # restored, not re-initialised
    for key, value in reference.items():
        torch.testing.assert_close(resumed[key], value, rtol=0, atol=0, msg=key)


def _fold_worker(rank: int, world: int, init: str, out: str) -> None:
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    torch.set_num_threads(1)
    grad_alpha, loss, grads = _fold(Runtime(rank=rank, world=world))
    if rank == 0:
        torch.save({"alpha": grad_alpha, "loss": torch.tensor(loss), **grads}, out)
    dist.destroy_process_group()


def _fold(rt: Runtime):
    torch.manual_seed(0)
    bases = Bases([build_net(CLASSES, 4).state_dict() for _ in range(3)], build_net(CLASSES, 4))
    bases.template.train()
    alpha = torch.softmax(torch.randn(3, 4, 3), -1)
    tasks = [TaskBatch(torch.randn(5, 3, 32, 32), torch.tensor([1, 2, 1, 4, 2]),
                       torch.tensor([4, 1, 2])) for _ in range(3)]
    grad_alpha, loss = accumulate_task_grads(bases, alpha, tasks, 0.5, rt)
    return grad_alpha, loss, {n: bases.grad(n) for n in bases.params}


def test_two_ranks_fold_a_stage3_step_as_one_process_does(tmp_path, one_thread):
    """Three tasks over two gloo ranks (2 + 1): the all-reduced gradients equal one process's."""
    out = tmp_path / "rank0.pt"
    mp.spawn(_fold_worker, args=(2, f"file://{tmp_path / 'rendezvous'}", str(out)), nprocs=2)
    two = torch.load(out)
    grad_alpha, loss, grads = _fold(Runtime())
    torch.testing.assert_close(two["alpha"], grad_alpha, rtol=1e-5, atol=1e-6)
    assert float(two["loss"]) == pytest.approx(loss, rel=1e-5)
    for name, g in grads.items():
        torch.testing.assert_close(two[name], g, rtol=1e-5, atol=1e-6, msg=name)


def test_torchrun_with_two_cpu_processes_writes_a_loadable_artifact(tmp_path, tiny_data_dir,
                                                                     tiny_pacs):
    """The command the README gives, with gloo on CPU: every stage trains under DDP."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
           "2", "-m", "tailor.cli", "train", "taper", "--config", "tiny", "--device", "cpu",
           "--data-dir", str(tiny_data_dir), "--store-dir", str(tmp_path / "store"),
           "--out", str(tmp_path / "run"),
           # every stage still runs under DDP; half an epoch each and no control keep it short
           "--set", "stage1_epochs=0.5", "--set", "stage2_epochs=0.5",
           "--set", "stage3_epochs=0.5", "--set", "controls=false"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "training on 2 x CPU" in done.stderr
    bundle = load_taper(tmp_path / "store", device="cpu")
    state, _ = bundle.personalize([0, 2, 5], domain=None)
    assert state["fc.weight"].shape[0] == 3
    assert not list((tmp_path / "run").glob("seed0/*.partial.safetensors"))


def test_auto_runtime_is_cpu_fp32_without_cuda_and_bf16_channels_last_with_it():
    rt = make_runtime("auto", "auto")
    if torch.cuda.is_available():
        assert rt.device.type == "cuda" and rt.amp is torch.bfloat16 and rt.channels_last
    else:
        assert rt == Runtime()
    assert make_runtime("cpu", "bf16").amp is torch.bfloat16
    with pytest.raises(SystemExit, match="precision"):
        make_runtime("cpu", "fp16")


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@cuda
def test_cuda_bf16_full_way_training_learns_with_data_on_the_gpu():
    rt = make_runtime("cuda", "auto")
    split = _split(256).to(rt.device)
    torch.manual_seed(0)
    model = build_net(CLASSES, 16)
    curve: list = []
    train_full_way(model, split, epochs=30, lr=0.05, batch_size=64, weight_decay=0, seed=0,
                   augment=False, curve=curve, rt=rt)
    assert next(model.parameters()).device.type == "cuda"
    assert curve[-1]["loss"] < 0.5 * curve[0]["loss"], curve


@cuda
def test_cuda_tiny_run_writes_the_same_kind_of_artifact(tmp_path, tiny_data_dir, tiny_pacs):
    from trainer.taper.train import main

    summary = main(["--config", "tiny", "--device", "cuda", "--data-dir", str(tiny_data_dir),
                    "--store-dir", str(tmp_path / "store"), "--out", str(tmp_path / "run")])
    assert "cuda" in summary["runtime"] and "bf16" in summary["runtime"]
    bundle = load_taper(tmp_path / "store", device="cpu")
    state, _ = bundle.personalize([1, 0], domain="sketch")
    assert all(v.device.type == "cpu" for v in state.values())
    assert np.isfinite(summary["main"]["taper"]["mean"])
