"""Utility: what a masked release keeps of the original data's relations.

Each function compares an original file with its masked release and returns
a frozen result with plain attributes and ``.summary()``.

Sources
-------
* Perry, Matloff & Tendick (2022), Section 8.1 and 8.3:
  correlations, regression coefficients and standard errors, principal
  components on scaled data; Section 8.4: the prediction-oriented check with
  random forests.
* Matloff & Tendick (2015), "Selection of Tuning Parameters": judge
  a release by the analyses it is meant for.
* Karr, Kohnen, Oganian, Reiter & Sanil (2006), cited in Oganian (2011): overlap of
  confidence intervals of regression coefficients.
* Oganian (2011), Section 5: the element-wise covariance ratio
  Sigma_masked / Sigma_original and the ratio of means.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import statsmodels.api as sm
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from sdckit._docs import shared_doc
from sdckit._pairs import (
    PAIR_FRAGMENTS,
    categorical_columns,
    check_pair_schema,
    numeric_columns,
    numeric_matrix,
    pair_doc,
    resolve_schema,
)
from sdckit._results import FrozenResult
from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    check_fraction,
    check_int,
    check_random_state,
    value_at,
)
from sdckit.assess._result import MeasureResult
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.schema import Kind, Schema, build_design, category_codes

__all__ = [
    "CorrelationComparison",
    "MomentComparison",
    "MutualInformationComparison",
    "PCAComparison",
    "PredictionCheck",
    "RegressionComparison",
    "compare_correlations",
    "compare_moments",
    "compare_mutual_information",
    "compare_pca",
    "compare_regression",
    "fit_regression",
    "prediction_check",
    "prediction_experiment",
]


# ---------------------------------------------------------------------------
# Correlations
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CorrelationComparison(MeasureResult):
    """Pearson correlation matrices of the original and masked data.

    Attributes
    ----------
    original, masked : DataFrame
        Correlation matrices (variables x variables).
    difference : DataFrame
        ``masked - original``.
    mean_abs_difference : float
        Mean of |difference| over the pairs above the diagonal.
    max_abs_difference : float
        Largest |difference|.
    largest_differences : DataFrame
        The pairs with the largest |difference| (columns ``var1``, ``var2``,
        ``original``, ``masked``, ``difference``), largest first.
    sign_flips : list of tuple
        Pairs whose correlation changed sign (ignoring correlations under
        ``sign_threshold`` in absolute value in both files).
    """

    original: pd.DataFrame
    masked: pd.DataFrame
    difference: pd.DataFrame
    mean_abs_difference: float
    max_abs_difference: float
    largest_differences: pd.DataFrame
    sign_flips: list[tuple[str, str]]

    LABELS: ClassVar[Mapping[str, str]] = {
        "corr_mean_abs_diff": "mean |correlation difference|",
        "corr_max_abs_diff": "largest |correlation difference|",
        "corr_sign_flips": "correlations changing sign",
    }

    def headline(self) -> dict[str, float]:
        """The key figures: mean and largest |difference|, number of sign flips."""
        return {
            "corr_mean_abs_diff": self.mean_abs_difference,
            "corr_max_abs_diff": self.max_abs_difference,
            "corr_sign_flips": float(len(self.sign_flips)),
        }

    def note(self) -> str:
        text = (
            f"Correlations move by {self.mean_abs_difference:.3f} on average "
            f"(at most {self.max_abs_difference:.3f}"
        )
        if len(self.largest_differences):
            row = self.largest_differences.iloc[0]
            text += f", for {row['var1']} ~ {row['var2']}: {row['original']:+.2f} -> {row['masked']:+.2f}"
        text += ")"
        text += (
            f"; {len(self.sign_flips)} correlation(s) changed sign."
            if self.sign_flips
            else "; no correlation changed sign."
        )
        return text

    def summary(self) -> str:
        lines = [
            f"correlations of {self.original.shape[0]} variables: mean |difference| "
            f"{self.mean_abs_difference:.4f}, largest {self.max_abs_difference:.4f}, "
            f"{len(self.sign_flips)} sign flip(s)"
        ]
        for row in self.largest_differences.head(3).itertuples(index=False):
            lines.append(f"  {row.var1} ~ {row.var2}: {row.original:+.3f} -> {row.masked:+.3f}")
        return "\n".join(lines)


def _correlation(matrix: np.ndarray) -> np.ndarray:
    """Pearson correlations on complete rows; a constant variable gets NaN correlations."""
    complete = ~np.isnan(matrix).any(axis=1)
    x = matrix[complete]
    if len(x) < 2:
        raise DataError("fewer than 2 complete records: correlations are undefined")
    x = x - x.mean(axis=0)
    sd = np.sqrt((x * x).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = (x.T @ x) / np.outer(sd, sd)
    np.fill_diagonal(corr, 1.0)
    return np.clip(corr, -1.0, 1.0)


@pair_doc
def compare_correlations(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    top: int = 5,
    sign_threshold: float = 0.05,
) -> CorrelationComparison:
    """Compare Pearson correlation matrices (Perry, Matloff & Tendick 2022, Section 8.3, "Correlation").

    Parameters
    ----------
    {{numeric_pair}}
    top : int, default 5
        How many of the largest differences to list.
    sign_threshold : float, default 0.05
        A sign flip is only reported when the correlation is at least this
        large in absolute value in one of the files (a change from +0.01 to
        -0.01 is noise, not a flipped relation).

    Returns
    -------
    CorrelationComparison
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    top = check_int(top, "top", minimum=0)
    sign_threshold = check_fraction(sign_threshold, "sign_threshold")
    cols = numeric_columns(original, schema, columns)
    if len(cols) < 2:
        raise SchemaError(f"correlations need at least 2 numeric columns, got {cols}")
    r0 = _correlation(numeric_matrix(original, cols, schema))
    r1 = _correlation(numeric_matrix(masked, cols, schema))
    diff = r1 - r0
    iu = np.triu_indices(len(cols), k=1)
    d = diff[iu]
    absd = np.abs(d)
    order = np.argsort(-np.nan_to_num(absd, nan=-1.0), kind="stable")[:top]
    largest = pd.DataFrame(
        {
            "var1": [cols[iu[0][i]] for i in order],
            "var2": [cols[iu[1][i]] for i in order],
            "original": r0[iu][order],
            "masked": r1[iu][order],
            "difference": d[order],
        }
    )
    big = (np.abs(r0[iu]) >= sign_threshold) | (np.abs(r1[iu]) >= sign_threshold)
    flips = np.flatnonzero(big & (np.sign(r0[iu]) * np.sign(r1[iu]) < 0))
    return CorrelationComparison(
        original=pd.DataFrame(r0, index=cols, columns=cols),
        masked=pd.DataFrame(r1, index=cols, columns=cols),
        difference=pd.DataFrame(diff, index=cols, columns=cols),
        mean_abs_difference=float(np.nanmean(absd)),
        max_abs_difference=float(np.nanmax(absd)),
        largest_differences=largest,
        sign_flips=[(cols[iu[0][i]], cols[iu[1][i]]) for i in flips],
    )


