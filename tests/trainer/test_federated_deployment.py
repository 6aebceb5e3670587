"""The federated apps on a real Flower deployment over loopback.

- ``tailor train federated-prepare`` writes a server folder and one folder per client (only its
  own features) from a backbone and a tiny 4-domain set; its run config is one Flower accepts.
- ``[tool.flwr.app]`` makes ``flwr run .`` pack only the app code.
- ``integration``: a ``flower-superlink`` process, three ``flower-supernode`` processes (one
  folder each) and ``flwr run`` on this project. The adapter the deployed ServerApp writes must
  be the sample-weighted mean of the clients' local training, reproduced here outside Flower.
  Under a heavily shared 2-core machine this takes ~2 min; `benchmarks/flower_deployment.py`
  runs the same on real Tailor-PACS features and times each phase.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from trainer.federated.deploy import (
    config_string,
    prepare_main,
    register_main,
    suggested_run_config,
    write_deployment,
)
from trainer.federated.loopback import flwr_run, local_deployment, wait_for_result
from trainer.federated.server_app import deployment_config
from trainer.federated.task import ClientData, build_model, client_seed, load_client, train_local

ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ["photo", "art_painting", "cartoon", "sketch"]
PARTICIPANTS = ["photo", "cartoon", "sketch"]
SIZES = {"photo": 15, "art_painting": 10, "cartoon": 6, "sketch": 10}  # per class: unequal


def _tiny_pacs(path: Path) -> None:
    """Coloured blobs whose position encodes the class; clients differ in size."""
    rng = np.random.default_rng(0)
    images, labels, domains = [], [], []
    for d, name in enumerate(DOMAINS):
        for c in range(3):
            for _ in range(SIZES[name]):
                img = np.full((32, 32, 3), 40 * d, np.uint8)
                y0 = 4 + 9 * c + rng.integers(0, 3)
                img[y0:y0 + 6, 8:24] = rng.integers(150, 256, 3)
                images.append(img)
                labels.append(c)
                domains.append(d)
    np.savez(path, images=np.stack(images), labels=np.asarray(labels),
             domains=np.asarray(domains), class_names=np.array(["zero", "one", "bear"]),
             domain_names=np.array(DOMAINS))


def _declared_run_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]


def test_every_suggested_run_config_key_is_declared_in_pyproject():
    """The SuperLink rejects run-config keys the app's pyproject does not declare."""
    info = {"server": "/s", "image_dim": 8, "num_clients": 3}
    for method, kind in (("fedclip", "embed"), ("fedclip_r32", "embed"), ("fedprox", "trunk")):
        cfg = suggested_run_config(info, method, kind, 0, Path("/tmp/out"))
        assert set(cfg) <= set(_declared_run_config()), method
    assert cfg["method"] == "fedprox" and cfg["mu"] > 0 and cfg["personal-epochs"] == 0


def test_deployment_config_reads_pyproject_defaults_and_rejects_an_unset_fed_dir():
    defaults = _declared_run_config()
    with pytest.raises(ValueError, match="fed-dir"):
        deployment_config(defaults)
    cfg = deployment_config({**defaults, "fed-dir": "/srv/fed", "rounds": 3})
    assert cfg["rounds"] == 3 and cfg["method"] == "fedavg" and cfg["weighting"] == "samples"


def test_the_fab_packs_only_the_app_code_not_venv_data_tests_or_results():
    """What `flwr run .` packs, from the tracked files plus typical ignored ones (no disk walk):
    [tool.flwr.app] fab-include keeps .venv, .tailor, tests, docs and results out."""
    import io
    import subprocess
    import zipfile

    from flwr.cli.build import build_fab_from_files

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    files: dict[str, bytes | Path] = {f: b"" for f in tracked}
    files.update({f: (ROOT / f) for f in ("pyproject.toml", ".gitignore")})
    files.update({f: b"x = 1\n" for f in (
        ".venv/lib/python3.11/site-packages/torch/__init__.py", ".tailor/data/features/a.json",
        "benchmarks/results/federated/results.json", "trainer/federated/__pycache__/a.py")})
    names = zipfile.ZipFile(io.BytesIO(build_fab_from_files(files)[0])).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"pyproject.toml", ".info", "trainer", "model_store"}
    assert "trainer/federated/client_app.py" in names and "model_store/adapters.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith("/test_x.py")]


