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
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from sdckit._validation import check_dataframe
from sdckit.errors import ParameterError
from sdckit.server import analyses, rules
from sdckit.server.analyses import CodedData, Refusal
from sdckit.server.config import ServerConfig, load_config
from sdckit.server.dropq import DropQ, generate_secret, unit_keys
from sdckit.server.formula import FormulaError, as_formula, parse_factor
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
from sdckit.server.universe import UniverseError, as_universe, evaluate_universe

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


@dataclass(frozen=True)
class UniverseCheckResult:
    """Whether a universe passes the universe rules, and its size class (never its count)."""

    universe: str
    joint: bool
    size_class: str
    verdicts: tuple[Verdict, ...] = ()
    refused: bool = field(default=False, init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": "ok",
            "analysis": "universe_check",
            "universe": self.universe,
            "joint": self.joint,
            "size_class": self.size_class,
            "verdicts": [v.to_dict() for v in self.verdicts],
        }

    def summary(self) -> str:
        kind = "joint" if self.joint else "disjoint"
        return f"universe {self.universe}: allowed ({kind}), size class {self.size_class}"


# One query's linear algebra is small; multithreaded BLAS only adds contention
# (measured 100x slower QR on a loaded 2-core machine), and a service runs
# queries side by side anyway. threadpoolctl ships with scikit-learn.
_THREADPOOLS = ThreadpoolController()


