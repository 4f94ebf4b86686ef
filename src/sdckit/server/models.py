"""Request and response models of the analysis service (pydantic), as the OpenAPI description shows them.

Every request to :mod:`sdckit.server.app` is one of the ``*Request`` models
(unknown fields are refused); every answer is a result model, a
:class:`RefusalResponse` (the rules and their reasons, Lucero et al. (2011),
§3) or an :class:`ErrorResponse`. A universe is its text or its typed
structure (:class:`UniverseStructure`), a formula its text or its typed
structure (:class:`FormulaStructure`); neither is ever evaluated.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, StringConstraints

from sdckit.server.residuals import BoxSummary

# Plumbing of the service, not a Python API: these models are the wire format
# (the OpenAPI description at /api/openapi.json and docs/server.md, "The API").
# app.py imports them by name; a Python user calls AnalysisServer instead.
__all__: list[str] = []

# --------------------------------------------------------------------------- request models

Name = Annotated[str, StringConstraints(min_length=1, max_length=100)]
Level = StrictStr | StrictInt
SelectionValues = Annotated[list[Level], Field(max_length=1000)]
Selection = (
    SelectionValues | dict[Literal["levels", "bins", "nodes", "node"], SelectionValues | Level]
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UniverseStructure(_Strict):
    """A union of pieces; a piece maps variables to the categories or bins it selects."""

    pieces: Annotated[list[dict[Name, Selection]], Field(max_length=64)]


UniverseSpec = Annotated[str, StringConstraints(max_length=8000)] | UniverseStructure | None


class FactorSpec(_Strict):
    variable: Name
    transform: Name | None = None


class FormulaStructure(_Strict):
    """``response ~ terms``; a term of several factors is their interaction."""

    response: FactorSpec
    terms: Annotated[
        list[Annotated[list[FactorSpec], Field(min_length=1, max_length=3)]],
        Field(min_length=1, max_length=200),
    ]


FormulaSpec = Annotated[str, StringConstraints(min_length=1, max_length=2000)] | FormulaStructure


class UniverseRequest(_Strict):
    universe: UniverseSpec = Field(
        None,
        description="Universe text (e.g. 'sex = female AND age in bins 0, 1'), structure, or null for everyone.",
    )


class CrosstabRequest(_Strict):
    universe: UniverseSpec = None
    rows: Name
    cols: Name | None = None
    mean_of: Name | None = Field(
        None, description="A continuous variable whose cell means are added."
    )


class RegressionRequest(_Strict):
    universe: UniverseSpec = None
    formula: FormulaSpec = Field(
        ..., description="e.g. 'log(wage) ~ age + square(age) + sex + age:sex'"
    )
    family: Literal["ols", "logit"] = "ols"


class CorrelationRequest(_Strict):
    universe: UniverseSpec = None
    variables: Annotated[list[Name], Field(min_length=2, max_length=30)]


class ResidualPlotRequest(_Strict):
    universe: UniverseSpec = None
    formula: FormulaSpec


# --------------------------------------------------------------------------- response models


class VerdictModel(BaseModel):
    rule: str
    passed: bool
    reason: str = ""
    adjustments: list[str] = []


class _Answer(BaseModel):
    status: Literal["ok", "refused"]
    analysis: str
    verdicts: list[VerdictModel]
    audit_id: int | None = Field(None, description="The audit log entry of this query.")


class RefusalResponse(_Answer):
    """A query the rules refused: the refusing verdicts with reasons, and every verdict."""

    status: Literal["refused"]
    refusals: list[VerdictModel]


class UniverseCheckResponse(_Answer):
    status: Literal["ok"]
    universe: str
    joint: bool
    size_class: Literal["small", "medium", "large"]


class CrosstabResponse(_Answer):
    status: Literal["ok"]
    universe: str
    rows: str
    cols: str | None
    row_labels: list[str]
    col_labels: list[str]
    counts: list[list[int]]
    row_totals: list[int]
    col_totals: list[int]
    total: int
    mean_of: str | None = None
    means: list[list[float | None]] | None = None
    row_means: list[float | None] | None = None
    col_means: list[float | None] | None = None
    total_mean: float | None = None


class CoefficientModel(BaseModel):
    term: str
    estimate: float | None
    std_error: float | None
    statistic: float | None
    p_value: float | None


class AnovaRowModel(BaseModel):
    source: str
    df: float | None
    sum_of_squares: float | None
    mean_square: float | None
    statistic: float | None
    p_value: float | None


class RegressionResponse(_Answer):
    status: Literal["ok"]
    universe: str
    family: Literal["ols", "logit"]
    formula: str
    coefficients: list[CoefficientModel]
    anova: list[AnovaRowModel]
    n_obs: int
    df_model: float | None
    df_resid: float | None
    r_squared: float | None
    adj_r_squared: float | None
    references: dict[str, str]
    event: str | None


class CorrelationResponse(_Answer):
    status: Literal["ok"]
    universe: str
    variables: list[str]
    matrix: list[list[float | None]]
    n_obs: int


class ResidualPanelModel(BaseModel):
    predictor: str
    kind: Literal["scatter", "box"]
    x: list[float] | None = None
    residuals: list[float] | None = None
    smooth_x: list[float] | None = None
    smooth_y: list[float] | None = None
    boxes: list[BoxSummary] | None = None  # the library's dataclass, as pydantic reads it
    suppressed_categories: list[str] | None = None


class ResidualPlotResponse(_Answer):
    status: Literal["ok"]
    universe: str
    formula: str
    panels: list[ResidualPanelModel]
    png_base64: str = Field(..., description="The plots as a PNG image, base64-encoded.")


class BinnedPanelModel(BaseModel):
    predictor: str
    labels: list[str]
    x: list[float]
    mean_residual: list[float]
    band: list[float]
    suppressed: list[str]


class LogitDiagnosticsResponse(_Answer):
    status: Literal["ok"]
    universe: str
    formula: str
    panels: list[BinnedPanelModel]
    png_base64: str = Field(..., description="The plots as a PNG image, base64-encoded.")


class VariableModel(BaseModel):
    kind: Literal["categorical", "continuous"]
    label: str = ""
    levels: list[str] | None = None
    level_labels: dict[str, str] | None = None
    groups: dict[str, list[str]] | None = Field(
        None, description="Declared groups of a categorical variable's levels (checked as one)."
    )
    bins: list[str] | None = Field(
        None, description="Cutpoint bins of a continuous variable, numbered from 0."
    )
    cutpoints: dict[str, Any] | None = None
    domain: Literal["positive", "non-negative", "real"] | None = Field(
        None, description="Declared domain of a continuous variable (log: positive; sqrt: >= 0)."
    )


class MetadataResponse(BaseModel):
    variables: dict[str, VariableModel]
    approved_transformations: list[str]
    max_interaction_order: int
    max_predictors: int
    max_universe_pieces: int
    families: list[str]
    identity_logging: bool


class HistoryEntry(BaseModel):
    id: int
    arrived_at: str
    analysis: str
    query: dict[str, Any]
    outcome: Literal["released", "refused", "error"]
    verdicts: list[VerdictModel]
    response_digest: str | None
    error: str | None


class HistoryResponse(BaseModel):
    identity_logging: bool
    entries: list[HistoryEntry]
    note: str | None = None


class AccountResponse(BaseModel):
    name: str
    rate_per_minute: int
    daily_budget: int | None


class ErrorResponse(BaseModel):
    """Anything that is not an answer: authentication, limits, malformed requests, failures."""

    status: Literal["error"] = "error"
    error: str
    message: str
    details: list[dict[str, Any]] | None = None


def answer_model(model: type[BaseModel]) -> Any:
    """The response model of an analysis route: its result or a refusal, told apart by ``status``.

    Parameters
    ----------
    model : type
        The result model (e.g. :class:`CrosstabResponse`).

    Returns
    -------
    type
        ``model | RefusalResponse`` discriminated by the ``status`` field.
    """
    return Annotated[model | RefusalResponse, Field(discriminator="status")]


#: The error answers every route may give, for the OpenAPI description.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Malformed request or invalid query"},
    401: {"model": ErrorResponse, "description": "Missing, unknown or revoked token"},
    413: {"model": ErrorResponse, "description": "Request body too large"},
    422: {
        "model": RefusalResponse | ErrorResponse,
        "description": "Query does not fit the metadata",
    },
    429: {
        "model": ErrorResponse,
        "description": "Rate limit, CPU cost budget or daily budget reached (see Retry-After)",
    },
    503: {
        "model": ErrorResponse,
        "description": "The audit log cannot be written; nothing released",
    },
}
