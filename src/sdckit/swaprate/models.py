"""Record models M_theta: class-conditional distributions P_theta(r | s) fitted from weighted records.

Kifer (2015), Section 4.1: Algorithm 1 lets the user plug in any
parametric model of the records. All it needs from a model is

* an **M step**: fit theta from records whose true class is uncertain, given
  as weights ``class_weights[i, a]`` = the probability that record i's true
  swap attribute is a (Example 4.2: weight 1 - t_i on the released class,
  t_i on the other one); and
* the per-record **log P_theta(r_i | s = a)** for a = 0, 1.

Two models are built in: :class:`NaiveBayes` (Example 4.2: Gaussian for
continuous, Laplace-smoothed multinomial for categorical components) and
:class:`Gaussian` (one multivariate normal per class, full covariance, for
continuous attributes).

Plugging in another model
-------------------------
Subclass :class:`RecordModel` and implement three methods::

    class MyModel(RecordModel):
        name = "my-model"

        def encode(self, data):           # DataFrame of the non-swap attributes
            ...                           # validate once, return arrays (any object)

        def fit(self, records, class_weights):   # the M step
            ...                           # class_weights: (N, 2) array, rows sum to 1
            return parameters             # any object (ideally a frozen dataclass)

        def log_likelihood(self, parameters, records):
            ...                           # (N, 2) array of log P(r_i | s = a)

Work in logs: Algorithm 1 only ever uses differences of the two columns per
record, so densities that underflow (many attributes) do no harm. All three
methods must be vectorised over records: Algorithm 1 calls ``fit`` and
``log_likelihood`` once per EM iteration.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from sdckit._validation import as_sequence, check_columns
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.schema import Kind, Schema

__all__ = [
    "AttributeBins",
    "EncodedRecords",
    "Gaussian",
    "GaussianParameters",
    "NaiveBayes",
    "NaiveBayesParameters",
    "RecordModel",
    "make_model",
]

_LOG_2PI = float(np.log(2 * np.pi))


@dataclass(frozen=True)
class EncodedRecords:
    """Non-swap attributes converted once to arrays.

    Attributes
    ----------
    continuous : ndarray, shape (N, dc)
        Continuous components, float64, column-major.
    categorical : ndarray, shape (N, dk)
        Categorical components as codes 0..K_j-1, column-major.
    continuous_names, categorical_names : tuple of str
        Column names, in the order of the arrays.
    levels : tuple of tuples
        The domain of every categorical component (its size K_j is the
        Laplace-smoothing denominator of Example 4.2).
    resolution_variance : ndarray of shape (dc,), optional
        delta_j^2 / 12 for each continuous component, delta_j the smallest gap
        between its distinct values: the variance of rounding to the
        resolution the values are recorded at (Sheppard's correction). The
        built-in models never let a class variance fall below it, so that a
        class concentrated on one recorded value (an integer code, say) has a
        bounded density instead of an unbounded likelihood.
    """

    continuous: np.ndarray
    categorical: np.ndarray
    continuous_names: tuple[str, ...]
    categorical_names: tuple[str, ...]
    levels: tuple[tuple, ...]
    resolution_variance: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of records."""
        return max(len(self.continuous), len(self.categorical))


@dataclass(frozen=True)
class AttributeBins:
    """One attribute's values grouped into a few bins, for the model fit check.

    Attributes
    ----------
    name : str
    kind : "categorical" or "continuous"
    index : int
        Column of the attribute in ``EncodedRecords.categorical`` or
        ``EncodedRecords.continuous``.
    codes : ndarray of int
        The bin of every record.
    level_bins : ndarray of int, optional
        Categorical: the bin of every level (code).
    edges : ndarray, optional
        Continuous: the inner bin edges, increasing; bin b is
        (edges[b - 1], edges[b]] with edges[-1] = -inf and edges[B - 1] = inf.
    """

    name: str
    kind: str
    index: int
    codes: np.ndarray
    level_bins: np.ndarray | None = None
    edges: np.ndarray | None = None

    @property
    def n_bins(self) -> int:
        """Number of bins."""
        if self.level_bins is not None:
            return int(self.level_bins.max()) + 1
        return len(self.inner_edges) + 1

    @property
    def inner_edges(self) -> np.ndarray:
        """``edges`` of a continuous attribute (a categorical one has none)."""
        if self.edges is None:
            raise TypeError(f"attribute {self.name!r} is {self.kind}: it has no bin edges")
        return self.edges

    @property
    def bin_of_level(self) -> np.ndarray:
        """``level_bins`` of a categorical attribute (a continuous one has none)."""
        if self.level_bins is None:
            raise TypeError(f"attribute {self.name!r} is {self.kind}: it has no levels")
        return self.level_bins


def _normal_bin_probabilities(edges: np.ndarray, mean: float, sd: float) -> np.ndarray:
    cdf = stats.norm.cdf((np.asarray(edges) - mean) / sd)
    return np.diff(np.concatenate([[0.0], cdf, [1.0]]))


class RecordModel(ABC):
    """A family M_theta of class-conditional record distributions (Kifer 2015, Section 4.1).

    See the module documentation for how to plug in a model of your own.
    """

    #: Short name shown in summaries.
    name: str = "model"

    @abstractmethod
    def encode(self, data: pd.DataFrame) -> Any:
        """Validate the non-swap attributes and convert them once to arrays."""

    @abstractmethod
    def fit(self, records: Any, class_weights: np.ndarray) -> Any:
        """The M step: theta from records weighted by ``class_weights[i, a]``."""

    @abstractmethod
    def log_likelihood(self, parameters: Any, records: Any) -> np.ndarray:
        """``(N, 2)`` array of log P_theta(r_i | s = a), a = 0, 1."""

    def fitted_log_likelihood(self, records: Any, class_weights: np.ndarray) -> float:
        """sum_i sum_a class_weights[i, a] log P_theta(r_i | s = a) at theta = fit(records, class_weights).

        The maximised weighted log-likelihood, which the association test of
        :class:`~sdckit.swaprate.gsc.IdentifiabilityCheck` evaluates once per
        permutation. The default fits and evaluates every record; a model
        can override it with its sufficient statistics when that is cheaper.
        """
        log_lik = self.log_likelihood(self.fit(records, class_weights), records)
        return float((class_weights * log_lik).sum())

    def class_parameter_count(self, records: Any) -> int | None:
        """Free parameters of one class's distribution P_theta(r | s = a), or None if unknown.

        It is the degrees of freedom of the likelihood-ratio test of
        class-specific against pooled parameters (the association test of
        :class:`~sdckit.swaprate.gsc.IdentifiabilityCheck`), used for its
        asymptotic chi-square p-value. A plug-in model may leave it None: the
        permutation p-value needs no count.
        """
        return None

    def bin_probabilities(
        self, parameters: Any, bins: tuple[AttributeBins, ...]
    ) -> np.ndarray | None:
        """P_theta(bins | s = a) for one or two attributes: shape (2, B1) or (2, B1, B2).

        Used by the model fit check (:mod:`sdckit.swaprate.fitcheck`) to
        compare the tables the fitted relaxed model predicts with the
        observed ones. A plug-in model may leave it None: the fit is then
        not checked.
        """
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _check_no_missing(data: pd.DataFrame) -> None:
    counts = data.isna().sum()
    if counts.any():
        listed = ", ".join(f"{c!r} ({int(v)})" for c, v in counts[counts > 0].items())
        raise DataError(
            f"missing values in attribute column(s) {listed}; drop those rows, or code a "
            "missing value as a category of its own"
        )


def _continuous_matrix(data: pd.DataFrame, names: list[str]) -> np.ndarray:
    out = np.empty((len(data), len(names)), dtype=np.float64, order="F")
    for j, col in enumerate(names):
        series = data[col]
        if not (
            pd.api.types.is_numeric_dtype(series.dtype)
            and not pd.api.types.is_bool_dtype(series.dtype)
        ):
            raise SchemaError(
                f"column {col!r} ({series.dtype}) is not numeric; it cannot be modelled as "
                "continuous (declare it categorical)"
            )
        values = series.to_numpy(dtype=np.float64)
        if not np.isfinite(values).all():
            raise DataError(f"column {col!r} holds infinite values")
        out[:, j] = values
    return out


def _categorical_codes(data: pd.DataFrame, names: list[str]) -> tuple[np.ndarray, tuple]:
    codes = np.empty((len(data), len(names)), dtype=np.intp, order="F")
    levels = []
    for j, col in enumerate(names):
        series = data[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            # Declared categories are the domain, observed or not.
            codes[:, j] = series.cat.codes.to_numpy()
            levels.append(tuple(series.cat.categories))
        else:
            c, uniques = pd.factorize(series, sort=True)
            codes[:, j] = c
            levels.append(tuple(uniques))
    return codes, tuple(levels)


def _is_discrete(series: pd.Series, max_levels: int) -> bool:
    """An integer column on at most ``max_levels`` distinct values (age in years, hours, codes)."""
    if max_levels <= 0 or not pd.api.types.is_integer_dtype(series.dtype):
        return False
    values = series.to_numpy(dtype=np.float64)
    if not np.isfinite(values).all() or not np.array_equal(values, np.round(values)):
        return False
    return len(np.unique(values)) <= max_levels


def _split_kinds(
    data: pd.DataFrame,
    categorical: Iterable[str] | str | None,
    continuous: Iterable[str] | str | None,
    discrete_levels: int = 0,
) -> tuple[list[str], list[str]]:
    cat = check_columns(data, as_sequence(categorical), "categorical") if categorical else []
    con = check_columns(data, as_sequence(continuous), "continuous") if continuous else []
    both = sorted(set(cat) & set(con))
    if both:
        raise ParameterError(f"column(s) {both} are declared both categorical and continuous")
    undecided = [c for c in data.columns if c not in cat and c not in con]
    if undecided:
        schema = Schema.infer(data[undecided])
        for col in undecided:
            numeric = schema[col].kind is Kind.NUMERIC
            if numeric and not _is_discrete(data[col], discrete_levels):
                con.append(col)
            else:
                cat.append(col)
    order = {c: i for i, c in enumerate(data.columns)}
    return sorted(cat, key=order.__getitem__), sorted(con, key=order.__getitem__)


def _resolution_variance(x: np.ndarray) -> np.ndarray:
    """delta^2 / 12 per column, delta the smallest gap between distinct values (0 if constant)."""
    out = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        gaps = np.diff(np.unique(x[:, j]))
        if len(gaps):
            out[j] = float(gaps.min()) ** 2 / 12.0
    return out


def _weighted_moments(
    x: np.ndarray, class_weights: np.ndarray, min_variance: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-class weighted means (2, d) and variances (2, d), variances floored."""
    totals = class_weights.sum(axis=0)
    if (totals <= 0).any():
        raise DataError("a class has zero total weight: the swap attribute takes one value only")
    means = (class_weights.T @ x) / totals[:, None]
    variances = np.empty_like(means)
    for a in (0, 1):
        centred = x - means[a]
        variances[a] = (class_weights[:, a] @ (centred * centred)) / totals[a]
    return means, np.maximum(variances, min_variance)


@dataclass(frozen=True)
class NaiveBayesParameters:
    """Fitted theta of :class:`NaiveBayes` (Kifer 2015, Example 4.2).

    Attributes
    ----------
    means, variances : ndarray, shape (2, dc)
        mu_{a,j} and sigma^2_{a,j} of every continuous component, per class a.
    log_probabilities : tuple of ndarray, each shape (2, K_j)
        log P(r[j] = g | s = a) of every categorical component.
    continuous_names, categorical_names, levels
        As in :class:`EncodedRecords`.
    """

    means: np.ndarray
    variances: np.ndarray
    log_probabilities: tuple[np.ndarray, ...]
    continuous_names: tuple[str, ...]
    categorical_names: tuple[str, ...]
    levels: tuple[tuple, ...]

    def summary(self) -> str:
        """The class-conditional parameters, one line per attribute."""
        lines = ["Naive Bayes: class-conditional parameters (s = 0 | s = 1)"]
        for j, col in enumerate(self.continuous_names):
            lines.append(
                f"  {col}: mean {self.means[0, j]:.4g} | {self.means[1, j]:.4g}, "
                f"sd {np.sqrt(self.variances[0, j]):.4g} | {np.sqrt(self.variances[1, j]):.4g}"
            )
        for j, col in enumerate(self.categorical_names):
            probs = np.exp(self.log_probabilities[j])
            shown = ", ".join(
                f"{lvl}: {probs[0, g]:.3f}|{probs[1, g]:.3f}"
                for g, lvl in enumerate(self.levels[j][:6])
            )
            more = " ..." if len(self.levels[j]) > 6 else ""
            lines.append(f"  {col}: {shown}{more}")
        return "\n".join(lines)


class NaiveBayes(RecordModel):
    """Naive Bayes with s as the class (Kifer 2015, Example 4.2).

    Given the class, the components of r are independent: a continuous
    component is Gaussian (weighted mean and variance in the M step), a
    categorical one multinomial with Laplace smoothing::

        P(r[j] = g | s = a) = (smoothing + sum_i w_ia 1{r_i[j] = g})
                              / (sum_i w_ia + smoothing * |domain of r[j]|)

    Parameters
    ----------
    categorical, continuous : iterable of str, optional
        Which attributes are which. Attributes named in neither are decided
        from their dtype (numbers continuous, everything else categorical).
    smoothing : float, default 1
        The Laplace pseudo-count (1 in Example 4.2).
    discrete_levels : int, default 100
        An integer attribute not declared either way that takes at most this
        many distinct values (age in years, hours per week,
        a status code) is modelled by its level frequencies, the multinomial
        of Example 4.2, rather than by a normal density. Such an attribute is
        discrete, and its class-conditional distribution is rarely normal
        (Adult's age is skewed): with a normal density the model is
        misspecified even when the attributes are independent given the
        class, and on semi-synthetic Adult (every attribute resampled within
        each income class, so that Naive Bayes is the true model, as in
        Kifer (2015), Section 5.2) the estimate with age and hours per week
        as normals was 7-9% low (4 standard errors) where the multinomial is
        within one. 0 models every numeric attribute as normal.
    min_variance : float, default 1e-9
        Floor of every class variance, relative to the attribute's overall
        variance, so that a class concentrated on one value keeps a density.
    """

    name = "naive-bayes"

    def __init__(
        self,
        *,
        categorical: Iterable[str] | str | None = None,
        continuous: Iterable[str] | str | None = None,
        smoothing: float = 1.0,
        discrete_levels: int = 100,
        min_variance: float = 1e-9,
    ) -> None:
        if isinstance(smoothing, bool) or not np.isfinite(smoothing) or smoothing <= 0:
            raise ParameterError(f"smoothing must be a number > 0, got {smoothing!r}")
        if (
            isinstance(discrete_levels, bool)
            or not isinstance(discrete_levels, (int, np.integer))
            or discrete_levels < 0
        ):
            raise ParameterError(
                f"discrete_levels must be an integer >= 0, got {discrete_levels!r}"
            )
        self.discrete_levels = int(discrete_levels)
        if isinstance(min_variance, bool) or not np.isfinite(min_variance) or min_variance <= 0:
            raise ParameterError(f"min_variance must be a number > 0, got {min_variance!r}")
        self.categorical = as_sequence(categorical) or None
        self.continuous = as_sequence(continuous) or None
        self.smoothing = float(smoothing)
        self.min_variance = float(min_variance)

    def __repr__(self) -> str:
        return f"NaiveBayes(smoothing={self.smoothing:g})"

    def encode(self, data: pd.DataFrame) -> EncodedRecords:
        """Split the attributes into continuous and categorical arrays."""
        _check_no_missing(data)
        cat, con = _split_kinds(data, self.categorical, self.continuous, self.discrete_levels)
        codes, levels = _categorical_codes(data, cat)
        x = _continuous_matrix(data, con)
        return EncodedRecords(
            continuous=x,
            categorical=codes,
            continuous_names=tuple(con),
            categorical_names=tuple(cat),
            levels=levels,
            resolution_variance=_resolution_variance(x),
        )

    def _m_step(
        self, records: EncodedRecords, class_weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list, list]:
        """Totals, means, raw and floored variances, level counts and log-probabilities."""
        totals = class_weights.sum(axis=0)
        x = records.continuous
        if x.shape[1]:
            floor = self.min_variance * np.maximum(x.var(axis=0), 1e-300)
            if records.resolution_variance is not None:
                floor = np.maximum(floor, records.resolution_variance)
            means, raw = _weighted_moments(x, class_weights, np.zeros(x.shape[1]))
            variances = np.maximum(raw, floor)
        else:
            means = raw = variances = np.empty((2, 0))
        counts_list, log_probs = [], []
        for j, domain in enumerate(records.levels):
            k = len(domain)
            codes = records.categorical[:, j]
            counts = np.stack(
                [np.bincount(codes, weights=class_weights[:, a], minlength=k) for a in (0, 1)]
            )
            counts_list.append(counts)
            log_probs.append(
                np.log(counts + self.smoothing) - np.log(totals + self.smoothing * k)[:, None]
            )
        return totals, means, raw, variances, counts_list, log_probs

    def fitted_log_likelihood(self, records: EncodedRecords, class_weights: np.ndarray) -> float:
        """The maximised weighted log-likelihood from the sufficient statistics alone.

        Categorical: sum over classes and levels of count x log-probability.
        Continuous: for class a with total weight W_a, weighted variance v_a
        and fitted (floored) variance sigma2_a, the weighted sum of the normal
        log densities is -W_a (v_a / sigma2_a + log(2 pi sigma2_a)) / 2.
        """
        totals, _, raw, variances, counts_list, log_probs = self._m_step(records, class_weights)
        total = sum(float((c * lp).sum()) for c, lp in zip(counts_list, log_probs, strict=True))
        if variances.shape[1]:
            total -= 0.5 * float(
                (totals[:, None] * (raw / variances + _LOG_2PI + np.log(variances))).sum()
            )
        return total

    def fit(self, records: EncodedRecords, class_weights: np.ndarray) -> NaiveBayesParameters:
        """The M step of Example 4.2."""
        _, means, _, variances, _, log_probs = self._m_step(records, class_weights)
        return NaiveBayesParameters(
            means=means,
            variances=variances,
            log_probabilities=tuple(log_probs),
            continuous_names=records.continuous_names,
            categorical_names=records.categorical_names,
            levels=records.levels,
        )

    def _margin(self, parameters: NaiveBayesParameters, attribute: AttributeBins) -> np.ndarray:
        if attribute.kind == "categorical":
            probs = np.exp(parameters.log_probabilities[attribute.index])
            return np.stack(
                [
                    np.bincount(
                        attribute.bin_of_level, weights=probs[a], minlength=attribute.n_bins
                    )
                    for a in (0, 1)
                ]
            )
        j = attribute.index
        return np.stack(
            [
                _normal_bin_probabilities(
                    attribute.inner_edges,
                    parameters.means[a, j],
                    float(np.sqrt(parameters.variances[a, j])),
                )
                for a in (0, 1)
            ]
        )

    def bin_probabilities(
        self, parameters: NaiveBayesParameters, bins: tuple[AttributeBins, ...]
    ) -> np.ndarray:
        """Per class, the product of the attributes' bin probabilities (independent given s)."""
        margins = [self._margin(parameters, b) for b in bins]
        if len(margins) == 1:
            return margins[0]
        return margins[0][:, :, None] * margins[1][:, None, :]

    def class_parameter_count(self, records: EncodedRecords) -> int:
        """A mean and a variance per continuous component, K_j - 1 per categorical one.

        K_j counts the levels that occur in the data (an unobserved declared
        level adds no estimable parameter).
        """
        observed = sum(
            int(np.count_nonzero(np.bincount(records.categorical[:, j], minlength=len(domain)))) - 1
            for j, domain in enumerate(records.levels)
        )
        return 2 * records.continuous.shape[1] + observed

    def log_likelihood(
        self, parameters: NaiveBayesParameters, records: EncodedRecords
    ) -> np.ndarray:
        """log P(r_i | s = a): a sum over the components."""
        out = np.zeros((records.n, 2))
        x = records.continuous
        for a in (0, 1):
            column = out[:, a]
            for j in range(x.shape[1]):
                var = parameters.variances[a, j]
                diff = x[:, j] - parameters.means[a, j]
                column -= diff * diff / (2 * var)
                column -= 0.5 * (_LOG_2PI + np.log(var))
            for j, table in enumerate(parameters.log_probabilities):
                column += table[a][records.categorical[:, j]]
        return out


@dataclass(frozen=True)
class GaussianParameters:
    """Fitted theta of :class:`Gaussian`: per-class mean vectors (2, d) and covariances (2, d, d)."""

    means: np.ndarray
    covariances: np.ndarray
    names: tuple[str, ...]

    def summary(self) -> str:
        """Means and standard deviations per class."""
        lines = ["Gaussian: class-conditional parameters (s = 0 | s = 1)"]
        for j, col in enumerate(self.names):
            sd = np.sqrt(self.covariances[:, j, j])
            lines.append(
                f"  {col}: mean {self.means[0, j]:.4g} | {self.means[1, j]:.4g}, "
                f"sd {sd[0]:.4g} | {sd[1]:.4g}"
            )
        return "\n".join(lines)


class Gaussian(RecordModel):
    """One multivariate normal per class for continuous attributes (Kifer 2015, Section 5.1).

    The M step is the weighted mean and weighted covariance of each class;
    with one attribute this is the model of the paper's Gaussian experiments
    (mu0, sigma0, mu1, sigma1).

    Parameters
    ----------
    ridge : float, default 1e-9
        Added to every covariance diagonal, relative to the attribute's
        overall variance, so that a covariance stays invertible.
    """

    name = "gaussian"

    def __init__(self, *, ridge: float = 1e-9) -> None:
        if isinstance(ridge, bool) or not np.isfinite(ridge) or ridge < 0:
            raise ParameterError(f"ridge must be a number >= 0, got {ridge!r}")
        self.ridge = float(ridge)

    def __repr__(self) -> str:
        return "Gaussian()"

    def encode(self, data: pd.DataFrame) -> EncodedRecords:
        """Every attribute must be numeric."""
        _check_no_missing(data)
        names = list(data.columns)
        x = _continuous_matrix(data, names)
        return EncodedRecords(
            continuous=x,
            categorical=np.empty((len(data), 0), dtype=np.intp),
            continuous_names=tuple(names),
            categorical_names=(),
            levels=(),
            resolution_variance=_resolution_variance(x),
        )

    def _ridge(self, records: EncodedRecords) -> np.ndarray:
        """What is added to each covariance diagonal: the relative ridge and the rounding variance."""
        ridge = self.ridge * np.maximum(records.continuous.var(axis=0), 1e-300)
        if records.resolution_variance is not None:
            ridge = ridge + records.resolution_variance
        return ridge

    def fit(self, records: EncodedRecords, class_weights: np.ndarray) -> GaussianParameters:
        """Weighted mean and covariance per class."""
        x = records.continuous
        totals = class_weights.sum(axis=0)
        if (totals <= 0).any():
            raise DataError(
                "a class has zero total weight: the swap attribute takes one value only"
            )
        means = (class_weights.T @ x) / totals[:, None]
        d = x.shape[1]
        ridge = self._ridge(records)
        covs = np.empty((2, d, d))
        for a in (0, 1):
            centred = x - means[a]
            covs[a] = (centred * class_weights[:, a, None]).T @ centred / totals[a]
            covs[a][np.diag_indices(d)] += ridge
        return GaussianParameters(means=means, covariances=covs, names=records.continuous_names)

    def fitted_log_likelihood(self, records: EncodedRecords, class_weights: np.ndarray) -> float:
        """The maximised weighted log-likelihood from the sufficient statistics alone.

        With W_a the class weight, S_a the weighted covariance and Sigma_a =
        S_a + ridge the fitted one, the weighted sum of the log densities is
        -W_a (tr(Sigma_a^-1 S_a) + log det(2 pi Sigma_a)) / 2.
        """
        parameters = self.fit(records, class_weights)
        totals = class_weights.sum(axis=0)
        x = records.continuous
        d = x.shape[1]
        ridge = self._ridge(records)
        total = 0.0
        for a in (0, 1):
            sigma = parameters.covariances[a]
            sign, logdet = np.linalg.slogdet(sigma)
            if sign <= 0:
                raise DataError(
                    f"the class-{a} covariance of {list(parameters.names)} is singular: an "
                    "attribute is constant or a linear combination of others; drop it"
                )
            raw = sigma - np.diag(ridge)
            trace = float(np.trace(np.linalg.solve(sigma, raw)))
            total -= 0.5 * float(totals[a]) * (trace + logdet + d * _LOG_2PI)
        return total

    def bin_probabilities(
        self, parameters: GaussianParameters, bins: tuple[AttributeBins, ...]
    ) -> np.ndarray:
        """Normal probabilities of the bins: univariate, or bivariate rectangles."""
        idx = [b.index for b in bins]
        out = []
        for a in (0, 1):
            mean = parameters.means[a, idx]
            cov = parameters.covariances[a][np.ix_(idx, idx)]
            sd = np.sqrt(np.diag(cov))
            if len(bins) == 1:
                out.append(_normal_bin_probabilities(bins[0].inner_edges, mean[0], sd[0]))
                continue
            # Rectangle probabilities from the bivariate CDF on the grid of edges,
            # the infinite edges replaced by points 40 standard deviations out.
            grids = [
                np.concatenate([[m - 40 * v], b.inner_edges, [m + 40 * v]])
                for b, m, v in zip(bins, mean, sd, strict=True)
            ]
            gx, gy = np.meshgrid(grids[0], grids[1], indexing="ij")
            cdf = stats.multivariate_normal(mean, cov, allow_singular=True).cdf(
                np.column_stack([gx.ravel(), gy.ravel()])
            )
            cdf = np.asarray(cdf).reshape(gx.shape)
            rect = cdf[1:, 1:] - cdf[:-1, 1:] - cdf[1:, :-1] + cdf[:-1, :-1]
            out.append(np.clip(rect, 0.0, None))
        return np.stack(out)

    def class_parameter_count(self, records: EncodedRecords) -> int:
        """d means and d (d + 1) / 2 covariances."""
        d = records.continuous.shape[1]
        return d + d * (d + 1) // 2

    def log_likelihood(self, parameters: GaussianParameters, records: EncodedRecords) -> np.ndarray:
        """Multivariate normal log densities through a Cholesky factor."""
        x = records.continuous
        d = x.shape[1]
        out = np.empty((len(x), 2))
        for a in (0, 1):
            try:
                chol = np.linalg.cholesky(parameters.covariances[a])
            except np.linalg.LinAlgError:
                raise DataError(
                    f"the class-{a} covariance of {list(parameters.names)} is singular: an "
                    "attribute is constant or a linear combination of others; drop it"
                ) from None
            z = np.linalg.solve(chol, (x - parameters.means[a]).T)
            out[:, a] = (
                -0.5 * np.einsum("ij,ij->j", z, z)
                - np.log(np.diag(chol)).sum()
                - 0.5 * d * _LOG_2PI
            )
        return out


_MODELS = {"naive-bayes": NaiveBayes, "naive_bayes": NaiveBayes, "gaussian": Gaussian}


def make_model(model: str | RecordModel) -> RecordModel:
    """A :class:`RecordModel` from a name (``"naive-bayes"``, ``"gaussian"``) or an instance.

    Parameters
    ----------
    model : str or RecordModel
        ``"naive-bayes"`` (Kifer 2015, Example 4.2) or ``"gaussian"`` (Section
        5.1), in any case, with default settings; an instance is returned as
        it is.

    Returns
    -------
    RecordModel
    """
    if isinstance(model, RecordModel):
        return model
    if isinstance(model, str) and model.lower() in _MODELS:
        return _MODELS[model.lower()]()
    raise ParameterError(
        f"model must be 'naive-bayes', 'gaussian' or a RecordModel instance, got {model!r}"
    )
