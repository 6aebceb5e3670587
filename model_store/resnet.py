"""ResNet-18 as Tailor ships it, plus the block partition TAPER mixes over.

The model *is* ``torchvision.models.resnet18`` (random init, no downloaded weights) so every state
dict Tailor produces loads with ``strict=True`` into a stock torchvision model on the user's side:
users need no Tailor code to run a downloaded model.
"""

from __future__ import annotations

from torch import nn
from torchvision.models import resnet18

NUM_BLOCKS = 4
ARCH = "resnet18"

# Prefix -> block. DESIGN.md §5: 4 blocks = layer1..layer4, with the stem joining block 0 and the
# classifier joining block 3.
_BLOCK_PREFIXES: tuple[tuple[str, int], ...] = (
    ("conv1.", 0),
    ("bn1.", 0),
    ("layer1.", 0),
    ("layer2.", 1),
    ("layer3.", 2),
    ("layer4.", 3),
    ("fc.", 3),
)
CLASSIFIER_KEYS = ("fc.weight", "fc.bias")


def build_resnet18(num_classes: int) -> nn.Module:
    """Return a randomly initialised stock torchvision ResNet-18 with ``num_classes`` outputs.

    Raises:
        ValueError: If ``num_classes`` is not a positive integer.
    """
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"num_classes must be a positive int, got {num_classes!r}")
    return resnet18(weights=None, num_classes=num_classes)


def block_of(param_name: str) -> int:
    """Index (0..3) of the TAPER block a ResNet-18 state-dict key belongs to.

    Raises:
        KeyError: If the key is not a ResNet-18 parameter or buffer name; failing loudly keeps a
            renamed or foreign key from being silently mixed with the wrong coefficients.
    """
    for prefix, block in _BLOCK_PREFIXES:
        if param_name.startswith(prefix):
            return block
    raise KeyError(f"{param_name!r} is not a ResNet-18 state-dict key")


def pooled_features(model: nn.Module, x):
    """The 512-d pooled features a torchvision ResNet feeds its ``fc`` (``(n, 512)``).

    WHY here: torchvision has no features API for ResNet (``_forward_impl`` is private), and the
    images-only personalization needs logits *and* features from one forward (the domain head
    reads the features); this is ``_forward_impl`` up to ``fc``.
    """
    x = model.maxpool(model.relu(model.bn1(model.conv1(x))))
    x = model.layer4(model.layer3(model.layer2(model.layer1(x))))
    return model.avgpool(x).flatten(1)
