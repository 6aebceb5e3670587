"""ResNet-18 builders for training: the stock model, and a narrow variant for quick experiments.

The product ships the stock torchvision ResNet-18 (``width=64``, via ``model_store``). A narrower
ResNet-18 keeps every state-dict key name (so block partition, synthesis and artifacts all work
unchanged) but has ``width/64`` of the channels: it is *only* for clearly labelled, quick
capacity-bound experiments (DESIGN.md §5b) and for seconds-long tests; its state dicts do not load
into a stock torchvision model.
"""

from __future__ import annotations

from torch import nn
from torchvision.models.resnet import BasicBlock, ResNet

from model_store.resnet import build_resnet18

STOCK_WIDTH = 64


def build_net(num_classes: int, width: int = STOCK_WIDTH) -> nn.Module:
    """A randomly initialised ResNet-18 with ``num_classes`` outputs and base width ``width``.

    Raises:
        ValueError: If ``width`` is not a positive int.
    """
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"width must be a positive int, got {width!r}")
    if width == STOCK_WIDTH:
        return build_resnet18(num_classes)
    net = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=1)  # cheap shell; every layer is replaced
    net.inplanes = width
    net.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
    net.bn1 = nn.BatchNorm2d(width)
    net.layer1 = net._make_layer(BasicBlock, width, 2)
    net.layer2 = net._make_layer(BasicBlock, 2 * width, 2, stride=2)
    net.layer3 = net._make_layer(BasicBlock, 4 * width, 2, stride=2)
    net.layer4 = net._make_layer(BasicBlock, 8 * width, 2, stride=2)
    net.fc = nn.Linear(8 * width, num_classes)
    for module in net.modules():  # same init as torchvision's constructor
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.constant_(module.weight, 1)
            nn.init.constant_(module.bias, 0)
    return net
