"""Analyses on a Drop-q subsample: cross-tabulations, OLS and logistic regression, correlations.

Lucero et al. (2011), §3 and §3.2. Each analysis function (:func:`crosstab`,
:func:`regression`, :func:`correlation`) receives the row positions the Drop
q rule kept and returns one :class:`AnalysisOutcome`: the verdicts of the
rules it applied (every verdict comes from :mod:`sdckit.server.rules`) and
the result, or ``None`` when a rule refused. Results hold only what the rules
allow: counts and (non-dominated) means, or coefficients, standard errors and
the ANOVA / deviance table - never a residual or fitted value of a record.

Results and refusals are frozen results (:class:`sdckit._results.FrozenResult`)
with ``summary()`` and ``to_dict()`` giving plain JSON-ready values (a
suppressed or undefined number is ``None``).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg
import scipy.stats
import statsmodels.api as sm
from statsmodels.tools.sm_exceptions import MissingDataError, PerfectSeparationError

from sdckit._results import FrozenResult
from sdckit.errors import ParameterError
from sdckit.server import rules
from sdckit.server.config import ServerConfig
from sdckit.server.formula import Factor, Formula, Term
from sdckit.server.limits import check_deadline
from sdckit.server.metadata import Metadata
from sdckit.server.perturbation import Perturbation
from sdckit.server.rules import Verdict, static_regression_rules
from sdckit.server.universe import Universe, parse_universe

__all__ = [
    "AnalysisOutcome",
    "AnovaRow",
    "CodedData",
    "Coefficient",
    "CorrelationResult",
    "CrosstabResult",
    "FitInternals",
    "Refusal",
    "RegressionResult",
    "UniverseCheckResult",
    "correlation",
    "crosstab",
    "regression",
    "static_regression_rules",  # lives in sdckit.server.rules; importable here as before
]

FAMILIES = ("ols", "logit")

# What a logistic fit raises when the model cannot be estimated: a singular
# information matrix, separated outcomes, or non-finite values reached by
# Newton's steps. Anything else is a bug and propagates (the service answers
# it with a bare incident number, never the message).
_LOGIT_FIT_ERRORS: tuple[type[BaseException], ...] = (
    np.linalg.LinAlgError,
    ValueError,
    FloatingPointError,
    OverflowError,
    PerfectSeparationError,
    MissingDataError,
)


def _num(value: Any) -> float | None:
    """A plain float, or None for a missing / suppressed / non-finite value."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _verdicts_dict(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    return [v.to_dict() for v in verdicts]


@dataclass(frozen=True)
class Refusal(FrozenResult):
    """A refused query: which analysis, and the verdicts (the failing one last).

    Attributes
    ----------
    analysis : str
        "crosstab", "regression", "correlation", "residual_plot",
        "logit_diagnostics" or "universe_check".
    verdicts : tuple of Verdict
        Every rule applied, the refusing one(s) included.
    """

    analysis: str
    verdicts: tuple[Verdict, ...]
    refused: bool = field(default=True, init=False)

    @property
    def reasons(self) -> tuple[str, ...]:
        """``"rule: reason"`` of every refusing verdict."""
        return tuple(f"{v.rule}: {v.reason}" for v in self.verdicts if not v.passed)

    @property
    def rules(self) -> tuple[str, ...]:
        """The names of the refusing rules."""
        return tuple(v.rule for v in self.verdicts if not v.passed)

    def to_dict(self) -> dict[str, Any]:
        """The refusal as plain JSON-ready values (``status`` is ``"refused"``)."""
        return {
            "status": "refused",
            "analysis": self.analysis,
            "refusals": [v.to_dict() for v in self.verdicts if not v.passed],
            "verdicts": _verdicts_dict(self.verdicts),
        }

    def summary(self) -> str:
        """The refusing rules and their reasons, for a person."""
        lines = [f"{self.analysis} refused:"]
        lines += [f"  {r}" for r in self.reasons]
        return "\n".join(lines)


@dataclass(frozen=True)
class CodedData:
    """The server's data as arrays: codes of every metadata variable, values of continuous ones."""

    metadata: Metadata
    codes: Mapping[str, np.ndarray]
    values: Mapping[str, np.ndarray]
    n: int

    @classmethod
    def from_frame(cls, data: pd.DataFrame, metadata: Metadata) -> CodedData:
        codes = metadata.encode(data)
        values = {
            v.name: pd.to_numeric(data[v.name], errors="coerce").to_numpy(dtype=np.float64)
            for v in metadata
            if not v.is_categorical
        }
        return cls(metadata, codes, values, len(data))


@dataclass(frozen=True)
class AnalysisOutcome(FrozenResult):
    """What an analysis function returns: the verdicts of its rules and the result, if allowed.

    Attributes
    ----------
    verdicts : tuple of Verdict
        The rules the analysis applied, in order (the refusing one last).
    result : CrosstabResult, RegressionResult, CorrelationResult or None
        The result to release, or None when a rule refused.
    internals : FitInternals or None
        For a released regression, what the diagnostic plots need (never released).
    """

    verdicts: tuple[Verdict, ...]
    result: UniverseCheckResult | CrosstabResult | RegressionResult | CorrelationResult | None
    internals: FitInternals | None = None

    @property
    def refused(self) -> bool:
        """True when a rule refused (no result)."""
        return self.result is None

    def summary(self) -> str:
        """The result's summary, or the refusing rules and their reasons."""
        if self.result is None:
            return Refusal("analysis", self.verdicts).summary()
        return self.result.summary()


def _refused(verdicts: Sequence[Verdict]) -> AnalysisOutcome:
    return AnalysisOutcome(tuple(verdicts), None)


# --------------------------------------------------------------------------- universe check


@dataclass(frozen=True)
class UniverseCheckResult(FrozenResult):
    """Whether a universe passes the universe rules, and its size class (never its count).

    Attributes
    ----------
    universe : str
        The universe, canonical text.
    joint : bool
        Whether pieces of the universe share cells.
    size_class : {"small", "medium", "large"}
        The class of the (perturbed) Drop-q subsample's size.
    verdicts : tuple of Verdict
    """

    universe: str
    joint: bool
    size_class: str
    verdicts: tuple[Verdict, ...] = ()
    refused: bool = field(default=False, init=False)

    def to_dict(self) -> dict[str, Any]:
        """The answer as plain JSON-ready values (``status`` is ``"ok"``)."""
        return {
            "status": "ok",
            "analysis": "universe_check",
            "universe": self.universe,
            "joint": self.joint,
            "size_class": self.size_class,
            "verdicts": _verdicts_dict(self.verdicts),
        }

    def summary(self) -> str:
        """One line: allowed, joint or disjoint, and the size class."""
        kind = "joint" if self.joint else "disjoint"
        return f"universe {self.universe}: allowed ({kind}), size class {self.size_class}"


