"""Personalize from what the app sees (issue 18): images-only models, streams, /refine, notes.

On a tiny artifact whose all-class model and domain head read synthetic images (colour = class,
texture = domain; ``model_store.testing_images``), under a real uvicorn on real SQLite and
PostgreSQL, and a real two-worker ``tailor serve``.
"""

from __future__ import annotations

import concurrent.futures as cf

import httpx
import pytest
from service_testkit import ADMIN_KEY, b64, png

from model_store.testing import TINY_DOMAINS
from model_store.testing_images import make_readable_taper, synthetic_batch

N = 12


@pytest.fixture(scope="module")
def readable_store(tmp_path_factory):
    from service.kinds.taper import load_text_encoder

    store = tmp_path_factory.mktemp("readable")
    make_readable_taper(store, num_classes=N, encoder=load_text_encoder(None, "cpu"))
    return store


@pytest.fixture(scope="module")
def settings_for(make_settings, readable_store):
    return lambda url, **kw: make_settings(url, store_dir=readable_store, **kw)


@pytest.fixture(scope="module")
def app_live(settings_for, run_live, tmp_path_factory):
    db = tmp_path_factory.mktemp("db") / "t.db"
    with run_live(settings_for(f"sqlite:///{db}")) as live:
        yield live


@pytest.fixture(scope="module")
def names(app_live):
    return [c["name"] for c in app_live.http.get("/v1/catalogue").json()["classes"]]


def batch(classes, domain, n=24, seed=0) -> list[str]:
    imgs, _ = synthetic_batch(list(classes), domain, n, N, seed)
    return [b64(png(im)) for im in imgs]


def multipart(images: list[str]) -> list:
    import base64

    return [("files", (f"{i}.png", base64.b64decode(s), "image/png"))
            for i, s in enumerate(images)]


def test_images_alone_give_the_classes_and_domain_they_show(app_live, names):
    made = app_live.http.post("/v1/personalize", json={"images": batch([1, 5, 9], 2)})
    assert made.status_code == 200, made.text
    body = made.json()
    assert body["classes"] == [names[i] for i in (1, 5, 9)] and body["domain"] == TINY_DOMAINS[2]
    inferred = body["inferred"]
    assert inferred["k_estimated"] and inferred["domain"] == TINY_DOMAINS[2]
    assert {c["name"] for c in inferred["classes"]} == set(body["classes"])
    assert sum(c["count"] for c in inferred["classes"]) == 24 and inferred["images"] == 24
    assert any("estimated" in n for n in body["notes"])
    same = app_live.http.post("/v1/personalize", json={
        "classes": body["classes"], "domain": TINY_DOMAINS[2]}).json()  # fmt: skip
    assert same["id"] == body["id"]  # the same task is the same model


