"""The analysis server as a Python object: rules, Drop q, analyses and an audit record.

Lucero et al. (2011): an analyst sends cross-tabulations and
regressions on universes and never sees the microdata. Every query goes

    universe -> No Marginal 1 or 2 and Universe Gamma rules -> Drop q ->
    analysis rules -> analysis -> output rules -> result or refusal

and appends an :class:`AuditRecord` (the query, every verdict, the time and
a digest of what was released; no analyst identity at this layer, as in the
MAS). A service can persist the audit by passing ``audit_sink``: it is
called with each record *before* the result is returned, so nothing is
released that was not logged (an exception from the sink propagates and the
result is withheld).

Example
-------
>>> server = AnalysisServer(data, metadata, {"gamma": 50})            # doctest: +SKIP
>>> server.crosstab("sex = female", "employment", "region")           # doctest: +SKIP
>>> server.regress("ALL", "log(wage) ~ age + square(age) + sex")     # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from sdckit._docs import shared_doc
from sdckit._validation import check_dataframe
from sdckit.errors import ParameterError, RuleViolation
from sdckit.server import analyses, rules
from sdckit.server.analyses import (
    AnalysisOutcome,
    CodedData,
    CorrelationResult,
    CrosstabResult,
    Refusal,
    RegressionResult,
    UniverseCheckResult,
)
from sdckit.server.config import ServerConfig, load_config
from sdckit.server.dropq import DropQ, generate_secret, unit_keys
from sdckit.server.formula import Formula, as_formula, parse_factor
from sdckit.server.limits import deadline
from sdckit.server.logit_diagnostics import (
    LogitDiagnosticsResult,
    binned_residual_panels,
    public_bins,
)
from sdckit.server.logit_diagnostics import render_png as render_binned_png
from sdckit.server.metadata import Metadata
from sdckit.server.perturbation import Perturbation
from sdckit.server.residuals import ResidualPlotResult, render_png, synthetic_residual_panels
from sdckit.server.rules import Verdict
from sdckit.server.universe import (
    UniverseEvaluation,
    as_universe,
    evaluate_universe,
    without_rare_levels,
)

__all__ = ["AnalysisServer", "AuditRecord", "AuditSink", "UniverseCheckResult"]


@dataclass(frozen=True)
class AuditRecord:
    """One query as the audit log keeps it.

    Attributes
    ----------
    sequence : int
        Position in this server's log (1, 2, ...).
    time : str
        UTC time the query arrived, ISO 8601.
    analysis : str
    query : mapping
        The query's parameters in canonical form (plain values).
    outcome : {"released", "refused", "error"}
    verdicts : tuple of Verdict
    response_digest : str or None
        SHA-256 of the released response's canonical JSON (None unless released).
    elapsed_seconds : float
    error : str or None
        The message of an invalid query that raised instead of being answered.
    """

    sequence: int
    time: str
    analysis: str
    query: Mapping[str, Any]
    outcome: str
    verdicts: tuple[Verdict, ...]
    response_digest: str | None
    elapsed_seconds: float
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "sequence": self.sequence,
            "time": self.time,
            "analysis": self.analysis,
            "query": dict(self.query),
            "outcome": self.outcome,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "response_digest": self.response_digest,
            "elapsed_seconds": self.elapsed_seconds,
            "error": self.error,
        }


AuditSink = Callable[[AuditRecord], None]


# What a query answers: a released result or a refusal.
_Answer = (
    UniverseCheckResult
    | CrosstabResult
    | RegressionResult
    | CorrelationResult
    | ResidualPlotResult
    | LogitDiagnosticsResult
    | Refusal
)
_T = TypeVar("_T")


# One query's linear algebra is small; multithreaded BLAS only adds contention
# (measured 100x slower QR on a loaded 2-core machine), and a service runs
# queries side by side anyway. threadpoolctl ships with scikit-learn.
_THREADPOOLS = ThreadpoolController()


def digest_response(payload: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of a response's canonical JSON.

    Parameters
    ----------
    payload : mapping
        The response body as JSON-ready values (without its ``audit_id``).

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Prepared:
    """A universe after its rules: the Drop-q rows kept (None when refused) and the verdicts."""

    universe_text: str
    positions: np.ndarray | None
    verdicts: tuple[Verdict, ...]
    joint: bool = False

    @property
    def kept(self) -> np.ndarray:
        """The kept rows of a universe that passed its rules."""
        return _checked(self.positions)


#: The ``{{universe}}`` marker of every analysis's Parameters
#: (:func:`sdckit._docs.shared_doc`).
_universe_doc = shared_doc(
    {
        "universe": """
        universe : str, mapping, Universe or None
            The universe (None: everyone).
        """
    }
)


class AnalysisServer:
    """A remote analysis server over one confidential dataset.

    Parameters
    ----------
    data : DataFrame
        The confidential microdata; its index identifies units (must be
        unique). Never modified and never returned.
    metadata : Metadata, mapping or YAML path
        The variables analysts may use (see :class:`Metadata`).
    config : ServerConfig, mapping, YAML path or None
        Rule thresholds (see :class:`ServerConfig`; defaults when None).
    secret : bytes, optional
        The Drop q and residual-noise secret (>= 16 bytes). A service must
        store it and pass the same secret on every start, so that a universe
        keeps its subsample for the lifetime of the system; when omitted a
        fresh random secret is used for this object only.
    audit_sink : callable, optional
        Called with every :class:`AuditRecord` before the answer is returned.
    keep_audit : bool, default True
        Keep the records in memory (:attr:`audit`). A service persisting
        them through ``audit_sink`` may switch this off.
    max_seconds : float, optional
        Maximum run time of one analysis: past it the analysis stops with
        :class:`sdckit.server.limits.AnalysisTimeout` (nothing released, an
        ``error`` audit record). None: no limit.
    """

    def __init__(
        self,
        data: pd.DataFrame,
        metadata: Metadata | Mapping[str, Any] | str | Path,
        config: ServerConfig | Mapping[str, Any] | str | Path | None = None,
        *,
        secret: bytes | None = None,
        audit_sink: AuditSink | None = None,
        keep_audit: bool = True,
        max_seconds: float | None = None,
    ) -> None:
        check_dataframe(data, "data")
        if max_seconds is not None and (
            isinstance(max_seconds, bool)
            or not isinstance(max_seconds, int | float)
            or not max_seconds > 0
        ):
            raise ParameterError(f"max_seconds must be a number > 0 or None, got {max_seconds!r}")
        self._max_seconds = max_seconds
        if isinstance(metadata, Metadata):
            self._metadata = metadata
        elif isinstance(metadata, Mapping):
            self._metadata = Metadata.from_dict(metadata)
        elif isinstance(metadata, str | Path):
            self._metadata = Metadata.from_yaml(metadata)
        else:
            raise ParameterError(
                f"metadata must be a Metadata, a mapping or a YAML path, got {type(metadata).__name__}"
            )
        self._config = load_config(config)
        if audit_sink is not None and not callable(audit_sink):
            raise ParameterError("audit_sink must be callable with one AuditRecord")
        # Transformation domains are declared (or set from the whole dataset)
        # here, once, so no refusal ever depends on a universe's values.
        self._metadata = self._metadata.with_domains(data)
        self._coded = CodedData.from_frame(data, self._metadata)
        self._secret = generate_secret() if secret is None else secret
        keys = unit_keys(data.index)
        self._dropq = DropQ(keys, self._secret, self._config.drop_q_k)
        self._perturb = (
            Perturbation(keys, self._secret, _weight_range(self._config))
            if self._config.perturbation
            else None
        )
        self._noise_secret = hmac.new(self._secret, b"residual-noise", hashlib.sha256).digest()
        self._audit_sink = audit_sink
        self._keep_audit = bool(keep_audit)
        self._audit: list[AuditRecord] = []
        self._sequence = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # the secret is never shown
        return (
            f"AnalysisServer({self._coded.n} records, {len(self._metadata.names)} variables, "
            f"{len(self._audit)} audit records)"
        )

    @property
    def metadata(self) -> Metadata:
        return self._metadata

    @property
    def config(self) -> ServerConfig:
        return self._config

    @property
    def audit(self) -> tuple[AuditRecord, ...]:
        """The in-memory audit records, oldest first."""
        with self._lock:
            return tuple(self._audit)

    def public_metadata(self) -> dict[str, Any]:
        """What an analyst may see: variables, labels, levels and cutpoint bins.

        No bin counts, and no outer cutpoint edges: the lowest and highest edges
        are the data's extremes, so the outer bins are published as open-ended.
        """
        return self._metadata.to_dict(public=True)

    # ----------------------------------------------------------------- plumbing

    def _record(
        self,
        analysis: str,
        query: Mapping[str, Any],
        outcome: str,
        verdicts: Sequence[Verdict],
        payload: Mapping[str, Any] | None,
        started: float,
        arrived: str,
        error: str | None = None,
    ) -> AuditRecord:
        with self._lock:
            self._sequence += 1
            record = AuditRecord(
                sequence=self._sequence,
                time=arrived,
                analysis=analysis,
                query=dict(query),
                outcome=outcome,
                verdicts=tuple(verdicts),
                response_digest=digest_response(payload) if payload is not None else None,
                elapsed_seconds=time.perf_counter() - started,
                error=error,
            )
            if self._keep_audit:
                self._audit.append(record)
        if self._audit_sink is not None:
            self._audit_sink(record)
        return record

    def _run(self, analysis: str, query: dict[str, Any], compute: Callable[[], _Answer]) -> _Answer:
        """Run one query under the thread and time limits and append its audit record.

        A :class:`~sdckit.errors.RuleViolation` raised while reading the query
        (a universe or formula that does not fit) is answered by a refusal; a
        :class:`~sdckit.errors.ParameterError` is recorded as an ``error`` and
        raised again.
        """
        arrived = datetime.now(UTC).isoformat(timespec="milliseconds")
        started = time.perf_counter()
        result: _Answer
        try:
            with _THREADPOOLS.limit(limits=1, user_api="blas"), deadline(self._max_seconds):
                result = compute()
        except RuleViolation as exc:
            result = Refusal(analysis, (rules.violation(exc),))
        except ParameterError as exc:
            self._record(analysis, query, "error", (), None, started, arrived, error=str(exc))
            raise
        if isinstance(result, Refusal):
            self._record(analysis, query, "refused", result.verdicts, None, started, arrived)
        else:
            self._record(
                analysis, query, "released", result.verdicts, result.to_dict(), started, arrived
            )
        return result

    def _prepare(self, universe: Any, query: dict[str, Any]) -> _Prepared:
        """Universe rules, then Drop q. Refusal when a rule fails (positions None)."""
        parsed = as_universe(universe, self._metadata)
        text = parsed.to_string()
        query["universe"] = text
        rule_set = self._config.rules
        evaluation = evaluate_universe(
            parsed,
            self._metadata,
            self._coded.codes,
            max_pieces=self._config.max_universe_pieces,
            keep_empty_intersections=rule_set == "default",
        )
        verdicts = self._universe_rules(evaluation)
        rewrite = (
            without_rare_levels(evaluation, self._metadata, gamma=self._config.gamma)
            if rule_set == "default" and verdicts[0].passed and not verdicts[1].passed
            else None
        )
        if rewrite is not None:
            # Answer the universe without its rare categories, and say so (rules docstring).
            narrower = evaluate_universe(
                rewrite[0], self._metadata, self._coded.codes, keep_empty_intersections=True
            )
            checked = self._universe_rules(narrower)
            if all(v.passed for v in checked):
                evaluation, text = narrower, narrower.universe.to_string()
                verdicts = (
                    checked[0],
                    rules.rare_categories_left_out(rewrite[1], rewrite[2], universe=text),
                )
        if not all(v.passed for v in verdicts):
            return _Prepared(text, None, verdicts, evaluation.joint)
        sample = self._dropq.subsample(evaluation.members)
        return _Prepared(text, sample.kept, (*verdicts, rules.drop_q()), evaluation.joint)

    def _universe_rules(self, evaluation: UniverseEvaluation) -> tuple[Verdict, Verdict]:
        """The verdicts of No Marginal 1 or 2 and Universe Gamma on an evaluated universe."""
        return (
            rules.no_marginal_1_or_2(
                evaluation, min_marginal=self._config.min_marginal, rules=self._config.rules
            ),
            rules.universe_gamma(
                evaluation,
                gamma=self._config.gamma,
                gamma_star=self._config.gamma_star,
                rules=self._config.rules,
            ),
        )

    def _pipeline(
        self,
        analysis: str,
        universe: Any,
        query: dict[str, Any],
        analyse: Callable[[_Prepared], AnalysisOutcome],
        *,
        static: Sequence[Verdict] = (),
        release: Callable[[AnalysisOutcome, _Prepared, tuple[Verdict, ...]], _Answer] | None = None,
    ) -> _Answer:
        """The one sequence every query follows; each rule runs once.

        ``static`` (the verdicts of the rules that need only the query and the
        metadata, already run) -> the universe rules and Drop q
        (:meth:`_prepare`) -> ``analyse`` (the analysis and its data rules)
        -> ``release`` (the released result from the outcome, the prepared
        universe and every verdict; default: the outcome's result carrying
        every verdict). The first stage that refuses gives the
        :class:`Refusal`. A released answer lists the universe verdicts,
        then the static ones, then the analysis's own.
        """
        static = tuple(static)
        if not all(v.passed for v in static):
            return Refusal(analysis, static)
        prepared = self._prepare(universe, query)
        if prepared.positions is None:
            return Refusal(analysis, prepared.verdicts)
        outcome = analyse(prepared)
        verdicts = prepared.verdicts + static + outcome.verdicts
        if outcome.result is None:
            return Refusal(analysis, verdicts)
        if release is None:
            return replace(outcome.result, verdicts=verdicts)
        return release(outcome, prepared, verdicts)

    def _regression_rules(
        self, formula: Any, family: str, query: dict[str, Any]
    ) -> tuple[Formula, list[Verdict]]:
        """Parse a formula (recorded in canonical form) and run the static regression rules."""
        parsed = as_formula(formula)
        query["formula"] = parsed.to_string()
        return parsed, rules.static_regression_rules(parsed, self._metadata, family, self._config)

    def _fit(self, formula: Formula, family: str) -> Callable[[_Prepared], AnalysisOutcome]:
        """The regression stage of the pipeline for ``formula``."""
        return lambda prepared: analyses.regression(
            self._coded,
            prepared.kept,
            prepared.universe_text,
            formula,
            family,
            self._config,
            perturb=self._perturb,
        )

    @staticmethod
    def _query_value(value: Any) -> Any:
        """A universe or formula as the audit record keeps it, before it is parsed."""
        if value is None or isinstance(value, str | int | float | bool):
            return value
        if hasattr(value, "to_string"):
            return value.to_string()
        try:
            json.dumps(value)
            return value
        except (TypeError, ValueError):
            return repr(value)[:500]

    def _query(self, universe: Any, **fields: Any) -> dict[str, Any]:
        return {"universe": self._query_value(universe), **fields}

    # ----------------------------------------------------------------- queries

    @_universe_doc
    def universe_check(self, universe: Any) -> UniverseCheckResult | Refusal:
        """Check a universe against the universe rules; report only a size class.

        The size class ("small", "medium", "large", by
        ``config.size_class_bounds``) is computed on the Drop-q subsample.

        Parameters
        ----------
        {{universe}}

        Returns
        -------
        UniverseCheckResult or Refusal
        """
        query = self._query(universe)

        def size(prepared: _Prepared) -> AnalysisOutcome:
            kept = prepared.kept
            n = self._perturb.count(kept) if self._perturb is not None else int(kept.size)
            result = UniverseCheckResult(
                prepared.universe_text, prepared.joint, self._config.size_class(n)
            )
            return AnalysisOutcome((), result)

        answer = self._run(
            "universe_check", query, lambda: self._pipeline("universe_check", universe, query, size)
        )
        return cast("UniverseCheckResult | Refusal", answer)

    @_universe_doc
    def crosstab(
        self,
        universe: Any,
        rows: str,
        cols: str | None = None,
        *,
        mean_of: str | None = None,
    ) -> CrosstabResult | Refusal:
        """Cross-tabulate ``rows`` by ``cols`` (optional) on the subsampled universe.

        Continuous variables are tabulated by their cutpoint bins. With
        ``mean_of`` the cell means of that continuous variable are added,
        under the dominance rule. Refused when a released cell or margin would
        hold 1 or 2 units.

        Parameters
        ----------
        {{universe}}
        rows : str
            The row variable.
        cols : str, optional
            The column variable.
        mean_of : str, optional
            A continuous variable whose cell means are added.

        Returns
        -------
        CrosstabResult or Refusal
        """
        query = self._query(universe, rows=rows, cols=cols, mean_of=mean_of)

        def compute() -> _Answer:
            for name, value in (("rows", rows), ("cols", cols), ("mean_of", mean_of)):
                if value is not None and not isinstance(value, str):
                    raise ParameterError(f"{name} must be a variable name, got {value!r}")
            return self._pipeline(
                "crosstab",
                universe,
                query,
                lambda prepared: analyses.crosstab(
                    self._coded,
                    prepared.kept,
                    prepared.universe_text,
                    rows,
                    cols,
                    self._config,
                    mean_of=mean_of,
                    perturb=self._perturb,
                ),
            )

        return cast("CrosstabResult | Refusal", self._run("crosstab", query, compute))

    @_universe_doc
    def regress(
        self, universe: Any, formula: Any, family: str = "ols"
    ) -> RegressionResult | Refusal:
        """Fit an OLS (``family="ols"``) or logistic (``"logit"``) regression.

        ``formula`` is text such as ``"log(wage) ~ age + square(age) + sex"``
        or its typed mapping (:class:`sdckit.server.formula.Formula`). The
        result holds coefficients, standard errors and the ANOVA (deviance)
        table only.

        Parameters
        ----------
        {{universe}}
        formula : str, mapping or Formula
            The model.
        family : {"ols", "logit"}, default "ols"
            The model family.

        Returns
        -------
        RegressionResult or Refusal
        """
        query = self._query(universe, formula=self._query_value(formula), family=family)

        def compute() -> _Answer:
            if family not in analyses.FAMILIES:
                raise ParameterError(
                    f"family must be one of {list(analyses.FAMILIES)}, got {family!r}"
                )
            parsed, static = self._regression_rules(formula, family, query)
            return self._pipeline(
                "regression", universe, query, self._fit(parsed, family), static=static
            )

        return cast("RegressionResult | Refusal", self._run("regression", query, compute))

    @_universe_doc
    def correlation(self, universe: Any, variables: Sequence[str]) -> CorrelationResult | Refusal:
        """Pearson correlations of continuous variables (names, or approved transforms like ``log(x)``).

        Parameters
        ----------
        {{universe}}
        variables : sequence of str
            Two or more variables, each possibly transformed (``"log(wage)"``).

        Returns
        -------
        CorrelationResult or Refusal
        """
        listed = isinstance(variables, Sequence) and not isinstance(variables, str)
        query = self._query(
            universe, variables=list(variables) if listed else self._query_value(variables)
        )

        def compute() -> _Answer:
            if not listed:
                raise ParameterError("variables must be a list of variable names")
            factors = []
            for item in variables:
                if not isinstance(item, str):
                    raise ParameterError(f"variables must be names, got {item!r}")
                factors.append(parse_factor(item))
            return self._pipeline(
                "correlation",
                universe,
                query,
                lambda prepared: analyses.correlation(
                    self._coded,
                    prepared.kept,
                    prepared.universe_text,
                    factors,
                    self._config,
                    perturb=self._perturb,
                ),
            )

        return cast("CorrelationResult | Refusal", self._run("correlation", query, compute))

    @_universe_doc
    def residual_plot(self, universe: Any, formula: Any) -> ResidualPlotResult | Refusal:
        """Synthetic residual plots of an OLS model (Lucero et al. (2011), §3.2.1).

        The model must pass every regression rule; the plots never show a real
        residual. Returns the panels' data and a PNG.

        Parameters
        ----------
        {{universe}}
        formula : str, mapping or Formula
            The OLS model.

        Returns
        -------
        ResidualPlotResult or Refusal
        """

        def release(
            outcome: AnalysisOutcome, prepared: _Prepared, verdicts: tuple[Verdict, ...]
        ) -> ResidualPlotResult:
            internals = _checked(outcome.internals)
            formula_text = internals.formula.to_string()
            panels = synthetic_residual_panels(
                response=internals.formula.response.to_string(),
                fitted=internals.fitted,
                standardized_residuals=internals.standardized_residuals,
                predictors=internals.predictors,
                categorical=internals.categorical,
                secret=self._noise_secret,
                config=self._config,
            )
            png = render_png(
                panels, f"Synthetic residuals: {formula_text}", self._config.residual_clip
            )
            return ResidualPlotResult(prepared.universe_text, formula_text, panels, png, verdicts)

        return self._plot("residual_plot", "ols", universe, formula, release)

    @_universe_doc
    def logit_diagnostics(self, universe: Any, formula: Any) -> LogitDiagnosticsResult | Refusal:
        """Binned residual plots of a logistic regression (:mod:`sdckit.server.logit_diagnostics`).

        The model must pass every regression rule. Each plotted point is the
        mean residual of at least Gamma* units (groups of fitted probability,
        public cutpoint bins, categories), with keyed noise; no point is a unit.

        Parameters
        ----------
        {{universe}}
        formula : str, mapping or Formula
            The logistic model.

        Returns
        -------
        LogitDiagnosticsResult or Refusal
        """

        def release(
            outcome: AnalysisOutcome, prepared: _Prepared, verdicts: tuple[Verdict, ...]
        ) -> LogitDiagnosticsResult:
            internals = _checked(outcome.internals)
            parsed = internals.formula
            # The analysis sample: the kept units with every model variable observed.
            rows = prepared.kept
            for name in parsed.variables:
                rows = rows[self._coded.codes[name][rows] >= 0]
            factors = {f.to_string(): f.variable for f in parsed.main_effects}
            panels = binned_residual_panels(
                internals.response,
                internals.fitted,
                internals.predictors,
                internals.categorical,
                public_bins(factors, self._metadata, self._coded.codes, rows),
                rows,
                min_bin=self._config.gamma_star,
                perturb=self._perturb,
            )
            png = render_binned_png(panels, f"Binned residuals: {parsed.to_string()}")
            return LogitDiagnosticsResult(
                prepared.universe_text, parsed.to_string(), panels, png, verdicts
            )

        return self._plot("logit_diagnostics", "logit", universe, formula, release)

    def _plot(
        self,
        analysis: str,
        family: str,
        universe: Any,
        formula: Any,
        release: Callable[[AnalysisOutcome, _Prepared, tuple[Verdict, ...]], Any],
    ) -> Any:
        """A plot drawn from a regression that passed every rule (the regression's pipeline)."""
        query = self._query(universe, formula=self._query_value(formula))

        def compute() -> _Answer:
            parsed, static = self._regression_rules(formula, family, query)
            return self._pipeline(
                analysis, universe, query, self._fit(parsed, family), static=static, release=release
            )

        return self._run(analysis, query, compute)


def _weight_range(config: ServerConfig) -> tuple[float, float]:
    """The (a, b) of the unit factors 1 +/- U[a, b] (the config checks there are two)."""
    low, high = config.perturbation_weight_range
    return float(low), float(high)


def _checked(value: _T | None) -> _T:
    """A value the pipeline guarantees for a released answer (never None there)."""
    if value is None:  # pragma: no cover - the pipeline releases only complete outcomes
        raise RuntimeError("internal error: a released analysis lacks its data")
    return value