# ---------------------------------------------------------------------------
# Regression
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RegressionFit(FrozenResult):
    """An ordinary least-squares fit (statsmodels) and what assessment needs from it.

    Attributes
    ----------
    coefficients, standard_errors, lower, upper : Series
        Estimates, standard errors and confidence limits, by term.
    r_squared : float
    cooks_distance : Series
        Cook's distance of each record used, indexed like the data.
    n : int
        Records used (complete cases).
    """

    coefficients: pd.Series
    standard_errors: pd.Series
    lower: pd.Series
    upper: pd.Series
    r_squared: float
    cooks_distance: pd.Series
    n: int

    def summary(self) -> str:
        lines = [f"OLS on {self.n} records, R^2 = {self.r_squared:.4f}"]
        for term in self.coefficients.index:
            lines.append(
                f"  {term:<20} {self.coefficients[term]:>12.4g} (SE {self.standard_errors[term]:.3g})"
            )
        return "\n".join(lines)


def _regression_frame(
    data: pd.DataFrame, response: str, predictors: list[str], schema: Schema
) -> tuple[pd.Series, pd.DataFrame]:
    """Response and design (constant + numeric predictors + treatment dummies)."""
    if schema[response].kind is Kind.CATEGORICAL:
        raise SchemaError(
            f"response {response!r} is categorical; the linear regression needs a numeric response"
        )
    y = pd.Series(numeric_matrix(data, [response], schema)[:, 0], index=data.index, name=response)
    parts = [pd.Series(1.0, index=data.index, name="const")]
    for col in predictors:
        spec = schema[col]
        if spec.kind is Kind.CATEGORICAL:
            levels = list(spec.categories or ())
            codes, unknown = category_codes(data[col], levels)
            if unknown.any():
                # Dropping these records would fit the two files on different records.
                pos = int(np.flatnonzero(unknown)[0])
                raise SchemaError(
                    f"categorical predictor {col!r} has value {value_at(data[col], pos)} "
                    f"({int(unknown.sum())} record(s)), which is "
                    f"not one of the original's levels {levels}; the regressions cannot be "
                    "compared term by term. Leave the predictor out or recode both files alike"
                )
            for j, level in enumerate(levels[1:], start=1):  # first level is the baseline
                dummy = np.where(codes == j, 1.0, 0.0)
                dummy[codes < 0] = np.nan
                parts.append(pd.Series(dummy, index=data.index, name=f"{col}[{level}]"))
        else:
            values = numeric_matrix(data, [col], schema)[:, 0]
            parts.append(pd.Series(values, index=data.index, name=col))
    return y, pd.concat(parts, axis=1)


def fit_regression(
    data: pd.DataFrame,
    response: str,
    predictors: Iterable[str],
    *,
    schema: Schema | None = None,
    alpha: float = 0.05,
) -> RegressionFit:
    """Fit ``response ~ predictors`` by OLS (statsmodels) on complete cases.

    Categorical predictors enter as treatment dummies (first level the
    baseline). Returns coefficients, standard errors, ``1 - alpha``
    confidence limits, R^2 and Cook's distances (Perry, Matloff & Tendick 2022, Section 8.3,
    "Regression").

    Parameters
    ----------
    data : DataFrame
        The file to fit on.
    response : str
        The numeric response.
    predictors : iterable of str
        The predictors; categorical ones enter as dummies.
    schema : Schema, optional
        Inferred from ``data`` when omitted.
    alpha : float, default 0.05
        Confidence intervals at level ``1 - alpha``.

    Returns
    -------
    RegressionFit
    """
    check_dataframe(data, min_rows=3)
    schema = resolve_schema(data, schema)
    predictors = check_columns(data, predictors, "predictors")
    check_columns(data, [response], "response")
    if response in predictors:
        raise ParameterError(f"response {response!r} is also listed among the predictors")
    if not predictors:
        raise ParameterError("predictors: give at least one predictor")
    alpha = check_fraction(alpha, "alpha", open_low=True)
    y, x = _regression_frame(data, response, predictors, schema)
    complete = y.notna() & x.notna().all(axis=1)
    y, x = y[complete], x[complete]
    if len(y) <= x.shape[1]:
        raise DataError(
            f"regression of {response!r} has {len(y)} complete records for {x.shape[1]} "
            "coefficients; it needs more records than coefficients"
        )
    fit = sm.OLS(y.to_numpy(), x.to_numpy()).fit()
    ci = np.asarray(fit.conf_int(alpha))
    terms = list(x.columns)
    cooks = fit.get_influence().cooks_distance[0]
    return RegressionFit(
        coefficients=pd.Series(np.asarray(fit.params), index=terms),
        standard_errors=pd.Series(np.asarray(fit.bse), index=terms),
        lower=pd.Series(ci[:, 0], index=terms),
        upper=pd.Series(ci[:, 1], index=terms),
        r_squared=float(fit.rsquared),
        cooks_distance=pd.Series(cooks, index=y.index, name="cooks_distance"),
        n=len(y),
    )