def test_k_given_by_multipart_fixes_the_number_of_classes(app_live, names):
    images = multipart(batch([0, 4, 8], 1, seed=3))
    three = app_live.http.post("/v1/personalize", files=images, data={"k": "3"})
    assert three.status_code == 200, three.text
    assert three.json()["classes"] == [names[i] for i in (0, 4, 8)]
    assert three.json()["inferred"]["k_estimated"] is False
    four = app_live.http.post("/v1/personalize", files=images, data={"k": "4"}).json()
    assert len(four["classes"]) == 4 and {names[i] for i in (0, 4, 8)} <= set(four["classes"])


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_bad_images_only_requests_are_clear_4xx(database, settings_for, run_live, tmp_path,
                                                request):  # fmt: skip
    url = (f"sqlite:///{tmp_path}/t.db" if database == "sqlite"
           else request.getfixturevalue("postgres_server").create_database(f"u_{tmp_path.name}"[:60].lower()))  # noqa: E501
    with run_live(settings_for(url)) as live:
        good = batch([1, 2], 0, n=4)
        cases = [
            ({"images": []}, 422), ({"images": good, "k": 1}, 422),
            ({"images": good, "k": N + 1}, 422), ({"images": good, "description": "cats"}, 422),
            ({"classes": ["cat", "dog"], "k": 2}, 422), ({"images": [b64(b"not an image")]}, 400),
            ({"images": good, "domain": "underwater"}, 422),
            ({"images": batch([1], 0, n=65)}, 413),
        ]
        for body, status in cases:
            resp = live.http.post("/v1/personalize", json=body)
            assert resp.status_code == status, (body.keys(), resp.text)
            assert resp.headers["content-type"].startswith("application/problem+json")
        empty = live.http.post("/v1/personalize", files=[("k", (None, "3"))])
        assert empty.status_code == 422, empty.text
        for k in ("0", "abc", "1", str(N + 1)):
            bad = live.http.post("/v1/personalize", files=multipart(good), data={"k": k})
            assert bad.status_code == 422, (k, bad.text)
        bad = live.http.post("/v1/personalize", files=multipart(good), data={"method": "magic"})
        assert bad.status_code == 422, bad.text
        assert live.http.get("/v1/models").json()["items"] == []  # nothing half-made
        made = live.http.post("/v1/personalize", json={"images": good}).json()
        assert live.http.delete(f"/v1/models/{made['id']}").status_code == 204  # with a stream
        gone = live.http.get(f"/v1/models/{made['id']}/observations")
        assert gone.status_code == 404 and gone.json()["type"].endswith("model-not-found")


def test_a_stream_follows_the_scene_and_survives_a_restart(settings_for, run_live, tmp_path,
                                                           names):  # fmt: skip
    settings = settings_for(f"sqlite:///{tmp_path}/t.db")
    with run_live(settings) as live:
        first = live.http.post("/v1/personalize", json={
            "classes": [names[i] for i in (0, 1, 2)], "method": "taper"}).json()  # fmt: skip
        seen = live.http.post(f"/v1/models/{first['id']}/observe",
                              json={"images": batch([6, 7, 8], 3, seed=1)})
        assert seen.status_code == 200, seen.text
        moved = seen.json()
        assert moved["changed"] and moved["model_id"] != first["id"] and moved["added"] == 24
        assert moved["model"]["parent_id"] == first["id"]
        assert moved["model"]["classes"] == [names[i] for i in (6, 7, 8)]
        assert moved["model"]["domain"] == TINY_DOMAINS[3]  # taper uses the domain
        again = live.http.post(f"/v1/models/{moved['model_id']}/observe",
                               json={"images": batch([6, 7, 8], 3, seed=2)}).json()
        assert not again["changed"] and again["model_id"] == moved["model_id"]
        state = live.http.get(f"/v1/models/{moved['model_id']}/observations").json()
        key = live.key
    with run_live(settings) as live:  # a new app: only SQL remains; the same key reads it
        after = httpx.get(f"{live.url}/v1/models/{moved['model_id']}/observations",
                          headers={"Authorization": f"Bearer {key}"})
    assert after.status_code == 200 and after.json() == state
    assert state["images_seen"] == 48 and state["matches_model"]


def test_a_stream_moving_onto_an_existing_model_adds_to_its_stream(app_live, names):
    """The task a stream moves to may already be one of the caller's models with a stream of
    its own: the batch is added to it, never written over it."""
    there = app_live.http.post("/v1/personalize", json={
        "classes": [names[i] for i in (3, 10, 11)], "domain": TINY_DOMAINS[0],
        "method": "taper"}).json()  # fmt: skip
    app_live.http.post(f"/v1/models/{there['id']}/observe",
                       json={"images": batch([3, 10, 11], 0, n=8, seed=20)})
    here = app_live.http.post("/v1/personalize", json={
        "classes": [names[i] for i in (4, 5, 6)], "method": "taper"}).json()  # fmt: skip
    moved = app_live.http.post(f"/v1/models/{here['id']}/observe",
                               json={"images": batch([3, 10, 11], 0, seed=21)}).json()
    assert moved["changed"] and moved["model_id"] == there["id"]
    state = app_live.http.get(f"/v1/models/{there['id']}/observations").json()
    assert state["images_seen"] == 8 + 24 and state["images_kept"] == 32


