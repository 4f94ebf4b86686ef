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

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
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
from sdckit.swaprate.identifiability import (
    IdentifiabilityCheck,
    check_identification_level,
    identifiability_test,
)
from sdckit.swaprate.likelihood import (
    Progress,
    RelaxedProblem,
    relaxed_log_likelihood,
    scaled_densities,
)
from sdckit.swaprate.models import RecordModel, make_model
from sdckit.swaprate.verdict import SwapVerdict, judge_swap_estimate

# IdentifiabilityCheck and relaxed_log_likelihood live in their own modules
# (identifiability.py, likelihood.py) and stay importable from here.
__all__ = [
    "IdentifiabilityCheck",
    "SwapCountEstimate",
    "SwapModelFit",
    "binary_swap_attribute",
    "estimate_swap_count",
    "fit_swap_model",
    "relaxed_log_likelihood",
    "swap_rate_from_count",
]


def swap_rate_from_count(alpha: float, n0: float, n1: float) -> float:
    """rho from alpha by Lemma 2.3: rho_hat = alpha (N - 1) / (2 n0 n1) (Kifer 2015).

    Parameters
    ----------
    alpha : float
        Group swap count.
    n0, n1 : float
        Records in group 0 and group 1 (N = n0 + n1).

    Returns
    -------
    float
        The swap rate rho.
    """
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


def class_probabilities(log_lik: np.ndarray, n0: float, n1: float) -> np.ndarray:
    """M_theta(s = a | r_i) from log P_theta(r_i | s = a), with P(s = 0) = n0 / N (Bayes' rule).

    Parameters
    ----------
    log_lik : ndarray, shape (N, 2)
        log P_theta(r_i | s = a) for a = 0, 1.
    n0, n1 : float
        Records with s~ = 0 and 1: the prior class sizes.

    Returns
    -------
    ndarray, shape (N, 2)
        Each row sums to 1.
    """
    scores = log_lik + np.log(np.array([n0, n1], dtype=float) / (n0 + n1))
    scores = scores - scores.max(axis=1, keepdims=True)
    probs = np.exp(scores)
    return probs / probs.sum(axis=1, keepdims=True)


class GroupSwapCountAliases:
    """alpha and alpha / N, read the same way from the results of Algorithm 1 and Consensus."""

    group_swap_count: float
    n: int

    @property
    def alpha(self) -> float:
        """Alias of :attr:`group_swap_count`."""
        return self.group_swap_count

    @property
    def group_swap_rate(self) -> float:
        """alpha / N."""
        return self.group_swap_count / self.n


