"""Algorithm 1 of Kifer (2015): estimating the group swap count alpha.

The released data D~ = {(r_i, s~_i)} come from a rho data swap of the true
data (Definition 2.1) with an undisclosed rate. With a record model M_theta
(:mod:`sdckit.swaprate.models`) and the relaxed swap process of Section 4.1.1
(a true 0 becomes 1 with probability alpha/n0, a true 1 becomes 0 with
probability alpha/n1), the relaxed log-likelihood is::

    log L*(alpha, theta) = sum_{s~_i=0} log[(n0 - alpha) P0_i + alpha P1_i]
                         + sum_{s~_j=1} log[alpha P0_j + (n1 - alpha) P1_j] - N log N

with Pa_i = P_theta(r_i | s = a). Algorithm 1 (``gsc``) maximises it by
coordinate ascent: EM for theta with alpha fixed (latent z_i = "record i's s
was changed", t_i = E[z_i]), then Newton steps on alpha with theta fixed
(Lemma 4.1: log L* is concave in alpha), alternating until both settle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from sdckit._validation import (
    RandomState,
    as_sequence,
    check_columns,
    check_dataframe,
    check_fraction,
    check_int,
    check_positive,
    check_random_state,
    row_label,
)
from sdckit.errors import DataError, ParameterError
from sdckit.swaprate.calibration import (
    DEFAULT_CALIBRATION_RATES,
    SwapCalibration,
    check_calibration_rates,
    reswap_calibration,
)
from sdckit.swaprate.fitcheck import ModelFitCheck, model_fit_check
from sdckit.swaprate.models import RecordModel, make_model
from sdckit.swaprate.verdict import SwapVerdict, judge_swap_estimate

__all__ = [
    "IdentifiabilityCheck",
    "SwapCountEstimate",
    "binary_swap_attribute",
    "estimate_swap_count",
    "fit_swap_model",
    "relaxed_log_likelihood",
    "swap_rate_from_count",
]


def swap_rate_from_count(alpha: float, n0: int, n1: int) -> float:
    """rho from alpha by Lemma 2.3: rho_hat = alpha (N - 1) / (2 n0 n1)."""
    n = n0 + n1
    return float(alpha) * (n - 1) / (2.0 * n0 * n1)


def binary_swap_attribute(
    series: pd.Series, positive: Any | Iterable[Any] | None = None
) -> tuple[np.ndarray, tuple[tuple, tuple]]:
    """Code the released swap attribute as 0/1 (Kifer 2015, Section 4.1.3 for multi-valued s).

    Parameters
    ----------
    series : Series
        The released swap attribute s~.
    positive : value or iterable of values, optional
        The values coded 1 (group B); all others are coded 0 (group A). May be
        omitted when s~ takes exactly two values: the larger (in sort order)
        is coded 1.

    Returns
    -------
    codes : ndarray of int8
        0/1 per record.
    groups : (tuple, tuple)
        The values coded 0 and the values coded 1.
    """
    name = series.name
    if series.isna().any():
        raise DataError(
            f"swap attribute {name!r} has {int(series.isna().sum())} missing values; drop them"
        )
    uniques = pd.unique(series)
    try:
        values = sorted(uniques)
    except TypeError:
        values = list(uniques)
    # Plain Python values, so that messages and summaries read 1, not np.int64(1).
    values = [row_label(v) for v in values]
    if len(values) < 2:
        raise DataError(
            f"swap attribute {name!r} takes one value only ({values}); a swap cannot change "
            "it and alpha is not defined"
        )
    if positive is None:
        if len(values) != 2:
            raise ParameterError(
                f"swap attribute {name!r} takes {len(values)} values ({values[:8]}); say which "
                "values form group 1 with `positive` (--positive on the command line; Section 4.1.3 splits a multi-valued "
                "attribute into two groups), or compare several splits with split_concordance"
            )
        ones: list = [values[1]]
    else:
        if isinstance(positive, (list, tuple, set, frozenset, np.ndarray, pd.Index)):
            ones = list(positive)
        else:
            ones = [positive]
        unknown = [v for v in ones if v not in set(values)]
        if unknown:
            raise ParameterError(
                f"positive: value(s) {unknown} do not occur in swap attribute {name!r} "
                f"(its values: {values[:8]})"
            )
    codes = series.isin(ones).to_numpy().astype(np.int8)
    zeros = tuple(v for v in values if v not in set(ones))
    if not zeros:
        raise ParameterError(f"positive puts every value of {name!r} in group 1; leave some out")
    return codes, (zeros, tuple(v for v in values if v in set(ones)))


def relaxed_log_likelihood(
    alpha: float,
    record_log_likelihoods: np.ndarray,
    swapped_class: np.ndarray,
    counts: np.ndarray | None = None,
) -> tuple[float, float, float]:
    """log L*(alpha, theta) and its first two derivatives in alpha (Kifer 2015, Lemma 4.1).

    Parameters
    ----------
    alpha : float
        Group swap count, in [0, min(n0, n1)].
    record_log_likelihoods : ndarray, shape (N, 2)
        log P_theta(r_i | s = a) for a = 0, 1.
    swapped_class : ndarray of 0/1, shape (N,)
        The released swap attribute s~.
    counts : ndarray, optional
        Multiplicity of every row (rows standing for several identical
        records); default 1 each.

    Returns
    -------
    (value, first derivative, second derivative)
        The value includes the constant -N log N, so that it is the relaxed
        log-likelihood itself.
    """
    s = np.asarray(swapped_class)
    w = np.ones(len(s)) if counts is None else np.asarray(counts, dtype=np.float64)
    n1 = float(w[s == 1].sum())
    n0 = float(w.sum()) - n1
    top, p0, p1 = _scaled(record_log_likelihoods)
    return _relaxed_terms(alpha, p0, p1, top, s, w, n0, n1)


def _relaxed_terms(
    alpha: float,
    p0: np.ndarray,
    p1: np.ndarray,
    top: np.ndarray | None,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
) -> tuple[float, float, float]:
    denominator, slope = _mixture_terms(alpha, p0, p1, s, n0, n1)
    ratio = slope / denominator
    weighted = w * ratio
    first = float(weighted.sum())
    second = float(-(weighted * ratio).sum())
    if top is None:
        return float("nan"), first, second
    n = n0 + n1
    value = float(w @ (np.log(denominator) + top) - n * np.log(n))
    return value, first, second


def _scaled(log_lik: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-record max of the two log-likelihoods and both densities divided by exp(max)."""
    top = np.maximum(log_lik[:, 0], log_lik[:, 1])
    return top, np.exp(log_lik[:, 0] - top), np.exp(log_lik[:, 1] - top)