def test_a_chosen_domain_survives_a_mixed_scene(app_live, names):
    """No confident domain (a mixed batch) is not a reason to drop the one the user chose."""
    made = app_live.http.post("/v1/personalize", json={
        "classes": [names[7], names[9]], "domain": TINY_DOMAINS[3],
        "method": "taper"}).json()  # fmt: skip
    mixed = batch([7, 9], 0, n=12, seed=30) + batch([7, 9], 1, n=12, seed=31) + \
        batch([7, 9], 2, n=12, seed=32)
    out = app_live.http.post(f"/v1/models/{made['id']}/observe", json={"images": mixed}).json()
    assert out["estimate"]["domain"] is None
    assert not out["changed"] and out["model_id"] == made["id"]


def test_the_stream_is_bounded_and_old_images_fade(settings_for, run_live, tmp_path, names):
    settings = settings_for(f"sqlite:///{tmp_path}/t.db", observe_max_images=40,
                            observe_half_life=16.0)
    with run_live(settings) as live:
        made = live.http.post("/v1/personalize", json={"images": batch([0, 1], 0, seed=4)})
        mid = made.json()["id"]
        for seed in range(3):  # the scene changes to classes 3 and 4 in another domain
            out = live.http.post(f"/v1/models/{mid}/observe",
                                 json={"images": batch([3, 4], 1, seed=10 + seed)}).json()
            mid = out["model_id"]
        state = live.http.get(f"/v1/models/{mid}/observations").json()
    assert state["images_kept"] == 40 and state["images_seen"] == 24 * 4
    assert {c["name"] for c in state["estimate"]["classes"]} == {names[3], names[4]}
    # 40 kept images, the newest 24 at weight ~1 and the 16 before them one batch older:
    # 24 + 16 * 0.5 ** (24 / 16) ~ 29.7 with half-life 16 (a plain count would be 40)
    assert state["estimate"]["images"] == pytest.approx(24 + 16 * 0.5 ** 1.5, abs=0.2)


def test_refine_keeps_the_method_and_returns_the_parent_when_nothing_improves(app_live, names):
    sel = app_live.http.post("/v1/personalize", json={
        "classes": [names[i] for i in (2, 3)], "method": "selection"}).json()  # fmt: skip
    out = app_live.http.post(f"/v1/models/{sel['id']}/refine",
                             json={"images": batch([2, 3], 1, seed=5)})
    assert out.status_code == 200, out.text
    same = out.json()
    assert not same["changed"] and same["id"] == sel["id"] and same["method"] == "selection"
    assert sum(same["pseudo_labels"].values()) == 24 and same["notes"]
    tap = app_live.http.post("/v1/personalize", json={
        "classes": [names[i] for i in (2, 3)], "method": "taper"}).json()  # fmt: skip
    new = app_live.http.post(f"/v1/models/{tap['id']}/refine",
                             json={"images": batch([2, 3], 1, seed=6)}).json()
    assert new["changed"] and new["parent_id"] == tap["id"] and new["method"] == "taper"
    assert new["domain"] == TINY_DOMAINS[1] and new["classes"] == tap["classes"]


def test_notes_say_when_the_domain_has_no_effect(app_live, names):
    made = app_live.http.post("/v1/personalize", json={
        "classes": [names[0], names[1]], "domain": "sketch", "method": "selection"}).json()
    assert any("does not change the weights" in n for n in made["notes"]), made["notes"]
    taper = app_live.http.post("/v1/personalize", json={
        "classes": [names[0], names[1]], "domain": "sketch", "method": "taper"}).json()
    assert not any("does not change the weights" in n for n in taper["notes"])