# --------------------------------------------------------------------------- cross-tabulation


@dataclass(frozen=True)
class CrosstabResult(FrozenResult):
    """A one- or two-way table of counts (and optionally means) on the subsampled universe.

    ``counts[i][j]`` is the count in row level i and column level j (a one-way
    table has a single column ``"count"``). ``means`` holds the cell means of
    ``mean_of`` with suppressed cells as None.
    """

    universe: str
    rows: str
    cols: str | None
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    row_totals: tuple[int, ...]
    col_totals: tuple[int, ...]
    total: int
    verdicts: tuple[Verdict, ...] = ()
    mean_of: str | None = None
    means: tuple[tuple[float | None, ...], ...] | None = None
    row_means: tuple[float | None, ...] | None = None
    col_means: tuple[float | None, ...] | None = None
    total_mean: float | None = None
    refused: bool = field(default=False, init=False)

    def to_frame(self) -> pd.DataFrame:
        """The counts as a DataFrame with row and column labels."""
        return pd.DataFrame(
            [list(r) for r in self.counts],
            index=list(self.row_labels),
            columns=list(self.col_labels),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": "ok",
            "analysis": "crosstab",
            "universe": self.universe,
            "rows": self.rows,
            "cols": self.cols,
            "row_labels": list(self.row_labels),
            "col_labels": list(self.col_labels),
            "counts": [list(r) for r in self.counts],
            "row_totals": list(self.row_totals),
            "col_totals": list(self.col_totals),
            "total": self.total,
            "verdicts": _verdicts_dict(self.verdicts),
        }
        if self.mean_of is not None:
            out["mean_of"] = self.mean_of
            out["means"] = [[_num(v) for v in r] for r in self.means or ()]
            out["row_means"] = [_num(v) for v in self.row_means or ()]
            out["col_means"] = [_num(v) for v in self.col_means or ()]
            out["total_mean"] = _num(self.total_mean)
        return out

    def summary(self) -> str:
        title = f"{self.rows}" + (f" by {self.cols}" if self.cols else "")
        lines = [f"Cross-tabulation of {title} on universe {self.universe}", ""]
        frame = self.to_frame()
        frame["Total"] = list(self.row_totals)
        lines.append(frame.to_string())
        lines.append(f"Total: {self.total}")
        if self.mean_of is not None:
            means = pd.DataFrame(
                [[("" if v is None else f"{v:.4g}") for v in r] for r in self.means or ()],
                index=list(self.row_labels),
                columns=list(self.col_labels),
            )
            lines += ["", f"Mean of {self.mean_of} (blank: suppressed)", means.to_string()]
        notes = [a for v in self.verdicts for a in v.adjustments]
        lines += [f"note: {a}" for a in notes]
        return "\n".join(lines)


def _axis(name: str, coded: CodedData) -> tuple[np.ndarray, tuple[str, ...]]:
    var = coded.metadata.variable(name)
    return coded.codes[name], var.code_labels()


def _possible(universe: Universe, name: str, coded: CodedData, n_codes: int) -> np.ndarray:
    """Indices of the codes of ``name`` a unit of ``universe`` can have."""
    possible = universe.possible_codes(name, coded.metadata)
    return np.arange(n_codes) if possible is None else np.flatnonzero(possible)


