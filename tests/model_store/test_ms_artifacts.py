"""Artifact store: round trip, manifest, immutability, LATEST, tamper detection, id validation."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re

import pytest
import torch

from model_store.artifacts import (
    ArtifactExistsError,
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    list_versions,
    open_artifact,
    write_artifact,
)


def _write(store, version=None, scale=1.0, **kw):
    tensors = {
        "weights": {"w": torch.arange(12.0).view(3, 4) * scale, "n": torch.tensor(7)},
        "extra": {"e": torch.ones(5, dtype=torch.float16)},
    }
    return write_artifact(
        store, "demo", tensors=tensors, json_files={"catalogue": {"classes": ["a", "b"]}},
        config={"arch": "x", "scale": scale}, metadata={"metrics": {"acc": 0.9}},
        version=version, **kw,
    )  # fmt: skip


def test_round_trip_manifest_and_latest(tmp_path):
    ref = _write(tmp_path)
    assert re.fullmatch(r"\d{8}T\d{6}-[0-9a-f]{8}", ref.version)
    assert (tmp_path / "demo" / "LATEST").read_text().strip() == ref.version
    art = open_artifact(tmp_path, "demo")
    assert art.version == ref.version and art.path == ref.path
    w = art.tensors("weights")
    assert torch.equal(w["w"], torch.arange(12.0).view(3, 4)) and w["n"].item() == 7
    assert art.tensors("extra.safetensors")["e"].dtype == torch.float16
    assert art.json("catalogue") == {"classes": ["a", "b"]}
    assert art.config == {"arch": "x", "scale": 1.0}
    assert art.metadata == {"metrics": {"acc": 0.9}}
    files = art.manifest["files"]
    assert set(files) == {
        "weights.safetensors",
        "extra.safetensors",
        "catalogue.json",
        "config.json",
    }
    for name, entry in files.items():
        data = (ref.path / name).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    created = dt.datetime.fromisoformat(art.manifest["created_at"])
    assert abs((dt.datetime.now(dt.UTC) - created).total_seconds()) < 60
    assert ref.version.endswith(art.manifest["content_hash"][:8])


def test_versions_are_immutable_and_latest_follows_writes(tmp_path):
    _write(tmp_path, version="v1")
    with pytest.raises(ArtifactExistsError, match="v1"):
        _write(tmp_path, version="v1", scale=2.0)
    assert open_artifact(tmp_path, "demo", "v1").config["scale"] == 1.0  # untouched
    _write(tmp_path, version="v2", scale=2.0)
    assert list_versions(tmp_path, "demo") == ["v1", "v2"]
    assert open_artifact(tmp_path, "demo").version == "v2"
    assert open_artifact(tmp_path, "demo", "v1").tensors("weights")["w"][0, 1] == 1.0
    _write(tmp_path, version="v3", set_latest=False)
    assert open_artifact(tmp_path, "demo").version == "v2"
    leftovers = [p.name for p in (tmp_path / "demo").iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no temp dirs or temp LATEST files left behind


def test_failed_write_leaves_nothing_behind(tmp_path):
    with pytest.raises(TypeError, match="not a str -> Tensor"):
        write_artifact(tmp_path, "demo", tensors={"w": {"a": [1, 2]}}, config={})
    assert list((tmp_path / "demo").iterdir()) == []
    with pytest.raises(ArtifactNotFoundError):
        open_artifact(tmp_path, "demo")


def test_aliasing_tensors_are_stored_independently(tmp_path):
    base = torch.arange(10.0)
    ref = write_artifact(
        tmp_path, "demo", tensors={"t": {"a": base, "b": base[2:5], "c": base}}, config={}
    )
    out = open_artifact(tmp_path, "demo", ref.version).tensors("t")
    assert torch.equal(out["b"], torch.tensor([2.0, 3.0, 4.0])) and torch.equal(out["c"], base)


def _flip_byte(path, offset=-3):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["weights.safetensors", "catalogue.json", "config.json"])
def test_tampered_file_is_refused_naming_the_file(tmp_path, name):
    ref = _write(tmp_path)
    _flip_byte(ref.path / name)
    with pytest.raises(ArtifactIntegrityError, match=re.escape(name)):
        open_artifact(tmp_path, "demo")


def test_tamper_after_open_is_caught_when_reading(tmp_path):
    ref = _write(tmp_path)
    art = open_artifact(tmp_path, "demo")
    _flip_byte(ref.path / "weights.safetensors")
    with pytest.raises(ArtifactIntegrityError, match="weights.safetensors"):
        art.tensors("weights")
    assert art.tensors("extra")["e"].sum() == 5  # untouched files still load


def test_missing_and_unlisted_files_are_refused(tmp_path):
    ref = _write(tmp_path)
    (ref.path / "sneaky.safetensors").write_bytes(b"x")
    with pytest.raises(ArtifactIntegrityError, match="sneaky.safetensors.*not listed"):
        open_artifact(tmp_path, "demo")
    (ref.path / "sneaky.safetensors").unlink()
    (ref.path / "extra.safetensors").unlink()
    with pytest.raises(ArtifactIntegrityError, match="extra.safetensors.*missing"):
        open_artifact(tmp_path, "demo")


def test_corrupt_manifest_or_latest_pointer(tmp_path):
    ref = _write(tmp_path)
    (tmp_path / "demo" / "LATEST").write_text("../../etc\n")
    with pytest.raises(ArtifactIntegrityError, match="LATEST"):
        open_artifact(tmp_path, "demo")
    (ref.path / "manifest.json").write_text("{not json")
    with pytest.raises(ArtifactIntegrityError, match="manifest.json"):
        open_artifact(tmp_path, "demo", ref.version)


@pytest.mark.parametrize("kind", ["..", "../x", "a/b", "", "Demo", ".hidden", "x" * 65, None])
def test_invalid_kinds_rejected(tmp_path, kind):
    with pytest.raises(ValueError, match="invalid artifact kind"):
        write_artifact(tmp_path / "s", kind, tensors={"t": {"a": torch.ones(1)}}, config={})
    with pytest.raises(ValueError, match="invalid artifact kind"):
        open_artifact(tmp_path / "s", kind)
    assert not (tmp_path / "x").exists() and list(tmp_path.iterdir()) in ([], [tmp_path / "s"])


@pytest.mark.parametrize("version", ["..", "../v1", "a/b", "", ".v", "LATEST", "a..b", "v 1"])
def test_invalid_versions_rejected(tmp_path, version):
    _write(tmp_path, version="v1")
    with pytest.raises(ValueError, match="invalid artifact version"):
        open_artifact(tmp_path, "demo", version)
    with pytest.raises(ValueError, match="invalid artifact version"):
        _write(tmp_path, version=version)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"tensors": {}, "json_files": {"config": {}}, "config": {}}, "reserved"),
        ({"tensors": {"../w": {"a": torch.ones(1)}}, "config": {}}, "invalid artifact file name"),
        ({"tensors": {"w": {}}, "config": {}}, "non-empty"),
        ({"tensors": {}, "json_files": {"manifest": {}}, "config": {}}, "reserved"),
        ({"tensors": {}, "config": {}, "metadata": {"files": 1}}, "reserved manifest keys"),
    ],
)
def test_bad_write_arguments(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        write_artifact(tmp_path, "demo", **kwargs)


def test_missing_things_raise_not_found(tmp_path):
    with pytest.raises(ArtifactNotFoundError):
        open_artifact(tmp_path, "demo")
    _write(tmp_path, version="v1")
    with pytest.raises(ArtifactNotFoundError):
        open_artifact(tmp_path, "demo", "v9")
    assert list_versions(tmp_path, "other") == []
    with pytest.raises(KeyError, match="nope"):
        open_artifact(tmp_path, "demo").tensors("nope")
    assert json.loads((tmp_path / "demo" / "v1" / "config.json").read_text())["arch"] == "x"


def test_list_versions_follows_write_order_not_string_order(tmp_path):
    for version in ("v9", "v10", "a1"):
        _write(tmp_path, version=version)
    assert list_versions(tmp_path, "demo") == ["v9", "v10", "a1"]
    (tmp_path / "demo" / ".tmp-crashed").mkdir()  # a writer that died mid-way
    (tmp_path / "demo" / "empty").mkdir()  # no manifest: not a published version
    assert list_versions(tmp_path, "demo") == ["v9", "v10", "a1"]


def test_crash_before_publish_leaves_previous_state(tmp_path, monkeypatch):
    _write(tmp_path, version="v1")
    import model_store.artifacts as artifacts

    def crash(src, dst):
        raise OSError("simulated crash at publish")

    monkeypatch.setattr(artifacts.os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        _write(tmp_path, version="v2", scale=2.0)
    monkeypatch.undo()
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == ["LATEST", "v1"]
    assert open_artifact(tmp_path, "demo").version == "v1"


def test_concurrent_writers_of_one_version_exactly_one_wins(tmp_path):
    import threading

    results: list[str] = []
    barrier = threading.Barrier(4)

    def writer(scale: float) -> None:
        barrier.wait()
        try:
            _write(tmp_path, version="race", scale=scale)
            results.append(f"ok {scale}")
        except ArtifactExistsError:
            results.append("exists")

    threads = [threading.Thread(target=writer, args=(float(i),)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [r for r in results if r.startswith("ok")]
    assert len(winners) == 1 and results.count("exists") == 3
    art = open_artifact(tmp_path, "demo", "race")  # intact and verifiable
    assert f"ok {art.config['scale']}" == winners[0]
    assert not [p for p in (tmp_path / "demo").iterdir() if p.name.startswith(".")]


def test_published_files_are_readable_by_other_users(tmp_path):
    ref = _write(tmp_path)
    assert ref.path.stat().st_mode & 0o755 == 0o755
    assert (tmp_path / "demo" / "LATEST").stat().st_mode & 0o644 == 0o644


@pytest.mark.parametrize("bad", [{"acc": float("nan")}, {"obj": object()}])
def test_non_json_metadata_is_refused_naming_the_file(tmp_path, bad):
    with pytest.raises(ValueError, match="manifest.json: not strict-JSON"):
        write_artifact(tmp_path, "demo", tensors={}, config={}, metadata={"metrics": bad})
    with pytest.raises(ValueError, match="config.json: not strict-JSON"):
        write_artifact(tmp_path, "demo", tensors={}, config=bad)
    assert list_versions(tmp_path, "demo") == []
