"""The analysis server as a web service: FastAPI app, token accounts, persistent audit log.

Lucero et al. (2011), "The Microdata Analysis System at the U.S. Census
Bureau" (Lucero et al. 2011): analysts pick variables, define universes and get
tables, coefficients and residual plots from a server that never shows them
a record. :func:`create_app` puts :class:`~sdckit.server.engine.AnalysisServer`
behind an HTTP API and a web page:

* every request is a pydantic model; every answer is a typed result, a
  typed refusal (the rules and their reasons) or a typed error;
* analysts authenticate with API tokens (``Authorization: Bearer ...``),
  stored hashed (:mod:`sdckit.server.store`); per-account rate limits and
  optional daily query budgets;
* each query's audit record is committed to the database *before* the
  answer leaves (the engine's audit sink); if the log cannot be written, no
  answer is released;
* the Drop q secret is generated on first start, stored in the database and
  never returned;
* bodies over ``max_request_bytes`` are refused before they are read; no
  traceback is ever returned.

A refusal is the server's answer to a valid query (HTTP 200,
``"status": "refused"``); a query the metadata cannot make sense of (an
unknown variable, a malformed universe or formula - formula text is parsed
into an allowed structure, never evaluated) is refused with HTTP 422 and the
same typed body.
"""

from __future__ import annotations

import contextvars
import logging
import math
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import pandas as pd
from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, StringConstraints
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

import sdckit
from sdckit.errors import ParameterError, SDCError
from sdckit.server.analyses import FAMILIES, Refusal
from sdckit.server.config import ServerConfig
from sdckit.server.engine import AnalysisServer, AuditRecord
from sdckit.server.metadata import Metadata
from sdckit.server.store import AccountInfo, Store, analyst_pseudonym

__all__ = ["DEFINITION_RULES", "ServiceSettings", "create_app"]

logger = logging.getLogger("sdckit.server")

WEB_DIR = Path(__file__).resolve().parent / "web"

# Refusals by these rules mean the query does not fit the metadata (HTTP 422);
# every other refusal is a confidentiality answer to a valid query (HTTP 200).
DEFINITION_RULES = frozenset(
    {"universe_definition", "formula_syntax", "allowed_variables", "approved_transformations"}
)


