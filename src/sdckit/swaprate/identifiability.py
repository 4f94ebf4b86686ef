"""Do the attributes identify the group swap count? (Our addition to Kifer (2015), Section 4.1.)

Algorithm 1 (:func:`~sdckit.swaprate.gsc.estimate_swap_count`) assumes that
the attributes r predict the swap attribute s. This module holds the test
that checks it: the association of the released swap attribute with the
attributes (a likelihood-ratio statistic with a permutation p-value) and the
gain of the fit over the same model at alpha* = n0 n1 / N, where it is a
latent-class model of the attributes that ignores the swap attribute. The
derivation is in :class:`IdentifiabilityCheck`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sdckit._results import FrozenResult
from sdckit._validation import check_fraction
from sdckit.errors import ParameterError
from sdckit.swaprate.likelihood import AlgorithmRun, RelaxedProblem

__all__ = ["NOT_IDENTIFIED_CONSEQUENCE", "IdentifiabilityCheck"]


@dataclass(frozen=True)
class IdentifiabilityCheck(FrozenResult):
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
        return judge_identifiability(
            association_statistic=self.association_statistic,
            degrees_of_freedom=self.degrees_of_freedom,
            asymptotic_p_value=self.asymptotic_p_value,
            permutations=self.permutations,
            permutation_p_value=self.permutation_p_value,
            independence_count=self.independence_count,
            independence_log_likelihood=self.independence_log_likelihood,
            latent_class_statistic=self.latent_class_statistic,
            level=check_identification_level(level),
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


def check_identification_level(level: float) -> float:
    value = check_fraction(level, "identification_level", open_low=True)
    if value >= 1:
        raise ParameterError(f"identification_level must be in (0, 1), got {level!r}")
    return value


def judge_identifiability(
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
    problem: RelaxedProblem,
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
    records, s, w, model = problem.records, problem.s, problem.w, problem.model
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


def identifiability_test(
    problem: RelaxedProblem,
    best: AlgorithmRun,
    runs: Sequence[AlgorithmRun],
    *,
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
    statistic, df, asymptotic, permutation = _association_test(problem, df, permutations, rng)
    n0, n1 = problem.n0, problem.n1
    alpha_star = n0 * n1 / (n0 + n1)
    distinct: list[AlgorithmRun] = []
    for run in sorted(runs, key=lambda run: -run.log_likelihood):
        if not any(
            abs(run.alpha - other.alpha) <= tol * (n0 + n1)
            and abs(run.log_likelihood - other.log_likelihood) <= 1e-6 * abs(other.log_likelihood)
            for other in distinct
        ):
            distinct.append(run)
    independence = max(
        problem.em_fixed_alpha_accelerated(alpha_star, run.t, tol, 1000) for run in distinct
    )
    return judge_identifiability(
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