def crosstab(
    coded: CodedData,
    positions: np.ndarray,
    universe_text: str,
    rows: str,
    cols: str | None,
    config: ServerConfig,
    *,
    mean_of: str | None = None,
    perturb: Perturbation | None = None,
) -> AnalysisOutcome:
    """Counts (and means) of the kept units by ``rows`` (and ``cols``).

    Continuous row or column variables are tabulated by their cutpoint bins.
    Units with a missing row or column value are left out. Refused when a
    released cell or margin would hold 1 or 2 units (:func:`rules.no_small_cells`);
    cell means follow the (n, k) dominance rule and are also suppressed when
    fewer than ``min_cell_count`` units have a value.

    With ``perturb`` (:class:`sdckit.server.perturbation.Perturbation`)
    every count, margin and total is perturbed by the key of its own set of
    units (never 1 or 2, so no table is refused for a small cell), means are
    those of f_i x_i with each unit's fixed factor, and a mean is suppressed when the
    perturbed count of units with a value is below ``min_mean_count``.

    Parameters
    ----------
    coded : CodedData
        The server's data.
    positions : ndarray of int
        Rows the Drop q rule kept.
    universe_text : str
        The universe, canonical text.
    rows, cols : str
        Row and (optional) column variable.
    config : ServerConfig
        The thresholds.
    mean_of : str, optional
        A continuous variable whose cell means are added.
    perturb : Perturbation, optional
        The perturbation; None: exact counts of the subsample.

    Returns
    -------
    AnalysisOutcome
        The verdicts and a :class:`CrosstabResult`, or no result when refused.
    """
    verdicts: list[Verdict] = []
    names = [rows] + ([cols] if cols is not None else []) + ([mean_of] if mean_of else [])
    verdict = rules.allowed_variables(names, coded.metadata)
    verdicts.append(verdict)
    if not verdict.passed:
        return _refused(verdicts)
    if cols is not None and cols == rows:
        raise ParameterError(f"crosstab rows and cols must differ, both are {rows!r}")
    if mean_of is not None and coded.metadata.variable(mean_of).is_categorical:
        raise ParameterError(f"mean_of must be a continuous variable; {mean_of!r} is categorical")
    row_codes, row_labels = _axis(rows, coded)
    if cols is not None:
        col_codes, col_labels = _axis(cols, coded)
    else:
        col_codes, col_labels = np.zeros(coded.n, dtype=np.int64), ("count",)
    r = row_codes[positions]
    c = col_codes[positions]
    ok = (r >= 0) & (c >= 0)
    shape = (len(row_labels), len(col_labels))
    cell = r[ok] * shape[1] + c[ok]
    table = np.bincount(cell, minlength=shape[0] * shape[1]).reshape(shape)
    if perturb is None:
        # Units with a missing row or column value are left out of the table, but
        # totals of other tables of the same subsample count them: the missing
        # values form one more (unreleased) row and column that must not hold 1 or 2.
        full_shape = (shape[0] + 1, shape[1] + 1)
        r_all = np.where(r >= 0, r, shape[0])
        c_all = np.where(c >= 0, c, shape[1])
        full = np.bincount(r_all * full_shape[1] + c_all, minlength=full_shape[0] * full_shape[1])
        verdict = rules.no_small_cells(full.reshape(full_shape), min_count=config.min_cell_count)
        verdicts.append(verdict)
        if not verdict.passed:
            return _refused(verdicts)
        released = {
            "counts": table,
            "rows": table.sum(axis=1),
            "cols": table.sum(axis=0),
            "total": int(table.sum()),
        }
    else:
        # Every released count is perturbed by the key of its own set of units
        # (cells, margins and the total alike), never 1 or 2: no refusal needed.
        kept = positions[ok]
        cells_n, rows_n, cols_n, total_n = perturb.grouped_counts(
            kept,
            [
                (cell, shape[0] * shape[1]),
                (r[ok], shape[0]),
                (c[ok], shape[1]),
                (np.zeros(kept.size, dtype=np.int64), 1),
            ],
        )
        released = {
            "counts": cells_n.reshape(shape),
            "rows": rows_n,
            "cols": cols_n,
            "total": int(total_n[0]),
        }
        verdicts.append(rules.perturbation())
    kwargs: dict[str, Any] = {}
    if mean_of is not None:
        values = coded.values[mean_of][positions][ok]
        has = ~np.isnan(values)
        vcell, vals = cell[has], values[has]
        ncell = shape[0] * shape[1]
        n_val = np.bincount(vcell, minlength=ncell).reshape(shape)
        weights = np.ones(vals.size)
        if perturb is not None:
            # Every unit's value carries its fixed factor (Evans, Zayatz & Slanta 1998).
            vals = vals * perturb.value_factors(mean_of, positions[ok][has])
        sums = np.bincount(vcell, weights=vals * weights, minlength=ncell).reshape(shape)
        wsum = np.bincount(vcell, weights=weights, minlength=ncell).reshape(shape)
        absval = np.abs(vals)
        abs_tot = np.bincount(vcell, weights=absval, minlength=ncell).reshape(shape)
        order = np.lexsort((-absval, vcell))
        sorted_cells = vcell[order]
        first = np.searchsorted(sorted_cells, sorted_cells, side="left")
        rank = np.arange(sorted_cells.size) - first
        top = rank < config.dominance_n
        tops = np.bincount(sorted_cells[top], weights=absval[order][top], minlength=ncell).reshape(
            shape
        )
        # With the perturbation, judged on the perturbed count of units with a
        # value (rules.dominance says why).
        suppressed, verdict = rules.dominance(
            tops,
            abs_tot,
            n=config.dominance_n,
            k=config.dominance_k,
            value_counts=n_val,
            min_count=config.min_cell_count if perturb is None else config.min_mean_count,
            perturbed_counts=None
            if perturb is None
            else perturb.cell_counts(positions[ok][has], vcell, ncell).reshape(shape),
        )
        verdicts.append(verdict)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where((n_val > 0) & ~suppressed, sums / np.maximum(wsum, 1e-300), np.nan)
            row_sup = suppressed.any(axis=1)
            col_sup = suppressed.any(axis=0)
            row_means = np.where(
                ~row_sup & (n_val.sum(1) > 0), sums.sum(1) / np.maximum(wsum.sum(1), 1e-300), np.nan
            )
            col_means = np.where(
                ~col_sup & (n_val.sum(0) > 0), sums.sum(0) / np.maximum(wsum.sum(0), 1e-300), np.nan
            )
        total_mean = (
            np.nan if suppressed.any() or n_val.sum() == 0 else float(sums.sum() / wsum.sum())
        )
        kwargs = {
            "mean_of": mean_of,
            "means": tuple(tuple(_num(v) for v in row) for row in means),
            "row_means": tuple(_num(v) for v in row_means),
            "col_means": tuple(_num(v) for v in col_means),
            "total_mean": _num(total_mean),
        }
    # Rows and columns the universe rules out (read from the query, not the data)
    # are structural zeros: left out rather than printed as 0.
    universe = parse_universe(universe_text, coded.metadata)
    keep_r = _possible(universe, rows, coded, len(row_labels))
    keep_c = (
        _possible(universe, cols, coded, len(col_labels))
        if cols is not None
        else np.arange(len(col_labels))
    )
    if mean_of is not None:
        kwargs["means"] = tuple(tuple(kwargs["means"][i][j] for j in keep_c) for i in keep_r)
        kwargs["row_means"] = tuple(kwargs["row_means"][i] for i in keep_r)
        kwargs["col_means"] = tuple(kwargs["col_means"][j] for j in keep_c)
    counts = np.asarray(released["counts"])[np.ix_(keep_r, keep_c)]
    result = CrosstabResult(
        universe=universe_text,
        rows=rows,
        cols=cols,
        row_labels=tuple(row_labels[i] for i in keep_r),
        col_labels=tuple(col_labels[j] for j in keep_c),
        counts=tuple(tuple(int(v) for v in row) for row in counts),
        row_totals=tuple(int(released["rows"][i]) for i in keep_r),
        col_totals=tuple(int(released["cols"][j]) for j in keep_c),
        total=int(released["total"]),
        verdicts=tuple(verdicts),
        **kwargs,
    )
    return AnalysisOutcome(tuple(verdicts), result)


# --------------------------------------------------------------------------- regression


@dataclass(frozen=True)
class Coefficient:
    """One estimated coefficient."""

    term: str
    estimate: float
    std_error: float
    statistic: float
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "term": self.term,
            "estimate": _num(self.estimate),
            "std_error": _num(self.std_error),
            "statistic": _num(self.statistic),
            "p_value": _num(self.p_value),
        }


@dataclass(frozen=True)
class AnovaRow:
    """A row of the sequential ANOVA (OLS) or analysis-of-deviance (logit) table.

    For OLS ``sum_of_squares`` and ``mean_square`` are filled and
    ``statistic`` is F; for logit ``sum_of_squares`` holds the deviance
    reduction and ``statistic`` the chi-squared statistic.
    """

    source: str
    df: float
    sum_of_squares: float
    mean_square: float | None
    statistic: float | None
    p_value: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "df": _num(self.df),
            "sum_of_squares": _num(self.sum_of_squares),
            "mean_square": _num(self.mean_square),
            "statistic": _num(self.statistic),
            "p_value": _num(self.p_value),
        }


