"""The federated apps on a real Flower deployment over loopback: a SuperLink process, one
SuperNode process per client and ``flwr run`` on this project (its ``[tool.flwr.app]``).

End to end: ``tailor train federated-prepare`` writes the server and per-client folders from a
backbone and a tiny 4-domain set; three SuperNodes each see only their own folder; the result the
ServerApp writes must be the sample-weighted mean of the clients' local training, reproduced here
outside Flower from the clients' own folders.
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
    flwr_run,
    local_deployment,
    prepare_main,
    suggested_run_config,
    wait_for_result,
)
from trainer.federated.server_app import deployment_config
from trainer.federated.task import build_model, client_seed, load_client, train_local

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


def test_config_string_quotes_strings_for_flower():
    from flwr.common.config import parse_config_args

    values = {"fed-dir": "/a b/c", "rounds": 2, "lr": 0.003, "flag": True}
    assert parse_config_args([config_string(values)]) == values


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deploy")
    _tiny_pacs(tmp / "pacs.npz")
    prep = prepare_main(["--pacs-npz", str(tmp / "pacs.npz"), "--backbone", "default",
                         "--device", "cpu", "--data-dir", str(tmp / "data"),
                         "--out", str(tmp / "fed"), "--method", "fedclip",
                         "--domains", *PARTICIPANTS, "--seed", "1"])
    out_dir = tmp / "result"
    run_cfg = {"fed-dir": prep["folders"]["server"], "image-dim": prep["folders"]["image_dim"],
               "num-clients": 3, "rounds": 1, "lr": 0.01, "local-epochs": 2, "batch-size": 8,
               "seed": 3, "personal-epochs": 1, "out-dir": str(out_dir)}
    with local_deployment(prep["folders"]["clients"], tmp / "flower") as dep:
        run_id = flwr_run(ROOT, dep, config_string(run_cfg))
        result = wait_for_result(dep, run_id, out_dir, timeout=240)
        homes = tmp / "flower" / "home"
    return prep, run_cfg, result, out_dir, homes


def test_prepared_folders_hold_only_their_own_client(deployment):
    prep = deployment[0]
    assert not list(Path(prep["folders"]["server"]).glob("client_*.npz"))
    for i, folder in enumerate(prep["folders"]["clients"]):
        assert sorted(p.name for p in Path(folder).glob("client_*.npz")) == [f"client_{i}.npz"]
    assert prep["clients"] == PARTICIPANTS
    assert json.loads((Path(prep["folders"]["server"]) / "spec.json").read_text())["clients"] \
        == PARTICIPANTS


def test_deployed_global_adapter_is_the_sample_weighted_mean(deployment):
    prep, run_cfg, result, out_dir, _ = deployment
    assert result["errors"] == []
    server = prep["folders"]["server"]
    torch.manual_seed(run_cfg["seed"])  # the ServerApp's initial adapter, rebuilt here
    init = build_model(server, run_cfg["image-dim"]).exchanged()
    states, weights = [], []
    for i, folder in enumerate(prep["folders"]["clients"]):  # each client's round 1, by hand
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
                        "adapter.fc2.bias"}
    for k, v in got.items():
        expected = sum(wi * s[k].double() for wi, s in zip(w, states, strict=True))
        uniform = sum(s[k].double() for s in states) / len(states)
        assert torch.allclose(v.double(), expected, atol=1e-5), k
        assert not torch.allclose(v.double(), uniform, atol=1e-4), k
        assert not torch.allclose(v, init[k], atol=1e-4), k


def test_result_accounts_rounds_evaluation_and_personalisation(deployment):
    _, run_cfg, result, out_dir, _ = deployment
    (rnd,) = result["rounds"]
    n_params = 2 * run_cfg["image-dim"] ** 2 + 2 * run_cfg["image-dim"]  # fc1 + fc2, full rank
    assert rnd["clients"] == 3 and rnd["params_per_client"] == n_params
    assert rnd["bytes_down"] == rnd["bytes_up"]
    assert 4 * n_params * 3 <= rnd["bytes_up"] < 4 * n_params * 3 + 4096
    assert set(result["client_eval"][-1]) == set(PARTICIPANTS)
    for name, metrics in result["personal"].items():
        assert metrics["val_acc"] >= result["client_eval"][-1][name]["val_acc"]
        assert (out_dir / f"personal_{name}.safetensors").exists()
    assert set(result["personal"]) == set(PARTICIPANTS)


def test_the_fab_carries_only_the_app_code(deployment):
    """`flwr run .` packs the project: [tool.flwr.app] fab-include keeps .venv, data, tests,
    docs and results out. Each SuperNode installs the FAB it received under its FLWR_HOME."""
    (app_dir,) = (deployment[4] / "supernode0" / "apps").iterdir()
    top = {p.name for p in app_dir.iterdir() if not p.name.startswith(".")}
    assert top == {"pyproject.toml", "trainer", "model_store"}
    files = [p for p in app_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert all(p.suffix == ".py" for p in files if p.name != "pyproject.toml" and
               ".info" not in p.parts)
    assert (app_dir / "trainer" / "federated" / "client_app.py").exists()
