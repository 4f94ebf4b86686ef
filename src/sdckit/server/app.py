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
from typing import Annotated, Any

import pandas as pd
from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

import sdckit
from sdckit.errors import ParameterError, SDCError
from sdckit.server.analyses import FAMILIES, Refusal
from sdckit.server.config import ServerConfig
from sdckit.server.engine import AnalysisServer, AuditRecord
from sdckit.server.metadata import Metadata
from sdckit.server.models import (
    ERROR_RESPONSES,
    AccountResponse,
    CorrelationRequest,
    CorrelationResponse,
    CrosstabRequest,
    CrosstabResponse,
    ErrorResponse,
    HistoryEntry,
    HistoryResponse,
    LogitDiagnosticsResponse,
    MetadataResponse,
    RegressionRequest,
    RegressionResponse,
    ResidualPlotRequest,
    ResidualPlotResponse,
    UniverseCheckResponse,
    UniverseRequest,
    answer_model,
)
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


def _error_json(error: ApiError) -> JSONResponse:
    """The typed error body of ``error``, with its status and headers."""
    body = ErrorResponse(error=error.error, message=error.message, details=error.details)
    return JSONResponse(
        body.model_dump(exclude_none=True), status_code=error.status_code, headers=error.headers
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


def _retry_later(code: str, wait: float, what: str) -> ApiError:
    """A 429 refusal saying what ran out and when to retry (also in ``Retry-After``)."""
    seconds = max(1, math.ceil(wait))
    return ApiError(
        429, code, f"{what}; retry in {seconds} s", headers={"Retry-After": str(seconds)}
    )


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
        raise _retry_later("rate_limited", wait, f"more than {limit} requests in a minute")
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
        return _error_json(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error_json(
                ApiError(400, "malformed_json", "the request body is not valid JSON")
            )
        return _error_json(
            ApiError(
                422,
                "invalid_request",
                _readable_validation_message(errors),
                details=_clean_validation_errors(errors),
            )
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_ERRORS.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        return _error_json(
            ApiError(exc.status_code, code, message, headers=getattr(exc, "headers", None))
        )

    @app.exception_handler(Exception)
    async def _internal(_request: Request, exc: Exception) -> JSONResponse:
        incident = secrets.token_hex(6)
        logger.error("internal error, incident %s", incident, exc_info=exc)
        return _error_json(
            ApiError(
                500,
                "internal_error",
                f"the server could not answer this request (incident {incident}); "
                "nothing was released",
            )
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
                raise _retry_later(
                    "cost_budget_exhausted",
                    wait,
                    f"your analyses used more than {cpu_budget:g} CPU seconds in the last minute",
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

    @app.get("/api/me", response_model=AccountResponse, responses=ERROR_RESPONSES, tags=["service"])
    def me(who: Account) -> AccountResponse:
        """The signed-in account and its limits."""
        return AccountResponse(
            name=who.name,
            rate_per_minute=who.rate_per_minute or settings.rate_per_minute,
            daily_budget=who.daily_budget or settings.daily_budget,
        )

    @app.get(
        "/api/metadata",
        response_model=MetadataResponse,
        responses=ERROR_RESPONSES,
        tags=["analysis"],
    )
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

    def analysis_route(
        path: str,
        request: type[BaseModel],
        response: type[BaseModel] | None,
        run: Callable[[Any], Any],
        name: str,
        doc: str,
    ) -> None:
        """Register ``POST path``: ``run(body)`` on the engine, answered by :func:`answer`.

        ``response`` None is the PNG route: the image itself, or a JSON refusal.
        """

        def endpoint(body: Any, who: AccountInfo) -> Any:
            return answer(who, lambda: run(body), png=response is None)

        # FastAPI reads the body's model and the account dependency from the
        # annotations, and names the OpenAPI operation after the function.
        endpoint.__annotations__ = {"body": request, "who": Account, "return": Any}
        endpoint.__name__ = endpoint.__qualname__ = name
        endpoint.__doc__ = doc
        if response is None:
            options: dict[str, Any] = {
                "response_class": Response,
                "responses": {
                    200: {
                        "content": {"image/png": {}},
                        "description": "The plots (or a JSON refusal)",
                    },
                    **ERROR_RESPONSES,
                },
            }
        else:
            options = {
                "response_model": answer_model(response),
                "response_model_exclude_unset": True,
                "responses": ERROR_RESPONSES,
            }
        app.post(path, tags=["analysis"], **options)(endpoint)

    def plot_of(method: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
        return lambda body: method(universe_value(body.universe), formula_value(body.formula))

    analysis_route(
        "/api/universe/check",
        UniverseRequest,
        UniverseCheckResponse,
        lambda body: engine.universe_check(universe_value(body.universe)),
        "universe_check",
        "Whether a universe passes the universe rules, and its size class (never its count).",
    )
    analysis_route(
        "/api/crosstab",
        CrosstabRequest,
        CrosstabResponse,
        lambda body: engine.crosstab(
            universe_value(body.universe), body.rows, body.cols, mean_of=body.mean_of
        ),
        "crosstab",
        "A one- or two-way table of counts (optionally cell means) on a universe.",
    )
    analysis_route(
        "/api/regression",
        RegressionRequest,
        RegressionResponse,
        lambda body: engine.regress(
            universe_value(body.universe), formula_value(body.formula), body.family
        ),
        "regression",
        "OLS or logistic regression: coefficients, standard errors, ANOVA / deviance table.",
    )
    analysis_route(
        "/api/correlation",
        CorrelationRequest,
        CorrelationResponse,
        lambda body: engine.correlation(universe_value(body.universe), list(body.variables)),
        "correlation",
        "Pearson correlations of continuous variables (or approved transformations of them).",
    )
    analysis_route(
        "/api/residual-plot",
        ResidualPlotRequest,
        ResidualPlotResponse,
        plot_of(engine.residual_plot),
        "residual_plot",
        "Synthetic residual plots of an OLS model: panels' data and the PNG (base64).",
    )
    analysis_route(
        "/api/residual-plot.png",
        ResidualPlotRequest,
        None,
        plot_of(engine.residual_plot),
        "residual_plot_png",
        "Synthetic residual plots as a PNG image; a refusal comes back as JSON.",
    )
    analysis_route(
        "/api/logit-diagnostics",
        ResidualPlotRequest,
        LogitDiagnosticsResponse,
        plot_of(engine.logit_diagnostics),
        "logit_diagnostics",
        "Binned residual plots of a logistic regression: each point the mean of many units.",
    )

    @app.get(
        "/api/history", response_model=HistoryResponse, responses=ERROR_RESPONSES, tags=["analysis"]
    )
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