@dataclass(frozen=True)
class ServiceSettings:
    """Settings of the web service (the rules' thresholds live in :class:`ServerConfig`).

    Attributes
    ----------
    log_identity : bool, default False
        Record a keyed hash of the account with every audit entry. Off by
        default, as in the MAS design (queries logged without identity); the
        analyst's own query history is available only when on.
    rate_per_minute : int, default 120
        Requests per minute per account, for accounts without their own limit.
    daily_budget : int or None, default None
        Queries per UTC day per account, for accounts without their own
        budget (None: unlimited).
    max_request_bytes : int, default 65536
        Larger request bodies are refused (HTTP 413) before they are read.
    history_limit : int, default 200
        Most entries the history endpoint returns.
    cpu_seconds_per_minute : float or None, default 20.0
        Cost budget per account beside the request rate: the CPU seconds its
        analyses used over the last minute. An account over it gets 429
        ``cost_budget_exhausted`` with a Retry-After until enough of its
        recent work has aged out, so one account sending the most expensive
        queries cannot queue more work than the machine has. None: no budget.
    max_analysis_seconds : float or None, default 60.0
        Maximum run time of one analysis (:mod:`sdckit.server.limits`).
    """

    log_identity: bool = False
    rate_per_minute: int = 120
    daily_budget: int | None = None
    max_request_bytes: int = 65536
    history_limit: int = 200
    cpu_seconds_per_minute: float | None = 20.0
    max_analysis_seconds: float | None = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.log_identity, bool):
            raise ParameterError(f"log_identity must be True or False, got {self.log_identity!r}")
        for name in ("rate_per_minute", "max_request_bytes", "history_limit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ParameterError(f"{name} must be a positive integer, got {value!r}")
        for name in ("cpu_seconds_per_minute", "max_analysis_seconds"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not value > 0
            ):
                raise ParameterError(f"{name} must be a number > 0 or None, got {value!r}")
        budget = self.daily_budget
        if budget is not None and (
            isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
        ):
            raise ParameterError(f"daily_budget must be a positive integer or None, got {budget!r}")


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


class BoxModel(BaseModel):
    category: str
    lower_whisker: float
    q1: float
    median: float
    q3: float
    upper_whisker: float


class ResidualPanelModel(BaseModel):
    predictor: str
    kind: Literal["scatter", "box"]
    x: list[float] | None = None
    residuals: list[float] | None = None
    smooth_x: list[float] | None = None
    smooth_y: list[float] | None = None
    boxes: list[BoxModel] | None = None
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


def _discriminated(model: type[BaseModel]) -> Any:
    return Annotated[model | RefusalResponse, Field(discriminator="status")]


_ERRORS = {
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


# --------------------------------------------------------------------------- plumbing


class ApiError(Exception):
    """An error answered as :class:`ErrorResponse` with ``status_code``."""

    def __init__(
        self,
        status_code: int,
        error: str,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        details: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.error = error
        self.message = message
        self.headers = dict(headers or {})
        self.details = details


class _BodyTooLarge(StarletteHTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body exceeds {limit} bytes")


class _BodySizeLimit:
    """ASGI middleware refusing bodies over ``limit`` bytes (declared or streamed)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope.get("headers", ()):
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > self.limit:
                    status, code = (
                        (413, "request_too_large") if declared > 0 else (400, "bad_request")
                    )
                    message = (
                        f"request body exceeds {self.limit} bytes"
                        if status == 413
                        else "invalid Content-Length header"
                    )
                    await _send_json(send, status, ErrorResponse(error=code, message=message))
                    return
        received = 0

        async def limited_receive() -> dict:
            nonlocal received
            message = await receive()
            if message.get("type") == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _BodyTooLarge(self.limit)
            return message

        await self.app(scope, limited_receive, send)


async def _send_json(send: Callable, status: int, body: BaseModel) -> None:
    payload = body.model_dump_json(exclude_none=True).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class _RateLimiter:
    """Sliding one-minute window of request times per account (in this process)."""

    def __init__(self) -> None:
        self._hits: dict[int, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, account_id: int, per_minute: int) -> float | None:
        """None when the request may go on (and is counted), else seconds to wait."""
        now = time.monotonic()
        with self._lock:
            hits = self._hits.setdefault(account_id, deque())
            while hits and hits[0] <= now - 60.0:
                hits.popleft()
            if len(hits) >= per_minute:
                return hits[0] + 60.0 - now
            hits.append(now)
            return None


class _CostMeter:
    """CPU seconds used by each account's analyses over a sliding minute (in this process)."""

    def __init__(self) -> None:
        self._spent: dict[int, deque[tuple[float, float]]] = {}
        self._lock = threading.Lock()

    def retry_after(self, account_id: int, budget: float) -> float | None:
        """None when the account may run another analysis, else seconds to wait."""
        now = time.monotonic()
        with self._lock:
            spent = self._spent.setdefault(account_id, deque())
            while spent and spent[0][0] <= now - 60.0:
                spent.popleft()
            total = sum(cost for _, cost in spent)
            if total < budget:
                return None
            # Wait until enough of the oldest work leaves the window.
            for at, cost in spent:
                total -= cost
                if total < budget:
                    return at + 60.0 - now
            return 60.0

    def add(self, account_id: int, cost: float) -> None:
        with self._lock:
            self._spent.setdefault(account_id, deque()).append((time.monotonic(), cost))


@dataclass
class _QueryContext:
    analyst: str | None
    audit_id: int | None = None


_QUERY: contextvars.ContextVar[_QueryContext | None] = contextvars.ContextVar(
    "sdckit_query", default=None
)


def _error_json(
    status: int,
    error: str,
    message: str,
    headers: Mapping[str, str] | None = None,
    details: list[dict[str, Any]] | None = None,
) -> JSONResponse:
    body = ErrorResponse(error=error, message=message, details=details)
    return JSONResponse(
        body.model_dump(exclude_none=True), status_code=status, headers=dict(headers or {})
    )


_HTTP_ERRORS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    415: "unsupported_media_type",
}


def _clean_validation_errors(errors: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Location, message and type of each error; never the offending input itself."""
    return [
        {
            "loc": [str(p) for p in e.get("loc", ())][:8],
            "msg": str(e.get("msg", ""))[:300],
            "type": str(e.get("type", "")),
        }
        for e in errors[:20]
    ]


def _readable_validation_message(errors: list[Mapping[str, Any]]) -> str:
    """One plain sentence naming each problem's field (never the input itself)."""
    parts = []
    for e in errors[:3]:
        loc = [str(p) for p in e.get("loc", ()) if p != "body"]
        field = loc[-1] if loc else "the body"
        if field.isdigit() and len(loc) > 1:
            field = f"{loc[-2]}[{field}]"
        kind = str(e.get("type", ""))
        ctx = e.get("ctx") or {}
        if kind == "missing":
            parts.append(f"{field} is required")
        elif kind == "too_short" and field == "variables":
            parts.append(
                f"a correlation needs at least {ctx.get('min_length', 2)} variables, "
                f"got {ctx.get('actual_length', 'fewer')}"
            )
        elif kind == "too_short":
            parts.append(f"{field} needs at least {ctx.get('min_length', 1)} entries")
        elif kind == "too_long":
            parts.append(f"{field} has more than {ctx.get('max_length', 'the allowed')} entries")
        elif kind == "extra_forbidden":
            parts.append(f"{field} is not a known field")
        else:
            parts.append(f"{field}: {str(e.get('msg', 'invalid value'))[:120]}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "the request is not valid: " + "; ".join(parts) + more


def _account(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> AccountInfo:
    """The account of the request's bearer token, after the rate limit; 401 / 429 otherwise."""
    store: Store = request.app.state.store
    settings: ServiceSettings = request.app.state.settings
    limiter: _RateLimiter = request.app.state.limiter
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401,
            "unauthorized",
            "send your API token as 'Authorization: Bearer <token>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    found = store.authenticate(token.strip())
    if found is None:
        raise ApiError(
            401,
            "unauthorized",
            "the token is unknown or has been revoked",
            headers={"WWW-Authenticate": "Bearer"},
        )
    limit = found.rate_per_minute or settings.rate_per_minute
    wait = limiter.retry_after(found.id, limit)
    if wait is not None:
        seconds = max(1, math.ceil(wait))
        raise ApiError(
            429,
            "rate_limited",
            f"more than {limit} requests in a minute; retry in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )
    return found


Account = Annotated[AccountInfo, Depends(_account)]


# --------------------------------------------------------------------------- the app


def create_app(
    data: pd.DataFrame,
    metadata: Metadata | Mapping[str, Any] | str | Path,
    config: ServerConfig | Mapping[str, Any] | str | Path | None = None,
    *,
    store: Store | str | Path | None = None,
    settings: ServiceSettings | None = None,
) -> FastAPI:
    """The analysis service for one dataset, as a FastAPI application.

    Parameters
    ----------
    data : DataFrame
        The confidential microdata (index = unit identifiers).
    metadata : Metadata, mapping or YAML path
        What analysts may use.
    config : ServerConfig, mapping, YAML path or None
        The rules' thresholds (keep the file private).
    store : Store, database URL or SQLite path, optional
        Accounts, audit log and secret (default ``sqlite:///sdckit-server.db``).
        The schema is migrated to the newest revision on start.
    settings : ServiceSettings, optional
        Identity logging, default rate limit and budget, request size limit.

    Returns
    -------
    FastAPI
        ``app.state.store`` and ``app.state.engine`` give the store and the
        :class:`AnalysisServer`. Run it with uvicorn (``sdckit serve``).
    """
    settings = ServiceSettings() if settings is None else settings
    if not isinstance(settings, ServiceSettings):
        raise ParameterError(f"settings must be a ServiceSettings, got {type(settings).__name__}")
    store = store if isinstance(store, Store) else Store(store)
    secret = store.server_secret()

    def audit_sink(record: AuditRecord) -> None:
        context = _QUERY.get()
        audit_id = store.append_audit(record, analyst=None if context is None else context.analyst)
        if context is not None:
            context.audit_id = audit_id

    engine = AnalysisServer(
        data,
        metadata,
        config,
        secret=secret,
        audit_sink=audit_sink,
        keep_audit=False,
        max_seconds=settings.max_analysis_seconds,
    )
    limiter = _RateLimiter()
    meter = _CostMeter()

    app = FastAPI(
        title="sdckit analysis server",
        version=sdckit.__version__,
        description=(
            "Remote analysis of confidential microdata under the confidentiality rules of the "
            "Census Bureau's Microdata Analysis System (Lucero et al. 2011). Authenticate with "
            "`Authorization: Bearer <token>`."
        ),
        # FastAPI's Swagger page loads its scripts from a public CDN, which an
        # offline deployment cannot reach: the package serves its own page.
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.store = store
    app.state.engine = engine
    app.state.settings = settings
    app.state.limiter = limiter
    app.state.cost_meter = meter
    app.add_middleware(_BodySizeLimit, limit=settings.max_request_bytes)

    # ----------------------------------------------------------------- errors

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return _error_json(exc.status_code, exc.error, exc.message, exc.headers, exc.details)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error_json(400, "malformed_json", "the request body is not valid JSON")
        return _error_json(
            422,
            "invalid_request",
            _readable_validation_message(errors),
            details=_clean_validation_errors(errors),
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_ERRORS.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        return _error_json(exc.status_code, code, message, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _internal(_request: Request, exc: Exception) -> JSONResponse:
        incident = secrets.token_hex(6)
        logger.error("internal error, incident %s", incident, exc_info=exc)
        return _error_json(
            500,
            "internal_error",
            f"the server could not answer this request (incident {incident}); nothing was released",
        )

    @app.middleware("http")
    async def _headers(request: Request, call_next: Callable) -> Response:
        response = await call_next(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        if request.url.path.startswith("/api/") and request.url.path != "/api/docs":
            response.headers.setdefault("Cache-Control", "no-store")
        else:
            response.headers.setdefault(
                "Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
            )
        return response

    # ----------------------------------------------------------------- accounts

    def answer(who: AccountInfo, call: Callable[[], Any], *, png: bool = False) -> Any:
        cpu_budget = settings.cpu_seconds_per_minute
        if cpu_budget is not None:
            wait = meter.retry_after(who.id, cpu_budget)
            if wait is not None:
                seconds = max(1, math.ceil(wait))
                raise ApiError(
                    429,
                    "cost_budget_exhausted",
                    f"your analyses used more than {cpu_budget:g} CPU seconds in the last minute; "
                    f"retry in {seconds} s",
                    headers={"Retry-After": str(seconds)},
                )
        budget = who.daily_budget or settings.daily_budget
        if budget is not None and not store.consume_daily_query(who.id, budget):
            raise ApiError(
                429,
                "daily_budget_exhausted",
                f"the daily budget of {budget} queries is spent; it renews at 00:00 UTC",
            )
        pseudonym = analyst_pseudonym(secret, who.name) if settings.log_identity else None
        context = _QueryContext(pseudonym)
        token = _QUERY.set(context)
        started = time.thread_time()
        try:
            result = call()
        except SDCError as exc:
            raise ApiError(400, "invalid_query", str(exc)) from None
        except SQLAlchemyError:
            logger.exception("audit log write failed")
            raise ApiError(
                503,
                "audit_unavailable",
                "the audit log cannot be written, so no answer is released; try again later",
            ) from None
        finally:
            _QUERY.reset(token)
            meter.add(who.id, time.thread_time() - started)
        if png and not isinstance(result, Refusal):
            return Response(
                result.png,
                media_type="image/png",
                headers={"X-Audit-Id": str(context.audit_id)},
            )
        payload = result.to_dict()
        payload["audit_id"] = context.audit_id
        if isinstance(result, Refusal) and set(result.rules) <= DEFINITION_RULES:
            return JSONResponse(payload, status_code=422)
        return JSONResponse(payload) if png else payload

    def universe_value(spec: Any) -> Any:
        return spec.model_dump(exclude_none=True) if isinstance(spec, BaseModel) else spec

    def formula_value(spec: Any) -> Any:
        return spec.model_dump() if isinstance(spec, BaseModel) else spec

    # ----------------------------------------------------------------- endpoints

    @app.get("/api/health", tags=["service"])
    def health() -> dict[str, str]:
        """Liveness probe (no authentication)."""
        return {"status": "ok"}

    @app.get("/api/me", response_model=AccountResponse, responses=_ERRORS, tags=["service"])
    def me(who: Account) -> AccountResponse:
        """The signed-in account and its limits."""
        return AccountResponse(
            name=who.name,
            rate_per_minute=who.rate_per_minute or settings.rate_per_minute,
            daily_budget=who.daily_budget or settings.daily_budget,
        )

    @app.get("/api/metadata", response_model=MetadataResponse, responses=_ERRORS, tags=["analysis"])
    def metadata_endpoint(who: Account) -> dict[str, Any]:
        """The variables analysts may use: labels, levels and cutpoint bins (never counts)."""
        config = engine.config
        return {
            **engine.public_metadata(),
            "approved_transformations": list(config.approved_transformations),
            "max_interaction_order": config.max_interaction_order,
            "max_predictors": config.max_predictors,
            "max_universe_pieces": config.max_universe_pieces,
            "families": list(FAMILIES),
            "identity_logging": settings.log_identity,
        }

    @app.post(
        "/api/universe/check",
        response_model=_discriminated(UniverseCheckResponse),
        response_model_exclude_unset=True,
        responses=_ERRORS,
        tags=["analysis"],
    )
    def universe_check(body: UniverseRequest, who: Account) -> Any:
        """Whether a universe passes the universe rules, and its size class (never its count)."""
        return answer(who, lambda: engine.universe_check(universe_value(body.universe)))

    @app.post(
        "/api/crosstab",
        response_model=_discriminated(CrosstabResponse),
        response_model_exclude_unset=True,
        responses=_ERRORS,
        tags=["analysis"],
    )
    def crosstab(body: CrosstabRequest, who: Account) -> Any:
        """A one- or two-way table of counts (optionally cell means) on a universe."""
        return answer(
            who,
            lambda: engine.crosstab(
                universe_value(body.universe), body.rows, body.cols, mean_of=body.mean_of
            ),
        )

    @app.post(
        "/api/regression",
        response_model=_discriminated(RegressionResponse),
        response_model_exclude_unset=True,
        responses=_ERRORS,
        tags=["analysis"],
    )
    def regression(body: RegressionRequest, who: Account) -> Any:
        """OLS or logistic regression: coefficients, standard errors, ANOVA / deviance table."""
        return answer(
            who,
            lambda: engine.regress(
                universe_value(body.universe), formula_value(body.formula), body.family
            ),
        )

    @app.post(
        "/api/correlation",
        response_model=_discriminated(CorrelationResponse),
        response_model_exclude_unset=True,
        responses=_ERRORS,
        tags=["analysis"],
    )
    def correlation(body: CorrelationRequest, who: Account) -> Any:
        """Pearson correlations of continuous variables (or approved transformations of them)."""
        return answer(
            who, lambda: engine.correlation(universe_value(body.universe), list(body.variables))
        )

    @app.post(
        "/api/residual-plot",
        response_model=_discriminated(ResidualPlotResponse),
        response_model_exclude_unset=True,
        responses=_ERRORS,
        tags=["analysis"],
    )
    def residual_plot(body: ResidualPlotRequest, who: Account) -> Any:
        """Synthetic residual plots of an OLS model: panels' data and the PNG (base64)."""
        return answer(
            who,
            lambda: engine.residual_plot(
                universe_value(body.universe), formula_value(body.formula)
            ),
        )

    @app.post(
        "/api/residual-plot.png",
        response_class=Response,
        responses={
            200: {"content": {"image/png": {}}, "description": "The plots (or a JSON refusal)"},
            **_ERRORS,
        },
        tags=["analysis"],
    )
    def residual_plot_png(body: ResidualPlotRequest, who: Account) -> Any:
        """Synthetic residual plots as a PNG image; a refusal comes back as JSON."""
        return answer(
            who,
            lambda: engine.residual_plot(
                universe_value(body.universe), formula_value(body.formula)
            ),
            png=True,
        )

    @app.post(
        "/api/logit-diagnostics",
        response_model=_discriminated(LogitDiagnosticsResponse),
        response_model_exclude_unset=True,
        responses=_ERRORS,
        tags=["analysis"],
    )
    def logit_diagnostics(body: ResidualPlotRequest, who: Account) -> Any:
        """Binned residual plots of a logistic regression: each point the mean of many units."""
        return answer(
            who,
            lambda: engine.logit_diagnostics(
                universe_value(body.universe), formula_value(body.formula)
            ),
        )

    @app.get("/api/history", response_model=HistoryResponse, responses=_ERRORS, tags=["analysis"])
    def history(
        who: Account, limit: Annotated[int, Query(ge=1, le=10_000)] = 50
    ) -> HistoryResponse:
        """Your own queries, newest first (only when the server logs analyst identity)."""
        if not settings.log_identity:
            return HistoryResponse(
                identity_logging=False,
                entries=[],
                note=(
                    "this server logs queries without analyst identity, so it cannot list "
                    "your queries; keep your own record"
                ),
            )
        entries = store.audit_entries(
            analyst=analyst_pseudonym(secret, who.name),
            limit=min(limit, settings.history_limit),
            newest_first=True,
        )
        return HistoryResponse(
            identity_logging=True,
            entries=[HistoryEntry(**e.to_dict()) for e in entries],
        )

    # ----------------------------------------------------------------- web page

    app.mount("/web", StaticFiles(directory=WEB_DIR), name="web")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html", media_type="text/html")

    @app.get("/api/docs", include_in_schema=False)
    def api_docs() -> FileResponse:
        """The API reference, rendered in the page from /api/openapi.json (no outside resources)."""
        return FileResponse(WEB_DIR / "api.html", media_type="text/html")

    return app