def ci_overlap(
    lower_original: np.ndarray,
    upper_original: np.ndarray,
    lower_masked: np.ndarray,
    upper_masked: np.ndarray,
) -> np.ndarray:
    """Confidence-interval overlap of Karr et al. (2006).

    J = (U - L) / (2 (U_o - L_o)) + (U - L) / (2 (U_m - L_m)) with
    L = max(L_o, L_m), U = min(U_o, U_m): 1 when the intervals coincide,
    0 when they only touch, negative when they are apart (the more negative,
    the farther apart).

    Parameters
    ----------
    lower_original, upper_original : ndarray
        Confidence limits of each coefficient on the original data.
    lower_masked, upper_masked : ndarray
        The same on the masked data.

    Returns
    -------
    ndarray
        The overlap J of each coefficient.
    """
    lo = np.maximum(lower_original, lower_masked)
    hi = np.minimum(upper_original, upper_masked)
    width = hi - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        return 0.5 * (
            width / (upper_original - lower_original) + width / (upper_masked - lower_masked)
        )


@dataclass(frozen=True)
class RegressionComparison(MeasureResult):
    """The same regression fitted on the original and on the masked data.

    Attributes
    ----------
    response : str
    predictors : list of str
    original, masked : RegressionFit
    table : DataFrame
        One row per term: ``coef_original``, ``se_original``, ``coef_masked``,
        ``se_masked``, ``ci_overlap`` (Karr et al. 2006), ``sign_changed``.
    mean_ci_overlap : float
    """

    response: str
    predictors: list[str]
    original: RegressionFit
    masked: RegressionFit
    table: pd.DataFrame
    mean_ci_overlap: float

    LABELS: ClassVar[Mapping[str, str]] = {
        "r2_original": "regression R^2, original",
        "r2_masked": "regression R^2, masked",
        "ci_overlap_mean": "mean confidence-interval overlap",
        "coef_sign_changes": "coefficients changing sign",
    }

    def headline(self) -> dict[str, float]:
        """The key figures: r^2 of both fits, mean CI overlap, coefficients changing sign."""
        return {
            "r2_original": self.original.r_squared,
            "r2_masked": self.masked.r_squared,
            "ci_overlap_mean": self.mean_ci_overlap,
            "coef_sign_changes": float(self.table["sign_changed"].sum()),
        }

    def note(self) -> str:
        changed = list(self.table.index[self.table["sign_changed"]])
        text = (
            f"The regression of {self.response} keeps R^2 {self.original.r_squared:.3f} -> "
            f"{self.masked.r_squared:.3f}; its confidence intervals overlap by "
            f"{self.mean_ci_overlap:.2f} on average (1 = identical)."
        )
        if changed:
            text += f" Coefficient(s) changing sign: {', '.join(map(str, changed))}."
        return text

    def summary(self) -> str:
        lines = [
            f"regression {self.response} ~ {' + '.join(self.predictors)}: R^2 "
            f"{self.original.r_squared:.4f} -> {self.masked.r_squared:.4f}, mean CI overlap "
            f"{self.mean_ci_overlap:.3f}"
        ]
        for term, row in self.table.iterrows():
            flag = "  sign changed" if row["sign_changed"] else ""
            lines.append(
                f"  {term:<20} {row['coef_original']:>11.4g} -> {row['coef_masked']:<11.4g} "
                f"overlap {row['ci_overlap']:.2f}{flag}"
            )
        return "\n".join(lines)


