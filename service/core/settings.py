"""One pydantic-settings class for the service; passed into ``create_app`` so tests can override it.

Every knob lives here (env prefix ``TAILOR_``) so an operator can read one file to know what the
service can be told. Validators refuse unsafe values outside ``dev`` (no admin key, a short one).
"""

from __future__ import annotations

import math
import string
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
        header_timeout_s: a connection whose request headers are not complete this long after
            it opened (or after its previous response) is closed (slowloris).
        body_timeout_s: a request body still arriving this long after the request started
            gets 408 and the connection is closed.
        metrics_access: who may read ``/metrics``: ``public``, ``admin`` (the admin key as a
            bearer token, which Prometheus scrape configs support) or ``off``. Default: public
            in dev, admin in prod.
        openapi_access: the same for ``/openapi.json`` and ``/docs`` (default: public in dev,
            admin in prod; apps generating clients can be given the schema file instead).
        max_batch: images per /predict or /refine call.
        max_image_pixels: width × height above which an image is refused as a decompression bomb.
        max_request_pixels: decoded pixels one /predict or /refine call may cost in all (JPEGs
            count at their reduced decode scale); more is a 413.
        text_encoder: local sentence-transformers folder for descriptions (default: the bundled
            MiniLM).
        text_runtime: ``onnx`` runs the text encoder's transformer under ONNX Runtime (same
            embeddings as torch; a definition request takes about a quarter less time on a
            CPU); ``torch`` keeps PyTorch. ``onnx`` falls back to torch, with a warning, where
            it cannot match it.
        match_threshold: cosine similarity below which a phrase is "unknown" (422 + suggestions).
        match_margin: how far a phrase's best class must lead the next one when it is matched
            by similarity (not by name or alias); closer is ambiguous (422 + suggestions).
        match_described_threshold, match_described_margin: the same two for a phrase that
            describes a class (three or more content words: "summer footwear that leaves the
            toes bare"), which is also compared with the catalogue's descriptions.
        reader_path: the learned reader of refused descriptions (``benchmarks/reader.py``
            fits it); none there: the rules alone answer (:mod:`service.kinds.reader`).
        reader_accept: the reader's confidence from which its reading is the answer (200, with
            a note); below, a refusal carries it as ``reading``. Above 1: never answers.
        tuned_reader_path: the tuned request reader (``tailor train request-reader``); none
            there: the rules answer unchecked (:mod:`service.kinds.tuned`).
        tuned_reader_threshold: its confidence from which it asks back an answer of the rules
            that it reads otherwise; above 1: never.
        tuned_reader_veto: an answer of the rules that the tuned reader, even unsure, finds
            less than this many times as likely as its own reading is asked back too (0: never).
        tuned_reader_rescue: its confidence from which its reading answers a description the
            rules refused; above 1: never.
        tuned_reader_seconded: its confidence from which its reading answers a refused
            description that the learned reader (``reader_path``) reads alike; above 1: never.
            (All four off: the tuned reader is not loaded.)
        phrase_reader_path: the linear reader of class-list definitions (``tailor train
            phrase-reader``); none there: the rules alone read class lists
            (:mod:`service.kinds.phrases`).
        phrase_reader_accept: the probability from which its class for each phrase the rules
            left unknown answers the list (at least 0.5: then it is each phrase's likeliest);
            above 1: never (not loaded).
        fedclip_version: which FedCLIP adapter artifact serves client-ID personalization
            (``latest`` follows ``LATEST``; when the store has none, client IDs get a 404/409).
        anytime_version: which ``anytime`` artifact (early-exit models per federated client)
            serves client-ID requests with ``kind: anytime`` (``latest``; none: off).
        perfix_version: which ``perfix`` artifact (FedPerfix's personalised ViTs) serves
            client-ID requests with ``kind: perfix`` (``latest``; none: off).
        rate_limit_per_minute: sustained requests per API key per minute (0 disables); excess
            requests get 429 with Retry-After. Shared through Redis when configured.
        rate_limit_burst: requests a key may make at once before the sustained rate applies.
        infer_min_share: images-only personalization counts the classes whose estimated share
            of the images reaches this (when ``k`` is not given).
        infer_min_domain_conf: the mean domain posterior a batch needs to be given a domain
            (below it the images are called mixed; the domain stays unset).
        observe_half_life: images after which an observation's weight in a stream halves.
        observe_max_images: images a stream keeps per model (the oldest go first).
        observe_min_images: (decayed) images a stream needs before it may change the model.
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
    text_runtime: Literal["onnx", "torch"] = "onnx"
    memory_cache_bytes: int = Field(default=512 * 1024 * 1024, gt=0)
    row_cache_ttl_s: float = Field(default=5.0, ge=0)
    max_body_bytes: int = Field(default=32 * 1024 * 1024, gt=0)
    header_timeout_s: float = Field(default=10.0, gt=0)
    body_timeout_s: float = Field(default=30.0, gt=0)
    metrics_access: Literal["public", "admin", "off"] | None = None
    openapi_access: Literal["public", "admin", "off"] | None = None
    max_batch: int = Field(default=128, gt=0)
    max_image_pixels: int = Field(default=4096 * 4096, gt=0)
    max_image_bytes: int = Field(default=8 * 1024 * 1024, gt=0)
    max_request_pixels: int = Field(default=64 * 1024 * 1024, gt=0)
    match_threshold: float = Field(default=0.575, ge=-1, le=1)  # benchmarks/resolution.py
    match_margin: float = Field(default=0.08, ge=0, le=2)  # chosen on its tune split (stop 24)
    match_described_threshold: float = Field(default=0.65, ge=-1, le=1)  # stop 30 pool; stop
    match_described_margin: float = Field(default=0.06, ge=0, le=2)  # 33 kept both (docs)
    reader_path: Path | None = Path("./.tailor/reader.safetensors")
    reader_accept: float = Field(default=1.01, ge=0, le=1.01)  # suggest only: stop 55 (docs)
    tuned_reader_path: Path | None = Path("./.tailor/request-reader")
    tuned_reader_threshold: float = Field(default=0.5, ge=0, le=1.01)  # sets 90-93 (stop 58)
    tuned_reader_veto: float = Field(default=0.03, ge=0, le=1)  # sets 78-89 (stop 58)
    tuned_reader_rescue: float = Field(default=0.9, ge=0, le=1.01)  # sets 90-93 (stop 58)
    tuned_reader_seconded: float = Field(default=0.7, ge=0, le=1.01)  # sets 90-93 (stop 58)
    phrase_reader_path: Path | None = Path("./.tailor/phrase-reader.safetensors")
    phrase_reader_accept: float = Field(default=0.9, ge=0.5, le=1.01)  # sets 90-101 (stop 60)
    public_url: str = ""
    fedclip_version: str = "latest"
    anytime_version: str = "latest"
    perfix_version: str = "latest"
    rate_limit_per_minute: int = Field(default=1200, ge=0)
    rate_limit_burst: int = Field(default=100, gt=0)
    infer_min_share: float = Field(default=0.05, gt=0, lt=1)  # benchmarks/self_improvement.py
    infer_min_domain_conf: float = Field(default=0.6, ge=0, le=1)  # chosen on validation tasks
    observe_half_life: float = Field(default=256.0, gt=0)
    observe_max_images: int = Field(default=512, ge=8, le=4096)
    observe_min_images: float = Field(default=16.0, ge=1)

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        """Outside dev, an absent or guessable admin key would leave key creation open."""
        if self.env == "prod":
            key = self.admin_key.get_secret_value() if self.admin_key else ""
            if problem := admin_key_weakness(key):
                raise ValueError(
                    f"TAILOR_ADMIN_KEY {problem} (TAILOR_ENV=prod); make one with: python -c "
                    "'import secrets; print(secrets.token_urlsafe(32))'"
                )
        return self

    def access(self, what: Literal["metrics", "openapi"]) -> str:
        """Effective access of an operational route (``None`` means the env's default)."""
        chosen = getattr(self, f"{what}_access")
        return chosen or ("public" if self.env == "dev" else "admin")


_CLASSES = ((string.ascii_lowercase, 26), (string.ascii_uppercase, 26), (string.digits, 10))


def admin_key_weakness(key: str) -> str | None:
    """Why ``key`` is too weak to guard the admin routes, or None.

    The estimate is length × log2(alphabet), the alphabet being the character classes the key
    uses (lower, upper, digits, symbols), and must reach 128 bits; a key of one repeated or a few
    distinct characters is refused whatever its length. ``token_urlsafe(32)`` and ``token_hex(32)``
    pass; 24 spaces, ``"a" * 64`` and dictionary-like short phrases do not.
    """
    if not key:
        return "must be set"
    if any(c.isspace() or not c.isprintable() for c in key):
        return "must not contain whitespace or control characters"
    alphabet = sum(size for chars, size in _CLASSES if any(c in chars for c in key))
    alphabet += 33 if any(not c.isalnum() for c in key) else 0
    if len(set(key)) < 10 or len(key) * math.log2(max(alphabet, 2)) < 128:
        return "is too guessable: need >= 128 bits (e.g. 32+ random hex or 22+ url-safe chars)"
    return None
