"""Runtime device selection shared by trainer and service.

One function so that every component agrees on where tensors live: CUDA when present (the
production path), else CPU (CI and these development machines), overridable by ``TAILOR_DEVICE``.
"""

from __future__ import annotations

import os

import torch

ENV_VAR = "TAILOR_DEVICE"


def pick_device(prefer: str | None = None) -> torch.device:
    """Choose the torch device to run on.

    Precedence: an explicit ``prefer`` argument, then the ``TAILOR_DEVICE`` environment variable,
    then CUDA when available, else CPU. Asking for CUDA on a machine without it is an error rather
    than a silent CPU fallback, so a misconfigured GPU deployment fails loudly at start-up.

    Args:
        prefer: A device string such as ``"cpu"``, ``"cuda"`` or ``"cuda:1"``; ``None`` or
            ``"auto"`` means "decide automatically".

    Returns:
        The selected ``torch.device``.

    Raises:
        ValueError: If the requested device string is malformed, names an unsupported device
            type, or requests CUDA when it is unavailable.
    """
    choice = prefer if prefer is not None else os.environ.get(ENV_VAR)
    if choice is None or choice.strip().lower() in ("", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    text = choice.strip().lower()
    source = "argument" if prefer is not None else f"${ENV_VAR}"
    try:
        device = torch.device(text)
    except (RuntimeError, ValueError) as exc:
        raise ValueError(f"invalid device {choice!r} from {source}: {exc}") from None
    if device.type not in ("cpu", "cuda"):
        raise ValueError(
            f"unsupported device {choice!r} from {source}: "
            "expected 'auto', 'cpu', 'cuda' or 'cuda:N'"
        )
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {choice!r} from {source} requested but CUDA is unavailable")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ValueError(
                f"device {choice!r} from {source}: only {torch.cuda.device_count()} CUDA device(s)"
            )
    return device