@dataclass(frozen=True)
class RegressionResult(FrozenResult):
    """Coefficients and the ANOVA / deviance table of an allowed regression.

    Attributes
    ----------
    family : {"ols", "logit"}
    formula : str
        The formula as fitted (canonical text).
    coefficients : tuple of Coefficient
    anova : tuple of AnovaRow
    n_obs : int
        Units used (after Drop q and listwise deletion).
    df_model, df_resid : float
    r_squared : float
        R-squared (OLS) or McFadden's pseudo R-squared (logit).
    adj_r_squared : float or None
    references : mapping
        Reference category of every categorical predictor.
    event : str or None
        For logit, the response level modelled as the event.
    verdicts : tuple of Verdict
    """

    universe: str
    family: str
    formula: str
    coefficients: tuple[Coefficient, ...]
    anova: tuple[AnovaRow, ...]
    n_obs: int
    df_model: float
    df_resid: float
    r_squared: float
    adj_r_squared: float | None
    references: Mapping[str, str]
    event: str | None = None
    verdicts: tuple[Verdict, ...] = ()
    refused: bool = field(default=False, init=False)

    @property
    def params(self) -> dict[str, float]:
        return {c.term: c.estimate for c in self.coefficients}

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": "ok",
            "analysis": "regression",
            "universe": self.universe,
            "family": self.family,
            "formula": self.formula,
            "coefficients": [c.to_dict() for c in self.coefficients],
            "anova": [a.to_dict() for a in self.anova],
            "n_obs": self.n_obs,
            "df_model": _num(self.df_model),
            "df_resid": _num(self.df_resid),
            "r_squared": _num(self.r_squared),
            "adj_r_squared": _num(self.adj_r_squared),
            "references": dict(self.references),
            "event": self.event,
            "verdicts": _verdicts_dict(self.verdicts),
        }

    def summary(self) -> str:
        kind = "OLS" if self.family == "ols" else "Logistic"
        lines = [
            f"{kind} regression {self.formula} on universe {self.universe}",
            f"units: {self.n_obs}   df model: {self.df_model:g}   df resid: {self.df_resid:g}   "
            f"{'R-squared' if self.family == 'ols' else 'pseudo R-squared'}: {self.r_squared:.4f}",
            "",
            f"{'term':<30}{'estimate':>12}{'std.err':>12}{'stat':>10}{'p':>10}",
        ]
        for c in self.coefficients:
            lines.append(
                f"{c.term:<30}{c.estimate:>12.5g}{c.std_error:>12.5g}{c.statistic:>10.3f}{c.p_value:>10.4f}"
            )
        lines += ["", "Analysis of " + ("variance" if self.family == "ols" else "deviance")]
        for a in self.anova:
            stat = "" if a.statistic is None else f"{a.statistic:.3f}"
            p = "" if a.p_value is None else f"{a.p_value:.4f}"
            lines.append(f"  {a.source:<28}{a.df:>6g}{a.sum_of_squares:>14.5g}{stat:>10}{p:>10}")
        if self.references:
            lines.append(
                "reference categories: " + ", ".join(f"{k}={v}" for k, v in self.references.items())
            )
        lines += [f"note: {a}" for v in self.verdicts for a in v.adjustments]
        return "\n".join(lines)


@dataclass(frozen=True)
class FitInternals:
    """What the residual plots need from an OLS fit (server-internal, never released)."""

    formula: Formula
    response: np.ndarray
    fitted: np.ndarray
    standardized_residuals: np.ndarray
    predictors: Mapping[str, np.ndarray]  # main-effect factor -> values (codes for categoricals)
    categorical: Mapping[str, tuple[str, ...]]  # categorical predictor -> level labels


_TRANSFORMS = {"square": np.square, "sqrt": np.sqrt, "log": np.log}


def _factor_values(
    factor: Factor, coded: CodedData, rows: np.ndarray, perturb: Perturbation | None = None
) -> np.ndarray:
    """Values of a (transformed) variable; with ``perturb``, of f_i x_i (a response)."""
    var = coded.metadata.variable(factor.variable)
    if var.is_categorical:
        return coded.codes[factor.variable][rows].astype(np.float64)
    x = coded.values[factor.variable][rows]
    if perturb is not None:
        x = x * perturb.value_factors(factor.variable, rows)
    if factor.transform is None:
        return x
    with np.errstate(invalid="ignore", divide="ignore"):
        return _TRANSFORMS[factor.transform](x)


@dataclass
class _Design:
    matrix: np.ndarray
    names: list[str]
    term_columns: list[tuple[str, list[int]]]
    adjustments: list[Verdict]  # interactions left out (rules.interaction_support)


def _build_design(
    formula: Formula,
    coded: CodedData,
    rows: np.ndarray,
    kept_levels: Mapping[str, list[int]],
    min_size: int,
    rule_set: str = "default",
) -> _Design:
    metadata = coded.metadata
    n = rows.size
    columns = [np.ones(n)]
    names = ["Intercept"]
    term_columns: list[tuple[str, list[int]]] = [("Intercept", [0])]
    adjustments: list[Verdict] = []
    cache: dict[Factor, list[tuple[str, np.ndarray]]] = {}

    def factor_columns(factor: Factor) -> list[tuple[str, np.ndarray]]:
        if factor not in cache:
            var = metadata.variable(factor.variable)
            if var.is_categorical:
                codes = coded.codes[factor.variable][rows]
                cache[factor] = [
                    (f"{var.name}[{var.levels[i]}]", (codes == i).astype(np.float64))
                    for i in kept_levels[factor.variable]
                ]
            else:
                cache[factor] = [(factor.to_string(), _factor_values(factor, coded, rows))]
        return cache[factor]

    for term in formula.terms:
        categorical = [f for f in term.factors if metadata.variable(f.variable).is_categorical]
        if len(categorical) >= 2:
            cells, n_cells = _cross_cells(categorical, coded, rows, kept_levels)
            keep, verdict = rules.interaction_support(
                term.to_string(), cells, n_cells, min_size=min_size, rules=rule_set
            )
            if not keep:
                adjustments.append(verdict)
                continue
        idx = []
        for combo in itertools.product(*[factor_columns(f) for f in term.factors]):
            idx.append(len(columns))
            columns.append(np.prod(np.vstack([c[1] for c in combo]), axis=0))
            names.append(":".join(c[0] for c in combo))
        if idx:
            term_columns.append((term.to_string(), idx))
    return _Design(np.column_stack(columns), names, term_columns, adjustments)


