"""App factory: ``create_app(settings)`` with a lifespan that owns every long-lived resource.

The lifespan loads the TAPER artifact once onto the runtime device, brings the database schema to
Alembic head (or refuses an old one), connects Redis when configured, records the artifact in the
registry, and closes everything on shutdown. When the store holds a FedCLIP adapter artifact it is
loaded too (with its backbone) and its clients are registered in SQL (``service.kinds.fedclip``);
so are anytime and FedPerfix artifacts (``service.kinds.anytime``, ``service.kinds.perfix``).
Routes reach these through ``app.state``.
"""

from __future__ import annotations

import logging
import os
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy.orm import sessionmaker
from starlette.concurrency import run_in_threadpool

from service.api.middleware import (
    BodyLimitMiddleware,
    MetricsMiddleware,
    NoCredentialsInUrlMiddleware,
    RedactQuery,
    ResponseGateMiddleware,
)
from service.api.ratelimit import build_limiter
from service.api.routes import admin, docs, health, models, personalize
from service.cache.redislink import RedisLink
from service.cache.weight_cache import RedisWeightCache
from service.core import db, problems
from service.core.lru import ModuleLRU
from service.core.metrics import Metrics, worker_exited
from service.core.settings import Settings
from service.kinds.anytime import AnytimeKind, load_anytime
from service.kinds.base import KindRegistry
from service.kinds.fedclip import FedClipKind, Federation
from service.kinds.perfix import PerfixKind, load_perfix
from service.kinds.taper import TaperKind
from service.observing import Observer
from service.personalization import Personalizer

log = logging.getLogger(__name__)


def _start(app: FastAPI, settings: Settings) -> None:
    """Blocking start-up work (run in a thread so the event loop stays responsive)."""
    metrics: Metrics = app.state.metrics
    engine = db.prepare_database(settings.database_url, migrate=settings.migrate_on_start)
    app.state.engine = engine
    app.state.sessions = sessionmaker(engine, expire_on_commit=False)
    kinds = _load_kinds(settings, metrics, app.state.sessions)
    with app.state.sessions.begin() as s:
        for kind in kinds:
            kind.register(s)
    link, redis = app.state.redis_link, None
    if link is not None:
        redis = RedisWeightCache(link, metrics, ttl_s=settings.redis_ttl_s)
        if not link.ping():
            log.warning("redis at %s is not reachable; starting without it", settings.redis_url)
    app.state.personalizer = Personalizer(
        kinds=kinds, lru=ModuleLRU(settings.memory_cache_bytes, metrics),
        sessions=app.state.sessions, redis=redis, metrics=metrics,
        public_url=settings.public_url, row_ttl_s=settings.row_cache_ttl_s, settings=settings,
    )  # fmt: skip
    app.state.observer = Observer(app.state.personalizer)


def _load_kinds(settings: Settings, metrics: Metrics, sessions: sessionmaker) -> KindRegistry:
    """The deployed model kinds: TAPER (required), FedCLIP, anytime and FedPerfix (when the
    store has their artifacts; FedCLIP first, so it keeps the client ids it had).

    A new kind is one module implementing ``service.kinds.base.ModelKind`` and one line here.
    """
    taper = TaperKind.load(settings, metrics)
    federation = Federation.load(settings, taper.device)
    return KindRegistry([taper, FedClipKind(federation, sessions),
                         AnytimeKind(load_anytime(settings, taper.device), sessions),
                         PerfixKind(load_perfix(settings, taper.device), sessions)])  # fmt: skip


def _stop(app: FastAPI) -> None:
    worker_exited(os.getpid())
    personalizer = getattr(app.state, "personalizer", None)
    if personalizer is not None:
        personalizer.close()
        personalizer.lru.clear()
    engine = getattr(app.state, "engine", None)
    if engine is not None:
        engine.dispose()
    if app.state.redis_link is not None:
        app.state.redis_link.close()


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the FastAPI app for ``settings`` (defaults: ``Settings()`` from the environment)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await run_in_threadpool(_start, app, settings)
        try:
            yield
        finally:
            await run_in_threadpool(_stop, app)

    app = FastAPI(
        title="Tailor",
        version="0.1.0",
        summary="Personalized ResNet-18s synthesized from a task description, no training.",
        lifespan=lifespan,
        openapi_url=None, docs_url=None, redoc_url=None,  # service.api.routes.docs: no CDN
    )  # fmt: skip
    app.state.settings = settings
    app.state.metrics = Metrics()
    app.state.redis_link = (
        RedisLink(settings.redis_url, app.state.metrics, retry_s=settings.redis_retry_s,
                  timeout_s=settings.redis_timeout_s)
        if settings.redis_url else None
    )  # fmt: skip  (one pool and one back-off window for the cache and the limiter)
    app.state.ratelimiter = build_limiter(settings, app.state.metrics, app.state.redis_link)
    problems.install(app)
    for module in (personalize, models, admin, health):  # versioned prefixes live in modules
        errors = (500, 503) if module is health else problems.API_ERRORS
        app.include_router(module.router, responses=problems.openapi_responses(*errors))
    docs.install(app, settings.access("openapi"))
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_body_bytes,
                       timeout_s=settings.body_timeout_s)  # fmt: skip
    app.add_middleware(NoCredentialsInUrlMiddleware)
    app.add_middleware(ResponseGateMiddleware)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    RedactQuery.install()
    return app
