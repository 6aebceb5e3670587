"""Immutable, verifiable model artifacts on a local directory store.

Layout: ``<store>/<kind>/<version>/`` holds ``*.safetensors`` tensor files, ``*.json`` files,
``config.json`` and ``manifest.json`` (sha256 + size of every other file, ``created_at``, the
content hash and free-form metadata such as training config, dataset fingerprint and metrics).
``<store>/<kind>/LATEST`` names the newest version.

Why this shape: trainer and service run as different processes (and, in production, on
different machines), so the artifact is their only interface. Writes go to a temp directory in
the same parent and are published with one ``os.replace`` so a reader never sees half a model;
sha256s catch bit rot and tampering before a corrupted tensor ever reaches a user; kinds and
versions are validated identifiers because users name models by id, never by path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file

from model_store._ids import (
    _RESERVED_KEYS,
    CONFIG,
    FORMAT_VERSION,
    LATEST,
    MANIFEST,
    ArtifactError,
    ArtifactExistsError,
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    _file_name,
    sha256_file,
    validate_kind,
    validate_version,
)
from model_store._reader import Artifact, list_versions, open_artifact, resolve_version

__all__ = [
    "Artifact",
    "ArtifactError",
    "ArtifactExistsError",
    "ArtifactIntegrityError",
    "ArtifactNotFoundError",
    "ArtifactRef",
    "list_versions",
    "open_artifact",
    "resolve_version",
    "set_latest_version",
    "sha256_file",
    "validate_kind",
    "validate_version",
    "write_artifact",
]


@dataclass(frozen=True)
class ArtifactRef:
    """Identifies one written artifact: its kind, immutable version and directory."""

    kind: str
    version: str
    path: Path


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_json(path: Path, obj: Any) -> None:
    """Strict JSON (no NaN/Infinity: other languages' parsers reject them), fsynced."""
    try:
        text = json.dumps(obj, indent=2, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path.name}: not strict-JSON serialisable ({exc})") from None
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _cpu_tensors(name: str, tensors: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Copy tensors to CPU, contiguous and non-aliasing (safetensors refuses shared memory)."""
    if not isinstance(tensors, Mapping) or not tensors:
        raise ValueError(f"tensor file {name!r} must be a non-empty mapping of str -> Tensor")
    out: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for key, value in tensors.items():
        if not isinstance(key, str) or not isinstance(value, torch.Tensor):
            raise TypeError(f"tensor file {name!r}: entry {key!r} is not a str -> Tensor pair")
        t = value.detach().to("cpu").contiguous()
        ptr = t.untyped_storage().data_ptr()
        if ptr in seen or t.untyped_storage().nbytes() != t.numel() * t.element_size():
            t = t.clone()
        seen.add(t.untyped_storage().data_ptr())
        out[key] = t
    return out


def _stage_files(
    tmp: Path,
    tensors: Mapping[str, Mapping[str, torch.Tensor]],
    json_files: Mapping[str, Any],
    config: Mapping[str, Any],
) -> dict[str, dict[str, Any]]:
    """Write every payload file into ``tmp`` (fsynced) and return their manifest entries."""
    names: list[str] = []
    for name, group in tensors.items():
        fname = _file_name(name, ".safetensors")
        save_file(_cpu_tensors(name, group), str(tmp / fname))
        _fsync_path(tmp / fname)
        names.append(fname)
    for name, obj in json_files.items():
        fname = _file_name(name, ".json")
        _write_json(tmp / fname, obj)
        names.append(fname)
    _write_json(tmp / CONFIG, dict(config))
    names.append(CONFIG)
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate artifact file names: {sorted(names)}")
    names.sort()
    return {n: {"sha256": sha256_file(tmp / n), "bytes": (tmp / n).stat().st_size} for n in names}


def _content_hash(files: Mapping[str, Mapping[str, Any]]) -> str:
    canon = json.dumps({n: e["sha256"] for n, e in files.items()}, sort_keys=True)
    return hashlib.sha256(canon.encode()).hexdigest()


def write_artifact(
    store: str | os.PathLike[str],
    kind: str,
    *,
    tensors: Mapping[str, Mapping[str, torch.Tensor]],
    json_files: Mapping[str, Any] | None = None,
    config: Mapping[str, Any],
    metadata: Mapping[str, Any] | None = None,
    version: str | None = None,
    set_latest: bool = True,
) -> ArtifactRef:
    """Write a new immutable artifact version atomically.

    Args:
        store: Root directory of the store (created if missing).
        kind: Artifact kind, e.g. ``"taper"``.
        tensors: Logical file name -> state dict; each becomes ``<name>.safetensors``.
        json_files: Logical file name -> JSON-serialisable object; each becomes ``<name>.json``.
        config: Contents of ``config.json`` (what is needed to rebuild the models).
        metadata: Extra top-level manifest entries (training config, dataset fingerprint,
            metrics). Must not use the reserved keys ``format, kind, version, created_at,
            files, content_hash``.
        version: Explicit version id; by default ``YYYYmmddTHHMMSS-<8 hex of content hash>``.
        set_latest: Point ``<store>/<kind>/LATEST`` at this version.

    Returns:
        An ``ArtifactRef`` for the published version.

    Raises:
        ValueError: Invalid kind, version, file names or metadata keys.
        ArtifactExistsError: The version already exists (versions are immutable).
    """
    validate_kind(kind)
    metadata = dict(metadata or {})
    if clash := _RESERVED_KEYS & metadata.keys():
        raise ValueError(f"metadata uses reserved manifest keys: {sorted(clash)}")
    if version is not None:
        validate_version(version)
    kind_dir = Path(store) / kind
    kind_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=kind_dir))
    try:
        files = _stage_files(tmp, tensors, json_files or {}, config)
        content = _content_hash(files)
        now = dt.datetime.now(dt.UTC)
        version = version or f"{now:%Y%m%dT%H%M%S}-{content[:8]}"
        manifest = {
            **metadata,
            "format": FORMAT_VERSION,
            "kind": kind,
            "version": version,
            "created_at": now.isoformat(),
            "content_hash": content,
            "files": files,
        }
        _write_json(tmp / MANIFEST, manifest)
        os.chmod(tmp, 0o755)  # mkdtemp makes 0700; a service under another user must read it
        _fsync_path(tmp)
        _publish(tmp, kind_dir / version)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if set_latest:
        set_latest_version(store, kind, version)
    return ArtifactRef(kind=kind, version=version, path=kind_dir / version)


def _publish(tmp: Path, final: Path) -> None:
    """Rename the staged directory into place; refuse to replace an existing version."""
    if final.exists():
        raise ArtifactExistsError(f"artifact version {final.parent.name}/{final.name} exists")
    try:
        os.replace(tmp, final)
    except OSError as exc:  # a concurrent writer won the race: the target is non-empty
        if final.exists():
            raise ArtifactExistsError(
                f"artifact version {final.parent.name}/{final.name} exists"
            ) from exc
        raise
    _fsync_path(final.parent)


def set_latest_version(store: str | os.PathLike[str], kind: str, version: str) -> None:
    """Atomically point ``<store>/<kind>/LATEST`` at an existing version."""
    kind_dir = Path(store) / validate_kind(kind)
    if not (kind_dir / validate_version(version) / MANIFEST).is_file():
        raise ArtifactNotFoundError(f"no artifact {kind}/{version} in {store}")
    fd, tmp_name = tempfile.mkstemp(prefix=".LATEST-", dir=kind_dir)
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; readers may run as another user
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(version + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, kind_dir / LATEST)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_path(kind_dir)
