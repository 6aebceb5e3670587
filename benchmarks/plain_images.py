"""How a TAPER artifact reads plain scans of its classes, beside the rendered domains (§6).

    .venv/bin/python benchmarks/plain_images.py --store .tailor/store [--data-dir .tailor/data]
        [--out benchmarks/results/plain_images.json]

Apps photograph real digits and garments: plain grayscale images, white-on-black or dark ink on
paper, which none of Tailor-PACS's four rendered domains look like. On the held-out test split of
Tailor-PACS (the artifact never trained on it) this scores the artifact's generic model on
  - the rendered test images (the figure the reports give),
  - the same source images as plain scans (``trainer.data.render.plain``), white on black,
  - and inverted (ink on paper),
per class group, two ways: argmax over all classes, and over the group's classes only (what a
"classify digits" task gets from classifier selection, the artifact's ``selection`` method).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402
from tqdm import tqdm  # noqa: E402

from model_store.taper import load_taper  # noqa: E402
from trainer.data.catalogue import GROUPS  # noqa: E402
from trainer.data.pacs import build_pacs  # noqa: E402
from trainer.taper.data import TEST, make_split, normalise  # noqa: E402
from trainer.taper.inputs import plain_images  # noqa: E402


@torch.no_grad()
def logits_of(model: torch.nn.Module, images: torch.Tensor, batch: int = 512) -> torch.Tensor:
    """Logits of uint8 NCHW images (the training normalisation)."""
    return torch.cat([model(normalise(images[i:i + batch]))
                      for i in tqdm(range(0, len(images), batch), desc="scoring", leave=False)])


def group_scores(logits: torch.Tensor, y: torch.Tensor, groups: list[str]) -> dict:
    """Per group: all-class and within-group accuracy (%)."""
    out = {}
    group_of = np.asarray(groups)
    for g in dict.fromkeys(groups):
        members = torch.from_numpy(np.flatnonzero(group_of == g))
        rows = torch.from_numpy(np.isin(y.numpy(), members.numpy()))
        if not rows.any():
            continue
        sub, labels = logits[rows], y[rows]
        within = members[sub[:, members].argmax(1)]
        out[g] = {"all_classes": 100 * float((sub.argmax(1) == labels).float().mean()),
                  "within_group": 100 * float((within == labels).float().mean()),
                  "images": int(rows.sum())}
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--store", default=".tailor/store")
    p.add_argument("--data-dir", default=".tailor/data")
    p.add_argument("--size", default="default")
    p.add_argument("--out", default="benchmarks/results/plain_images.json")
    args = p.parse_args(argv)
    bundle = load_taper(args.store, device="cpu")
    model = torchvision.models.resnet18(num_classes=len(bundle.class_names))
    model.load_state_dict(bundle.generic)
    model.eval()
    data = build_pacs(args.data_dir, size=args.size)
    if list(data.class_names) != bundle.class_names:
        raise SystemExit("the artifact was not trained on this Tailor-PACS size")
    test = make_split(data, TEST)
    groups = [c["group"] for c in bundle.classes]
    size = int(test.x.shape[-1])
    views = {"rendered": test.x, "plain": plain_images(data, TEST, size),
             "plain inverted": plain_images(data, TEST, size, invert=True)}
    result = {"store": args.store, "artifact": bundle.version,
              "plain_prob": bundle.manifest.get("training", {}).get("plain_prob", 0.0),
              "scores": {name: group_scores(logits_of(model, x), test.y, groups)
                         for name, x in views.items()}}
    print(f"artifact {bundle.version} (plain_prob {result['plain_prob']}); generic model, test "
          "split, accuracy % all classes / within the group")
    print("| group | " + " | ".join(views) + " |\n|---|" + "---|" * len(views))
    for g in (g for g in GROUPS if g in groups):
        cells = [f"{s[g]['all_classes']:.1f} / {s[g]['within_group']:.1f}"
                 for s in result["scores"].values()]
        print(f"| {g} | " + " | ".join(cells) + " |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