@pair_doc
def compare_regression(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    response: str,
    predictors: Iterable[str],
    *,
    schema: Schema | None = None,
    alpha: float = 0.05,
) -> RegressionComparison:
    """Fit ``response ~ predictors`` on both files and compare (Perry, Matloff & Tendick 2022, Section 8.3).

    Coefficients, standard errors, R^2 and the confidence-interval overlap of
    Karr et al. (2006) for each term; Cook's distances are kept for the risk
    side (:func:`sdckit.assess.risk.compare_cooks_distance`).

    Parameters
    ----------
    {{pair}}
    response : str
        The numeric response.
    predictors : iterable of str
        The predictors; categorical ones enter as dummies.
    {{schema}}
    alpha : float, default 0.05
        Confidence intervals at level ``1 - alpha``.

    Returns
    -------
    RegressionComparison
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    predictors = check_columns(original, predictors, "predictors")
    fit0 = fit_regression(original, response, predictors, schema=schema, alpha=alpha)
    fit1 = fit_regression(masked, response, predictors, schema=schema, alpha=alpha)
    overlap = ci_overlap(
        fit0.lower.to_numpy(), fit0.upper.to_numpy(), fit1.lower.to_numpy(), fit1.upper.to_numpy()
    )
    table = pd.DataFrame(
        {
            "coef_original": fit0.coefficients,
            "se_original": fit0.standard_errors,
            "coef_masked": fit1.coefficients,
            "se_masked": fit1.standard_errors,
            "ci_overlap": overlap,
            "sign_changed": np.sign(fit0.coefficients) * np.sign(fit1.coefficients) < 0,
        }
    )
    return RegressionComparison(
        response=response,
        predictors=predictors,
        original=fit0,
        masked=fit1,
        table=table,
        mean_ci_overlap=float(np.nanmean(overlap)),
    )


# ---------------------------------------------------------------------------
# Principal components
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PCAComparison(MeasureResult):
    """Principal components of the scaled original and masked data.

    Attributes
    ----------
    variance_original, variance_masked : Series
        Proportion of variance of each component (PC1, PC2, ...).
    sd_original, sd_masked : Series
        Standard deviation of each component.
    loadings_original, loadings_masked : DataFrame
        Loadings (variables x components); each masked component's sign is
        aligned with the original's, since a component is defined up to sign.
    loading_difference : Series
        Largest |loading difference| per component, after sign alignment.
    """

    variance_original: pd.Series
    variance_masked: pd.Series
    sd_original: pd.Series
    sd_masked: pd.Series
    loadings_original: pd.DataFrame
    loadings_masked: pd.DataFrame
    loading_difference: pd.Series

    @property
    def pc1_share_original(self) -> float:
        """Proportion of variance of the first component, original data."""
        return float(self.variance_original.iloc[0])

    @property
    def pc1_share_masked(self) -> float:
        """Proportion of variance of the first component, masked data."""
        return float(self.variance_masked.iloc[0])

    LABELS: ClassVar[Mapping[str, str]] = {
        "pc1_share_original": "PC1 share of variance, original",
        "pc1_share_masked": "PC1 share of variance, masked",
    }

    def note(self) -> str:
        return (
            f"The first principal component explains {self.pc1_share_original:.1%} of the "
            f"variance before masking and {self.pc1_share_masked:.1%} after."
        )

    def summary(self) -> str:
        cum0 = self.variance_original.cumsum()
        cum1 = self.variance_masked.cumsum()
        lines = [
            f"PCA on {len(self.loadings_original)} scaled variables: PC1 share "
            f"{self.pc1_share_original:.3f} -> {self.pc1_share_masked:.3f}"
        ]
        for j in range(min(5, len(cum0))):
            lines.append(
                f"  PC{j + 1}: {self.variance_original.iloc[j]:.3f} -> {self.variance_masked.iloc[j]:.3f} "
                f"(cumulative {cum0.iloc[j]:.3f} -> {cum1.iloc[j]:.3f}), "
                f"max loading difference {self.loading_difference.iloc[j]:.3f}"
            )
        return "\n".join(lines)


def _pca(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending) and eigenvectors of the correlation matrix = PCA of z-scores."""
    corr = np.nan_to_num(_correlation(matrix), nan=0.0)
    np.fill_diagonal(corr, 1.0)
    values, vectors = np.linalg.eigh(corr)
    order = np.argsort(values)[::-1]
    values = np.clip(values[order], 0.0, None)
    vectors = vectors[:, order]
    # A deterministic sign: the largest loading of each component is positive.
    big = np.argmax(np.abs(vectors), axis=0)
    vectors = vectors * np.sign(vectors[big, np.arange(vectors.shape[1])])
    return values, vectors


