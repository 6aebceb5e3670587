"""One pydantic-settings class for the service; passed into ``create_app`` so tests can override it.

Every knob lives here (env prefix ``TAILOR_``) so an operator can read one file to know what the
service can be told. Validators refuse unsafe values outside ``dev`` (no admin key, a short one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Service configuration, read from ``TAILOR_*`` environment variables.

    Attributes:
        env: ``dev`` allows a missing admin key; ``prod`` refuses to start without a strong one.
        store_dir: artifact store holding ``taper/<version>/`` directories.
        artifact_version: which TAPER artifact to serve (``latest`` follows ``LATEST``).
        database_url: SQLAlchemy URL; SQLite file by default, ``postgresql+psycopg://`` in prod.
        migrate_on_start: run ``alembic upgrade head`` in the lifespan; when False the service
            refuses to start on an out-of-date schema instead.
        redis_url: weight cache; unset means the in-process tier only.
        redis_ttl_s: lifetime of a cached weight blob; SQL recipes make expiry harmless.
        redis_retry_s: after a Redis failure, skip Redis this long before trying again, so a dead
            Redis costs one failed call per interval instead of one per request.
        memory_cache_bytes: byte budget of the in-process LRU of ready nn.Modules.
        row_cache_ttl_s: how long a worker serves an immutable model row from memory without
            asking SQL (a DELETE through another worker or replica takes effect within it).
        max_body_bytes: request bodies above this get 413 before they are parsed.
        max_batch: images per /predict or /refine call.
        max_image_pixels: width × height above which an image is refused as a decompression bomb.
        match_threshold: cosine similarity below which a phrase is "unknown" (422 + suggestions).
        fedclip_version: which FedCLIP adapter artifact serves client-ID personalization
            (``latest`` follows ``LATEST``; when the store has none, client IDs get a 404/409).
        rate_limit_per_minute: sustained requests per API key per minute (0 disables); excess
            requests get 429 with Retry-After. Shared through Redis when configured.
        rate_limit_burst: requests a key may make at once before the sustained rate applies.
    """

    model_config = SettingsConfigDict(env_prefix="TAILOR_", extra="ignore")

    env: Literal["dev", "prod"] = "dev"
    data_dir: Path = Path("./.tailor/data")
    store_dir: Path = Path("./.tailor/store")
    artifact_version: str = "latest"
    database_url: str = "sqlite:///./.tailor/tailor.db"
    migrate_on_start: bool = True
    redis_url: str | None = None
    redis_ttl_s: int = Field(default=7 * 24 * 3600, gt=0)
    redis_retry_s: float = Field(default=2.0, ge=0)
    redis_timeout_s: float = Field(default=1.0, gt=0)
    admin_key: SecretStr | None = None
    device: str | None = None
    text_encoder: str | None = None
    memory_cache_bytes: int = Field(default=512 * 1024 * 1024, gt=0)
    row_cache_ttl_s: float = Field(default=5.0, ge=0)
    max_body_bytes: int = Field(default=32 * 1024 * 1024, gt=0)
    max_batch: int = Field(default=128, gt=0)
    max_image_pixels: int = Field(default=4096 * 4096, gt=0)
    max_image_bytes: int = Field(default=8 * 1024 * 1024, gt=0)
    match_threshold: float = Field(default=0.55, ge=-1, le=1)
    public_url: str = ""
    fedclip_version: str = "latest"
    rate_limit_per_minute: int = Field(default=1200, ge=0)
    rate_limit_burst: int = Field(default=100, gt=0)

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        """Outside dev, an absent or guessable admin key would leave key creation open."""
        if self.env == "prod":
            key = self.admin_key.get_secret_value() if self.admin_key else ""
            if len(key) < 24:
                raise ValueError("TAILOR_ADMIN_KEY must be set (>= 24 chars) when TAILOR_ENV=prod")
        return self