def test_config_string_quotes_strings_for_flower():
    from flwr.common.config import parse_config_args

    values = {"fed-dir": "/a b/c", "rounds": 2, "lr": 0.003, "flag": True}
    assert parse_config_args([config_string(values)]) == values


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prepare")
    _tiny_pacs(tmp / "pacs.npz")
    return prepare_main(["--pacs-npz", str(tmp / "pacs.npz"), "--backbone", "default",
                         "--device", "cpu", "--data-dir", str(tmp / "data"),
                         "--out", str(tmp / "fed"), "--method", "fedclip",
                         "--domains", *PARTICIPANTS, "--seed", "1"])


def test_prepared_folders_hold_only_their_own_client(prepared):
    folders = prepared["folders"]
    assert not list(Path(folders["server"]).glob("client_*.npz"))
    for i, folder in enumerate(folders["clients"]):
        assert sorted(p.name for p in Path(folder).glob("client_*.npz")) == [f"client_{i}.npz"]
        assert load_client(folder, i).num("train") == round(0.6 * 3 * SIZES[PARTICIPANTS[i]])
    spec = json.loads((Path(folders["server"]) / "spec.json").read_text())
    assert spec["clients"] == prepared["clients"] == PARTICIPANTS and spec["kind"] == "adapter"
    assert folders["image_dim"] == 256  # the default backbone's embedding width


def test_prepared_run_config_is_accepted_by_flower_and_the_server_app(prepared):
    from flwr.common.config import fuse_dicts, parse_config_args

    fused = fuse_dicts(_declared_run_config(), parse_config_args([prepared["run_config"]]))
    cfg = deployment_config(fused)  # what the deployed ServerApp will run
    assert fused["fed-dir"] == prepared["folders"]["server"] and cfg["num_clients"] == 3
    assert parse_config_args([prepared["node_configs"][2]]) == {
        "partition-id": 2, "fed-dir": prepared["folders"]["clients"][2]}


def _client(i: int, n: int, d: int = 8, c: int = 3) -> ClientData:
    rng = np.random.default_rng(100 + i)
    arrays = {}
    for split, m in (("train", n), ("val", 12), ("test", 12)):
        y = rng.integers(0, c, m)
        x = rng.normal(size=(m, d)).astype(np.float32)
        x[np.arange(m), y] += 2.0 + i  # each client's features are shifted differently
        arrays[f"x_{split}"], arrays[f"y_{split}"] = x, y.astype(np.int64)
    return ClientData(f"c{i}", arrays)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """3 unequal clients on a SuperLink + 3 SuperNodes; 1 round, then personalisation."""
    tmp = tmp_path_factory.mktemp("deploy")
    clients = [_client(i, n) for i, n in enumerate((40, 10, 25))]
    info = write_deployment(tmp / "fed", clients, {"kind": "adapter", "scale": 10.0, "rank": 4},
                            {"text": np.eye(3, 8, dtype=np.float32)})
    out_dir = tmp / "result"
    run_cfg = {"fed-dir": info["server"], "image-dim": info["image_dim"], "num-clients": 3,
               "rounds": 1, "lr": 0.01, "local-epochs": 2, "batch-size": 16, "seed": 3,
               "personal-epochs": 1, "out-dir": str(out_dir)}
    with local_deployment(info["clients"], tmp / "flower") as dep:
        run_id = flwr_run(ROOT, dep, config_string(run_cfg))
        result = wait_for_result(dep, run_id, out_dir, timeout=300)
    (tmp / "fed" / "deployment.json").write_text(json.dumps({  # as prepare_main writes it
        "method": "fedclip", "backbone": {"spec": "synthetic"}, "classes": ["a", "b", "c"],
        "folders": info, "run_config": config_string(run_cfg)}))
    return info, run_cfg, result, out_dir, tmp / "flower" / "home"