@pair_doc
def compare_pca(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
) -> PCAComparison:
    """Principal components of each file after scaling it (Perry, Matloff & Tendick 2022, Section 8.3, PCA).

    Each file is centred and scaled by its own standard deviations, as R's
    ``prcomp(scale. = TRUE)`` does, so the components are the eigenvectors of
    the correlation matrix and the proportions of variance its eigenvalues
    over the number of variables.

    Parameters
    ----------
    {{numeric_pair}}

    Returns
    -------
    PCAComparison
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    cols = numeric_columns(original, schema, columns)
    if len(cols) < 2:
        raise SchemaError(f"PCA needs at least 2 numeric columns, got {cols}")
    v0, w0 = _pca(numeric_matrix(original, cols, schema))
    v1, w1 = _pca(numeric_matrix(masked, cols, schema))
    flip = np.sign((w0 * w1).sum(axis=0))
    w1 = w1 * np.where(flip == 0, 1.0, flip)
    names = [f"PC{j + 1}" for j in range(len(cols))]
    return PCAComparison(
        variance_original=pd.Series(v0 / v0.sum(), index=names),
        variance_masked=pd.Series(v1 / v1.sum(), index=names),
        sd_original=pd.Series(np.sqrt(v0), index=names),
        sd_masked=pd.Series(np.sqrt(v1), index=names),
        loadings_original=pd.DataFrame(w0, index=cols, columns=names),
        loadings_masked=pd.DataFrame(w1, index=cols, columns=names),
        loading_difference=pd.Series(np.abs(w1 - w0).max(axis=0), index=names),
    )


# ---------------------------------------------------------------------------
# Means and covariances
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MomentComparison(MeasureResult):
    """Means and covariance matrices of both files.

    Attributes
    ----------
    means : DataFrame
        Columns ``original``, ``masked``, ``ratio`` (masked / original).
    covariance_original, covariance_masked : DataFrame
    covariance_ratio : DataFrame
        Element-wise Sigma_masked / Sigma_original (Oganian 2011,
        Section 5: "variance/covariance matrix inflation"); NaN (undefined)
        where the original covariance is 0 and for every pair whose original
        correlation is below 0.2 in absolute value: the ratio of two
        near-zero covariances measures its small denominator, not
        preservation (a pair of correlation 0.01 gives ratios like -40 or 60
        for a change of correlation of 0.01).
    ratio_range : tuple of float
        Smallest and largest defined element of ``covariance_ratio``.
    weak_pairs : int
        Pairs whose ratio is undefined because their original correlation
        is below 0.2 in absolute value.
    weak_correlation_change : float
        Largest absolute change of correlation over those pairs (NaN when
        there are none): how they are judged instead.
    """

    means: pd.DataFrame
    covariance_original: pd.DataFrame
    covariance_masked: pd.DataFrame
    covariance_ratio: pd.DataFrame
    ratio_range: tuple[float, float]
    weak_pairs: int = 0
    weak_correlation_change: float = math.nan

    LABELS: ClassVar[Mapping[str, str]] = {
        "cov_ratio_min": "covariance ratio, smallest",
        "cov_ratio_max": "covariance ratio, largest",
    }

    def headline(self) -> dict[str, float]:
        """The key figures: smallest and largest covariance ratio."""
        lo, hi = self.ratio_range
        return {"cov_ratio_min": lo, "cov_ratio_max": hi}

    def note(self) -> str:
        lo, hi = self.ratio_range
        text = f"Masked / original covariances range from {lo:.3f} to {hi:.3f} (1 = preserved)"
        if self.weak_pairs:
            text += (
                f"; {self.weak_pairs} pair(s) with an original correlation below "
                f"{_WEAK_CORRELATION} have no meaningful ratio: their correlation changes by at "
                f"most {self.weak_correlation_change:.3f}"
            )
        return text + "."

    def summary(self) -> str:
        lines = [
            f"means: masked/original ratio from {self.means['ratio'].min():.4f} to "
            f"{self.means['ratio'].max():.4f}",
            f"covariance ratio Sigma_m / Sigma_o: from {self.ratio_range[0]:.4f} to "
            f"{self.ratio_range[1]:.4f}",
        ]
        if self.weak_pairs:
            lines.append(
                f"undefined for {self.weak_pairs} pair(s) with |original correlation| < "
                f"{_WEAK_CORRELATION}; their correlation changes by at most "
                f"{self.weak_correlation_change:.4f}"
            )
        return "\n".join(lines)


#: Below this absolute original correlation a covariance ratio is undefined (issue 29).
_WEAK_CORRELATION = 0.2


def _covariance(matrix: np.ndarray) -> np.ndarray:
    complete = ~np.isnan(matrix).any(axis=1)
    x = matrix[complete]
    if len(x) < 2:
        raise DataError("fewer than 2 complete records: covariances are undefined")
    return np.atleast_2d(np.cov(x, rowvar=False, ddof=1))


@pair_doc
def compare_moments(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
) -> MomentComparison:
    """Compare means and covariances; the covariance ratio of Oganian (2011, Section 5).

    Parameters
    ----------
    {{numeric_pair}}

    Returns
    -------
    MomentComparison
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    cols = numeric_columns(original, schema, columns)
    if not cols:
        raise SchemaError("means and covariances need at least one numeric column")
    x0 = numeric_matrix(original, cols, schema)
    x1 = numeric_matrix(masked, cols, schema)
    m0, m1 = np.nanmean(x0, axis=0), np.nanmean(x1, axis=0)
    c0, c1 = _covariance(x0), _covariance(x1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_ratio = np.where(m0 != 0, m1 / m0, np.nan)
        ratio = np.where(c0 != 0, c1 / c0, np.nan)
        r0 = c0 / np.sqrt(np.outer(np.diag(c0), np.diag(c0)))
        r1 = c1 / np.sqrt(np.outer(np.diag(c1), np.diag(c1)))
    weak = np.abs(r0) < _WEAK_CORRELATION
    np.fill_diagonal(weak, False)
    ratio[weak] = np.nan
    upper = np.triu(weak, 1)
    changes = np.abs(r1 - r0)[upper]
    finite = ratio[np.isfinite(ratio)]
    rng = (float(finite.min()), float(finite.max())) if finite.size else (math.nan, math.nan)
    return MomentComparison(
        means=pd.DataFrame({"original": m0, "masked": m1, "ratio": mean_ratio}, index=cols),
        covariance_original=pd.DataFrame(c0, index=cols, columns=cols),
        covariance_masked=pd.DataFrame(c1, index=cols, columns=cols),
        covariance_ratio=pd.DataFrame(ratio, index=cols, columns=cols),
        ratio_range=rng,
        weak_pairs=int(upper.sum()),
        weak_correlation_change=float(np.nanmax(changes)) if changes.size else math.nan,
    )


# ---------------------------------------------------------------------------
# Mutual information between categorical variables
# ---------------------------------------------------------------------------


def _codes(data: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Integer codes per column (missing is a level of its own), shape (n, p)."""
    return np.column_stack(
        [pd.factorize(data[c], use_na_sentinel=False)[0] for c in columns]
    ).astype(np.int64)


def _entropy_of_codes(codes: np.ndarray) -> float:
    """Entropy in bits of the joint distribution of the rows of ``codes``."""
    if codes.ndim == 1:
        codes = codes[:, None]
    _, counts = np.unique(codes, axis=0, return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


@dataclass(frozen=True)
class MutualInformationComparison(MeasureResult):
    """Mutual information between categorical variables, original vs masked.

    Attributes
    ----------
    original, masked : DataFrame
        Pairwise mutual information I(X; Y) in bits (diagonal: entropy H(X)).
    multi_information_original, multi_information_masked : float
        Multi-information (total correlation) sum_j H(X_j) - H(X_1, ..., X_p)
        in bits: 0 when the variables are independent.
    """

    original: pd.DataFrame
    masked: pd.DataFrame
    multi_information_original: float
    multi_information_masked: float

    LABELS: ClassVar[Mapping[str, str]] = {
        "multi_information_original": "multi-information (bits), original",
        "multi_information_masked": "multi-information (bits), masked",
    }

    def summary(self) -> str:
        return (
            f"multi-information of {len(self.original)} categorical variables: "
            f"{self.multi_information_original:.4f} -> {self.multi_information_masked:.4f} bits"
        )


def _mutual_information(data: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, float]:
    codes = _codes(data, columns)
    p = len(columns)
    h = np.array([_entropy_of_codes(codes[:, j]) for j in range(p)])
    mi = np.diag(h)
    for a in range(p):
        for b in range(a + 1, p):
            joint = _entropy_of_codes(codes[:, [a, b]])
            mi[a, b] = mi[b, a] = max(h[a] + h[b] - joint, 0.0)
    multi = max(float(h.sum() - _entropy_of_codes(codes)), 0.0)
    return mi, multi


@pair_doc
def compare_mutual_information(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
) -> MutualInformationComparison:
    """Pairwise mutual information and multi-information of categorical variables.

    Entropies are those of the sample (plug-in) distributions, in bits; a
    missing value counts as a level of its own. Masking that keeps the
    relations between categorical variables keeps these numbers.

    Parameters
    ----------
    {{pair}}
    columns : iterable of str, optional
        Categorical variables; default every categorical column.
    {{schema}}

    Returns
    -------
    MutualInformationComparison
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    if columns is None:
        cols = categorical_columns(schema)
    else:
        cols = check_columns(original, columns, "columns")
    if len(cols) < 2:
        raise SchemaError(f"mutual information needs at least 2 categorical columns, got {cols}")
    mi0, multi0 = _mutual_information(original, cols)
    mi1, multi1 = _mutual_information(masked, cols)
    return MutualInformationComparison(
        original=pd.DataFrame(mi0, index=cols, columns=cols),
        masked=pd.DataFrame(mi1, index=cols, columns=cols),
        multi_information_original=multi0,
        multi_information_masked=multi1,
    )


# ---------------------------------------------------------------------------
# Prediction check (Perry, Matloff & Tendick 2022, Section 8.4)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PredictionCheck(MeasureResult):
    """Random-forest prediction on an original holdout, trained on original vs masked data.

    Attributes
    ----------
    response : str
    task : str
        ``"classification"`` (error = misclassification rate) or
        ``"regression"`` (error = root mean squared error).
    errors : DataFrame
        One row per replication and training set: columns ``replication``,
        ``training`` (``"original"`` or a setting label) and ``error``.
    mean_errors : Series
        Mean error per training set, ``original`` first.
    holdout : int
        Size of each holdout set.
    baseline_error : float
        Mean error on the same holdouts of a constant prediction from the
        original training records (their commonest class, or their mean): a
        forest that does not beat it has learnt nothing, and then the check
        says nothing about the masking.
    """

    response: str
    task: str
    errors: pd.DataFrame
    mean_errors: pd.Series
    holdout: int
    baseline_error: float = math.nan

    @property
    def error_name(self) -> str:
        return "misclassification rate" if self.task == "classification" else "RMSE"

    LABELS: ClassVar[Mapping[str, str]] = {}

    def headline(self) -> dict[str, float]:
        """The key figures: mean error per training set, as ``prediction_error_<set>``."""
        return {
            f"prediction_error_{name}": float(value) for name, value in self.mean_errors.items()
        }

    @property
    def constant_prediction(self) -> str:
        """What the baseline predicts, in words."""
        return (
            "the commonest class of the training records"
            if self.task == "classification"
            else "the mean of the training records"
        )

    @property
    def learns(self) -> bool:
        """Whether the forest trained on the original data beats the constant prediction."""
        o = self.mean_errors.get("original", math.nan)
        return bool(math.isnan(self.baseline_error) or o < self.baseline_error)

    def note(self) -> str:
        o = self.mean_errors.get("original", math.nan)
        others = ", ".join(f"{k}: {v:.3f}" for k, v in self.mean_errors.items() if k != "original")
        text = (
            f"A random forest predicting {self.response} has {self.error_name} {o:.3f} when trained on "
            f"the original data and {others} when trained on the masked data."
        )
        if math.isnan(self.baseline_error):
            return text
        text += f" Always predicting {self.constant_prediction} gives {self.baseline_error:.3f}."
        if not self.learns:
            text += (
                " The forest does no better than that even on the original data, so this check "
                "says nothing about the masking (prediction_check or prediction_experiment with a larger min_samples_leaf grows smoother forests)."
            )
        return text

    def summary(self) -> str:
        reps = int(self.errors["replication"].nunique())
        lines = [
            f"random-forest prediction of {self.response!r} ({self.error_name}, {reps} "
            f"replication(s), holdout {self.holdout}):"
        ]
        for name, value in self.mean_errors.items():
            lines.append(f"  trained on {name:<24} {value:.4f}")
        if not math.isnan(self.baseline_error):
            lines.append(f"  {'constant prediction (baseline)':<35} {self.baseline_error:.4f}")
            if not self.learns:
                lines.append(
                    "  the forest does not beat the constant prediction: no evidence about masking"
                )
        return "\n".join(lines)


def _is_classification(series: pd.Series, schema: Schema, response: str, task: str) -> bool:
    if task == "auto":
        return schema[response].kind is not Kind.NUMERIC
    if task not in ("classification", "regression"):
        raise ParameterError(f"task must be 'auto', 'classification' or 'regression', got {task!r}")
    if task == "regression" and schema[response].kind is Kind.CATEGORICAL:
        raise SchemaError(f"response {response!r} is categorical; use task='classification'")
    return task == "classification"


def _features(data: pd.DataFrame, predictors: list[str], schema: Schema) -> np.ndarray:
    sub = Schema(tuple(schema[c] for c in predictors))
    design = build_design(data[predictors], columns=predictors, schema=sub, scale=None)
    matrix = design.matrix
    if np.isnan(matrix).any():
        # Design columns are not one per predictor (categoricals give one dummy per level).
        col = design.feature_sources[int(np.flatnonzero(np.isnan(matrix).any(axis=0))[0])]
        raise DataError(
            f"predictors have missing values (e.g. in {col!r}); random forests here need complete data"
        )
    return matrix


def _target(data: pd.DataFrame, response: str, classification: bool) -> np.ndarray:
    y = data[response]
    if y.isna().any():
        raise DataError(f"response {response!r} has missing values")
    if classification:
        return y.astype(str).to_numpy()
    return pd.to_numeric(y).to_numpy(np.float64)


def _forest(
    classification: bool,
    n_estimators: int,
    seed: int,
    n_jobs: int | None,
    min_samples_leaf: int = 1,
):
    cls = RandomForestClassifier if classification else RandomForestRegressor
    return cls(
        n_estimators=n_estimators,
        random_state=seed,
        n_jobs=n_jobs,
        min_samples_leaf=min_samples_leaf,
    )


def _prediction_result(
    response: str,
    classification: bool,
    rows: list[tuple[int, str, float]],
    size: int,
    constant: list[float],
) -> PredictionCheck:
    """The :class:`PredictionCheck` of per-replication errors and constant-prediction errors."""
    errors = pd.DataFrame(rows, columns=["replication", "training", "error"])
    means = errors.groupby("training", sort=False)["error"].mean()
    return PredictionCheck(
        response,
        "classification" if classification else "regression",
        errors,
        means,
        size,
        float(np.mean(constant)),
    )


def _constant_error(classification: bool, train: np.ndarray, truth: np.ndarray) -> float:
    """Error of predicting the training records' commonest class (or mean) for every record."""
    if classification:
        values, counts = np.unique(train, return_counts=True)
        guess = values[counts.argmax()]
        return float(np.mean(truth != guess))
    return _error(False, truth, np.full(truth.shape, float(np.mean(train))))


def _error(classification: bool, truth: np.ndarray, predicted: np.ndarray) -> float:
    if classification:
        return float(np.mean(truth != predicted))
    return float(np.sqrt(np.mean((truth - predicted) ** 2)))


def _check_holdout(holdout: int | float | None, n: int) -> int:
    if holdout is None:
        # regtools' qe* default: min(1000, 10 percent of the data).
        size = int(min(1000, math.floor(0.1 * n)))
    elif isinstance(holdout, float) and 0 < holdout < 1:
        size = round(holdout * n)
    else:
        # A float outside (0, 1) is refused by check_int, which names the parameter.
        size = check_int(holdout, "holdout", minimum=1)  # type: ignore[arg-type]
    if size < 1 or size >= n - 1:
        raise ParameterError(f"holdout={holdout!r} leaves no training data out of {n} records")
    return size


def _forest_settings(
    holdout: int | float | None,
    n: int,
    n_replications: int,
    n_estimators: int,
    min_samples_leaf: int,
) -> tuple[int, int, int, int]:
    """Checked holdout size, replications, trees and leaf size of a prediction experiment."""
    return (
        _check_holdout(holdout, n),
        check_int(n_replications, "n_replications", minimum=1),
        check_int(n_estimators, "n_estimators", minimum=1),
        check_int(min_samples_leaf, "min_samples_leaf", minimum=1),
    )


def _prediction_variables(
    data: pd.DataFrame, response: str, predictors: Iterable[str] | None, schema: Schema
) -> list[str]:
    """The checked predictors (default every other maskable column), the response apart."""
    check_columns(data, [response], "response")
    chosen = (
        [c for c in schema.maskable() if c != response]
        if predictors is None
        else check_columns(data, predictors, "predictors")
    )
    if response in chosen:
        raise ParameterError(f"response {response!r} is also listed among the predictors")
    if not chosen:
        raise ParameterError("predictors: give at least one predictor")
    return chosen


#: Parameter entries both prediction experiments share, with those of every measure
#: (:func:`sdckit._docs.shared_doc`).
_prediction_doc = shared_doc(
    {
        **PAIR_FRAGMENTS,
        "holdout": """
        task : {"auto", "classification", "regression"}, default "auto"
            "auto" classifies a categorical response and regresses a numeric one.
        holdout : int, float in (0, 1) or None
            Holdout size (records, or a share); default min(1000, 10% of n).
        """,
        "forest": """
        n_estimators : int, default 100
            Trees per forest.
        min_samples_leaf : int, default 1
            Smallest leaf of each tree (scikit-learn's parameter). Fully grown
            trees (1) can do worse than a constant prediction on noisy classes;
            the result's ``baseline_error`` shows when they do.
        n_jobs : int, optional
            Passed to scikit-learn's forests (None: one job, -1: every core).
        """,
    }
)


@_prediction_doc
def prediction_check(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    response: str,
    predictors: Iterable[str] | None = None,
    *,
    schema: Schema | None = None,
    task: str = "auto",
    holdout: int | float | None = None,
    n_replications: int = 5,
    n_estimators: int = 100,
    min_samples_leaf: int = 1,
    n_jobs: int | None = None,
    random_state: RandomState = None,
) -> PredictionCheck:
    """Prediction-oriented utility of a given release (Perry, Matloff & Tendick 2022, Section 8.4).

    In each replication a random holdout set of records is drawn; one random
    forest is trained on the *original* values of the other records and one
    on their *masked* values, and both are scored on the *original* values of
    the holdout (misclassification rate for a categorical response, RMSE for
    a numeric one). Note that a masked training record may carry values
    copied from a holdout record (RWN draws from the whole file); to mask the
    training part alone, as the paper does, use :func:`prediction_experiment`.

    Parameters
    ----------
    {{pair}}
    response : str
        The variable to predict (categorical: classification; numeric: regression).
    predictors : iterable of str, optional
        Default every other column of the schema's maskable ones.
    {{schema}}
    {{holdout}}
    n_replications : int, default 5
        Holdout draws.
    {{forest}}
    random_state : None, int or Generator
        Same seed, same holdouts and forests.

    Returns
    -------
    PredictionCheck
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    predictors = _prediction_variables(original, response, predictors, schema)
    n = len(original)
    size, n_replications, n_estimators, min_samples_leaf = _forest_settings(
        holdout, n, n_replications, n_estimators, min_samples_leaf
    )
    rng = check_random_state(random_state)
    classification = _is_classification(original[response], schema, response, task)
    x0 = _features(original, predictors, schema)
    x1 = _features(masked, predictors, schema)
    y0 = _target(original, response, classification)
    y1 = _target(masked, response, classification)
    rows = []
    constant = []
    for rep in range(n_replications):
        perm = rng.permutation(n)
        test, train = perm[:size], perm[size:]
        seed = int(rng.integers(0, 2**31 - 1))
        constant.append(_constant_error(classification, y0[train], y0[test]))
        for label, x, y in (("original", x0, y0), ("masked", x1, y1)):
            model = _forest(classification, n_estimators, seed, n_jobs, min_samples_leaf)
            model.fit(x[train], y[train])
            rows.append((rep, label, _error(classification, y0[test], model.predict(x0[test]))))
    return _prediction_result(response, classification, rows, size, constant)


@_prediction_doc
def prediction_experiment(
    data: pd.DataFrame,
    response: str,
    predictors: Iterable[str] | None = None,
    *,
    method: Any = "rwn",
    settings: Mapping[str, Mapping[str, Any]] | None = None,
    schema: Schema | None = None,
    task: str = "auto",
    holdout: int | float | None = None,
    n_replications: int = 25,
    n_estimators: int = 100,
    min_samples_leaf: int = 1,
    n_jobs: int | None = None,
    random_state: RandomState = None,
) -> PredictionCheck:
    """The prediction experiment of Perry, Matloff & Tendick (2022), Section 8.4, for any registered masker.

    In each replication a holdout set is drawn from ``data``; the remaining
    training records are masked afresh with ``method`` under every setting
    in ``settings`` (e.g. ``{"k = 5": {"k": 5, "q": 0.5}, ...}``); a random
    forest is trained on the unmasked training records ("no SDC") and on
    each masked version, and every forest is scored on the same original
    holdout. The paper reports the mean misclassification rate over 25
    replications with a holdout of 1000 records (``pef``).

    ``method`` is a registered masker name or a masking function following
    :mod:`sdckit.microdata.base`. The response is masked along with the
    predictors, as when a whole file is released.

    Parameters
    ----------
    data : DataFrame
        The original file.
    response : str
        The variable to predict (categorical: classification; numeric: regression).
    predictors : iterable of str, optional
        Default every other column of the schema's maskable ones.
    method : str or callable, default "rwn"
        A registered masker name or a masking function.
    settings : mapping
        ``{label: masking parameters}``, at least one (the label "original"
        is reserved for the unmasked data).
    schema : Schema, optional
        Inferred from ``data`` when omitted.
    {{holdout}}
    n_replications : int, default 25
        Holdout draws.
    {{forest}}
    random_state : None, int or Generator
        Same seed, same holdouts, maskings and forests.

    Returns
    -------
    PredictionCheck
        ``mean_errors`` has "original" (no SDC) first, then one entry per setting.
    """
    from sdckit.microdata.base import mask

    check_dataframe(data, min_rows=3)
    schema = resolve_schema(data, schema)
    predictors = _prediction_variables(data, response, predictors, schema)
    if not settings:
        raise ParameterError("settings: give at least one {label: {parameter: value}} setting")
    if "original" in settings:
        raise ParameterError("settings: the label 'original' is reserved for the unmasked data")
    n = len(data)
    size, n_replications, n_estimators, min_samples_leaf = _forest_settings(
        holdout, n, n_replications, n_estimators, min_samples_leaf
    )
    rng = check_random_state(random_state)
    classification = _is_classification(data[response], schema, response, task)
    used = [*predictors, response]
    x_all = _features(data, predictors, schema)
    y_all = _target(data, response, classification)
    rows = []
    constant = []
    for rep in range(n_replications):
        perm = rng.permutation(n)
        test, train = np.sort(perm[:size]), np.sort(perm[size:])
        forest_seed = int(rng.integers(0, 2**31 - 1))
        train_frame = data.iloc[train][used]
        constant.append(_constant_error(classification, y_all[train], y_all[test]))
        model = _forest(classification, n_estimators, forest_seed, n_jobs, min_samples_leaf)
        model.fit(x_all[train], y_all[train])
        rows.append(
            (rep, "original", _error(classification, y_all[test], model.predict(x_all[test])))
        )
        for label, params in settings.items():
            params = dict(params)
            params.setdefault("random_state", int(rng.integers(0, 2**31 - 1)))
            masked = mask(method, train_frame, **params).data
            xm = _features(masked, predictors, schema)
            ym = _target(masked, response, classification)
            model = _forest(classification, n_estimators, forest_seed, n_jobs, min_samples_leaf)
            model.fit(xm, ym)
            rows.append(
                (rep, str(label), _error(classification, y_all[test], model.predict(x_all[test])))
            )
    return _prediction_result(response, classification, rows, size, constant)