def digest_response(payload: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of a response's canonical JSON."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Prepared:
    universe_text: str
    positions: np.ndarray | None
    verdicts: tuple[Verdict, ...]
    joint: bool = False


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
            Perturbation(keys, self._secret, self._config.perturbation_weight_range)
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

    def _run(self, analysis: str, query: dict[str, Any], compute: Callable[[], Any]) -> Any:
        arrived = datetime.now(UTC).isoformat(timespec="milliseconds")
        started = time.perf_counter()
        try:
            with _THREADPOOLS.limit(limits=1, user_api="blas"), deadline(self._max_seconds):
                result = compute()
        except (UniverseError, FormulaError) as exc:
            rule = "universe_definition" if isinstance(exc, UniverseError) else "formula_syntax"
            result = Refusal(analysis, (Verdict(rule, False, str(exc)),))
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
        verdicts = (
            rules.no_marginal_1_or_2(
                evaluation, min_marginal=self._config.min_marginal, rules=rule_set
            ),
            rules.universe_gamma(
                evaluation,
                gamma=self._config.gamma,
                gamma_star=self._config.gamma_star,
                rules=rule_set,
            ),
        )
        if not all(v.passed for v in verdicts):
            return _Prepared(text, None, verdicts, evaluation.joint)
        sample = self._dropq.subsample(evaluation.members)
        verdicts += (Verdict("drop_q", True, "a few units were removed at random (Drop q rule)"),)
        return _Prepared(text, sample.kept, verdicts, evaluation.joint)

    @staticmethod
    def _universe_query_value(universe: Any) -> Any:
        if universe is None or isinstance(universe, str | int | float | bool):
            return universe
        if hasattr(universe, "to_string"):
            return universe.to_string()
        try:
            json.dumps(universe)
            return universe
        except (TypeError, ValueError):
            return repr(universe)[:500]

    # ----------------------------------------------------------------- queries

    def universe_check(self, universe: Any) -> UniverseCheckResult | Refusal:
        """Check a universe against the universe rules; report only a size class.

        The size class ("small", "medium", "large", by
        ``config.size_class_bounds``) is computed on the Drop-q subsample.
        """
        query: dict[str, Any] = {"universe": self._universe_query_value(universe)}

        def compute():
            prepared = self._prepare(universe, query)
            if prepared.positions is None:
                return Refusal("universe_check", prepared.verdicts)
            size = (
                self._perturb.count(prepared.positions)
                if self._perturb is not None
                else int(prepared.positions.size)
            )
            return UniverseCheckResult(
                prepared.universe_text,
                prepared.joint,
                self._config.size_class(size),
                prepared.verdicts,
            )

        return self._run("universe_check", query, compute)

    def crosstab(
        self,
        universe: Any,
        rows: str,
        cols: str | None = None,
        *,
        mean_of: str | None = None,
    ) -> analyses.CrosstabResult | Refusal:
        """Cross-tabulate ``rows`` by ``cols`` (optional) on the subsampled universe.

        Continuous variables are tabulated by their cutpoint bins. With
        ``mean_of`` the cell means of that continuous variable are added,
        under the dominance rule. Refused when a released cell or margin would
        hold 1 or 2 units.
        """
        query: dict[str, Any] = {
            "universe": self._universe_query_value(universe),
            "rows": rows,
            "cols": cols,
            "mean_of": mean_of,
        }

        def compute():
            for name, value in (("rows", rows), ("cols", cols), ("mean_of", mean_of)):
                if value is not None and not isinstance(value, str):
                    raise ParameterError(f"{name} must be a variable name, got {value!r}")
            prepared = self._prepare(universe, query)
            if prepared.positions is None:
                return Refusal("crosstab", prepared.verdicts)
            verdicts, result = analyses.crosstab(
                self._coded,
                prepared.positions,
                prepared.universe_text,
                rows,
                cols,
                self._config,
                mean_of=mean_of,
                perturb=self._perturb,
            )
            all_verdicts = prepared.verdicts + tuple(verdicts)
            if result is None:
                return Refusal("crosstab", all_verdicts)
            return _with_verdicts(result, all_verdicts)

        return self._run("crosstab", query, compute)

    def regress(
        self, universe: Any, formula: Any, family: str = "ols"
    ) -> analyses.RegressionResult | Refusal:
        """Fit an OLS (``family="ols"``) or logistic (``"logit"``) regression.

        ``formula`` is text such as ``"log(wage) ~ age + square(age) + sex"``
        or its typed mapping (:class:`sdckit.server.formula.Formula`). The
        result holds coefficients, standard errors and the ANOVA (deviance)
        table only.
        """
        query: dict[str, Any] = {
            "universe": self._universe_query_value(universe),
            "formula": formula if isinstance(formula, str) else self._universe_query_value(formula),
            "family": family,
        }

        def compute():
            if family not in analyses.FAMILIES:
                raise ParameterError(
                    f"family must be one of {list(analyses.FAMILIES)}, got {family!r}"
                )
            parsed = as_formula(formula)
            query["formula"] = parsed.to_string()
            static = analyses.static_regression_rules(parsed, self._metadata, family, self._config)
            if not static[-1].passed:
                return Refusal("regression", tuple(static))
            prepared = self._prepare(universe, query)
            if prepared.positions is None:
                return Refusal("regression", prepared.verdicts)
            verdicts, result, _ = analyses.regression(
                self._coded,
                prepared.positions,
                prepared.universe_text,
                parsed,
                family,
                self._config,
                perturb=self._perturb,
            )
            all_verdicts = prepared.verdicts + tuple(verdicts)
            if result is None:
                return Refusal("regression", all_verdicts)
            return _with_verdicts(result, all_verdicts)

        return self._run("regression", query, compute)

    def correlation(
        self, universe: Any, variables: Sequence[str]
    ) -> analyses.CorrelationResult | Refusal:
        """Pearson correlations of continuous variables (names, or approved transforms like ``log(x)``)."""
        query: dict[str, Any] = {
            "universe": self._universe_query_value(universe),
            "variables": list(variables)
            if isinstance(variables, Sequence) and not isinstance(variables, str)
            else self._universe_query_value(variables),
        }

        def compute():
            if isinstance(variables, str) or not isinstance(variables, Sequence):
                raise ParameterError("variables must be a list of variable names")
            factors = []
            for item in variables:
                if not isinstance(item, str):
                    raise ParameterError(f"variables must be names, got {item!r}")
                factors.append(parse_factor(item))
            prepared = self._prepare(universe, query)
            if prepared.positions is None:
                return Refusal("correlation", prepared.verdicts)
            verdicts, result = analyses.correlation(
                self._coded,
                prepared.positions,
                prepared.universe_text,
                factors,
                self._config,
                perturb=self._perturb,
            )
            all_verdicts = prepared.verdicts + tuple(verdicts)
            if result is None:
                return Refusal("correlation", all_verdicts)
            return _with_verdicts(result, all_verdicts)

        return self._run("correlation", query, compute)

    def _checked_fit(
        self, analysis: str, model: str, universe: Any, formula: Any, query: dict[str, Any]
    ) -> Refusal | tuple[Any, _Prepared, Any, tuple[Verdict, ...]]:
        """A regression that has passed every rule, for a plot drawn from it.

        Static rules, the universe, the fit and its output rules, in that order;
        the first that fails gives the Refusal. Otherwise returns the parsed
        formula, the prepared universe, the fit's internals and all verdicts.
        """
        parsed = as_formula(formula)
        query["formula"] = parsed.to_string()
        static = analyses.static_regression_rules(parsed, self._metadata, model, self._config)
        if not static[-1].passed:
            return Refusal(analysis, tuple(static))
        prepared = self._prepare(universe, query)
        if prepared.positions is None:
            return Refusal(analysis, prepared.verdicts)
        verdicts, result, internals = analyses.regression(
            self._coded,
            prepared.positions,
            prepared.universe_text,
            parsed,
            model,
            self._config,
            perturb=self._perturb,
        )
        all_verdicts = prepared.verdicts + tuple(verdicts)
        if result is None:
            return Refusal(analysis, all_verdicts)
        return parsed, prepared, internals, all_verdicts

    def residual_plot(self, universe: Any, formula: Any) -> ResidualPlotResult | Refusal:
        """Synthetic residual plots of an OLS model (Lucero et al. 2011, Section 3.2.1).

        The model must pass every regression rule; the plots never show a real
        residual. Returns the panels' data and a PNG.
        """
        query: dict[str, Any] = {
            "universe": self._universe_query_value(universe),
            "formula": formula if isinstance(formula, str) else self._universe_query_value(formula),
        }

        def compute():
            checked = self._checked_fit("residual_plot", "ols", universe, formula, query)
            if isinstance(checked, Refusal):
                return checked
            parsed, prepared, internals, all_verdicts = checked
            panels = synthetic_residual_panels(
                response=parsed.response.to_string(),
                fitted=internals.fitted,
                standardized_residuals=internals.standardized_residuals,
                predictors=internals.predictors,
                categorical=internals.categorical,
                secret=self._noise_secret,
                config=self._config,
            )
            png = render_png(
                panels, f"Synthetic residuals: {parsed.to_string()}", self._config.residual_clip
            )
            return ResidualPlotResult(
                prepared.universe_text, parsed.to_string(), panels, png, all_verdicts
            )

        return self._run("residual_plot", query, compute)

    def logit_diagnostics(self, universe: Any, formula: Any) -> LogitDiagnosticsResult | Refusal:
        """Binned residual plots of a logistic regression (:mod:`sdckit.server.logit_diagnostics`).

        The model must pass every regression rule. Each plotted point is the
        mean residual of at least Gamma* units (groups of fitted probability,
        public cutpoint bins, categories), with keyed noise; no point is a unit.
        """
        query: dict[str, Any] = {
            "universe": self._universe_query_value(universe),
            "formula": formula if isinstance(formula, str) else self._universe_query_value(formula),
        }

        def compute():
            checked = self._checked_fit("logit_diagnostics", "logit", universe, formula, query)
            if isinstance(checked, Refusal):
                return checked
            parsed, prepared, internals, all_verdicts = checked
            # The analysis sample: the kept units with every model variable observed.
            rows = prepared.positions
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
                prepared.universe_text, parsed.to_string(), panels, png, all_verdicts
            )

        return self._run("logit_diagnostics", query, compute)


def _with_verdicts(result: Any, verdicts: tuple[Verdict, ...]) -> Any:
    return replace(result, verdicts=verdicts)
