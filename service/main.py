"""App factory: ``create_app(settings)`` with a lifespan that owns every long-lived resource.

The lifespan loads the TAPER artifact once onto the runtime device, brings the database schema to
Alembic head (or refuses an old one), connects Redis when configured, records the artifact in the
registry, and closes everything on shutdown. When the store holds a FedCLIP adapter artifact it is
loaded too (with its backbone) and its clients are registered in SQL (``service.federation``).
Routes reach these through ``app.state``.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy.orm import sessionmaker
from starlette.concurrency import run_in_threadpool

from service import crud, db, problems
from service.api.routes import admin, health, models, personalize
from service.federation import Federation
from service.metrics import Metrics
from service.middleware import BodyLimitMiddleware, MetricsMiddleware
from service.personalization import Personalizer
from service.ratelimit import build_limiter
from service.redislink import RedisLink
from service.resolution import ClassResolver
from service.runtime import Runtime, load_text_encoder
from service.settings import Settings
from service.weight_cache import RedisWeightCache

log = logging.getLogger(__name__)


def _start(app: FastAPI, settings: Settings) -> None:
    """Blocking start-up work (run in a thread so the event loop stays responsive)."""
    metrics: Metrics = app.state.metrics
    engine = db.prepare_database(settings.database_url, migrate=settings.migrate_on_start)
    app.state.engine = engine
    app.state.sessions = sessionmaker(engine, expire_on_commit=False)
    runtime = Runtime.load(settings, metrics)
    federation = Federation.load(settings, runtime.device, runtime.lru)
    with app.state.sessions.begin() as s:
        crud.register_artifact(
            s, kind="taper", version=runtime.version,
            manifest_sha256=runtime.manifest_sha256, metrics=runtime.metrics,
        )  # fmt: skip
        if federation is not None:
            federation.register(s)
    encoder = load_text_encoder(settings.text_encoder, "cpu")
    resolver = ClassResolver(runtime.catalogue, encoder, settings.match_threshold)
    link, redis = app.state.redis_link, None
    if link is not None:
        redis = RedisWeightCache(link, metrics, ttl_s=settings.redis_ttl_s)
        if not link.ping():
            log.warning("redis at %s is not reachable; starting without it", settings.redis_url)
    app.state.personalizer = Personalizer(
        runtime=runtime, sessions=app.state.sessions, redis=redis, metrics=metrics,
        resolver=resolver, public_url=settings.public_url, federation=federation,
    )  # fmt: skip


def _stop(app: FastAPI) -> None:
    personalizer = getattr(app.state, "personalizer", None)
    if personalizer is not None:
        personalizer.close()
        personalizer.runtime.lru.clear()
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
        docs_url=None if settings.env == "prod" else "/docs",  # schema stays public; no UI in prod
        redoc_url=None if settings.env == "prod" else "/redoc",
    )
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
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    return app