def _cross_cells(
    factors: Sequence[Factor],
    coded: CodedData,
    rows: np.ndarray,
    kept_levels: Mapping[str, list[int]],
) -> tuple[np.ndarray, int]:
    """The cell of every unit in the cross-classification of ``factors``, and the cell count.

    Levels without a dummy (the reference and absorbed ones) form one merged level.
    """
    cell = np.zeros(rows.size, dtype=np.int64)
    for factor in factors:
        codes = coded.codes[factor.variable][rows]
        kept = kept_levels[factor.variable]
        merged = np.zeros(codes.size, dtype=np.int64)
        for position, level in enumerate(kept, start=1):
            merged[codes == level] = position
        cell = cell * (len(kept) + 1) + merged
    n_cells = int(np.prod([len(kept_levels[f.variable]) + 1 for f in factors]))
    return cell, n_cells


def _without_columns(design: _Design, drop: Sequence[int]) -> _Design:
    """``design`` without the columns ``drop``; a term left with no column goes from the ANOVA."""
    gone = set(drop)
    keep = [j for j in range(design.matrix.shape[1]) if j not in gone]
    position = {j: i for i, j in enumerate(keep)}
    terms = [
        (name, [position[j] for j in idx if j in position]) for name, idx in design.term_columns
    ]
    return _Design(
        design.matrix[:, keep],
        [design.names[j] for j in keep],
        [(name, idx) for name, idx in terms if idx],
        design.adjustments,
    )