def _mixture_terms(
    alpha: float, p0: np.ndarray, p1: np.ndarray, s: np.ndarray, n0: float, n1: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per record: the mixture density of its released class (times N) and its alpha-slope."""
    released_zero = s == 0
    denominator = np.where(
        released_zero, (n0 - alpha) * p0 + alpha * p1, alpha * p0 + (n1 - alpha) * p1
    )
    slope = np.where(released_zero, p1 - p0, p0 - p1)
    return denominator, slope


def _change_probabilities(
    alpha: float, p0: np.ndarray, p1: np.ndarray, s: np.ndarray, n0: float, n1: float
) -> np.ndarray:
    """The E step of Algorithm 1: t_i = P(record i's s was changed | r_i, s~_i)."""
    denominator, _ = _mixture_terms(alpha, p0, p1, s, n0, n1)
    changed = alpha * np.where(s == 0, p1, p0)
    return np.divide(changed, denominator, out=np.zeros_like(changed), where=denominator > 0)


def _class_weights(t: np.ndarray, s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Example 4.2: true class s~ with weight 1 - t, the other with weight t (times multiplicity)."""
    w1 = np.where(s == 1, 1.0 - t, t)
    return np.column_stack([w * (1.0 - w1), w * w1])


@dataclass(frozen=True)
class IdentifiabilityCheck:
    """Do the attributes identify the group swap count? (Our addition to Kifer (2015), Section 4.1.)

    Under the relaxed swap process the attribute distributions of the two
    released classes are f0 = (1 - alpha/n0) P0 + (alpha/n0) P1 and
    f1 = (alpha/n1) P0 + (1 - alpha/n1) P1, so::

        f0 - f1 = (1 - alpha N / (n0 n1)) (P0 - P1).

    Whatever the data say about alpha comes through the difference between
    f0 and f1. When the released swap attribute s~ is independent of the
    attributes r (f0 = f1), either P0 = P1 (the attributes carry no
    information about s, and log L* is flat in alpha) or
    alpha = alpha* = n0 n1 / N (a swap that made s~ independent of s,
    rho close to 1/2): alpha is not identified. Algorithm 1 does not stay
    flat, though: at alpha* the relaxed model is f0 = f1 =
    (n0/N) P0 + (n1/N) P1, a two-class latent-class (mixture) model of r that
    ignores s~, and whenever the attributes have structure the one-class
    model misses (attributes correlated under Naive Bayes, non-normal
    margins, ...), the likelihood rises by fitting those clusters and drives
    alpha towards alpha*. The imbalance check (Section 4.1.4) cannot see it:
    the latent classes are symmetric in s~, so A0 = A1.

    Two tests, both needed for ``identified``:

    * **Association** between s~ and r: the likelihood-ratio statistic
      G = 2 [max log prod P_theta(r_i | s~_i) - max log prod P_theta(r_i)]
      of class-specific against pooled (class-independent) parameters at
      alpha = 0. Its chi-square reference with the model's count of
      per-class parameters as degrees of freedom assumes the model is right
      under the null; with attributes correlated under Naive Bayes (G is
      then a sum of dependent per-attribute statistics) or non-normal
      continuous attributes (the variance part of the Gaussian ratio is not
      robust to kurtosis) it is anti-conservative. So the decision uses a
      **permutation** p-value: permuting s~ over the records keeps the joint
      distribution of r and is exact under "s~ independent of r" for any
      model. The chi-square p-value is reported beside it.
    * **Latent-class comparison**: L = 2 [log L*(alpha_hat) -
      max_theta log L*(alpha*)], the gain of the fit over the same model at
      alpha* = n0 n1 / N, where it is a latent-class model of r that uses s~
      only through n0 and n1. It asks whether the released swap attribute
      adds anything to what latent-class freedom alone explains. Referred to
      chi-square with 1 degree of freedom (alpha* is interior); when
      P0 = P1 at alpha* the model is not regular there, L is near 0 and the
      estimate is flagged, as it should be.

    A parametric bootstrap under alpha = 0 would not do: it tests "alpha = 0
    and the model is right", and the model is wrong in exactly the way that
    makes the spurious gain, so the bootstrap data (drawn from the model)
    lack the clusters and the spurious gain would look significant.

    Attributes
    ----------
    association_statistic : float
        G, the likelihood-ratio statistic of the association test.
    degrees_of_freedom : int or None
        Free parameters of one class (``RecordModel.class_parameter_count``);
        None for a plug-in model that does not count them.
    asymptotic_p_value : float
        P(chi-square(df) >= G); NaN without a parameter count.
    permutations : int
        Random permutations of s~ (0: the chi-square p-value decides).
    permutation_p_value : float
        (1 + #{permuted G >= G}) / (1 + permutations); NaN when
        ``permutations == 0``.
    association_p_value : float
        The p-value that decides: the permutation one when computed.
    independence_count : float
        alpha* = n0 n1 / N.
    independence_log_likelihood : float
        max over theta of log L*(alpha*, theta), by EM.
    latent_class_statistic : float
        L = 2 [log L*(alpha_hat) - log L*(alpha*)], floored at 0.
    latent_class_p_value : float
        P(chi-square(1) >= L).
    level : float
        Significance level of both tests.
    associated, beats_latent_class : bool
        Each test significant at ``level``.
    identified : bool
        Both.
    reason : str
        The verdict in plain words.
    """

    association_statistic: float
    degrees_of_freedom: int | None
    asymptotic_p_value: float
    permutations: int
    permutation_p_value: float
    association_p_value: float
    independence_count: float
    independence_log_likelihood: float
    latent_class_statistic: float
    latent_class_p_value: float
    level: float
    associated: bool
    beats_latent_class: bool
    identified: bool
    reason: str

    def at_level(self, level: float) -> IdentifiabilityCheck:
        """The same statistics judged at another significance level."""
        return _judge_identifiability(
            association_statistic=self.association_statistic,
            degrees_of_freedom=self.degrees_of_freedom,
            asymptotic_p_value=self.asymptotic_p_value,
            permutations=self.permutations,
            permutation_p_value=self.permutation_p_value,
            independence_count=self.independence_count,
            independence_log_likelihood=self.independence_log_likelihood,
            latent_class_statistic=self.latent_class_statistic,
            level=_check_level(level),
        )

    def summary(self) -> str:
        """Both tests and the verdict."""
        df = "unknown" if self.degrees_of_freedom is None else str(self.degrees_of_freedom)
        perm = (
            f"permutation p = {self.permutation_p_value:.4f} ({self.permutations} permutations)"
            if self.permutations
            else "no permutations"
        )
        return "\n".join(
            [
                "identifiability (is the swap count identified by these attributes?):",
                f"  association of s~ with the attributes: G = {self.association_statistic:.2f}, "
                f"df {df}, chi-square p = {self.asymptotic_p_value:.4g}, {perm}",
                f"  gain over the latent-class model at alpha* = {self.independence_count:.1f} "
                f"(n0 n1 / N): 2 dlog L* = {self.latent_class_statistic:.2f}, "
                f"chi-square(1) p = {self.latent_class_p_value:.4g}",
                f"  {'identified' if self.identified else 'NOT IDENTIFIED'} "
                f"(level {self.level:g}): {self.reason}.",
            ]
            + ([] if self.identified else [f"  {NOT_IDENTIFIED_CONSEQUENCE}"])
        )


#: What an unidentified estimate means, in plain words (summaries and the command line).
NOT_IDENTIFIED_CONSEQUENCE = (
    "Without enough information about the swap attribute any alpha fits about as well; "
    "Algorithm 1 then fits clusters among the attributes instead of swaps, so its alpha "
    "and standard error say nothing about the swap. Use attributes that predict the swap "
    "attribute."
)


def _check_level(level: float) -> float:
    value = check_fraction(level, "identification_level", open_low=True)
    if value >= 1:
        raise ParameterError(f"identification_level must be in (0, 1), got {level!r}")
    return value


def _judge_identifiability(
    *,
    association_statistic: float,
    degrees_of_freedom: int | None,
    asymptotic_p_value: float,
    permutations: int,
    permutation_p_value: float,
    independence_count: float,
    independence_log_likelihood: float,
    latent_class_statistic: float,
    level: float,
) -> IdentifiabilityCheck:
    association_p = permutation_p_value if permutations else asymptotic_p_value
    latent_p = float(stats.chi2.sf(latent_class_statistic, 1))
    associated = bool(association_p < level)
    beats = bool(latent_p < level)
    test = "permutation" if permutations else "chi-square"
    if not associated:
        reason = (
            "the attributes carry no detectable information about the swap attribute "
            f"(association test, {test} p = {association_p:.3g} >= {level:g})"
        )
    elif not beats:
        reason = (
            "the fit is no better than a latent-class model of the attributes that ignores "
            f"the swap attribute (alpha* = n0 n1 / N: p = {latent_p:.3g} >= {level:g}), "
            "although they are associated with it"
        )
    else:
        reason = (
            "the attributes carry information about the swap attribute and the fit beats "
            "the latent-class model that ignores it"
        )
    return IdentifiabilityCheck(
        association_statistic=float(association_statistic),
        degrees_of_freedom=degrees_of_freedom,
        asymptotic_p_value=float(asymptotic_p_value),
        permutations=int(permutations),
        permutation_p_value=float(permutation_p_value),
        association_p_value=float(association_p),
        independence_count=float(independence_count),
        independence_log_likelihood=float(independence_log_likelihood),
        latent_class_statistic=float(latent_class_statistic),
        latent_class_p_value=latent_p,
        level=float(level),
        associated=associated,
        beats_latent_class=beats,
        identified=associated and beats,
        reason=reason,
    )


def _association_test(
    records: Any,
    s: np.ndarray,
    w: np.ndarray,
    model: RecordModel,
    df: int | None,
    permutations: int,
    rng: np.random.Generator,
) -> tuple[float, int | None, float, float]:
    """G of class-specific against pooled parameters at alpha = 0, and its two p-values.

    Returns (G, df, chi-square p, permutation p). The pooled log-likelihood
    does not depend on the labels, so a permuted G exceeds the observed one
    exactly when its class-specific log-likelihood does. A row standing for
    ``w_i`` identical records receives, per permutation, the number of
    class-1 labels that fell on those records.
    """
    # Equal weights in both classes fit the pooled model twice over.
    pooled_total = 0.5 * model.fitted_log_likelihood(records, np.column_stack([w, w]))

    def class_specific_total(ones: np.ndarray) -> float:
        return model.fitted_log_likelihood(records, np.column_stack([w - ones, ones]))

    observed = class_specific_total(w * s)
    statistic = max(2.0 * (observed - pooled_total), 0.0)
    if df is None:
        asymptotic = float("nan")
    elif df == 0:  # nothing to estimate per class: the two fits coincide
        asymptotic = 1.0
    else:
        asymptotic = float(stats.chi2.sf(statistic, df))
    if not permutations:
        return statistic, df, asymptotic, float("nan")
    counts = np.rint(w).astype(np.int64)
    if not np.allclose(counts, w):
        raise ParameterError(
            "counts must be whole numbers of records for the permutation test; give "
            "permutations=0 to use the chi-square p-value"
        )
    merged = bool((counts != 1).any())
    owner = np.repeat(np.arange(len(w)), counts)  # the row of every record
    labels = np.zeros(len(owner), dtype=bool)
    labels[: int(counts[s == 1].sum())] = True
    slack = 1e-9 * max(1.0, abs(observed))
    exceed = 0
    for _ in range(permutations):
        permuted = rng.permutation(labels)
        ones = (
            np.bincount(owner[permuted], minlength=len(w)).astype(np.float64)
            if merged
            else permuted.astype(np.float64)
        )
        exceed += class_specific_total(ones) >= observed - slack
    return statistic, df, asymptotic, (1.0 + exceed) / (1.0 + permutations)


@dataclass(frozen=True)
class SwapCountEstimate:
    """Result of :func:`estimate_swap_count` (Kifer 2015, Algorithm 1).

    Attributes
    ----------
    group_swap_count : float
        alpha_hat, the estimated number of records whose s changed 0 -> 1.
    rho : float
        The data swap rate implied by Lemma 2.3: alpha (N - 1) / (2 n0 n1).
    standard_error : float
        From the curvature of the profile relaxed log-likelihood (theta
        re-fitted), or the theta-fixed one when ``profile_se=False``.
    fixed_theta_standard_error : float
        1 / sqrt(-d2 log L* / d alpha2) at alpha_hat with theta held fixed
        (Lemma 4.1); it ignores the uncertainty in theta and is smaller.
    n, n0, n1 : int
        Records, and records with s~ = 0 and 1.
    swap_attribute : str
    attributes : tuple of str
        The non-swap attributes the model used.
    groups : (tuple, tuple)
        Values of the swap attribute coded 0 and 1.
    model : RecordModel
    parameters : object
        The fitted theta (e.g. :class:`~sdckit.swaprate.models.NaiveBayesParameters`).
    change_probabilities : Series
        t_i, the estimated probability that record i's s value was changed
        (indexed like the data).
    a0, a1 : float
        Section 4.1.4: A0 = sum of t over s~ = 0 (estimated changes 1 -> 0),
        A1 = sum of t over s~ = 1 (estimated changes 0 -> 1).
    imbalance : float
        |A0 - A1| / N: near 0 when the model fits; large means use Consensus.
    iterations : int
        Outer iterations (EM block + Newton block).
    em_iterations : int
        EM iterations in total.
    converged : bool
    log_likelihood : float
        log L* at the estimate.
    starts : tuple of (start, alpha, log L*)
        Every run of Algorithm 1: its starting alpha, where it ended and its
        log L*; the estimate is the run with the largest log L*.
    identifiability : IdentifiabilityCheck
        Whether the attributes identify alpha at all: the association test
        and the latent-class comparison. When ``identified`` is False the
        swap count cannot be estimated from these attributes, and alpha and
        its standard error are artefacts of the model, not estimates.
    record_log_likelihoods : ndarray, shape (N, 2)
        log P_theta(r_i | s = a) at the estimate.
    swapped_class : ndarray of 0/1
        The released swap attribute as coded.
    fit_check : ModelFitCheck or None
        Whether the fitted relaxed model reproduces the released tables.
    calibration : SwapCalibration or None
        The re-swap calibration (None when skipped).
    verdict : SwapVerdict or None
        What may be said: ``verdict.code`` is ``estimated``, ``no_evidence``,
        ``unreliable`` or ``not_identified``. Read it first: alpha and its
        standard error are the likelihood's maximiser and curvature
        whatever the verdict.
    """

    group_swap_count: float
    rho: float
    standard_error: float
    fixed_theta_standard_error: float
    n: int
    n0: int
    n1: int
    swap_attribute: str
    attributes: tuple[str, ...]
    groups: tuple[tuple, tuple]
    model: RecordModel
    parameters: Any
    change_probabilities: pd.Series
    a0: float
    a1: float
    imbalance: float
    iterations: int
    em_iterations: int
    converged: bool
    log_likelihood: float
    starts: tuple[tuple[float, float, float], ...]
    identifiability: IdentifiabilityCheck
    record_log_likelihoods: np.ndarray = field(repr=False)
    swapped_class: np.ndarray = field(repr=False)
    fit_check: ModelFitCheck | None = None
    calibration: SwapCalibration | None = None
    verdict: SwapVerdict | None = None

    @property
    def alpha(self) -> float:
        """Alias of :attr:`group_swap_count`."""
        return self.group_swap_count

    @property
    def group_swap_rate(self) -> float:
        """alpha / N."""
        return self.group_swap_count / self.n

    @property
    def identified(self) -> bool:
        """False when the attributes do not identify alpha (see :attr:`identifiability`)."""
        return self.identifiability.identified

    def class_probabilities(self) -> np.ndarray:
        """M_theta(s = a | r_i), shape (N, 2), with P(s = 0) = n0 / N (Algorithm 1's M step)."""
        prior = np.log(np.array([self.n0, self.n1], dtype=float) / self.n)
        scores = self.record_log_likelihoods + prior
        scores = scores - scores.max(axis=1, keepdims=True)
        probs = np.exp(scores)
        return probs / probs.sum(axis=1, keepdims=True)

    def summary(self) -> str:
        """The verdict first, then the estimate, the diagnostics and convergence, for a person."""
        status = "converged" if self.converged else "NOT converged"
        lines = []
        if self.verdict is not None:
            lines.append(self.verdict.line())
            lines += [f"  note: {note}" for note in self.verdict.notes]
        lines += [
            f"Algorithm 1 (gsc), model {self.model!r}, swap attribute {self.swap_attribute!r}",
            f"  groups: 0 = {list(self.groups[0])}, 1 = {list(self.groups[1])}",
            f"  N = {self.n} (n0 = {self.n0}, n1 = {self.n1})",
        ]
        lines += _estimate_lines(
            self.verdict, self.group_swap_count, self.standard_error, self.n0, self.n1
        )
        lines.append(
            f"  estimated changes: 0->1 A1 = {_count_text(self.a1, self.n0)}, "
            f"1->0 A0 = {_count_text(self.a0, self.n1)}; imbalance |A0-A1|/N = "
            f"{self.imbalance:.4f}"
        )
        lines.append(
            f"  {status} after {self.iterations} iterations ({self.em_iterations} EM steps), "
            f"log L* = {self.log_likelihood:.2f}"
        )
        lines.append(self.identifiability.summary())
        if self.fit_check is not None:
            lines.append(self.fit_check.summary())
        if self.calibration is not None:
            lines.append(self.calibration.summary())
        return "\n".join(lines)


def _count_text(value: float, limit: float) -> str:
    """A count, or words when it exceeds the records that could have changed (impossible)."""
    if value > limit:
        return f"more than the {limit:,.0f} records it could be (impossible)"
    return f"{value:,.1f}"


def _estimate_lines(
    verdict: SwapVerdict | None, alpha: float, standard_error: float, n0: float, n1: float
) -> list[str]:
    """alpha, SE and rho as a quotable estimate, or as the likelihood's maximiser when not."""
    n = n0 + n1
    limit = n0 * n1 / (n - 1)  # rho = 1/2 (Lemma 2.3)
    if not alpha < limit:
        return [
            "  the likelihood is largest at a swap rate of 1/2 or more, which no data swap "
            "produces: no number is shown"
        ]
    rho = swap_rate_from_count(alpha, n0, n1)
    numbers = (
        f"alpha = {alpha:,.1f} (SE {standard_error:,.1f}), alpha/N = {alpha / n:.4f}, "
        f"rho = {rho:.4f}"
    )
    if verdict is None or verdict.quotable:
        return [f"  group swap count {numbers} (rho by Lemma 2.3)"]
    return [
        f"  maximiser of the relaxed likelihood: {numbers} - NOT an estimate "
        f"(verdict {verdict.code})"
    ]


def _newton_alpha(
    alpha: float,
    p0: np.ndarray,
    p1: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
    tol: float,
    max_steps: int = 50,
) -> float:
    """Maximise log L* over alpha in (0, min(n0, n1)) with theta fixed (Lemma 4.1).

    Newton steps; log L* is concave in alpha, and a step leaving the interval
    goes halfway to the bound it crossed instead, so alpha stays feasible.
    """
    upper = min(n0, n1)
    for _ in range(max_steps):
        _, first, second = _relaxed_terms(alpha, p0, p1, None, s, w, n0, n1)
        if second >= 0:  # P0 == P1 for every record: no information about alpha
            break
        proposal = alpha - first / second
        if proposal <= 0:
            proposal = 0.5 * alpha
        elif proposal >= upper:
            proposal = 0.5 * (alpha + upper)
        step = abs(proposal - alpha)
        alpha = proposal
        if step <= tol:
            break
    return float(alpha)


@dataclass(frozen=True)
class _Fit:
    alpha: float
    parameters: Any
    t: np.ndarray
    log_lik: np.ndarray
    iterations: int
    em_iterations: int
    converged: bool
    log_likelihood: float
    start: float


def _m_step(
    t: np.ndarray, records: Any, s: np.ndarray, w: np.ndarray, model: RecordModel
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """M step for the change probabilities t: theta, log P(r | s), and its scaled form."""
    parameters = model.fit(records, _class_weights(t, s, w))
    log_lik = model.log_likelihood(parameters, records)
    top, p0, p1 = _scaled(log_lik)
    return parameters, log_lik, top, p0, p1


def _squarem_ratio(r: np.ndarray, v: np.ndarray) -> float:
    """SQUAREM step length (Varadhan & Roland 2008, scheme S3), at most -1."""
    denom = float(v @ v)
    return min(-np.sqrt(float(r @ r) / denom), -1.0) if denom > 0 else -1.0


def _final_fit(
    alpha: float,
    t: np.ndarray,
    records: Any,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
    model: RecordModel,
    iterations: int,
    em_total: int,
    converged: bool,
    start: float,
) -> _Fit:
    """theta consistent with the final t, and the fit statistics there."""
    parameters, log_lik, top, p0, p1 = _m_step(t, records, s, w, model)
    t = _change_probabilities(alpha, p0, p1, s, n0, n1)
    value, _, _ = _relaxed_terms(alpha, p0, p1, top, s, w, n0, n1)
    return _Fit(alpha, parameters, t, log_lik, iterations, em_total, converged, value, start)


def _run_from(
    alpha: float,
    records: Any,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
    model: RecordModel,
    tol: float,
    max_iter: int,
    max_em_iter: int,
    progress: Callable[[int, int], None] | None,
) -> _Fit:
    """Algorithm 1 from one starting value of alpha (lines 2-18)."""
    start = alpha
    t = np.zeros(len(s))  # line 2
    alpha_tol = tol * (n0 + n1)
    em_total = 0
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):
        # EM for theta with alpha fixed (lines 4-13); the first block runs to
        # convergence whatever max_em_iter says (see _run_accelerated).
        for _ in range(max_em_iter if iteration > 1 else max(max_em_iter, 1000)):
            _, _, _, p0, p1 = _m_step(t, records, s, w, model)  # M step
            t_new = _change_probabilities(alpha, p0, p1, s, n0, n1)  # E step
            em_change = float(np.max(np.abs(t_new - t)))
            t = t_new
            em_total += 1
            if em_change <= tol:
                break
        # Newton on alpha with theta fixed (lines 14-16).
        new_alpha = _newton_alpha(alpha, p0, p1, s, w, n0, n1, alpha_tol)
        moved = abs(new_alpha - alpha)
        alpha = new_alpha
        t = _change_probabilities(alpha, p0, p1, s, n0, n1)
        if progress is not None:
            progress(iteration, max_iter)
        if moved <= alpha_tol and em_change <= tol:
            converged = True
            break
    return _final_fit(alpha, t, records, s, w, n0, n1, model, iteration, em_total, converged, start)


def _run_accelerated(
    alpha: float,
    records: Any,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
    model: RecordModel,
    tol: float,
    max_iter: int,
    progress: Callable[[int, int], None] | None,
) -> _Fit:
    """Algorithm 1 with one EM step per Newton block, accelerated by SQUAREM.

    The map G: (t, alpha) -> M step -> Newton on alpha -> E step is the
    alternation of Algorithm 1; each of its steps never lowers log L*. Along
    the ridge where alpha and theta trade off it converges slowly, so every
    cycle takes two G steps, extrapolates along them (Varadhan & Roland 2008,
    scheme S3) and then one G step from the extrapolated point, falling back
    to the plain step whenever the extrapolation lowered log L*. The fixed
    point is Algorithm 1's.
    """
    start = alpha
    alpha_tol = tol * (n0 + n1)
    upper = min(n0, n1)

    def step(t: np.ndarray, a: float) -> tuple[np.ndarray, float, float]:
        _, _, top, p0, p1 = _m_step(t, records, s, w, model)
        a = _newton_alpha(a, p0, p1, s, w, n0, n1, alpha_tol)
        value = _relaxed_terms(a, p0, p1, top, s, w, n0, n1)[0]
        return _change_probabilities(a, p0, p1, s, n0, n1), a, value

    # The first EM block runs to convergence at the starting alpha, as in
    # Algorithm 1: a Newton step taken from the naive theta (fitted with
    # t = 0) would throw every start to the same place.
    t0, _, em_total = _em_fixed_alpha(
        alpha, np.zeros(len(s)), records, s, w, n0, n1, model, tol, 1000
    )
    a0 = alpha
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):
        t1, a1, _ = step(t0, a0)
        t2, a2, value2 = step(t1, a1)
        em_total += 2
        r_t, v_t = t1 - t0, t2 - 2 * t1 + t0
        r_a, v_a = a1 - a0, a2 - 2 * a1 + a0
        ratio = _squarem_ratio(r_t, v_t)
        t_x = np.clip(t0 - 2 * ratio * r_t + ratio * ratio * v_t, 0.0, 1.0)
        a_x = a0 - 2 * ratio * r_a + ratio * ratio * v_a
        if a_x <= 0:
            a_x = 0.5 * a2
        elif a_x >= upper:
            a_x = 0.5 * (a2 + upper)
        t3, a3, value3 = step(t_x, a_x)
        em_total += 1
        if not np.isfinite(value3) or value3 < value2:
            t_x, a_x = t2, a2
            t3, a3, value3 = step(t2, a2)
            em_total += 1
        if progress is not None:
            progress(iteration, max_iter)
        done = float(np.max(np.abs(t3 - t_x))) <= tol and abs(a3 - a_x) <= alpha_tol
        t0, a0 = t3, a3
        if done:
            converged = True
            break
    return _final_fit(a0, t0, records, s, w, n0, n1, model, iteration, em_total, converged, start)


def _em_fixed_alpha(
    alpha: float,
    t: np.ndarray,
    records: Any,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
    model: RecordModel,
    tol: float,
    max_em_iter: int,
) -> tuple[np.ndarray, float, int]:
    """EM for theta with alpha fixed (Algorithm 1, lines 4-13), from t.

    Returns the final t, log L*(alpha, theta) at the final theta, and the
    number of EM steps taken.
    """
    steps = 0
    for steps in range(1, max_em_iter + 1):  # noqa: B007 - the count is returned
        _, _, top, p0, p1 = _m_step(t, records, s, w, model)
        t_new = _change_probabilities(alpha, p0, p1, s, n0, n1)
        done = float(np.max(np.abs(t_new - t))) <= tol
        t = t_new
        if done:
            break
    return t, _relaxed_terms(alpha, p0, p1, top, s, w, n0, n1)[0], steps


def _em_fixed_alpha_accelerated(
    alpha: float,
    t: np.ndarray,
    records: Any,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
    model: RecordModel,
    tol: float,
    max_iter: int,
) -> float:
    """max over theta of log L*(alpha, theta) by EM from t, accelerated by SQUAREM.

    The EM map t -> M step -> E step at fixed alpha, extrapolated as in
    :func:`_run_accelerated` (Varadhan & Roland 2008, scheme S3) with a
    fall-back to the plain step whenever the extrapolation lowered log L*.
    A latent-class fit of overlapping classes converges too slowly for plain
    EM. Returns log L* at the final theta.
    """

    def step(current: np.ndarray) -> tuple[np.ndarray, float]:
        _, _, top, p0, p1 = _m_step(current, records, s, w, model)
        value = _relaxed_terms(alpha, p0, p1, top, s, w, n0, n1)[0]
        return _change_probabilities(alpha, p0, p1, s, n0, n1), value

    for _ in range(max_iter):
        t1, _ = step(t)
        t2, value2 = step(t1)
        r, v = t1 - t, t2 - 2 * t1 + t
        ratio = _squarem_ratio(r, v)
        t_x = np.clip(t - 2 * ratio * r + ratio * ratio * v, 0.0, 1.0)
        t3, value3 = step(t_x)
        if not np.isfinite(value3) or value3 < value2:
            t_x = t2
            t3, value3 = step(t2)
        done = float(np.max(np.abs(t3 - t_x))) <= tol
        t = t3
        if done:
            break
    return step(t)[1]


def _profile_standard_error(
    fit: _Fit,
    fixed_se: float,
    records: Any,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
    model: RecordModel,
    tol: float,
) -> float:
    """SE of alpha from the curvature of the profile relaxed log-likelihood.

    Second difference of max_theta log L*(alpha, theta) at alpha_hat +- h
    (one-sided near the bounds), h = 2 x the theta-fixed SE: this accounts
    for the uncertainty in theta, which the theta-fixed curvature ignores.
    """
    upper = min(n0, n1)
    h = min(max(2.0 * fixed_se, 1.0), 0.25 * upper)
    a = fit.alpha
    if a - h < 0:
        points = (a, a + h, a + 2 * h)
    elif a + h >= upper:
        points = (a - 2 * h, a - h, a)
    else:
        points = (a - h, a, a + h)
    values = [
        fit.log_likelihood
        if x == a
        else _em_fixed_alpha(x, fit.t, records, s, w, n0, n1, model, tol, 1000)[1]
        for x in points
    ]
    curvature = (values[0] - 2 * values[1] + values[2]) / (h * h)
    if not np.isfinite(curvature) or curvature >= 0:
        return float("inf")
    return float(1.0 / np.sqrt(-curvature))


def fit_swap_model(
    records: Any,
    swapped_class: np.ndarray,
    model: RecordModel,
    *,
    counts: np.ndarray | None = None,
    starts: Sequence[float] = (0.05, 0.2, 0.4),
    tol: float = 1e-6,
    max_iter: int = 1000,
    max_em_iter: int = 1,
    profile_se: bool = True,
    accelerate: bool = True,
    permutations: int = 199,
    identification_level: float = 0.05,
    random_state: RandomState = 0,
    progress: Callable[[int, int], None] | None = None,
    identify: bool = True,
) -> dict[str, Any]:
    """Algorithm 1 on already encoded records: the numeric core of :func:`estimate_swap_count`.

    ``counts`` gives the multiplicity of each row (identical records merged).
    Returns a dict with ``alpha``, ``parameters``, ``t``, ``log_lik`` (rows x
    2), ``iterations``, ``em_iterations``, ``converged``, ``log_likelihood``,
    ``standard_error``, ``fixed_theta_standard_error``, ``starts``,
    ``identifiability`` (an :class:`IdentifiabilityCheck`; None with
    ``identify=False``, as for the re-swap calibration's estimates) and
    ``n0``, ``n1``.
    """
    permutations = check_int(permutations, "permutations", minimum=0)
    identification_level = _check_level(identification_level)
    if 0 < permutations and 1.0 / (permutations + 1) >= identification_level:
        raise ParameterError(
            f"permutations = {permutations} cannot give a p-value below identification_level "
            f"= {identification_level:g} (the smallest is 1 / (permutations + 1)); give at "
            f"least {int(np.floor(1.0 / identification_level))} permutations"
        )
    rng = check_random_state(random_state)
    df = model.class_parameter_count(records)
    if identify and df is None and not permutations:
        raise ParameterError(
            f"model {model!r} does not count its parameters (class_parameter_count returns "
            "None), so the association test has no chi-square p-value; give permutations > 0"
        )
    s = np.asarray(swapped_class, dtype=np.int8)
    w = np.ones(len(s)) if counts is None else np.asarray(counts, dtype=np.float64)
    n1 = float(w[s == 1].sum())
    n0 = float(w.sum()) - n1
    if n0 == 0 or n1 == 0:
        raise DataError(
            f"the swap attribute takes one value only (n0 = {n0:g}, n1 = {n1:g}); a swap "
            "cannot change it and alpha is not defined"
        )
    runs = [
        _run_accelerated(
            fraction * min(n0, n1), records, s, w, n0, n1, model, tol, max_iter, progress
        )
        if accelerate and max_em_iter == 1
        else _run_from(
            fraction * min(n0, n1),
            records,
            s,
            w,
            n0,
            n1,
            model,
            tol,
            max_iter,
            max_em_iter,
            progress,
        )
        for fraction in starts
    ]
    best = max(runs, key=lambda run: run.log_likelihood)
    _, p0, p1 = _scaled(best.log_lik)
    _, _, second = _relaxed_terms(best.alpha, p0, p1, None, s, w, n0, n1)
    fixed_se = float(1.0 / np.sqrt(-second)) if second < 0 else float("inf")
    se = (
        _profile_standard_error(best, fixed_se, records, s, w, n0, n1, model, tol)
        if profile_se and np.isfinite(fixed_se)
        else fixed_se
    )
    identifiability = (
        _identifiability(
            best,
            runs,
            records,
            s,
            w,
            n0,
            n1,
            model,
            df,
            tol,
            permutations,
            identification_level,
            rng,
        )
        if identify
        else None
    )
    return {
        "alpha": best.alpha,
        "parameters": best.parameters,
        "t": best.t,
        "log_lik": best.log_lik,
        "iterations": sum(run.iterations for run in runs),
        "em_iterations": sum(run.em_iterations for run in runs),
        "converged": all(run.converged for run in runs),
        "log_likelihood": best.log_likelihood,
        "standard_error": se,
        "fixed_theta_standard_error": fixed_se,
        "starts": tuple((run.start, run.alpha, run.log_likelihood) for run in runs),
        "identifiability": identifiability,
        "n0": round(n0),
        "n1": round(n1),
    }


def _identifiability(
    best: _Fit,
    runs: Sequence[_Fit],
    records: Any,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
    model: RecordModel,
    df: int | None,
    tol: float,
    permutations: int,
    level: float,
    rng: np.random.Generator,
) -> IdentifiabilityCheck:
    """The association test and the latent-class comparison of :class:`IdentifiabilityCheck`.

    max_theta log L*(alpha*, theta) is found by (accelerated) EM at alpha*
    from the t of every run of Algorithm 1 (runs that ended at the same point
    counted once), keeping the largest. A latent-class likelihood has local
    maxima: on a placebo swap attribute beside seven Adult attributes, the
    run that ended nearest alpha* sat in a basin 100 log-likelihood units
    below the best one, and EM from it alone made the statistic 199 instead
    of 0.2.
    """
    statistic, df, asymptotic, permutation = _association_test(
        records, s, w, model, df, permutations, rng
    )
    alpha_star = n0 * n1 / (n0 + n1)
    distinct: list[_Fit] = []
    for run in sorted(runs, key=lambda run: -run.log_likelihood):
        if not any(
            abs(run.alpha - other.alpha) <= tol * (n0 + n1)
            and abs(run.log_likelihood - other.log_likelihood) <= 1e-6 * abs(other.log_likelihood)
            for other in distinct
        ):
            distinct.append(run)
    independence = max(
        _em_fixed_alpha_accelerated(alpha_star, run.t, records, s, w, n0, n1, model, tol, 1000)
        for run in distinct
    )
    return _judge_identifiability(
        association_statistic=statistic,
        degrees_of_freedom=df,
        asymptotic_p_value=asymptotic,
        permutations=permutations,
        permutation_p_value=permutation,
        independence_count=alpha_star,
        independence_log_likelihood=independence,
        latent_class_statistic=max(2.0 * (best.log_likelihood - independence), 0.0),
        level=level,
    )


def _merge_identical(
    frame: pd.DataFrame, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Records grouped by identical (r, s~): (row of each group, group of each row, counts).

    None when merging would not save at least half of the work.
    """
    keys = [frame[c] for c in frame.columns] + [pd.Series(s, index=frame.index)]
    groups = frame.groupby(keys, sort=False, observed=True, dropna=False).ngroup()
    codes = groups.to_numpy()
    unique = int(codes.max()) + 1 if len(codes) else 0
    if unique > len(codes) // 2:
        return None
    first = np.full(unique, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))
    return first, codes, np.bincount(codes, minlength=unique).astype(np.float64)


def estimate_swap_count(
    data: pd.DataFrame,
    swap_attribute: str,
    attributes: str | Sequence[str] | None = None,
    *,
    model: str | RecordModel = "naive-bayes",
    positive: Any | Iterable[Any] | None = None,
    starts: Sequence[float] = (0.05, 0.2, 0.4),
    tol: float = 1e-6,
    max_iter: int = 1000,
    max_em_iter: int = 1,
    profile_se: bool = True,
    accelerate: bool = True,
    permutations: int = 199,
    identification_level: float = 0.05,
    calibrate: bool = True,
    calibration_rates: Sequence[float] = DEFAULT_CALIBRATION_RATES,
    imbalance_threshold: float = 0.01,
    fit_level: float = 0.01,
    confidence: float = 0.95,
    random_state: RandomState = 0,
    progress: Callable[[int, int], None] | None = None,
) -> SwapCountEstimate:
    """Estimate the group swap count alpha of swapped data, with a verdict (Kifer 2015, Section 4.1).

    Parameters
    ----------
    data : DataFrame
        The released (swapped) microdata. Never modified.
    swap_attribute : str
        The column that was swapped (s~). Binary, or split into two groups
        with ``positive`` (Section 4.1.3).
    attributes : str or sequence of str, optional
        Non-swap attributes r the model uses. Default: every other column.
    model : "naive-bayes", "gaussian" or a RecordModel
        M_theta (Section 4.1; Example 4.2 for Naive Bayes).
    positive : value or iterable of values, optional
        Values of the swap attribute coded 1; needed when it takes more than
        two values.
    starts : sequence of float, default (0.05, 0.2, 0.4)
        Starting values of alpha as fractions of min(n0, n1). Algorithm 1
        starts at 0.05 only; when the two classes overlap strongly the relaxed
        likelihood can also have a local maximum near alpha = 0 (we met one on
        the Section 5.1 Gaussian data at alpha/N = 0.2), so by default the
        algorithm is also run from 0.2 and 0.4 and the run with the largest
        log L* is kept.
    tol : float, default 1e-6
        Convergence: no t_i moves by more than ``tol`` in the last EM step and
        alpha moves by at most ``tol * N``.
    max_iter : int, default 1000
        Cap on outer iterations (EM block + Newton block) per start.
    max_em_iter : int, default 1
        EM steps per block. Algorithm 1 runs EM until theta converges before
        each Newton block; a single step per block (an ECM schedule) reaches
        the same fixed point, where theta and alpha have both converged, in
        far fewer EM steps. Give e.g. 100 for the literal nesting.
    profile_se : bool, default True
        Standard error from the profile likelihood (theta re-fitted at
        alpha_hat +- h); otherwise the theta-fixed curvature of Lemma 4.1.
    accelerate : bool, default True
        With ``max_em_iter=1``, extrapolate the alternation by SQUAREM
        (Varadhan & Roland 2008); same fixed point, far fewer steps.
    permutations : int, default 199
        Random permutations of s~ for the association test of
        :class:`IdentifiabilityCheck` (each costs one M step); 0 uses the
        chi-square p-value instead (not robust to attributes correlated
        under the model, and unavailable for a plug-in model that does not
        count its parameters).
    identification_level : float, default 0.05
        Significance level of the two identifiability tests.
    calibrate : bool, default True
        Run the re-swap calibration (:mod:`sdckit.swaprate.calibration`):
        re-swap the released data at ``calibration_rates`` and estimate
        again, to see whether the estimator follows swaps of a known size
        (Sections 4.3.2, 5.4). It costs one estimate per rate, without the
        identifiability test and the profile standard error. Without it the
        verdict cannot be ``no_evidence``.
    calibration_rates : sequence of float, default (0.05, 0.1)
        The extra swap rates rho' of the calibration.
    imbalance_threshold : float, default 0.01
        Imbalance |A0 - A1| / N above which the verdict is ``unreliable``.
    fit_level : float, default 0.01
        Significance level of the model fit check
        (:mod:`sdckit.swaprate.fitcheck`).
    confidence : float, default 0.95
        Confidence level of the verdict's interval.
    random_state : None, int or numpy Generator, default 0
        Draws the permutations and the calibration's re-swaps. Fixed by
        default so that the same data always get the same verdict.
    progress : callable, optional
        ``progress(iteration, max_iter)`` after each outer iteration.

    Returns
    -------
    SwapCountEstimate
        The verdict first (``result.verdict.code``: ``estimated``,
        ``no_evidence``, ``unreliable`` or ``not_identified``; see
        :class:`~sdckit.swaprate.verdict.SwapVerdict`), then alpha, rho
        (Lemma 2.3), the fitted model, t_i, the imbalance |A0 - A1| / N
        (Section 4.1.4), the identifiability check, the model fit check, the
        calibration, iterations and convergence status. alpha is the
        maximiser of the relaxed likelihood whatever the verdict; only the
        verdict says whether it may be quoted.

    Notes
    -----
    Records identical in the attributes and the swap attribute share every
    t_i, so they are merged into one weighted row when that at least halves
    the work (typical of categorical data); the result is the same.
    """
    check_dataframe(data, min_rows=2)
    [swap_attribute] = check_columns(data, [swap_attribute], "swap_attribute")
    if attributes is None:
        attrs = [c for c in data.columns if c != swap_attribute]
    else:
        attrs = check_columns(data, as_sequence(attributes), "attributes")
    if not attrs:
        raise ParameterError("attributes is empty: the model needs at least one non-swap attribute")
    if swap_attribute in attrs:
        raise ParameterError(f"attributes must not include the swap attribute {swap_attribute!r}")
    _check_missing(data, attrs)
    starts = _check_starts(starts)
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    max_em_iter = check_int(max_em_iter, "max_em_iter", minimum=1)
    rates = check_calibration_rates(calibration_rates) if calibrate else ()
    imbalance_threshold = check_positive(imbalance_threshold, "imbalance_threshold")
    fit_level = check_fraction(fit_level, "fit_level", open_low=True)
    confidence = check_fraction(confidence, "confidence", open_low=True)
    if confidence >= 1:
        raise ParameterError(f"confidence must be in (0, 1), got {confidence!r}")
    record_model = make_model(model)
    rng = check_random_state(random_state)
    options = {
        "starts": starts,
        "tol": tol,
        "max_iter": max_iter,
        "max_em_iter": max_em_iter,
        "accelerate": accelerate,
    }
    fit, s, groups = _fit_frame(
        data,
        swap_attribute,
        attrs,
        record_model,
        positive,
        profile_se=profile_se,
        permutations=permutations,
        identification_level=identification_level,
        random_state=rng,
        progress=progress,
        fit_level=fit_level,
        **options,
    )
    estimate = _estimate_from_fit(fit, data.index, s, swap_attribute, attrs, groups, record_model)
    calibration = None
    if calibrate:

        def re_estimate(frame: pd.DataFrame) -> float:
            return _fit_frame(
                frame,
                swap_attribute,
                attrs,
                record_model,
                positive,
                profile_se=False,
                permutations=0,
                identify=False,
                **options,
            )[0]["alpha"]

        calibration = reswap_calibration(
            data[[*attrs, swap_attribute]].reset_index(drop=True),  # positions, whatever the index
            swap_attribute,
            s,
            re_estimate,
            estimate.alpha,
            estimate.standard_error,
            extra_rates=rates,
            random_state=rng,
        )
    verdict = judge_swap_estimate(
        n0=estimate.n0,
        n1=estimate.n1,
        alpha=estimate.alpha,
        standard_error=estimate.standard_error,
        converged=estimate.converged,
        a0=estimate.a0,
        a1=estimate.a1,
        identified=estimate.identified,
        associated=estimate.identifiability.associated,
        identification_reason=estimate.identifiability.reason,
        imbalance=estimate.imbalance,
        imbalance_threshold=imbalance_threshold,
        fit=fit["fit_check"],
        calibration=calibration,
        confidence=confidence,
    )
    return replace(estimate, calibration=calibration, verdict=verdict)


def _check_missing(data: pd.DataFrame, attrs: Sequence[str]) -> None:
    """Refuse missing values, counting the records and naming every column that has some."""
    missing = data[list(attrs)].isna()
    per_column = missing.sum()
    if per_column.any():
        records = int(missing.any(axis=1).sum())
        listed = ", ".join(f"{c!r} ({int(v):,})" for c, v in per_column[per_column > 0].items())
        raise DataError(
            f"{records:,} records have a missing value in the attributes: {listed}; drop those "
            "records (--drop-missing on the command line), or code a missing value as a "
            "category of its own"
        )


def _fit_frame(
    data: pd.DataFrame,
    swap_attribute: str,
    attrs: Sequence[str],
    record_model: RecordModel,
    positive: Any,
    *,
    fit_level: float | None = None,
    **fit_options: Any,
) -> tuple[dict[str, Any], np.ndarray, tuple[tuple, tuple]]:
    """Code s~, merge identical records, run Algorithm 1 and (optionally) the model fit check."""
    s, groups = binary_swap_attribute(data[swap_attribute], positive)
    frame = data[list(attrs)]
    merged = _merge_identical(frame, s)
    if merged is None:
        records = record_model.encode(frame)
        counts = None
        fit = fit_swap_model(records, s, record_model, **fit_options)
        row_s = s
    else:
        first, codes, counts = merged
        records = record_model.encode(frame.iloc[first])
        row_s = s[first]
        fit = fit_swap_model(records, row_s, record_model, counts=counts, **fit_options)
    fit["fit_check"] = (
        model_fit_check(
            record_model,
            fit["parameters"],
            records,
            row_s,
            fit["alpha"],
            counts=counts,
            level=fit_level,
        )
        if fit_level is not None
        else None
    )
    if merged is not None:
        fit["t"] = fit["t"][codes]
        fit["log_lik"] = fit["log_lik"][codes]
    return fit, s, groups


def _check_starts(starts: Sequence[float]) -> tuple[float, ...]:
    values = tuple(as_sequence(starts))
    if not values:
        raise ParameterError("starts is empty: give at least one starting fraction, e.g. (0.05,)")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
            raise ParameterError(f"starts must be fractions of min(n0, n1) in (0, 1), got {v!r}")
    return tuple(float(v) for v in values)


def _estimate_from_fit(
    fit: dict[str, Any],
    index: pd.Index,
    s: np.ndarray,
    swap_attribute: str,
    attrs: Sequence[str],
    groups: tuple[tuple, tuple],
    model: RecordModel,
) -> SwapCountEstimate:
    n0, n1 = fit["n0"], fit["n1"]
    n = n0 + n1
    t = fit["t"]
    a0 = float(t[s == 0].sum())
    a1 = float(t[s == 1].sum())
    return SwapCountEstimate(
        group_swap_count=float(fit["alpha"]),
        rho=swap_rate_from_count(fit["alpha"], n0, n1),
        standard_error=fit["standard_error"],
        fixed_theta_standard_error=fit["fixed_theta_standard_error"],
        n=n,
        n0=n0,
        n1=n1,
        swap_attribute=swap_attribute,
        attributes=tuple(attrs),
        groups=groups,
        model=model,
        parameters=fit["parameters"],
        change_probabilities=pd.Series(t, index=index, name="change_probability"),
        a0=a0,
        a1=a1,
        imbalance=abs(a0 - a1) / n,
        iterations=fit["iterations"],
        em_iterations=fit["em_iterations"],
        converged=fit["converged"],
        log_likelihood=fit["log_likelihood"],
        starts=fit["starts"],
        identifiability=fit["identifiability"],
        record_log_likelihoods=fit["log_lik"],
        swapped_class=s,
        fit_check=fit["fit_check"],
    )