def test_another_key_cannot_observe_refine_or_read_a_stream(app_live):
    mine = app_live.http.post("/v1/personalize", json={"images": batch([5, 6], 0)}).json()
    key = app_live.admin.post("/v1/keys", json={"name": "other"}).json()["key"]
    with httpx.Client(base_url=app_live.url, timeout=60,
                      headers={"Authorization": f"Bearer {key}"}) as other:  # fmt: skip
        url = f"/v1/models/{mine['id']}"
        for resp in (other.post(f"{url}/observe", json={"images": batch([5], 0, n=2)}),
                     other.post(f"{url}/refine", json={"images": batch([5], 0, n=2)}),
                     other.get(f"{url}/observations")):  # fmt: skip
            assert resp.status_code == 404 and resp.json()["type"].endswith("model-not-found")
    mine_state = app_live.http.get(f"/v1/models/{mine['id']}/observations").json()
    assert mine_state["images_seen"] == 24  # the stream started with the personalizing images


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_two_workers_share_one_stream(database, readable_store, private_redis, tmp_path,
                                      request):  # fmt: skip
    """``tailor serve --workers 2``: concurrent observations from both workers all count."""
    import os

    from fault_kit import ServeProcess

    url = (f"sqlite:///{tmp_path}/t.db" if database == "sqlite" else request.getfixturevalue(
        "postgres_server").create_database(f"w_{os.getpid()}_{tmp_path.name[-8:]}".lower()))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAILOR_")}
    env.update(TAILOR_STORE_DIR=str(readable_store), TAILOR_DATABASE_URL=url,
               TAILOR_ADMIN_KEY=ADMIN_KEY, TAILOR_DEVICE="cpu", TAILOR_REDIS_URL=private_redis.url)
    server = ServeProcess(env, workers=2, log=tmp_path / "serve.log")
    try:
        server.wait_started(2, timeout=180)
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        key = httpx.post(f"{server.url}/v1/keys", json={"name": "w"}, headers=admin).json()["key"]
        http = httpx.Client(base_url=server.url, timeout=120,
                            headers={"Authorization": f"Bearer {key}"})  # fmt: skip
        made = http.post("/v1/personalize", json={"images": batch([2, 9], 2, n=8)}).json()
        url = f"/v1/models/{made['id']}/observe"
        with cf.ThreadPoolExecutor(8) as pool:
            outs = list(pool.map(lambda s: http.post(url, json={"images": batch([2, 9], 2, n=8,
                                                                                seed=s)}),
                                 range(8)))
        assert all(o.status_code == 200 for o in outs), [o.text for o in outs]
        state = http.get(f"/v1/models/{made['id']}/observations").json()
        assert state["images_seen"] == 8 + 8 * 8 and state["images_kept"] == 72
    finally:
        server.stop()


def test_a_model_of_another_artifact_is_refused_before_anything_is_made(
        settings_for, make_settings, run_live, tmp_path, names):
    """/refine, /observe and /observations on a row whose artifact is no longer deployed
    answer 409 (posteriors of another catalogue must never meet the row's class indices)."""
    url = f"sqlite:///{tmp_path}/t.db"
    with run_live(settings_for(url)) as live:
        made = live.http.post("/v1/personalize", json={"images": batch([1, 5], 0)}).json()
        key = live.key
    with run_live(make_settings(url)) as live:  # the tiny random artifact: another version
        http = httpx.Client(base_url=live.url, timeout=60,
                            headers={"Authorization": f"Bearer {key}"})
        url_m = f"/v1/models/{made['id']}"
        for resp in (http.post(f"{url_m}/refine", json={"images": batch([1], 0, n=4)}),
                     http.post(f"{url_m}/observe", json={"images": batch([1], 0, n=4)}),
                     http.get(f"{url_m}/observations")):
            assert resp.status_code == 409, resp.text
            assert resp.json()["type"].endswith("artifact-version-mismatch")
        assert [m["id"] for m in http.get("/v1/models").json()["items"]] == [made["id"]]
