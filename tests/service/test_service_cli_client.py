"""The `tailor` service commands and the httpx client apps import, against a live server."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time

import httpx
import pytest
from safetensors.torch import load_file
from service_testkit import images, png
from typer.testing import CliRunner

from service.cli import app
from tailor.appcli import app as http_app
from tailor.client import TailorClient, TailorError


def test_keys_create_writes_a_working_key(live, monkeypatch, tmp_path):
    db_url = str(live.app.state.settings.database_url)
    monkeypatch.setenv("TAILOR_DATABASE_URL", db_url)
    result = CliRunner().invoke(app, ["keys", "create", "--name", "cli-app"])
    assert result.exit_code == 0, result.output
    made = json.loads(result.output)
    assert made["key"].startswith("tlr_") and made["client_id"].startswith("c_")
    with TailorClient(live.url, made["key"]) as client:
        assert client.catalogue()["default_method"] == "taper"
    revoked = CliRunner().invoke(app, ["keys", "revoke", made["key_id"]])
    assert revoked.exit_code == 0, revoked.output
    with TailorClient(live.url, made["key"], retries=0) as client:
        with pytest.raises(TailorError) as err:
            client.catalogue()
    assert err.value.status == 401
    again = CliRunner().invoke(app, ["keys", "revoke", made["key_id"]])
    assert again.exit_code == 1 and "no active key" in again.output


def test_personalize_and_predict_commands(live, tmp_path):
    args = ["--url", live.url, "--key", live.key]
    result = CliRunner().invoke(http_app, ["personalize", "classify cats and dogs", *args])
    assert result.exit_code == 0, result.output
    model = json.loads(result.output)
    assert model["classes"] == ["cat", "dog"]
    paths = []
    for i, im in enumerate(images(2, seed=9)):
        paths.append(tmp_path / f"{i}.png")
        paths[-1].write_bytes(png(im))
    out = CliRunner().invoke(
        http_app, ["predict", model["id"], *map(str, paths), "--top-k", "2", *args]
    )
    assert out.exit_code == 0, out.output
    assert [len(p) for p in json.loads(out.output)["predictions"]] == [2, 2]
    bad = CliRunner().invoke(http_app, ["personalize", "quantum physics and cats", *args])
    assert bad.exit_code == 1


def test_client_round_trip_and_errors(live, tmp_path):
    with TailorClient(live.url, live.key) as client:
        model = client.personalize(classes=["zero", "one", "two"])
        path = client.download_weights(model["id"], tmp_path / "m.safetensors")
        assert load_file(path)["fc.weight"].shape == (3, 512)
        assert client.weights(model["id"]) == path.read_bytes()
        preds = client.predict(model["id"], [png(im) for im in images(3)], top_k=3)
        assert len(preds["predictions"]) == 3
        refined = client.refine(model["id"], [png(im) for im in images(4)])
        assert refined["id"] == model["id"] and refined["changed"] is False  # nothing to add
        made = client.personalize(images=[png(im) for im in images(6)], k=2)
        assert len(made["classes"]) == 2 and made["inferred"]["k_estimated"] is False
        seen = client.observe(made["id"], [png(im) for im in images(4, seed=1)])
        assert seen["added"] == 4
        assert client.observations(seen["model_id"])["images_seen"] >= 4
        with pytest.raises(TailorError) as err:
            client.personalize(classes=["cat"], description="dogs")
        assert err.value.status == 422 and "exactly one" in err.value.problem["detail"]
    with TailorClient(live.url, "tlr_bad") as anon, pytest.raises(TailorError) as err:
        anon.catalogue()
    assert err.value.status == 401


def test_client_retries_503_honouring_retry_after_then_gives_up(run_live, make_settings,
                                                                private_postgres):  # fmt: skip
    pg = private_postgres
    with run_live(make_settings(pg.url())) as live:
        with TailorClient(live.url, live.key, retries=1, max_wait_s=0.05) as impatient:
            before = impatient.personalize(classes=["cat", "dog"])
            with pytest.raises(TailorError) as err:
                impatient.personalize(classes=["horse", "dog"], description="dogs")
            assert err.value.status == 422 and impatient.retried == 0  # a 4xx is never retried
            pg.stop()
            with pytest.raises(TailorError) as err:
                impatient.model(before["id"])
            assert err.value.status == 503 and impatient.retried == 1  # one retry, then give up
        with TailorClient(live.url, live.key) as patient:
            restarter = threading.Thread(
                target=lambda: (_wait(lambda: patient.retried >= 1), pg.start_existing())
            )
            restarter.start()
            t0 = time.monotonic()
            again = patient.personalize(classes=["cat", "dog"])  # 503 while down, then served
            elapsed = time.monotonic() - t0
            restarter.join(timeout=60)
        assert again["id"] == before["id"] and patient.retried >= 1
        assert elapsed >= 2.0  # waited the server's Retry-After (2 s), not just its own backoff


def test_client_retries_connection_errors_but_not_refine(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    with TailorClient(url, "tlr_x", retries=2, backoff_s=0.01) as client:
        with pytest.raises(httpx.ConnectError):
            client.catalogue()
        assert client.retried == 2
        with pytest.raises(httpx.ConnectError):
            client.refine("0" * 32, [png(images(1)[0])])  # not idempotent by contract: once
        assert client.retried == 2


def _wait(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_cli_reports_an_unreachable_server_after_retrying():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    result = CliRunner().invoke(
        http_app, ["personalize", "cats and dogs", "--url", url, "--key", "k"]
    )
    assert result.exit_code == 1 and f"cannot reach {url}" in result.output


def test_serve_notices_uvicorn_worker_start_failures():
    """`tailor serve` turns uvicorn's "child failed to start" log line into exit 3 (uvicorn
    itself exits 0 with workers > 1); this fails if uvicorn rewords the line."""
    import inspect

    from uvicorn.supervisors.multiprocess import Multiprocess

    from service.cli import _WorkerStartFailure

    source = inspect.getsource(Multiprocess.keep_subprocess_alive)
    line = source.split('logger.error(f"', 1)[1].split('")', 1)[0]
    seen = _WorkerStartFailure()
    record = logging.LogRecord("uvicorn.error", logging.ERROR, "", 0, line, None, None)
    assert seen.filter(record) and seen.seen


def test_client_waits_out_the_rate_limit(run_live, make_settings, tmp_path):
    """A 429 is retried after the server's Retry-After; a client that won't wait sees the 429."""
    url = f"sqlite:///{tmp_path / 'ratelimit.db'}"
    settings = make_settings(url, rate_limit_burst=2, rate_limit_per_minute=60)
    with run_live(settings) as live:
        with TailorClient(live.url, live.key, retries=0) as impatient:
            impatient.catalogue()
            impatient.catalogue()
            with pytest.raises(TailorError) as err:
                impatient.catalogue()
            assert err.value.status == 429 and impatient.retried == 0
        with TailorClient(live.url, live.key, retries=3, max_wait_s=5) as patient:
            assert patient.catalogue()["classes"]  # limited at first, then served
            assert patient.retried >= 1
