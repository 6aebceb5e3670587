"""Identifiers, errors and hashing shared by the artifact writer and reader.

Kept apart from ``artifacts.py`` (which re-exports everything public here) so the store module
stays small; nothing outside ``model_store`` should import this module directly.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

LATEST = "LATEST"
MANIFEST = "manifest.json"
CONFIG = "config.json"
FORMAT_VERSION = 1
_RESERVED_KEYS = frozenset({"format", "kind", "version", "created_at", "files", "content_hash"})
_KIND_RE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_CHUNK = 1 << 22


class ArtifactError(Exception):
    """Base class for artifact store errors."""


class ArtifactIntegrityError(ArtifactError):
    """A stored file is missing, unlisted, or does not match its recorded sha256."""


class ArtifactNotFoundError(ArtifactError, FileNotFoundError):
    """The requested kind/version does not exist in the store."""


class ArtifactExistsError(ArtifactError, FileExistsError):
    """A version is immutable: it can be written once and never overwritten."""


def validate_kind(kind: str) -> str:
    """Return ``kind`` if it is a safe identifier (lowercase, no path separators), else raise."""
    if not isinstance(kind, str) or not _KIND_RE.fullmatch(kind):
        raise ValueError(f"invalid artifact kind {kind!r}: expected [a-z][a-z0-9_-]{{0,63}}")
    return kind


def validate_version(version: str) -> str:
    """Return ``version`` if it is a safe identifier (no ``/``, no leading dot), else raise."""
    if (
        not isinstance(version, str)
        or not _VERSION_RE.fullmatch(version)
        or ".." in version
        or version == LATEST
    ):
        raise ValueError(
            f"invalid artifact version {version!r}: expected [A-Za-z0-9][A-Za-z0-9_.-]*"
        )
    return version


def _file_name(name: str, suffix: str) -> str:
    """Map a logical file name (``"bases"`` or ``"bases.safetensors"``) to its on-disk name."""
    stem = name[: -len(suffix)] if isinstance(name, str) and name.endswith(suffix) else name
    if not isinstance(stem, str) or not _NAME_RE.fullmatch(stem):
        raise ValueError(f"invalid artifact file name {name!r}: expected [A-Za-z0-9][A-Za-z0-9_-]*")
    if stem + suffix in (CONFIG, MANIFEST):
        raise ValueError(f"{stem + suffix!r} is reserved; pass it via config/metadata")
    return stem + suffix


def sha256_file(path: Path) -> str:
    """Stream a file through sha256 (constant memory, so multi-GB bases are fine)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_version_name(name: str) -> bool:
    """True when ``name`` is a syntactically valid version id (temp dirs start with a dot)."""
    try:
        validate_version(name)
    except ValueError:
        return False
    return True
