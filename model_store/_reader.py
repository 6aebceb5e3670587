"""Reading side of the artifact store: resolve ``latest``, list versions, open and verify.

Public names are re-exported by ``model_store.artifacts``; import them from there.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as st_load

from model_store._ids import (
    _RESERVED_KEYS,
    CONFIG,
    LATEST,
    MANIFEST,
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    _file_name,
    is_version_name,
    sha256_file,
    validate_kind,
    validate_version,
)


def resolve_version(store: str | os.PathLike[str], kind: str, version: str = "latest") -> str:
    """Turn ``"latest"`` into a concrete version id (validated); pass other ids through."""
    kind_dir = Path(store) / validate_kind(kind)
    if version != "latest":
        return validate_version(version)
    try:
        latest = (kind_dir / LATEST).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise ArtifactNotFoundError(f"no {kind!r} artifact in store {store}") from None
    try:
        return validate_version(latest)
    except ValueError as exc:
        raise ArtifactIntegrityError(f"{kind_dir / LATEST}: corrupt pointer ({exc})") from None


def list_versions(store: str | os.PathLike[str], kind: str) -> list[str]:
    """All published versions of ``kind``, oldest first (by manifest ``created_at``, then id).

    Sorting by the recorded creation time keeps explicit version ids (``v2`` vs ``v10``) in
    write order too; an unreadable manifest sorts first rather than hiding the version.
    """
    kind_dir = Path(store) / validate_kind(kind)
    if not kind_dir.is_dir():
        return []
    found = [
        p for p in kind_dir.iterdir()
        if p.is_dir() and is_version_name(p.name) and (p / MANIFEST).is_file()
    ]  # fmt: skip
    return [p.name for p in sorted(found, key=lambda p: (_created_at(p), p.name))]


def _created_at(path: Path) -> str:
    try:
        value = json.loads((path / MANIFEST).read_text(encoding="utf-8")).get("created_at")
    except (OSError, ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArtifactIntegrityError(f"{path / MANIFEST}: manifest missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArtifactIntegrityError(f"{path / MANIFEST}: unreadable manifest ({exc})") from None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or CONFIG not in files:
        raise ArtifactIntegrityError(f"{path / MANIFEST}: malformed manifest (no file list)")
    return manifest


def _verify_listing(path: Path, files: Mapping[str, Any]) -> None:
    """Every listed file must exist and no unlisted file may sit in the version directory."""
    on_disk = {p.name for p in path.iterdir()} - {MANIFEST}
    for name in sorted(files):
        if name not in on_disk:
            raise ArtifactIntegrityError(f"{path / name}: listed in manifest but missing")
    for name in sorted(on_disk - files.keys()):
        raise ArtifactIntegrityError(f"{path / name}: file not listed in manifest")


class Artifact:
    """A verified, read-only view of one artifact version.

    Construction (via ``open_artifact``) checks every file against the manifest; ``tensors``
    re-hashes the exact bytes it parses, so a file swapped after opening is still caught.
    """

    def __init__(self, path: Path, kind: str, version: str, manifest: dict[str, Any]):
        self.path = path
        self.kind = kind
        self.version = version
        self.manifest = manifest
        self.config: dict[str, Any] = self.json(CONFIG)

    @property
    def files(self) -> dict[str, dict[str, Any]]:
        """Manifest entries (``sha256``, ``bytes``) per file name."""
        return self.manifest["files"]

    @property
    def metadata(self) -> dict[str, Any]:
        """The free-form manifest entries given at write time (metrics, training config, ...)."""
        return {k: v for k, v in self.manifest.items() if k not in _RESERVED_KEYS}

    def _verified_bytes(self, fname: str) -> bytes:
        entry = self.files.get(fname)
        if entry is None:
            raise KeyError(f"artifact {self.kind}/{self.version} has no file {fname!r}")
        try:
            data = (self.path / fname).read_bytes()
        except FileNotFoundError:
            raise ArtifactIntegrityError(f"{self.path / fname}: file missing") from None
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise ArtifactIntegrityError(f"{self.path / fname}: sha256 mismatch (file modified)")
        return data

    def tensors(
        self, name: str, device: str | torch.device | None = None
    ) -> dict[str, torch.Tensor]:
        """Load ``<name>.safetensors`` (hash-verified) onto ``device`` (CPU by default)."""
        out = st_load(self._verified_bytes(_file_name(name, ".safetensors")))
        if device is not None and torch.device(device).type != "cpu":
            out = {k: v.to(device) for k, v in out.items()}
        return out

    def json(self, name: str) -> Any:
        """Load ``<name>.json`` (hash-verified); ``"config"`` returns ``config.json``."""
        fname = CONFIG if name in ("config", CONFIG) else _file_name(name, ".json")
        return json.loads(self._verified_bytes(fname).decode("utf-8"))

    def __repr__(self) -> str:
        return f"Artifact(kind={self.kind!r}, version={self.version!r}, path={str(self.path)!r})"


def open_artifact(
    store: str | os.PathLike[str], kind: str, version: str = "latest", *, verify: bool = True
) -> Artifact:
    """Open and verify an artifact version.

    Args:
        store: Root directory of the store.
        kind: Artifact kind.
        version: A version id, or ``"latest"`` to follow the ``LATEST`` pointer.
        verify: Hash every file now (default). Tensor/JSON reads are verified regardless.

    Raises:
        ValueError: Invalid kind or version identifier.
        ArtifactNotFoundError: No such kind/version.
        ArtifactIntegrityError: A file is missing, unlisted or modified; the message names it.
    """
    version = resolve_version(store, kind, version)
    path = Path(store) / kind / version
    if not path.is_dir():
        raise ArtifactNotFoundError(f"no artifact {kind}/{version} in store {store}")
    manifest = _read_manifest(path)
    files = manifest["files"]
    _verify_listing(path, files)
    if verify:
        for name in sorted(files):
            if sha256_file(path / name) != files[name].get("sha256"):
                raise ArtifactIntegrityError(f"{path / name}: sha256 mismatch (file modified)")
    return Artifact(path, kind, version, manifest)