@pytest.mark.integration
@pytest.mark.slow  # ~40-90 s: real processes; deselect with -m 'not slow'
def test_deployed_global_adapter_is_the_sample_weighted_mean(deployment):
    info, run_cfg, result, out_dir, _ = deployment
    assert result["errors"] == []
    server = info["server"]
    torch.manual_seed(run_cfg["seed"])  # the ServerApp's initial adapter, rebuilt here
    init = build_model(server, run_cfg["image-dim"]).exchanged()
    states, weights = [], []
    for i, folder in enumerate(info["clients"]):  # each client's round 1, by hand
        data = load_client(folder, i)
        model = build_model(folder, run_cfg["image-dim"])
        model.load_state_dict(init, strict=False)
        cfg = {"lr": run_cfg["lr"], "local_epochs": run_cfg["local-epochs"],
               "batch_size": run_cfg["batch-size"], "weight_decay": 0.2,
               "seed": client_seed(run_cfg["seed"], 1, data.num("train"))}
        train_local(model, data, cfg, global_state=init)
        states.append(model.exchanged())
        weights.append(data.num("train"))
    assert len(set(weights)) == 3  # unequal clients: sample weighting differs from uniform
    w = torch.tensor(weights, dtype=torch.float64) / sum(weights)
    got = load_file(str(out_dir / "global.safetensors"))
    assert set(got) == {"adapter.fc1.weight", "adapter.fc1.bias", "adapter.fc2.weight",
                        "adapter.fc2.bias"}  # only the adapter travels
    for k, v in got.items():
        expected = sum(wi * s[k].double() for wi, s in zip(w, states, strict=True))
        uniform = sum(s[k].double() for s in states) / len(states)
        assert torch.allclose(v.double(), expected, atol=1e-5), k
        assert not torch.allclose(v.double(), uniform, atol=1e-4), k
        assert not torch.allclose(v, init[k], atol=1e-4), k


@pytest.mark.integration
@pytest.mark.slow  # ~40-90 s: real processes; deselect with -m 'not slow'
def test_result_accounts_rounds_evaluation_and_personalisation(deployment):
    _, run_cfg, result, out_dir, _ = deployment
    (rnd,) = result["rounds"]
    n_params = 2 * 8 * 4 + 4 + 8  # rank-4 adapter on 8-d features: fc1 (8->4), fc2 (4->8)
    assert rnd["clients"] == 3 and rnd["params_per_client"] == n_params
    assert rnd["bytes_down"] == rnd["bytes_up"]
    assert 4 * n_params * 3 <= rnd["bytes_up"] < 4 * n_params * 3 + 4096
    assert set(result["client_eval"][-1]) == {"c0", "c1", "c2"}
    for name, metrics in result["personal"].items():
        assert metrics["val_acc"] >= result["client_eval"][-1][name]["val_acc"]
        assert (out_dir / f"personal_{name}.safetensors").exists()
    assert set(result["personal"]) == {"c0", "c1", "c2"}


@pytest.mark.integration
@pytest.mark.slow  # ~40-90 s: real processes; deselect with -m 'not slow'
def test_register_saves_the_deployed_adapters_as_the_served_fedclip_artifact(deployment,
                                                                             tmp_path):
    from model_store.adapters import load_fedclip_adapter

    info, _, result, out_dir, _ = deployment
    version = register_main(["--deployment", str(Path(info["server"]).parent),
                             "--store", str(tmp_path / "store")])
    for client, path in ((None, "global"), ("c1", "personal_c1")):
        adapter, text, classes, _ = load_fedclip_adapter(tmp_path / "store", client, version)
        saved = load_file(str(out_dir / f"{path}.safetensors"))
        assert classes == ["a", "b", "c"] and text.shape == (3, 8)
        for k, v in adapter.state_dict().items():
            assert torch.equal(v, saved[f"adapter.{k}"]), (client, k)


@pytest.mark.integration
@pytest.mark.slow  # ~40-90 s: real processes; deselect with -m 'not slow'
def test_every_supernode_installed_the_same_fab_of_app_code(deployment):
    """Each SuperNode installs the FAB it received under its own FLWR_HOME: the same build
    (same hash in the folder name) of trainer/ and model_store/ only."""
    homes = deployment[4]
    apps = [list((homes / f"supernode{i}" / "apps").iterdir()) for i in range(3)]
    assert all(len(a) == 1 for a in apps) and len({a[0].name for a in apps}) == 1
    app_dir = apps[0][0]
    assert {p.name for p in app_dir.iterdir() if not p.name.startswith(".")} == {
        "pyproject.toml", "trainer", "model_store"}
    assert (app_dir / "trainer" / "federated" / "client_app.py").exists()
