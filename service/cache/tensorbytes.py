"""Safetensors bytes of a state dict, written without holding the GIL.

WHY: ``safetensors.torch.save`` copies every tensor and then the whole buffer with the GIL held:
one 45 MB model stalled every other Python thread of the worker for ~25 ms at a stretch
(``benchmarks/gil_stalls.py``). The write-behind serialises each new model right after a cold
``/personalize`` has synthesized it, so that request (and any other in flight) waited for the
GIL before it could answer.

Same bytes, different copier: the header is safetensors' own, made by ``safetensors.torch.save``
once per layout (names, dtypes, shapes, in order: one per task size), and torch copies the
tensors to the offsets that header gives in ONE ``_foreach_copy_`` call (the GIL is released
once; a Python loop of ~100 small ``copy_`` calls stalled other threads just as long). The
result is a ``memoryview`` over one uint8 buffer (no final ``bytes`` copy); hashlib, redis-py and
Starlette take it as is. Tests check byte equality with ``safetensors.torch.save``.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

StateDict = dict[str, torch.Tensor]
# torch dtype -> (numpy dtype, safetensors code): what ResNet-18 state dicts hold; bf16 has no
# numpy dtype (serialising it is refused; reading it falls back to safetensors).
_DTYPES = {
    torch.float32: (np.float32, "F32"), torch.float16: (np.float16, "F16"),
    torch.float64: (np.float64, "F64"), torch.int64: (np.int64, "I64"),
    torch.int32: (np.int32, "I32"), torch.int16: (np.int16, "I16"), torch.int8: (np.int8, "I8"),
    torch.uint8: (np.uint8, "U8"), torch.bool: (np.bool_, "BOOL"),
}  # fmt: skip
_BY_CODE = {code: np_dtype for np_dtype, code in _DTYPES.values()}
Layout = tuple[tuple[str, torch.dtype, tuple[int, ...]], ...]
Header = tuple[bytes, dict[str, tuple[int, int]], int]  # bytes, name -> data span, data size
_MAX_LAYOUTS = 64  # one per (task size, dtype) in practice; bounded anyway
_headers: OrderedDict[Layout, Header] = OrderedDict()
_lock = threading.Lock()


def allocate(
    layout: Sequence[tuple[str, torch.dtype, tuple[int, ...]]],
    metadata: Mapping[str, str] | None = None,
) -> tuple[memoryview, StateDict]:
    """An uninitialised safetensors file for ``layout`` (with ``metadata`` in its header) and a
    tensor view of every entry.

    Whatever is written into the views is the file's data; the buffer lives while the
    memoryview or any view does. The views are made with numpy (no torch call per tensor:
    each torch call releases and re-takes the GIL, and ~300 of them made this thread wait
    ~5 ms per call behind a busy thread: 0.66 s per model).
    """
    layout = tuple((name, dt, tuple(shape)) for name, dt, shape in layout)
    unsupported = sorted({str(dt) for _, dt, _ in layout if dt not in _DTYPES})
    if unsupported:
        raise ValueError(f"cannot serialise dtypes {unsupported}; supported: {list(_DTYPES)}")
    header, spans, data_size = _header(layout)
    header = with_metadata(header, metadata)
    raw = np.empty(len(header) + data_size, dtype=np.uint8)
    raw[: len(header)] = np.frombuffer(header, dtype=np.uint8)
    data = raw[len(header) :]
    views = {}
    for name, dt, shape in layout:
        start, end = spans[name]
        views[name] = torch.from_numpy(data[start:end].view(_DTYPES[dt][0]).reshape(shape))
    return memoryview(raw), views


def serialize(
    state: Mapping[str, torch.Tensor],
    dtype: str = "fp32",
    metadata: Mapping[str, str] | None = None,
) -> memoryview:
    """Deterministic safetensors bytes of ``state`` (fp16 casts floating tensors only).

    Byte-identical to ``safetensors.torch.save`` of the same (cast, contiguous CPU) tensors
    without metadata; with ``metadata`` the header holds it with sorted keys (see
    :func:`with_metadata`).
    """
    tensors = {
        name: t if t.device.type == "cpu" and not t.requires_grad else t.detach().cpu()
        for name, t in state.items()
    }  # fmt: skip
    layout = tuple((name, _target(t, dtype), tuple(t.shape)) for name, t in tensors.items())
    payload, views = allocate(layout, metadata)
    names = [name for name, _, shape in layout if math.prod(shape)]
    torch._foreach_copy_([views[n] for n in names], [tensors[n] for n in names])  # one GIL release
    return payload


def _target(t: torch.Tensor, dtype: str) -> torch.dtype:
    return torch.float16 if dtype == "fp16" and t.dtype.is_floating_point else t.dtype


def with_metadata(header: bytes, metadata: Mapping[str, str] | None) -> bytes:
    """``header`` (length prefix + JSON) with a ``__metadata__`` entry, keys sorted.

    WHY not ``safetensors.torch.save(..., metadata=...)``: it writes a multi-key map in a
    per-process random (hash) order, so the same model would get different bytes, digests and
    ETags in two workers. Data offsets are relative to the end of the header, so only the JSON
    and its 8-byte padding change.
    """
    if not metadata:
        return header
    body = header[8:].rstrip(b" ")
    entry = json.dumps({"__metadata__": dict(sorted(metadata.items()))}, separators=(",", ":"))
    merged = entry.encode()[:-1] + (b"," + body[1:] if body != b"{}" else b"}")
    merged += b" " * (-len(merged) % 8)
    return len(merged).to_bytes(8, "little") + merged


def _header(layout: Layout) -> Header:
    """Safetensors' own header for ``layout`` (length prefix included), made once per layout.

    The probe is a full-size ``safetensors.torch.save`` of zeros (~0.1 s, GIL held), paid once
    per task size: the header depends only on names, dtypes and shapes.
    """
    with _lock:
        cached = _headers.get(layout)
        if cached is not None:
            _headers.move_to_end(layout)
            return cached
    probe = st_save({name: torch.zeros(shape, dtype=dt) for name, dt, shape in layout})
    size = int.from_bytes(probe[:8], "little")
    meta = json.loads(probe[8 : 8 + size])
    spans = {k: tuple(v["data_offsets"]) for k, v in meta.items() if k != "__metadata__"}
    cached = (probe[: 8 + size], spans, len(probe) - 8 - size)
    with _lock:
        _headers[layout] = cached
        while len(_headers) > _MAX_LAYOUTS:
            _headers.popitem(last=False)
    return cached


def deserialize(payload: bytes | memoryview) -> StateDict:
    """Inverse of :func:`serialize` (safetensors bytes → tensors), with the same GIL discipline.

    The data are copied once, in one numpy call, and every tensor is a view of that copy
    (``safetensors.torch.load`` stalled other threads for up to ~27 ms per 45 MB model). Files
    with dtypes outside ``_DTYPES`` (e.g. bf16) go through safetensors itself.
    """
    raw = np.frombuffer(payload, dtype=np.uint8)
    size = int.from_bytes(raw[:8].tobytes(), "little")
    meta = json.loads(raw[8 : 8 + size].tobytes())
    meta.pop("__metadata__", None)
    if any(info["dtype"] not in _BY_CODE for info in meta.values()):
        return st_load(bytes(payload))
    data = raw[8 + size :].copy()  # the one copy (numpy releases the GIL while copying)
    out = {}
    for name, info in meta.items():
        start, end = info["data_offsets"]
        view = data[start:end].view(_BY_CODE[info["dtype"]]).reshape(info["shape"])
        out[name] = torch.from_numpy(view)
    return out
