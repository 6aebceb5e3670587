"""Request/response models (pydantic), separate from the ORM tables.

``PersonalizeCreate`` takes exactly one of ``description``, ``classes`` or ``client_id``; the
response has a ``kind`` (``taper`` for synthesized ResNet-18s, ``fedclip`` for a federated
client's adapter, ``anytime`` for a client's early-exit model, ``perfix`` for a client's
prefix-personalised ViT) so every path shares one shape.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

Method = Literal["taper", "selection"]
ModelMethod = Literal["taper", "selection", "fedclip-personalized", "fedclip-global",
                      "anytime-personalized", "anytime-global", "perfix-personalized",
                      "perfix-global"]
ModelKindName = Literal["taper", "fedclip", "anytime", "perfix"]
ClientKind = Literal["fedclip", "anytime", "perfix"]
# An early exit of an anytime model (1..L; the model's own bound is checked by its kind: 422).
ExitNumber = Annotated[int, Field(ge=1, le=1000)]
# Control characters are refused at the schema (422): PostgreSQL cannot store NUL in text (a 500
# before), and nothing a person types needs them. Free text may keep tab, newline and CR.
NO_CONTROL = r"^[^\x00-\x1f\x7f]*$"
TEXT_NO_CONTROL = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"
ClassName = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=NO_CONTROL)]
# SQLite returns naive datetimes even for DateTime(timezone=True) columns; every stored time is
# UTC, so say so: a naive ISO string is not an RFC 3339 ``date-time`` (found by benchmarks/fuzz.py).
UtcDateTime = Annotated[
    datetime, AfterValidator(lambda v: v if v.tzinfo else v.replace(tzinfo=UTC))
]


class PersonalizeCreate(BaseModel):
    """A personalization request."""

    model_config = ConfigDict(extra="forbid")

    description: str | None = Field(
        None, min_length=1, max_length=2000, pattern=TEXT_NO_CONTROL,
        examples=["classify cats, dogs and horses"],
    )
    classes: list[ClassName] | None = Field(
        None, min_length=1, max_length=100, examples=[["cat", "dog"]]
    )
    client_id: str | None = Field(
        None, min_length=1, max_length=64, pattern=NO_CONTROL,
        description="your federated client id (its FedCLIP adapter, anytime model or "
                    "FedPerfix ViT), or 'global'",
    )  # fmt: skip
    kind: ClientKind | None = Field(
        None, description="with 'client_id': which federation's model (default: the first that "
                          "has this client: FedCLIP, then anytime, then perfix)",
    )  # fmt: skip
    domain: str | None = Field(None, max_length=64, pattern=NO_CONTROL, examples=["sketch"])
    method: Method | None = None
    images: list[str] | None = Field(
        None, min_length=1, description="unlabeled base64 images of the task (no description "
        "needed): the classes and domain are inferred from them (TAPER §5.2)")
    k: int | None = Field(None, ge=2, le=1000,
                          description="with 'images': the number of classes (default: estimated)")

    TASK_FIELDS: ClassVar[tuple[str, ...]] = ("description", "classes", "client_id", "images")

    @model_validator(mode="after")
    def _exactly_one(self) -> PersonalizeCreate:
        given = [f for f in self.TASK_FIELDS if getattr(self, f)]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of {', '.join(repr(f) for f in self.TASK_FIELDS)} "
                f"(got {', '.join(given) or 'none'})"
            )
        if self.k is not None and ("images" not in self.TASK_FIELDS or self.images is None):
            raise ValueError("'k' is the number of classes to infer from 'images' "
                             "(POST /v1/personalize)")
        if self.kind is not None and self.client_id is None:
            raise ValueError("'kind' chooses between federations and needs 'client_id'")
        if self.client_id is not None and (self.domain or self.method):
            raise ValueError("'domain' and 'method' apply to description/classes requests; a "
                             "'client_id' request gets that client's adapter as trained")
        if self.classes is not None and any(not c.strip() for c in self.classes):
            raise ValueError("class names must be non-empty")
        return self


class Suggestion(BaseModel):
    """A nearby catalogue class."""

    name: str
    score: float


class Resolution(BaseModel):
    """How one phrase of the request was resolved."""

    phrase: str
    name: str
    index: int
    score: float = Field(description="cosine similarity; 1.0 for an exact name match")
    did_you_mean: list[Suggestion] = []


class ExitInfo(BaseModel):
    """One exit of an anytime model."""

    exit: int
    flops: int | None = Field(None, description="one image's forward to this exit")
    val_accuracy: float | None = Field(
        None, description="measured in training on the client's validation split (null: not "
                          "measured there, e.g. past the client's depth budget)")


class ModelPublic(BaseModel):
    """A personalized model as clients see it."""

    id: str
    kind: ModelKindName
    method: ModelMethod
    method_accuracy: float | None = Field(
        None, description="the artifact's own evaluation accuracy for this method"
    )
    classes: list[str]
    domain: str | None
    mixers: list[list[float]] | None = Field(None, description="block-wise coefficients (4 × Q)")
    artifact_version: str
    description: str | None = None
    parent_id: str | None = None
    weights_sha256: str | None = None
    created_at: UtcDateTime | None = None
    weights_url: str
    predict_url: str
    exits: list[ExitInfo] | None = Field(
        None, description="anytime models: every exit, its FLOPs and validation accuracy")
    default_exit: int | None = Field(
        None, description="anytime models: the exit /predict uses when none is given")


class ModelList(BaseModel):
    """One page of the caller's models, newest first."""

    items: list[ModelPublic]
    next_cursor: str | None = Field(
        None, description="pass as ?cursor= for the next page; null on the last page"
    )


