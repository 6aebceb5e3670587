"""Service fixtures: a tiny real TAPER artifact, settings, and apps under a real uvicorn."""

from __future__ import annotations

import re
from contextlib import contextmanager

import httpx
import pytest
from service_testkit import ADMIN_KEY, NUM_CLASSES, Q

from service.core.settings import Settings
from service.main import create_app

_LABEL = re.compile(r'(\w+)="([^"]*)"')


@pytest.fixture(scope="session")
def taper_store(tmp_path_factory):
    """A store holding one tiny (random-init, full-size ResNet-18) TAPER artifact."""
    from model_store.testing import make_tiny_taper
    from service.kinds.taper import load_text_encoder

    store = tmp_path_factory.mktemp("store")
    make_tiny_taper(store, num_classes=NUM_CLASSES, Q=Q, seed=0,
                    encoder=load_text_encoder(None, "cpu"))  # fmt: skip
    return store


@pytest.fixture(scope="session")
def make_settings(taper_store):
    """Factory for settings over the tiny store; keyword overrides pass through."""

    def make(database_url: str, **overrides) -> Settings:
        values = {
            "store_dir": taper_store, "database_url": database_url, "admin_key": ADMIN_KEY,
            "device": "cpu", "max_body_bytes": 2 * 1024 * 1024, "max_batch": 64,
            "max_image_pixels": 512 * 512, "redis_retry_s": 0.2, "redis_timeout_s": 0.5,
            "reader_path": None,  # a reader fitted by make demo would change which requests
            "tuned_reader_path": None,  # answer 422; test_service_reader.py,
            "phrase_reader_path": None,  # test_service_tuned.py and test_service_phrases.py
        }  # fmt: skip  # make their own
        values.update(overrides)
        return Settings(**values)

    return make


class Live:
    """A running server plus clients for the admin and one fresh client key."""

    def __init__(self, app, url: str) -> None:
        self.app, self.url = app, url
        self.anon = httpx.Client(base_url=url, timeout=60)
        self.admin = httpx.Client(base_url=url, timeout=60, headers=_bearer(ADMIN_KEY))
        made = self.admin.post("/v1/keys", json={"name": "tests"})
        assert made.status_code == 201, made.text
        self.key, self.client_id = made.json()["key"], made.json()["client_id"]
        self.http = httpx.Client(base_url=url, timeout=60, headers=_bearer(self.key))

    @property
    def personalizer(self):
        """The app's orchestration object (to evict caches in tests)."""
        return self.app.state.personalizer

    def metric(self, name: str, **labels) -> float:
        """Current value of a sample from /metrics (0 when absent); label order is irrelevant."""
        want = {k: str(v) for k, v in labels.items()}
        for line in self.anon.get("/metrics").text.splitlines():
            m = re.fullmatch(r"(\w+)(?:\{(.*)\})? (\S+)", line)
            if m and m.group(1) == name and dict(_LABEL.findall(m.group(2) or "")) == want:
                return float(m.group(3))
        return 0.0

    def close(self) -> None:
        for c in (self.anon, self.admin, self.http):
            c.close()


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="session")
def run_live(serve_app):
    """Context manager factory: ``with run_live(settings) as live: ...`` (real uvicorn)."""

    @contextmanager
    def run(settings: Settings):
        app = create_app(settings)
        with serve_app(app) as server:
            live = Live(app, server.url)
            try:
                yield live
            finally:
                live.close()

    return run


@pytest.fixture(scope="module")
def live(taper_store, make_settings, redis_server, tmp_path_factory, serve_app):
    """Module-wide app on real Redis + SQLite under a real uvicorn."""
    db = tmp_path_factory.mktemp("db") / "tailor.db"
    app = create_app(make_settings(f"sqlite:///{db}", redis_url=redis_server.url))
    with serve_app(app) as server:
        live = Live(app, server.url)
        yield live
        live.close()


@pytest.fixture(scope="session")
def pacs():
    """The request resolver over the Tailor-PACS catalogue with the real bundled MiniLM, at
    the service's default thresholds (shared by the context and fields tests)."""
    from service.core.settings import Settings
    from service.kinds.resolution import ClassResolver
    from service.kinds.taper import load_text_encoder
    from trainer.data.catalogue import catalogue_json

    s = Settings()
    return ClassResolver(catalogue_json(), load_text_encoder(None, "cpu"), s.match_threshold,
                         s.match_margin, (s.match_described_threshold, s.match_described_margin))


@pytest.fixture(scope="session")
def named_forest():
    """A forest reader of refusals that is one split: a class its terms name (feature 0) gets
    +10 log-odds, any other -10; "mice and dogs and cats" reads dog and cat."""
    import numpy as np

    from service.kinds.forest import Forest
    from service.kinds.reader import CONTEXT, CONTEXT_DIMS, N_FEATURES, Reader

    arrays = {"feature": np.array([0, 0, 0]), "threshold": np.array([0.5, 0.0, 0.0]),
              "left": np.array([1, 0, 0]), "right": np.array([2, 0, 0]),
              "leaf": np.array([0, 1, 1], np.uint8), "value": np.array([0.0, -10.0, 10.0]),
              "missing_left": np.zeros(3, np.uint8), "roots": np.zeros(1, int),
              "baseline": np.zeros(1), CONTEXT[0]: np.zeros(384),
              CONTEXT[1]: np.zeros((CONTEXT_DIMS, 384))}  # fmt: skip
    return Reader(Forest(arrays, N_FEATURES + CONTEXT_DIMS))