def _dependent_columns(matrix: np.ndarray) -> list[int]:
    """Columns that are linear combinations of earlier ones.

    The rank comes from a pivoted QR; when the design is deficient, the
    columns named are those that add nothing to the columns before them, in
    the formula's order (as R's ``lm`` leaves them out), so that a refusal
    names the terms to remove (never the intercept).

    Columns are scaled to unit length first: rank does not depend on a
    column's units, and without the scaling a column of large values (the
    square of an income, about 10^11) makes the tolerance larger than the
    intercept's whole length and every other term looks aliased. R's ``lm``
    (LINPACK ``dqrdc2``) likewise compares each column with its own length.
    """
    lengths = np.linalg.norm(matrix, axis=0)
    matrix = matrix / np.where(lengths > 0, lengths, 1.0)
    _, r, piv = scipy.linalg.qr(matrix, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    if diag.size == 0:
        return []
    tol = diag[0] * max(matrix.shape) * np.finfo(np.float64).eps * 1e3
    rank = int(np.count_nonzero(diag > tol))
    pivoted = sorted(int(p) for p in piv[rank:])
    if not pivoted:
        return []
    basis = np.zeros((matrix.shape[0], 0))
    later = []
    for j in range(matrix.shape[1]):
        column = matrix[:, j]
        rest = column - basis @ (basis.T @ column)
        rest -= basis @ (basis.T @ rest)  # twice, for orthogonality
        norm = float(np.linalg.norm(rest))
        if norm <= 1e-9 * max(float(np.linalg.norm(column)), 1.0):
            later.append(j)
        else:
            basis = np.column_stack([basis, rest / norm])
    return later if len(later) == len(pivoted) else pivoted


def _ols_anova(
    x: np.ndarray, y: np.ndarray, term_columns: list[tuple[str, list[int]]], df_resid: float
) -> list[AnovaRow]:
    q, _ = np.linalg.qr(x)
    effects = q.T @ y
    ssr = float(y @ y - effects @ effects)
    mse = ssr / df_resid
    out = []
    for name, cols in term_columns[1:]:
        ss = float(np.sum(effects[cols] ** 2))
        df = len(cols)
        f = (ss / df) / mse if mse > 0 else np.nan
        p = float(scipy.stats.f.sf(f, df, df_resid)) if np.isfinite(f) else None
        out.append(AnovaRow(name, df, ss, ss / df, f, p))
    out.append(AnovaRow("Residual", df_resid, ssr, mse, None, None))
    return out


def _logit_fit(x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if weights is None:
            return sm.Logit(y, x).fit(disp=0, method="newton", maxiter=100, warn_convergence=False)
        # Frequency weights summing to the released number of units: the
        # log-likelihood, the information matrix and df_resid all follow it.
        fit = sm.GLM(y, x, family=sm.families.Binomial(), freq_weights=weights).fit(maxiter=100)
        # The intercept-only model has a closed form: p0 is the weighted event share.
        p0 = float(np.clip(np.sum(weights * y) / np.sum(weights), 1e-300, 1 - 1e-16))
        null_llf = float(np.sum(weights * (y * np.log(p0) + (1 - y) * np.log1p(-p0))))
        return _WeightedLogit(fit, null_llf)


@dataclass
class _WeightedLogit:
    """A frequency-weighted GLM logit with the attributes of statsmodels' Logit results."""

    glm: Any
    llnull: float

    def __getattr__(self, name: str) -> Any:
        return getattr(self.glm, name)

    @property
    def prsquared(self) -> float:
        return 1.0 - float(self.glm.llf) / self.llnull

    @property
    def df_model(self) -> float:
        return float(self.glm.df_model)


@dataclass
class _WeightedOLS:
    """Weighted least squares whose inference follows the released number of units.

    Weights sum to ``n_released``; the residual variance is the weighted sum
    of squared residuals over ``n_released - p``.
    """

    params: np.ndarray
    bse: np.ndarray
    tvalues: np.ndarray
    pvalues: np.ndarray
    rsquared: float
    rsquared_adj: float
    df_model: float
    df_resid: float
    scale: float
    fittedvalues: np.ndarray


def _weighted_ols(x: np.ndarray, y: np.ndarray, weights: np.ndarray, n_released: int):
    root = np.sqrt(weights)
    xs, ys = x * root[:, None], y * root
    q, r = np.linalg.qr(xs)
    params = scipy.linalg.solve_triangular(r, q.T @ ys)
    resid = ys - xs @ params
    ssr = float(resid @ resid)
    p = x.shape[1]
    df_resid = float(max(n_released - p, 1))
    scale = ssr / df_resid
    rinv = scipy.linalg.solve_triangular(r, np.eye(p))
    bse = np.sqrt(np.sum(rinv * rinv, axis=1) * scale)
    with np.errstate(invalid="ignore", divide="ignore"):
        tvalues = params / bse
    pvalues = 2.0 * scipy.stats.t.sf(np.abs(tvalues), df_resid)
    ybar = float(np.sum(weights * y) / np.sum(weights))
    tss = float(np.sum(weights * (y - ybar) ** 2))
    r2 = 1.0 - ssr / tss if tss > 0 else np.nan
    adj = 1.0 - (1.0 - r2) * (n_released - 1) / df_resid
    return _WeightedOLS(
        params, bse, tvalues, pvalues, r2, adj, float(p - 1), df_resid, scale, x @ params
    )


def _logit_deviance_table(
    x: np.ndarray,
    y: np.ndarray,
    term_columns: list[tuple[str, list[int]]],
    full_llf: float,
    weights: np.ndarray | None = None,
) -> list[AnovaRow]:
    out = []
    cols: list[int] = [0]
    try:
        prev = float(_logit_fit(x[:, cols], y, weights).llf)
    except _LOGIT_FIT_ERRORS:  # a nested model failing to fit leaves its row undefined
        prev = np.nan
    for i, (name, term_cols) in enumerate(term_columns[1:], start=1):
        check_deadline()
        cols = cols + term_cols
        if i == len(term_columns) - 1:
            llf = full_llf
        else:
            try:
                llf = float(_logit_fit(x[:, cols], y, weights).llf)
            except _LOGIT_FIT_ERRORS:
                llf = np.nan
        dev = 2 * (llf - prev)
        df = len(term_cols)
        p = float(scipy.stats.chi2.sf(dev, df)) if np.isfinite(dev) else None
        out.append(AnovaRow(name, df, dev, None, dev, p))
        prev = llf
    return out


def _dominance_groups(
    formula: Formula,
    coded: CodedData,
    rows: np.ndarray,
    kept_levels: Mapping[str, list[int]],
    references: Mapping[str, str],
) -> list[tuple[str, np.ndarray]]:
    """Groups whose response means an OLS fit reveals: the universe, the categories
    of every categorical predictor (absorbed ones pooled with the reference) and
    the cells of every interaction of categorical predictors."""
    metadata = coded.metadata
    pooled: dict[str, np.ndarray] = {}
    for name, kept in kept_levels.items():
        var = metadata.variable(name)
        codes = coded.codes[name][rows]
        mapping = np.full(len(var.levels), var.levels.index(references[name]), dtype=np.int64)
        mapping[kept] = kept
        pooled[name] = np.where(codes >= 0, mapping[np.maximum(codes, 0)], -1)
    groups = [("the universe", np.zeros(rows.size, dtype=np.int64))]
    subsets: dict[tuple[str, ...], None] = {}
    for term in formula.terms:
        names = sorted(
            {f.variable for f in term.factors if metadata.variable(f.variable).is_categorical}
        )
        for size in range(1, len(names) + 1):
            subsets.update(dict.fromkeys(itertools.combinations(names, size)))
    for subset in subsets:
        joint = np.zeros(rows.size, dtype=np.int64)
        for name in subset:
            width = len(metadata.variable(name).levels)
            joint = joint * width + pooled.get(name, coded.codes[name][rows])
        where = (
            f"a category of {subset[0]}" if len(subset) == 1 else f"a cell of {':'.join(subset)}"
        )
        groups.append((where, joint))
    return groups


def regression(
    coded: CodedData,
    positions: np.ndarray,
    universe_text: str,
    formula: Formula,
    family: str,
    config: ServerConfig,
    *,
    perturb: Perturbation | None = None,
) -> AnalysisOutcome:
    """Fit ``formula`` on the kept units under the regression rules of Lucero et al. (2011), §3.2.

    The formula must have passed :func:`rules.static_regression_rules` (the
    engine runs them once, before the universe rules); this function applies
    the rules that need the data, in order: listwise deletion; the
    sample-size rule; categories
    absorbed by :func:`rules.category_support`; the binary-predictor and rank
    rules; the residual-df rule; the fit; then the output rules (R-squared,
    leverage, exact prediction). When an output rule refuses, the sparsest
    remaining category is absorbed into its reference and the model refitted,
    up to ``config.max_absorption_retries`` times.

    With ``perturb`` the released number of units is perturbed by the key of
    the analysis sample, a continuous response is taken as f_i y_i with the
    fixed factors of :meth:`Perturbation.value_factors` (so the group means a
    fit passes through are those a table releases), and the model is fitted
    with the fixed unit weights
    scaled to sum to that released number (weighted least squares, or a
    logit with frequency weights): the weights are independent of the data,
    so the fit estimates the same coefficients, while the difference of two
    fits on universes differing by one unit carries that unit's weight,
    which no repetition averages away (docs/server.md, "Padding and
    differencing"). Standard errors, degrees of freedom and p-values follow
    the released number of units.

    Parameters
    ----------
    coded, positions, universe_text, config, perturb
        As for :func:`crosstab`.
    formula : Formula
        The model, having passed the static rules.
    family : {"ols", "logit"}
        The model family.

    Returns
    -------
    AnalysisOutcome
        The verdicts of the data rules, a :class:`RegressionResult` and the
        fit's :class:`FitInternals`, or no result when refused.
    """
    if family not in FAMILIES:
        raise ParameterError(f"family must be one of {list(FAMILIES)}, got {family!r}")
    metadata = coded.metadata
    verdicts: list[Verdict] = []

    # Listwise deletion over every model variable.
    used = formula.variables
    complete = np.ones(positions.size, dtype=bool)
    for name in used:
        complete &= coded.codes[name][positions] >= 0
    rows = positions[complete]
    # Transformation domains were checked against the declared metadata
    # (static rules), so no unit of the universe is ever outside them.
    n_released = perturb.count(rows) if perturb is not None else int(rows.size)
    verdicts.append(
        rules.analysis_sample_size(
            rows.size,
            minimum=config.gamma_star,
            # With perturbed counts the released number of units no longer
            # counts the units left out, and this check would be an oracle.
            n_excluded=0 if perturb is not None else int(positions.size - rows.size),
            min_cell_count=config.min_cell_count,
        )
    )
    if not verdicts[-1].passed:
        return _refused(verdicts)
    weights = perturb.weights(rows, n_released) if perturb is not None else None

    response_var = metadata.variable(formula.response.variable)
    if family == "logit":
        y = (coded.codes[response_var.name][rows] == 1).astype(np.float64)
        event = response_var.levels[1]
    else:
        y = _factor_values(formula.response, coded, rows, perturb)
        event = None
    # The output rules judge what the released coefficients reveal about the
    # true responses, not about the perturbed ones.
    y_true = (
        y if perturb is None or family == "logit" else _factor_values(formula.response, coded, rows)
    )

    # Reference and kept levels of every categorical predictor.
    references: dict[str, str] = {}
    kept_levels: dict[str, list[int]] = {}
    counts_of: dict[str, np.ndarray] = {}
    supports = []
    for factor in formula.main_effects:
        var = metadata.variable(factor.variable)
        if not var.is_categorical:
            continue
        counts = np.bincount(coded.codes[var.name][rows], minlength=len(var.levels))
        reference, kept, _absorbed, verdict = rules.category_support(
            var.name, var.levels, counts, min_size=config.min_category_size, rules=config.rules
        )
        references[var.name] = reference
        kept_levels[var.name] = [var.levels.index(lv) for lv in kept]
        counts_of[var.name] = counts
        supports.append(verdict)
    verdicts.append(rules.combined("category_support", supports))
    if family == "ols":
        verdicts.append(
            rules.response_dominance(
                formula.response.to_string(),
                y,
                _dominance_groups(formula, coded, rows, kept_levels, references),
                n=config.dominance_n,
                k=config.dominance_k,
                min_size=config.min_category_size,
            )
        )
        if not verdicts[-1].passed:
            return _refused(verdicts)

    numeric_mains = {
        f.to_string(): _factor_values(f, coded, rows)
        for f in formula.main_effects
        if not metadata.variable(f.variable).is_categorical
    }
    verdicts.append(
        rules.binary_predictor_support(
            numeric_mains, min_size=config.min_category_size, rules=config.rules
        )
    )
    if not verdicts[-1].passed:
        return _refused(verdicts)

    retries = 0
    retries_done: list[Verdict] = []
    while True:
        check_deadline()
        design = _build_design(
            formula, coded, rows, kept_levels, config.min_category_size, config.rules
        )
        attempt: list[Verdict] = []
        dependent = _dependent_columns(design.matrix)
        # Aliased columns are left out as R's lm leaves them out (NA coefficients), and
        # said so; the intercept never is, and nothing else may be left (rules.design_rank).
        if dependent and 0 not in dependent:
            reduced = _without_columns(design, dependent)
            if not _dependent_columns(reduced.matrix):
                attempt.append(
                    rules.design_rank(
                        [design.names[i] for i in dependent],
                        predictors_left=reduced.matrix.shape[1] - 1,
                    )
                )
                design = reduced
        if not attempt:
            attempt.append(rules.design_rank([design.names[i] for i in dependent]))
        x = design.matrix
        if attempt[-1].passed:
            df_resid = x.shape[0] - x.shape[1]
            attempt.append(
                rules.residual_degrees_of_freedom(df_resid, minimum=config.min_residual_df)
            )
        if not attempt[-1].passed:
            return _refused(verdicts + attempt)
        fit, output_verdicts, internals = _fit_and_check(
            family, x, y, design, config, formula, coded, rows, weights, n_released, y_true
        )
        attempt += output_verdicts
        if all(v.passed for v in output_verdicts):
            break
        # Retry by absorbing the sparsest remaining category (Lucero et al. 2011, Section 3.2).
        candidates = [
            (int(counts_of[name][i]), name, i)
            for name, levels in kept_levels.items()
            for i in levels
        ]
        if not candidates or retries >= config.max_absorption_retries:
            return _refused(verdicts + attempt)
        _, name, level = min(candidates)
        kept_levels[name] = [i for i in kept_levels[name] if i != level]
        retries += 1
        retries_done.append(
            rules.absorption_retry(name, metadata.variable(name).levels[level], references[name])
        )
    if design.adjustments or retries_done:
        attempt.append(rules.combined("category_support", [*design.adjustments, *retries_done]))
    verdicts += attempt
    check_deadline()
    if family == "ols":
        df_resid = float(fit.df_resid)
        root = np.ones(y.size) if weights is None else np.sqrt(weights)
        anova = _ols_anova(x * root[:, None], y * root, design.term_columns, df_resid)
        r2, adj = float(fit.rsquared), float(fit.rsquared_adj)
    else:
        df_resid = float(fit.df_resid)
        anova = _logit_deviance_table(x, y, design.term_columns, float(fit.llf), weights)
        r2, adj = float(fit.prsquared), None
    coefficients = tuple(
        Coefficient(name, float(b), float(se), float(t), float(p))
        for name, b, se, t, p in zip(
            design.names, fit.params, fit.bse, fit.tvalues, fit.pvalues, strict=True
        )
    )
    result = RegressionResult(
        universe=universe_text,
        family=family,
        formula=formula.to_string(),
        coefficients=coefficients,
        anova=tuple(anova),
        n_obs=int(n_released),
        df_model=float(fit.df_model),
        df_resid=df_resid,
        r_squared=r2,
        adj_r_squared=adj,
        references=references,
        event=event,
        verdicts=tuple(verdicts),
    )
    return AnalysisOutcome(tuple(verdicts), result, internals)


def _fit_and_check(
    family: str,
    x: np.ndarray,
    y: np.ndarray,
    design: _Design,
    config: ServerConfig,
    formula: Formula,
    coded: CodedData,
    rows: np.ndarray,
    weights: np.ndarray | None = None,
    n_released: int | None = None,
    y_true: np.ndarray | None = None,
):
    out: list[Verdict] = []
    root = np.ones(y.size) if weights is None else np.sqrt(weights)
    if family == "ols":
        if weights is None:
            fit = sm.OLS(y, x).fit()
        else:
            fit = _weighted_ols(x, y, weights, y.size if n_released is None else n_released)
        q, _ = np.linalg.qr(x * root[:, None])
        leverage = np.sum(q * q, axis=1)
        residuals = y - np.asarray(fit.fittedvalues)
        r2 = float(fit.rsquared)
        if y_true is not None and y_true is not y:
            # How well the released coefficients predict the *true* responses.
            residuals = y_true - np.asarray(fit.fittedvalues)
            centred = y_true - float(np.mean(y_true))
            tss = float(centred @ centred)
            r2 = max(r2, 1.0 - float(residuals @ residuals) / tss if tss > 0 else np.nan)
        out.append(rules.r_squared_bound(r2, maximum=config.r_squared_max))
        out.append(rules.leverage_bound(leverage, maximum=config.max_leverage))
        out.append(
            rules.exact_prediction(
                residuals,
                scale=float(np.std(y if y_true is None else y_true)),
                tolerance=config.exact_fit_tolerance,
                min_group=config.min_category_size,
            )
        )
        s = math.sqrt(max(float(fit.scale), 1e-300))
        with np.errstate(invalid="ignore", divide="ignore"):
            t = residuals * root / (s * np.sqrt(np.clip(1 - leverage, 1e-12, None)))
        internals = _internals(formula, coded, rows, y, np.asarray(fit.fittedvalues), t)
        return fit, out, internals
    try:
        fit = _logit_fit(x, y, weights)
    except _LOGIT_FIT_ERRORS as exc:
        out.append(rules.separated_outcomes(exc))
        return None, out, None
    p = np.asarray(fit.predict(x)) if weights is None else np.asarray(fit.glm.predict(x))
    w = np.clip(p * (1 - p), 1e-300, None) * (1.0 if weights is None else weights)
    q, _ = np.linalg.qr(x * np.sqrt(w)[:, None])
    leverage = np.sum(q * q, axis=1)
    out.append(rules.r_squared_bound(float(fit.prsquared), maximum=config.r_squared_max))
    out.append(rules.leverage_bound(leverage, maximum=config.max_leverage))
    out.append(
        rules.exact_prediction(
            y - p,
            scale=1.0,
            tolerance=config.exact_fit_tolerance,
            min_group=config.min_category_size,
        )
    )
    standard_errors = rules.undefined_standard_errors(np.asarray(fit.bse))
    if not standard_errors.passed:
        out.append(standard_errors)
    return fit, out, _internals(formula, coded, rows, y, p, y - p)


def _internals(
    formula: Formula,
    coded: CodedData,
    rows: np.ndarray,
    response: np.ndarray,
    fitted: np.ndarray,
    residuals: np.ndarray,
) -> FitInternals:
    """What the diagnostic plots need: main-effect values and categorical levels."""
    predictors = {}
    categorical = {}
    for factor in formula.main_effects:
        var = coded.metadata.variable(factor.variable)
        predictors[factor.to_string()] = _factor_values(factor, coded, rows)
        if var.is_categorical:
            categorical[factor.to_string()] = var.levels
    return FitInternals(formula, response, fitted, np.asarray(residuals), predictors, categorical)


# --------------------------------------------------------------------------- correlation


@dataclass(frozen=True)
class CorrelationResult(FrozenResult):
    """Pearson correlations of continuous variables on the subsampled universe."""

    universe: str
    variables: tuple[str, ...]
    matrix: tuple[tuple[float, ...], ...]
    n_obs: int
    verdicts: tuple[Verdict, ...] = ()
    refused: bool = field(default=False, init=False)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [list(r) for r in self.matrix], index=list(self.variables), columns=list(self.variables)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": "ok",
            "analysis": "correlation",
            "universe": self.universe,
            "variables": list(self.variables),
            "matrix": [[_num(v) for v in r] for r in self.matrix],
            "n_obs": self.n_obs,
            "verdicts": _verdicts_dict(self.verdicts),
        }

    def summary(self) -> str:
        return (
            f"Correlations on universe {self.universe} ({self.n_obs} units)\n"
            + self.to_frame().round(4).to_string()
        )


def correlation(
    coded: CodedData,
    positions: np.ndarray,
    universe_text: str,
    factors: Sequence[Factor],
    config: ServerConfig,
    *,
    perturb: Perturbation | None = None,
) -> AnalysisOutcome:
    """Pearson correlations of two or more continuous (optionally transformed) variables.

    Rules: allowed (continuous) variables, approved transformations and their
    declared domains, the sample-size rule after listwise deletion, the
    binary-predictor rule, and the R-squared bound applied to every pair
    (:func:`rules.correlation_bound`).

    Parameters
    ----------
    coded, positions, universe_text, config, perturb
        As for :func:`crosstab`.
    factors : sequence of Factor
        The variables, each possibly transformed.

    Returns
    -------
    AnalysisOutcome
        The verdicts and a :class:`CorrelationResult`, or no result when refused.
    """
    metadata = coded.metadata
    if len(factors) < 2:
        raise ParameterError("correlation needs at least two variables")
    names = [f.to_string() for f in factors]
    if len(set(names)) != len(names):
        raise ParameterError(f"correlation lists a variable more than once: {names}")
    variables = [f.variable for f in factors]
    pseudo = Formula(factors[0], tuple(Term((f,)) for f in factors[1:]))
    verdicts: list[Verdict] = []
    checks: tuple[Callable[[], Verdict], ...] = (
        lambda: rules.allowed_variables(variables, metadata),
        lambda: rules.approved_transformations(
            pseudo, metadata, approved=config.approved_transformations
        ),
        lambda: rules.transformation_domain(factors, metadata),
    )
    for check in checks:
        verdicts.append(check())
        if not verdicts[-1].passed:
            return _refused(verdicts)
    continuous = rules.continuous_variables(variables, metadata)
    if not continuous.passed:  # listed only when it refuses, as the verdicts always were
        return _refused([*verdicts, continuous])
    values = np.column_stack([_factor_values(f, coded, positions) for f in factors])
    complete = np.all(np.isfinite(values), axis=1)
    values = values[complete]
    verdicts.append(
        rules.analysis_sample_size(
            values.shape[0],
            minimum=config.gamma_star,
            n_excluded=0 if perturb is not None else int(positions.size - values.shape[0]),
            min_cell_count=config.min_cell_count,
        )
    )
    if not verdicts[-1].passed:
        return _refused(verdicts)
    verdicts.append(
        rules.binary_predictor_support(
            {n: values[:, i] for i, n in enumerate(names)},
            min_size=config.min_category_size,
            rules=config.rules,
        )
    )
    if not verdicts[-1].passed:
        return _refused(verdicts)
    n_obs = int(values.shape[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        if perturb is None:
            corr = np.corrcoef(values, rowvar=False)
        else:
            sample = positions[complete]
            n_obs = perturb.count(sample)
            corr = np.cov(values, rowvar=False, aweights=perturb.raw_weights(sample))
            sd = np.sqrt(np.diag(corr))
            corr = corr / np.outer(sd, sd)
    verdicts.append(rules.correlation_bound(corr, names, maximum=config.r_squared_max))
    if not verdicts[-1].passed:
        return _refused(verdicts)
    result = CorrelationResult(
        universe_text,
        tuple(names),
        tuple(tuple(float(v) for v in row) for row in corr),
        n_obs,
        tuple(verdicts),
    )
    return AnalysisOutcome(tuple(verdicts), result)
