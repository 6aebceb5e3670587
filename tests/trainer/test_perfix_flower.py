"""FedPerfix in a real Flower simulation (Ray), 4 clients, 2 rounds, on a tiny ViT foundation:
the aggregate, what travels, and that each client's local part survives between rounds."""

from __future__ import annotations

import pytest
import torch

from model_store.testing import make_tiny_foundation
from trainer.federated.synthetic import synthetic_client
from trainer.federated.task import ClientData, client_seed
from trainer.perfix.federation import perfix_job, run_jobs, run_perfix
from trainer.perfix.task import accuracy, build_model, exchanged, local_state, train_local

C = 3
SIZES = (30, 12, 20, 40)  # unequal: sample weighting differs from uniform


def _client(i: int, n: int) -> ClientData:
    return synthetic_client(i, n, C, seed=70)


@pytest.fixture(scope="module")
def federation(tmp_path_factory):
    ref, _ = make_tiny_foundation(tmp_path_factory.mktemp("store"), layers=2)
    spec = {"foundation": f"local-dir:{ref.path}", "method": "fedperfix", "num_classes": C,
            "init_seed": 3, "rank": 4, "scale": 0.8}
    cfg = {"method": "fedavg", "weighting": "samples", "rounds": 2, "lr": 3e-3,
           "local_epochs": 1, "batch_size": 8, "weight_decay": 0.05, "seed": 5}
    clients = [_client(i, n) for i, n in enumerate(SIZES)]
    fed_dir = tmp_path_factory.mktemp("fed")
    sink = run_perfix(fed_dir, clients, spec, cfg)
    return str(fed_dir), clients, cfg, sink, spec


def _reproduce(fed_dir: str, clients: list[ClientData], cfg: dict, rounds: int):
    """Every round outside Flower: each client starts from the global state plus its own
    local part of the previous round; the server takes the sample-weighted mean."""
    torch.set_num_threads(1)  # as on the simulated clients
    glob = exchanged(build_model(fed_dir))
    local = [local_state(build_model(fed_dir)) for _ in clients]
    w = torch.tensor(SIZES, dtype=torch.float64) / sum(SIZES)
    for rnd in range(1, rounds + 1):
        sent = []
        for i, c in enumerate(clients):
            model = build_model(fed_dir)
            model.load_state_dict({**glob, **local[i]}, strict=False)
            train_local(model, c, {**cfg, "seed": client_seed(cfg["seed"], rnd, c.num("train"))})
            sent.append(exchanged(model))
            local[i] = local_state(model)
        glob = {k: sum(wi * s[k].double() for wi, s in zip(w, sent, strict=True)).float()
                for k in glob}  # fmt: skip
    return glob, local


def test_aggregate_and_client_scores_match_an_independent_reproduction(federation):
    fed_dir, clients, cfg, sink, _ = federation
    glob, local = _reproduce(fed_dir, clients, cfg, cfg["rounds"])
    got = sink["global_state"]
    assert set(got) == set(glob)
    for k in got:
        torch.testing.assert_close(got[k], glob[k], atol=5e-5, rtol=1e-4)
    final = sink["client_eval"][-1]
    for i, c in enumerate(clients):  # each client is scored with global + its own part
        model = build_model(fed_dir)
        model.load_state_dict({**got, **local[i]}, strict=False)
        assert final[i]["test_acc"] == pytest.approx(accuracy(model, c, "test"), abs=1e-9)
    heads = [local[i]["head.weight"] for i in range(len(clients))]
    assert not torch.allclose(heads[0], heads[3])  # personal heads differ per client


def test_local_parts_never_leave_the_clients(federation):
    fed_dir, _, _, sink, _ = federation
    model = build_model(fed_dir)
    local = set(model.local_names())
    assert local and any(".attn.prefix." in n for n in local) and "head.weight" in local
    for upload, _ in sink["last_uploads"]:
        assert set(upload) == set(model.global_names())
    assert not local & set(sink["global_state"])
    assert sink["rounds"][0]["params_per_client"] == sum(
        p.numel() for n, p in model.named_parameters() if n in set(model.global_names()))


def test_federations_sharing_one_simulation_keep_their_own_client_state(
        federation, tmp_path):
    """A grid runs in one simulation (one Ray start); a node's round count and local part are
    kept per federation, so a run after another gives what it gives alone."""
    _, clients, cfg, alone, spec = federation
    first = perfix_job(tmp_path / "a", clients, spec, {**cfg, "lr": 1e-2})
    again = perfix_job(tmp_path / "b", clients, spec, cfg)
    run_jobs([first, again], num_nodes=len(clients))
    for k, v in alone["global_state"].items():
        torch.testing.assert_close(again["sink"]["global_state"][k], v, atol=5e-5, rtol=1e-4)
    assert any(not torch.allclose(first["sink"]["global_state"][k], v, atol=1e-3)
               for k, v in alone["global_state"].items())  # the other lr did change its run
