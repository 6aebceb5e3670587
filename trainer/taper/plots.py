"""PNG figures: training curves, mixer heatmap (Fig. 4a), basis similarity (Fig. 4b), §5.2 curve."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def plot_curves(curves: dict, path: Path) -> None:
    """Loss (and train accuracy where logged) per stage vs step."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, points in curves.items():
        if not points:
            continue
        steps = [p["step"] for p in points]
        axes[0].plot(steps, [p["loss"] for p in points], label=name)
        if "acc" in points[0]:
            axes[1].plot(steps, [p["acc"] for p in points], label=name)
    axes[0].set(title="training loss", xlabel="step", yscale="log")
    axes[1].set(title="training accuracy (full-way stages)", xlabel="step")
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_mixers(mixers: dict, class_names: list[str] | None, path: Path) -> None:
    """Heatmap: rows = test tasks, columns = block x basis coefficients."""
    alpha = np.asarray(mixers["alpha"])  # (T, 4, Q)
    if alpha.size == 0:
        return
    t, b, q = alpha.shape
    fig, ax = plt.subplots(figsize=(max(4, b * q * 0.5), max(3, t * 0.18)))
    ax.imshow(alpha.reshape(t, b * q), aspect="auto", cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(b * q), [f"b{i // q}q{i % q}" for i in range(b * q)], fontsize=6,
                  rotation=90)
    labels = []
    for task in mixers["tasks"]:
        names = [class_names[c] if class_names else str(c) for c in task["classes"]]
        dom = "" if task["domain"] is None else f"[d{task['domain']}] "
        labels.append(dom + ",".join(names)[:40])
    ax.set_yticks(range(t), labels, fontsize=5)
    ax.set_title("TAPER mixers per test task (block b, basis q)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_similarity(sim: dict, path: Path) -> None:
    """Per-block cosine similarity of basis deviations from the basis mean."""
    blocks = sorted(sim, key=int)
    fig, axes = plt.subplots(1, len(blocks), figsize=(3.2 * len(blocks), 3))
    for ax, block in zip(np.atleast_1d(axes), blocks, strict=True):
        mat = np.asarray(sim[block])
        im = ax.imshow(mat, vmin=-1, vmax=1, cmap="coolwarm")
        ax.set_title(f"block {block}")
        ax.set_xticks(range(len(mat)))
        ax.set_yticks(range(len(mat)))
    fig.colorbar(im, ax=np.atleast_1d(axes).tolist(), shrink=0.8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_self_improvement(values: list[float], path: Path) -> None:
    """Accuracy vs number of unlabeled test batches seen (§5.2)."""
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(range(len(values)), [100 * v for v in values], marker="o")
    ax.set(xlabel="unlabeled test batches seen", ylabel="accuracy %",
           title="Self-improvement without descriptions")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_all(out_dir: Path, curves: dict, mixers: dict, summary: dict,
             class_names: list[str] | None = None) -> None:
    """Write every figure into ``out_dir``."""
    plot_curves(curves, out_dir / "curves.png")
    plot_mixers(mixers, class_names, out_dir / "mixer_heatmap.png")
    plot_similarity(summary["basis_similarity"], out_dir / "basis_similarity.png")
    plot_self_improvement(summary["self_improvement"], out_dir / "self_improvement.png")