class InferredClass(BaseModel):
    """One class inferred from unlabeled images."""

    name: str
    share: float = Field(description="estimated share of the images (EM class prior)")
    count: int = Field(description="images the all-class model labels as this class")


class Inferred(BaseModel):
    """What a batch (or a stream) of unlabeled images says the task is."""

    classes: list[InferredClass] = Field(description="the chosen classes, largest share first")
    runners_up: list[InferredClass] = Field(
        [], description="the next classes by share (not in the model)")
    k_estimated: bool = Field(description="whether the number of classes was estimated")
    domain: str | None = Field(description="estimated domain (null: mixed or unknown)")
    domain_confidence: float | None = Field(
        None, description="mean posterior of the estimated (or best) domain")
    images: float = Field(description="images behind the estimate (decayed, for a stream)")


class PersonalizeResponse(ModelPublic):
    """``ModelPublic`` plus how the request was resolved and which cache tier answered."""

    resolution: list[Resolution] = []
    cache: Literal["memory", "redis", "synthesized", "artifact"] = Field(
        description="tier that supplied the model; 'artifact': an adapter loaded from the store"
    )
    inferred: Inferred | None = Field(
        None, description="images-only requests: the task inferred from the images")
    notes: list[str] = Field(
        [], description="what the request asked for that had no effect, and choices made for "
                        "it (e.g. a domain under a method that ignores domains)")


class RefineResponse(PersonalizeResponse):
    """The refined model (or the parent, unchanged) and why."""

    pseudo_labels: dict[str, int]
    changed: bool = Field(description="false: nothing would improve; this is the parent")


class ObserveResponse(BaseModel):
    """The stream's current estimate and the model to use from now on."""

    model_id: str = Field(description="the model to use next: the same id, or a new one")
    changed: bool = Field(description="true: the estimated task changed; a new model answers")
    added: int = Field(description="images added by this call")
    estimate: Inferred
    model: PersonalizeResponse


class ObservationsResponse(BaseModel):
    """A model's stream of unlabeled images."""

    model_id: str
    images_seen: int = Field(description="images observed in all (this model's stream)")
    images_kept: int = Field(description="images whose statistics are kept (bounded)")
    estimate: Inferred | None = Field(description="null before the first image")
    matches_model: bool = Field(description="whether the estimate is this model's task")


class Prediction(BaseModel):
    """Top-k labels for one image."""

    label: str
    probability: float


class PredictJSON(BaseModel):
    """Base64 images (a ``data:`` URL prefix is allowed)."""

    model_config = ConfigDict(extra="forbid")

    images: list[str] = Field(min_length=1)
    top_k: int = Field(1, ge=1, le=100)
    exit: ExitNumber | None = Field(None, description="anytime models: stop at this exit")
    max_layers: ExitNumber | None = Field(
        None, description="anytime models: a compute budget; the deepest exit it affords")


class PredictResponse(BaseModel):
    """One list of predictions per input image, in input order."""

    model_id: str
    predictions: list[list[Prediction]]
    exit: int | None = Field(None, description="the exit that answered (anytime models)")


class PredictOnce(PersonalizeCreate):
    """One-shot inference: a personalization request plus the images to classify with it."""

    images: list[str] = Field(min_length=1, description="base64 images (data: URLs allowed)")
    top_k: int = Field(1, ge=1, le=100)
    exit: ExitNumber | None = None
    max_layers: ExitNumber | None = None

    TASK_FIELDS: ClassVar[tuple[str, ...]] = ("description", "classes", "client_id")

    def request(self) -> PersonalizeCreate:
        """The personalization part alone."""
        return PersonalizeCreate.model_validate(
            self.model_dump(exclude={"images", "top_k", "exit", "max_layers", "k"}))


class PredictOnceResponse(PredictResponse):
    """Predictions plus the model that made them (personalized now or found): call
    ``/v1/models/{model_id}/predict`` next time to skip resolving the request again."""

    model: PersonalizeResponse


class CatalogueClass(BaseModel):
    """One class the artifact knows."""

    name: str
    group: str | None = None
    definition: str | None = None


class CataloguePublic(BaseModel):
    """Everything a request may name."""

    artifact_version: str
    classes: list[CatalogueClass]
    groups: list[str]
    domains: list[str]
    methods: dict[str, float | None]
    default_method: Method


class KeyCreate(BaseModel):
    """Admin request for a new client key (a new client unless ``client_id`` is given)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("client", min_length=1, max_length=200, pattern=NO_CONTROL)
    client_id: str | None = Field(
        None, min_length=1, max_length=64, pattern=r"^[^@\x00-\x1f\x7f][^\x00-\x1f\x7f]*$",
        description="an existing or new client id (not starting with '@': reserved)",
    )


class KeyPublic(BaseModel):
    """A new key: ``key`` is shown this once and never stored in plaintext."""

    client_id: str
    key_id: str
    key: str