@dataclass(frozen=True)
class SwapCountEstimate(GroupSwapCountAliases, FrozenResult):
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
    verdict : SwapVerdict
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
    verdict: SwapVerdict
    fit_check: ModelFitCheck | None = None
    calibration: SwapCalibration | None = None

    @property
    def identified(self) -> bool:
        """False when the attributes do not identify alpha (see :attr:`identifiability`)."""
        return self.identifiability.identified

    def class_probabilities(self) -> np.ndarray:
        """M_theta(s = a | r_i), shape (N, 2), with P(s = 0) = n0 / N (Algorithm 1's M step).

        Returns
        -------
        ndarray, shape (N, 2)
            Each row sums to 1.
        """
        return class_probabilities(self.record_log_likelihoods, self.n0, self.n1)

    def summary(self) -> str:
        """The verdict first, then the estimate, the diagnostics and convergence, for a person."""
        status = "converged" if self.converged else "NOT converged"
        lines = [self.verdict.line()]
        lines += [f"  note: {note}" for note in self.verdict.notes]
        lines += [
            f"Algorithm 1 (gsc), model {self.model!r}, swap attribute {self.swap_attribute!r}",
            f"  groups: 0 = {list(self.groups[0])}, 1 = {list(self.groups[1])}",
            f"  N = {self.n} (n0 = {self.n0}, n1 = {self.n1})",
        ]
        lines += estimate_lines(
            self.verdict, self.group_swap_count, self.standard_error, self.n0, self.n1
        )
        lines.append(
            f"  estimated changes: 0->1 A1 = {count_text(self.a1, self.n0)}, "
            f"1->0 A0 = {count_text(self.a0, self.n1)}; imbalance |A0-A1|/N = "
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


def count_text(value: float, limit: float) -> str:
    """A count, or words when it exceeds the records that could have changed (impossible)."""
    if value > limit:
        return f"more than the {limit:,.0f} records it could be (impossible)"
    return f"{value:,.1f}"


def estimate_lines(
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


#: Old dict keys of :func:`fit_swap_model` whose attribute has another name.
_RENAMED_KEYS = {"t": "change_probabilities", "log_lik": "record_log_likelihoods"}


@dataclass(frozen=True)
class SwapModelFit(FrozenResult):
    """Result of :func:`fit_swap_model`: Algorithm 1 on encoded records (Kifer 2015, Section 4.1).

    The numeric core of :class:`SwapCountEstimate`, without the verdict: rows
    may stand for several identical records (``counts``), and no model fit
    check or re-swap calibration has been run.

    Attributes
    ----------
    alpha : float
        The maximiser of the relaxed likelihood over the runs.
    parameters : object
        The fitted theta at alpha.
    change_probabilities : ndarray, shape (rows,)
        t_i, the probability that row i's swap attribute was changed.
    record_log_likelihoods : ndarray, shape (rows, 2)
        log P_theta(r_i | s = a) at the estimate.
    iterations, em_iterations : int
        Outer iterations and EM steps, summed over the runs.
    converged : bool
        Every run converged.
    log_likelihood : float
        log L* at the estimate.
    standard_error, fixed_theta_standard_error : float
        Profile-likelihood SE (or the theta-fixed one when not asked for)
        and the theta-fixed SE of Lemma 4.1.
    starts : tuple of (start, alpha, log L*)
        Every run of Algorithm 1.
    identifiability : IdentifiabilityCheck or None
        None when computed with ``identify=False``.
    n0, n1 : int
        Records with s~ = 0 and 1 (counting multiplicities).
    """

    alpha: float
    parameters: Any
    change_probabilities: np.ndarray = field(repr=False)
    record_log_likelihoods: np.ndarray = field(repr=False)
    iterations: int
    em_iterations: int
    converged: bool
    log_likelihood: float
    standard_error: float
    fixed_theta_standard_error: float
    starts: tuple[tuple[float, float, float], ...]
    identifiability: IdentifiabilityCheck | None
    n0: int
    n1: int

    def summary(self) -> str:
        """alpha, its standard errors, convergence and the identifiability check."""
        status = "converged" if self.converged else "NOT converged"
        lines = [
            f"Algorithm 1 on encoded records: N = {self.n0 + self.n1} "
            f"(n0 = {self.n0}, n1 = {self.n1})",
            f"  maximiser of the relaxed likelihood alpha = {self.alpha:,.1f} "
            f"(SE {self.standard_error:,.1f}; theta fixed {self.fixed_theta_standard_error:,.1f})",
            f"  {status} after {self.iterations} iterations ({self.em_iterations} EM steps), "
            f"log L* = {self.log_likelihood:.2f}",
        ]
        if self.identifiability is not None:
            lines.append(self.identifiability.summary())
        return "\n".join(lines)

    def __getitem__(self, key: str) -> Any:
        """Dict-style access, as when :func:`fit_swap_model` returned a dict (deprecated)."""
        name = _RENAMED_KEYS.get(key, key)
        if name not in {f.name for f in fields(self)}:
            raise KeyError(key)
        warnings.warn(
            f"fit_swap_model(...)[{key!r}] is deprecated and will be removed in the next "
            f"release; use the attribute .{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, name)


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
    progress: Progress | None = None,
    identify: bool = True,
) -> SwapModelFit:
    """Algorithm 1 on already encoded records: the numeric core of :func:`estimate_swap_count`.

    Parameters
    ----------
    records : object
        The records as ``model.encode`` returns them.
    swapped_class : ndarray of 0/1
        The released swap attribute s~, one per row.
    model : RecordModel
        M_theta.
    counts : ndarray, optional
        Multiplicity of each row (identical records merged); default 1 each.
    starts, tol, max_iter, max_em_iter, profile_se, accelerate : optional
        As in :func:`estimate_swap_count`.
    permutations, identification_level : optional
        The identifiability check, as in :func:`estimate_swap_count`.
    random_state : None, int or numpy Generator, default 0
        Draws the permutations.
    progress : callable, optional
        ``progress(iteration, max_iter)`` after each outer iteration.
    identify : bool, default True
        Run the identifiability check (False for the re-swap calibration's
        estimates).

    Returns
    -------
    SwapModelFit
        alpha, theta, t, the standard errors, every run and the
        identifiability check. Indexing it like the dict this function
        returned before (``fit["alpha"]``) still works for one release, with
        a ``DeprecationWarning``.
    """
    permutations = check_int(permutations, "permutations", minimum=0)
    identification_level = check_identification_level(identification_level)
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
    problem = RelaxedProblem(records, s, w, n0, n1, model)
    runs = [
        problem.run_accelerated(fraction * problem.upper, tol, max_iter, progress)
        if accelerate and max_em_iter == 1
        else problem.run_from(fraction * problem.upper, tol, max_iter, max_em_iter, progress)
        for fraction in starts
    ]
    best = max(runs, key=lambda run: run.log_likelihood)
    _, p0, p1 = scaled_densities(best.log_lik)
    _, _, second = problem.terms(best.alpha, p0, p1, None)
    fixed_se = float(1.0 / np.sqrt(-second)) if second < 0 else float("inf")
    se = (
        problem.profile_standard_error(best, fixed_se, tol)
        if profile_se and np.isfinite(fixed_se)
        else fixed_se
    )
    identifiability = (
        identifiability_test(
            problem,
            best,
            runs,
            df=df,
            tol=tol,
            permutations=permutations,
            level=identification_level,
            rng=rng,
        )
        if identify
        else None
    )
    return SwapModelFit(
        alpha=best.alpha,
        parameters=best.parameters,
        change_probabilities=best.t,
        record_log_likelihoods=best.log_lik,
        iterations=sum(run.iterations for run in runs),
        em_iterations=sum(run.em_iterations for run in runs),
        converged=all(run.converged for run in runs),
        log_likelihood=best.log_likelihood,
        standard_error=se,
        fixed_theta_standard_error=fixed_se,
        starts=tuple((run.start, run.alpha, run.log_likelihood) for run in runs),
        identifiability=identifiability,
        n0=round(n0),
        n1=round(n1),
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
    progress: Progress | None = None,
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
    options: dict[str, Any] = {
        "starts": starts,
        "tol": tol,
        "max_iter": max_iter,
        "max_em_iter": max_em_iter,
        "accelerate": accelerate,
    }
    fitted = fit_frame(
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
    calibration = None
    if calibrate:

        def re_estimate(frame: pd.DataFrame) -> float:
            return fit_frame(
                frame,
                swap_attribute,
                attrs,
                record_model,
                positive,
                profile_se=False,
                permutations=0,
                identify=False,
                **options,
            ).fit.alpha

        calibration = reswap_calibration(
            data[[*attrs, swap_attribute]].reset_index(drop=True),  # positions, whatever the index
            swap_attribute,
            fitted.swapped_class,
            re_estimate,
            fitted.fit.alpha,
            fitted.fit.standard_error,
            extra_rates=rates,
            random_state=rng,
        )
    return _estimate_from_fit(
        fitted,
        data.index,
        swap_attribute,
        attrs,
        record_model,
        calibration=calibration,
        imbalance_threshold=imbalance_threshold,
        confidence=confidence,
    )


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


class _FrameFit(NamedTuple):
    """Algorithm 1 on a data frame: the fit (one row per record), its checks and s~."""

    fit: SwapModelFit
    fit_check: ModelFitCheck | None
    swapped_class: np.ndarray
    groups: tuple[tuple[Any, ...], tuple[Any, ...]]


def fit_frame(
    data: pd.DataFrame,
    swap_attribute: str,
    attrs: Sequence[str],
    record_model: RecordModel,
    positive: Any,
    *,
    fit_level: float | None = None,
    **fit_options: Any,
) -> _FrameFit:
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
    fit_check = (
        model_fit_check(
            record_model,
            fit.parameters,
            records,
            row_s,
            fit.alpha,
            counts=counts,
            level=fit_level,
        )
        if fit_level is not None
        else None
    )
    if merged is not None:
        fit = replace(
            fit,
            change_probabilities=fit.change_probabilities[codes],
            record_log_likelihoods=fit.record_log_likelihoods[codes],
        )
    return _FrameFit(fit, fit_check, s, groups)


def _check_starts(starts: Sequence[float]) -> tuple[float, ...]:
    values = tuple(as_sequence(starts))
    if not values:
        raise ParameterError("starts is empty: give at least one starting fraction, e.g. (0.05,)")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
            raise ParameterError(f"starts must be fractions of min(n0, n1) in (0, 1), got {v!r}")
    return tuple(float(v) for v in values)


def _estimate_from_fit(
    fitted: _FrameFit,
    index: pd.Index,
    swap_attribute: str,
    attrs: Sequence[str],
    model: RecordModel,
    *,
    calibration: SwapCalibration | None,
    imbalance_threshold: float,
    confidence: float,
) -> SwapCountEstimate:
    """The estimate of a fit on every record, with its verdict."""
    fit, s = fitted.fit, fitted.swapped_class
    n0, n1 = fit.n0, fit.n1
    n = n0 + n1
    t = fit.change_probabilities
    a0 = float(t[s == 0].sum())
    a1 = float(t[s == 1].sum())
    identifiability = fit.identifiability
    if identifiability is None:  # fit_frame identifies unless told not to
        raise RuntimeError("the identifiability check was not run")
    verdict = judge_swap_estimate(
        n0=n0,
        n1=n1,
        alpha=fit.alpha,
        standard_error=fit.standard_error,
        converged=fit.converged,
        a0=a0,
        a1=a1,
        identified=identifiability.identified,
        associated=identifiability.associated,
        identification_reason=identifiability.reason,
        imbalance=abs(a0 - a1) / n,
        imbalance_threshold=imbalance_threshold,
        fit=fitted.fit_check,
        calibration=calibration,
        confidence=confidence,
    )
    return SwapCountEstimate(
        group_swap_count=float(fit.alpha),
        rho=swap_rate_from_count(fit.alpha, n0, n1),
        standard_error=fit.standard_error,
        fixed_theta_standard_error=fit.fixed_theta_standard_error,
        n=n,
        n0=n0,
        n1=n1,
        swap_attribute=swap_attribute,
        attributes=tuple(attrs),
        groups=fitted.groups,
        model=model,
        parameters=fit.parameters,
        change_probabilities=pd.Series(t, index=index, name="change_probability"),
        a0=a0,
        a1=a1,
        imbalance=abs(a0 - a1) / n,
        iterations=fit.iterations,
        em_iterations=fit.em_iterations,
        converged=fit.converged,
        log_likelihood=fit.log_likelihood,
        starts=fit.starts,
        identifiability=identifiability,
        record_log_likelihoods=fit.record_log_likelihoods,
        swapped_class=s,
        verdict=verdict,
        fit_check=fitted.fit_check,
        calibration=calibration,
    )
