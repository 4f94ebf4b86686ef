"""``assess(original, masked)``: every utility and risk measure of a release, in one result.

Matloff & Tendick (2015), "Selection of Tuning Parameters": for a
given set of tuning parameters the data steward wishes to assess (a) whether
analyses of the released data are reasonably close to those of the original
and (b) whether records at risk in the original are masked well enough.
:class:`Assessment` holds both halves: :class:`Utility` and :class:`Risk`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from sdckit._results import MicrodataResult
from sdckit._validation import RandomState, as_sequence, check_columns, check_int
from sdckit.assess._data import categorical_columns, check_pair, joint_design, resolve_schema
from sdckit.assess.risk import (
    DistanceToClosest,
    ExtremeRecords,
    IntervalDisclosure,
    KeyRiskComparison,
    RecordLinkage,
    _distance_to_closest,
    _link,
    _linkage_result,
    compare_key_risk,
    compare_mahalanobis,
    interval_disclosure,
)
from sdckit.assess.utility import (
    CorrelationComparison,
    MomentComparison,
    MutualInformationComparison,
    PCAComparison,
    PredictionCheck,
    RegressionComparison,
    compare_correlations,
    compare_moments,
    compare_mutual_information,
    compare_pca,
    compare_regression,
    prediction_check,
)
from sdckit.errors import ParameterError, SchemaError
from sdckit.schema import Kind, Schema

__all__ = ["Assessment", "Risk", "Utility", "assess"]


@dataclass(frozen=True)
class Utility:
    """What the release keeps; a measure that does not apply to the data is None."""

    correlation: CorrelationComparison | None = None
    moments: MomentComparison | None = None
    pca: PCAComparison | None = None
    regression: RegressionComparison | None = None
    mutual_information: MutualInformationComparison | None = None
    prediction: PredictionCheck | None = None

    def summary(self) -> str:
        parts = [
            m.summary()
            for m in (
                self.correlation,
                self.moments,
                self.pca,
                self.regression,
                self.mutual_information,
                self.prediction,
            )
            if m is not None
        ]
        return "\n".join(parts) if parts else "no utility measure applies to these columns"


@dataclass(frozen=True)
class Risk:
    """What the release still gives away; a measure that does not apply is None."""

    distance_to_closest: DistanceToClosest
    linkage: RecordLinkage
    mahalanobis: ExtremeRecords | None = None
    cooks: ExtremeRecords | None = None
    interval: IntervalDisclosure | None = None
    keys: KeyRiskComparison | None = None

    def summary(self) -> str:
        parts = [
            m.summary()
            for m in (
                self.linkage,
                self.distance_to_closest,
                self.mahalanobis,
                self.cooks,
                self.interval,
                self.keys,
            )
            if m is not None
        ]
        return "\n".join(parts)


@dataclass(frozen=True)
class Assessment:
    """Utility and risk of a masked release compared with its original.

    Attributes
    ----------
    utility : Utility
    risk : Risk
    n_records : int
    columns : list of str
        The variables assessed.
    method : str
        Masking method, when known (from a MaskResult).
    params : mapping
        Masking parameters, when known.
    diagnostics : DataFrame or None
        Per-record diagnostics of the masking (e.g. RWN neighbourhood sizes).
    """

    utility: Utility
    risk: Risk
    n_records: int
    columns: list[str]
    method: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    diagnostics: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def headline(self) -> dict[str, float]:
        """The key figures as a flat ``{name: number}`` dict (one row of a sweep table)."""
        u, r = self.utility, self.risk
        out: dict[str, float] = {}
        if u.correlation is not None:
            out["corr_mean_abs_diff"] = u.correlation.mean_abs_difference
            out["corr_max_abs_diff"] = u.correlation.max_abs_difference
            out["corr_sign_flips"] = float(len(u.correlation.sign_flips))
        if u.moments is not None:
            out["cov_ratio_min"], out["cov_ratio_max"] = u.moments.ratio_range
        if u.pca is not None:
            out["pc1_share_original"] = u.pca.pc1_share_original
            out["pc1_share_masked"] = u.pca.pc1_share_masked
        if u.regression is not None:
            out["r2_original"] = u.regression.original.r_squared
            out["r2_masked"] = u.regression.masked.r_squared
            out["ci_overlap_mean"] = u.regression.mean_ci_overlap
            out["coef_sign_changes"] = float(u.regression.table["sign_changed"].sum())
        if u.mutual_information is not None:
            out["multi_information_original"] = u.mutual_information.multi_information_original
            out["multi_information_masked"] = u.mutual_information.multi_information_masked
        if u.prediction is not None:
            for name, value in u.prediction.mean_errors.items():
                out[f"prediction_error_{name}"] = float(value)
        out["linkage_rate"] = r.linkage.rate
        d = r.distance_to_closest
        out["dcr_median_original"] = float(d.within_original.median())
        out["dcr_median_masked"] = float(d.within_masked.median())
        out["dcr_median_original_to_masked"] = float(d.original_to_masked.median())
        if r.mahalanobis is not None:
            out["mahalanobis_max_original"] = r.mahalanobis.max_original
            out["mahalanobis_max_masked"] = r.mahalanobis.max_masked
            out["mahalanobis_rank_of_top"] = float(r.mahalanobis.rank_in_masked)
        if r.cooks is not None:
            out["cooks_max_original"] = r.cooks.max_original
            out["cooks_max_masked"] = r.cooks.max_masked
            out["cooks_rank_of_top"] = float(r.cooks.rank_in_masked)
        if r.interval is not None:
            out["interval_disclosure"] = r.interval.rate
        if r.keys is not None:
            out["sample_uniques_original"] = float(r.keys.original.sample_uniques)
            out["sample_uniques_masked"] = float(r.keys.masked.sample_uniques)
            out["k_anonymity_masked"] = float(r.keys.masked.k_anonymity)
            if r.keys.masked.l_diversity is not None:
                out["l_diversity_masked"] = float(r.keys.masked.l_diversity)
        return out

    def notes(self) -> list[str]:
        """Plain-language findings for a person, most important first."""
        u, r = self.utility, self.risk
        notes = [r.linkage.note()]
        for extreme in (r.mahalanobis, r.cooks):
            if extreme is not None:
                notes.append(extreme.note())
        notes.append(r.distance_to_closest.note())
        if r.keys is not None:
            notes.append(r.keys.note())
        if u.correlation is not None:
            c = u.correlation
            text = (
                f"Correlations move by {c.mean_abs_difference:.3f} on average "
                f"(at most {c.max_abs_difference:.3f}"
            )
            if len(c.largest_differences):
                row = c.largest_differences.iloc[0]
                text += f", for {row['var1']} ~ {row['var2']}: {row['original']:+.2f} -> {row['masked']:+.2f}"
            text += ")"
            text += (
                f"; {len(c.sign_flips)} correlation(s) changed sign."
                if c.sign_flips
                else "; no correlation changed sign."
            )
            notes.append(text)
        if u.regression is not None:
            g = u.regression
            changed = list(g.table.index[g.table["sign_changed"]])
            text = (
                f"The regression of {g.response} keeps R^2 {g.original.r_squared:.3f} -> "
                f"{g.masked.r_squared:.3f}; its confidence intervals overlap by "
                f"{g.mean_ci_overlap:.2f} on average (1 = identical)."
            )
            if changed:
                text += f" Coefficient(s) changing sign: {', '.join(map(str, changed))}."
            notes.append(text)
        if u.pca is not None:
            notes.append(
                f"The first principal component explains {u.pca.pc1_share_original:.1%} of the "
                f"variance before masking and {u.pca.pc1_share_masked:.1%} after."
            )
        if u.moments is not None:
            lo, hi = u.moments.ratio_range
            notes.append(
                f"Masked / original covariances range from {lo:.3f} to {hi:.3f} (1 = preserved)."
            )
        if u.prediction is not None:
            p = u.prediction
            o = p.mean_errors.get("original", math.nan)
            others = ", ".join(f"{k}: {v:.3f}" for k, v in p.mean_errors.items() if k != "original")
            notes.append(
                f"A random forest predicting {p.response} has {p.error_name} {o:.3f} when trained on "
                f"the original data and {others} when trained on the masked data."
            )
        return notes

    def summary(self) -> str:
        head = f"assessment of {self.n_records} records, {len(self.columns)} variables"
        if self.method:
            shown = ", ".join(
                f"{k}={v!r}" for k, v in self.params.items() if k in ("k", "eps", "q", "modprop")
            )
            head += f" ({self.method}{': ' + shown if shown else ''})"
        return "\n".join(
            [head, "UTILITY", self.utility.summary(), "RISK", self.risk.summary(), "NOTES"]
            + [f"- {n}" for n in self.notes()]
        )


def assess(
    original: pd.DataFrame,
    masked: pd.DataFrame | MicrodataResult,
    *,
    columns: Iterable[str] | None = None,
    response: str | None = None,
    predictors: Iterable[str] | None = None,
    keys: Iterable[str] | None = None,
    sensitive: str | None = None,
    linkage_columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    scale: str | None = "minmax",
    weights: Mapping[str, float] | None = None,
    interval_k: float = 0.01,
    prediction: bool = False,
    prediction_replications: int = 5,
    holdout: int | float | None = None,
    top: int = 5,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> Assessment:
    """Assess a masked release against its original: utility and risk.

    Parameters
    ----------
    original : DataFrame
    masked : DataFrame, MaskResult or SafeResult
        The release, with the same rows in the same order. A
        :class:`~sdckit.microdata.base.MaskResult` also brings the method,
        its parameters and per-record diagnostics into the assessment.
    columns : iterable of str, optional
        Variables to assess; default every column whose role is not id,
        weight or ignore.
    response, predictors : optional
        A linear regression to compare (coefficients, standard errors,
        confidence-interval overlap, R^2; Cook's distances on the risk
        side), and the response of the prediction check. Predictors default
        to every other assessed variable. A categorical response has no
        linear regression: it is used by the prediction check only
        (classification), which ``prediction=True`` must then ask for.
    keys : iterable of str, optional
        Categorical key variables (quasi-identifiers) for frequency counts,
        sample uniques and k-anonymity; ``sensitive`` adds l-diversity.
    linkage_columns : iterable of str, optional
        The variables the record-linkage intruder knows (default: all
        assessed variables).
    schema : Schema, optional
        Column kinds and roles; inferred from ``original`` when omitted.
    scale, weights
        Distances for the distance-to-closest-record and linkage measures
        (see :func:`sdckit.schema.build_design`).
    interval_k : float, default 0.01
        Interval half-width in standard deviations for interval disclosure.
    prediction : bool, default False
        Also run the random-forest prediction check (needs ``response``).
    prediction_replications : int, default 5
    holdout : int or float, optional
        Holdout size for the prediction check.
    top : int, default 5
        How many extreme records to list per measure.
    chunk_size, n_jobs
        Nearest-record searches run in blocks on ``n_jobs`` threads.
    random_state : None, int or Generator
        For the prediction check's splits and forests.
    progress : callable, optional
        Called as ``progress(done, total)`` after each group of measures.

    Returns
    -------
    Assessment
    """
    method, params, diagnostics = "", {}, None
    if isinstance(masked, MicrodataResult):  # a masking result or SAFE's (tables.SafeResult)
        method, params, diagnostics = masked.method, dict(masked.params), masked.diagnostics
        masked = masked.data
    original, masked = check_pair(original, masked)
    schema = resolve_schema(original, schema)
    top = check_int(top, "top", minimum=1)
    prediction_replications = check_int(
        prediction_replications, "prediction_replications", minimum=1
    )
    cols = check_columns(original, columns, "columns") if columns is not None else schema.maskable()
    if not cols:
        raise SchemaError("no columns to assess: every column is id, weight or ignore")
    numeric = [c for c in cols if schema[c].kind in (Kind.NUMERIC, Kind.ORDINAL)]
    keys = as_sequence(keys)
    check_columns(original, keys, "keys")
    categorical = [c for c in categorical_columns(schema, cols)]
    if response is not None:
        check_columns(original, [response], "response")
        preds = (
            [c for c in cols if c != response and c not in keys]
            if predictors is None
            else check_columns(original, predictors, "predictors")
        )
    elif predictors is not None:
        raise ParameterError("predictors were given without a response")
    if prediction and response is None:
        raise ParameterError("prediction=True needs a response")
    # A categorical response has no linear regression; the prediction check classifies it.
    linear = response is not None and schema[response].kind is not Kind.CATEGORICAL
    if response is not None and not linear and not prediction:
        raise SchemaError(
            f"response {response!r} is categorical: the linear regression needs a numeric "
            "response, and a categorical one is used only by the prediction check "
            "(prediction=True, --prediction on the command line)"
        )
    if sensitive is not None and not keys:
        raise ParameterError("sensitive needs key variables (keys) to define the groups")
    link_cols = (
        check_columns(original, linkage_columns, "linkage_columns")
        if linkage_columns is not None
        else cols
    )

    steps = 4 + linear + bool(keys) + prediction
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, steps)

    # Utility
    correlation = pca = moments = regression = mutual = pred = None
    if len(numeric) >= 2:
        correlation = compare_correlations(
            original, masked, columns=numeric, schema=schema, top=top
        )
        pca = compare_pca(original, masked, columns=numeric, schema=schema)
    if numeric:
        moments = compare_moments(original, masked, columns=numeric, schema=schema)
    if len(categorical) >= 2:
        mutual = compare_mutual_information(original, masked, columns=categorical, schema=schema)
    tick()
    cooks = None
    if linear:
        regression = compare_regression(original, masked, response, preds, schema=schema)
        cooks = ExtremeRecords(
            "Cook's distance",
            regression.original.cooks_distance.reindex(original.index),
            regression.masked.cooks_distance.reindex(masked.index),
            top,
        )
        tick()

    # Risk
    mahalanobis = interval = None
    if numeric:
        mahalanobis = compare_mahalanobis(original, masked, columns=numeric, schema=schema, top=top)
        interval = interval_disclosure(
            original, masked, columns=numeric, schema=schema, k=interval_k
        )
    tick()
    x0, x1 = joint_design(original, masked, cols, schema, scale=scale, weights=weights)
    dcr, (nearest, own, score) = _distance_to_closest(
        original.index, cols, scale, x0, x1, chunk_size, n_jobs
    )
    tick()
    if list(link_cols) == list(cols):
        linkage = _linkage_result(original.index, cols, nearest, own, score)
    else:
        lw = {c: w for c, w in (weights or {}).items() if c in link_cols} or None
        l0, l1 = joint_design(original, masked, link_cols, schema, scale=scale, weights=lw)
        linkage = _linkage_result(
            original.index, link_cols, *_link(l0, l1, chunk_size=chunk_size, n_jobs=n_jobs)
        )
    tick()
    key_cmp = None
    if keys:
        key_cmp = compare_key_risk(original, masked, keys, sensitive=sensitive, schema=schema)
        tick()
    if prediction:
        pred = prediction_check(
            original,
            masked,
            response,
            [p for p in preds],
            schema=schema,
            holdout=holdout,
            n_replications=prediction_replications,
            n_jobs=n_jobs,
            random_state=random_state,
        )
        tick()
    return Assessment(
        utility=Utility(correlation, moments, pca, regression, mutual, pred),
        risk=Risk(dcr, linkage, mahalanobis, cooks, interval, key_cmp),
        n_records=len(original),
        columns=list(cols),
        method=method,
        params=params,
        diagnostics=diagnostics,
    )
