"""The Consensus algorithm of Kifer (2015), Section 4.2, Algorithm 2 and Lemma 4.3.

Algorithm 1 is only as good as its model: a misspecified M_theta gives a
biased alpha. Consensus replaces the parametric assumption by an
independence one. Split the non-swap attributes into rL and rR whose models
make uncorrelated predictions (eq. 17); train M_L on (rL, s~) and M_R on
(rR, s~) with Algorithm 1; with ML_i(a) = M_L(s = a | rL_i) compute over the
released data::

    A = sum_i ML_i(s~_i)   MR_i(s~_i)        (about E[Ecc])
    B = sum_i ML_i(s~_i)   MR_i(1 - s~_i)    (about E[Ecw])
    C = sum_i ML_i(1-s~_i) MR_i(s~_i)        (about E[Ewc])
    D = sum_i ML_i(1-s~_i) MR_i(1 - s~_i)    (about E[Eww])

With p = 2 alpha / N, eqs. 13-16 (the swap mixes the correct and wrong
agreements) and 18-21 (independence) give (A D - B C) / (N (A + D - B - C))
= p (1 - p); the root with p < 1/2 (fewer than half the records perturbed)
is Lemma 4.3::

    alpha = N/4 (1 - sqrt(1 - 4 (A D - B C) / (N (A + D - B - C))))

Lemma 4.4 (correlated halves). Its printed statement is garbled; derived
again here from eqs. 13-16, with a, b the two models' mean probability of a
record's true class on the original data and beta the per-record correlation
of their predictions (mean of M_L(s) M_R(s) = a b + beta), the swapped data's
agreement sums per record satisfy::

    (A + D - B - C) / N = gamma/N^2 + 4 beta,    gamma/N^2 = (2a - 1)(2b - 1)
    (A D - B C) / N^2   = p (1 - p) gamma/N^2 + beta

so the Consensus estimate equals the true alpha when beta = 0 and is biased
otherwise, as the Lemma says. Solved for the swap: with
Q = ((A - D)^2 - (B - C)^2) / N^2, which equals gamma/N^2 (1 - 2p)^2 whatever
beta is, ``alpha(beta) = N/4 (1 - sqrt(Q / ((A + D - B - C)/N - 4 beta)))``.
The four sums (which add up to N) determine only Q and gamma/N^2 + 4 beta:
beta and the swap cannot be told apart from the released data alone, so no
verdict can correct for it. :func:`correlation_sensitivity` shows instead
what alpha each beta implies, the beta that would explain the agreement with
no swap at all, and the beta that would reconcile Consensus with each half's
own Algorithm 1 estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import as_sequence, check_columns, check_dataframe, check_random_state
from sdckit.errors import InfeasibleError, ParameterError
from sdckit.swaprate.calibration import (
    DEFAULT_CALIBRATION_RATES,
    SwapCalibration,
    check_calibration_rates,
    reswap_calibration,
)
from sdckit.swaprate.gsc import (
    GroupSwapCountAliases,
    SwapCountEstimate,
    class_probabilities,
    estimate_lines,
    estimate_swap_count,
    fit_frame,
    swap_rate_from_count,
)
from sdckit.swaprate.models import RecordModel, make_model
from sdckit.swaprate.verdict import SwapVerdict, judge_swap_estimate

__all__ = [
    "ConsensusEstimate",
    "CorrelationSensitivity",
    "agreement_sums",
    "consensus_closed_form",
    "consensus_swap_count",
    "correlation_sensitivity",
]


def agreement_sums(
    left_probabilities: np.ndarray, right_probabilities: np.ndarray, swapped_class: np.ndarray
) -> tuple[float, float, float, float]:
    """A, B, C, D of Algorithm 2 (lines 5-8) from the two models' class probabilities.

    Parameters
    ----------
    left_probabilities, right_probabilities : ndarray, shape (N, 2)
        M_L(s = a | rL_i) and M_R(s = a | rR_i).
    swapped_class : ndarray of 0/1
        The released swap attribute s~.

    Returns
    -------
    (A, B, C, D) : tuple of float
        The agreement sums: both models right, left right and right wrong,
        left wrong and right right, both wrong.
    """
    s = np.asarray(swapped_class).astype(np.intp)
    rows = np.arange(len(s))
    left_right = left_probabilities[rows, s]  # ML_i(s~_i)
    left_wrong = left_probabilities[rows, 1 - s]
    right_right = right_probabilities[rows, s]
    right_wrong = right_probabilities[rows, 1 - s]
    return (
        float(left_right @ right_right),
        float(left_right @ right_wrong),
        float(left_wrong @ right_right),
        float(left_wrong @ right_wrong),
    )


def consensus_closed_form(a: float, b: float, c: float, d: float, n: int) -> float:
    """Lemma 4.3: alpha from the agreement sums A, B, C, D over N records.

    A negative value (a radicand above 1: A D < B C, sampling noise when
    nothing was swapped) is returned as 0.

    Parameters
    ----------
    a, b, c, d : float
        The agreement sums A, B, C, D of :func:`agreement_sums`.
    n : int
        Number of records N.

    Returns
    -------
    float
        alpha = N/4 (1 - sqrt(1 - 4 (A D - B C) / (N (A + D - B - C)))), at least 0.

    Raises
    ------
    InfeasibleError
        When A + D - B - C vanishes (the two models carry no signal about s,
        so their agreement says nothing about the swap), or when the square
        root's argument is negative (the agreements are inconsistent with any
        swap of fewer than half the records, e.g. strongly correlated models).
    """
    signal = a + d - b - c
    if abs(signal) <= 1e-9 * n:
        raise InfeasibleError(
            f"Consensus: A + D - B - C = {signal:.3g} vanishes, so the denominator of Lemma 4.3 "
            "is zero: the left and right models carry no signal about the swap attribute "
            "(their predictions do not depend on it). Choose attributes that predict it."
        )
    product = (a * d - b * c) / (n * signal)  # = p (1 - p) under eqs. 13-21
    radicand = 1.0 - 4.0 * product
    if radicand < 0:
        raise InfeasibleError(
            f"Consensus: the square root's argument 1 - 4 (AD - BC) / (N (A + D - B - C)) = "
            f"{radicand:.3g} is negative, so no swap of fewer than half the records explains "
            "the models' agreement; the left and right attributes are probably correlated "
            "given the swap attribute (eq. 17 fails). Choose another split."
        )
    # Sampling noise can make A D - B C slightly negative when nothing was
    # swapped; alpha is a count, so the estimate is bounded below by 0.
    return float(max(n / 4.0 * (1.0 - np.sqrt(radicand)), 0.0))


@dataclass(frozen=True)
class CorrelationSensitivity(FrozenResult):
    """Kifer (2015), Lemma 4.4 solved for alpha: what each correlation implies.

    Attributes
    ----------
    n : int
        Number of records N.
    signal : float
        (A + D - B - C) / N = gamma/N^2 + 4 beta.
    q : float
        ((A - D)^2 - (B - C)^2) / N^2 = gamma/N^2 (1 - 2p)^2.
    beta_no_swap : float
        The correlation that explains all of the agreement with no swap
        (alpha = 0); any larger beta is inconsistent with the data.
    reconciling : mapping
        For each half's own Algorithm 1 estimate (``"left"``, ``"right"``),
        the beta under which Consensus agrees with it (NaN when none does).
    """

    n: int
    signal: float
    q: float
    beta_no_swap: float
    reconciling: dict[str, float]

    def alpha_at(self, beta: float) -> float:
        """The swap count the observed agreement implies if the correlation is ``beta``.

        Parameters
        ----------
        beta : float
            Per-record correlation of the two halves' predictions on the
            original data (0: the Consensus assumption, eq. 17).

        Returns
        -------
        float
            alpha(beta); NaN when beta exceeds :attr:`beta_no_swap` or makes
            gamma/N^2 = signal - 4 beta non-positive.
        """
        margin = self.signal - 4.0 * float(beta)
        if margin <= 0 or self.q < 0 or self.q > margin * (1 + 1e-12):
            return float("nan")
        return float(self.n / 4.0 * (1.0 - np.sqrt(min(self.q / margin, 1.0))))

    def beta_for(self, alpha: float) -> float:
        """The correlation under which Consensus would be right if alpha were ``alpha``.

        Parameters
        ----------
        alpha : float
            A swap count, 0 <= alpha < N/4.

        Returns
        -------
        float
            beta = (signal - Q / (1 - 4 alpha / N)^2) / 4; NaN outside the range.
        """
        return _beta_for(self.signal, self.q, self.n, alpha)

    def summary(self) -> str:
        """What the estimate would be under a few correlations."""
        steps = [b for b in (-0.01, -0.005, 0.0, 0.005, 0.01) if b < self.beta_no_swap]
        shown = ", ".join(f"beta {b:+.3f}: {self.alpha_at(b):,.0f}" for b in steps)
        lines = [
            "  Lemma 4.4 (Kifer 2015): Consensus assumes the halves' predictions are "
            "uncorrelated (beta = 0); the released data cannot tell a correlation from a swap",
            f"    alpha if the correlation is {shown}; beta {self.beta_no_swap:+.4f} would "
            "explain the agreement with no swap",
        ]
        parts = [
            f"the {name} half's own estimate needs beta {value:+.4f}"
            for name, value in self.reconciling.items()
            if np.isfinite(value)
        ]
        if parts:
            lines.append("    to agree with Algorithm 1: " + "; ".join(parts))
        return "\n".join(lines)


def correlation_sensitivity(
    agreement: tuple[float, float, float, float],
    n: int,
    *,
    half_estimates: dict[str, float] | None = None,
) -> CorrelationSensitivity:
    """Lemma 4.4 of Kifer (2015) for the data at hand (module docstring).

    Parameters
    ----------
    agreement : (A, B, C, D)
        The agreement sums of :func:`agreement_sums`.
    n : int
        Number of records N.
    half_estimates : mapping, optional
        Other estimates of alpha (e.g. each half's Algorithm 1 estimate), by
        name, to find the beta that reconciles Consensus with each.

    Returns
    -------
    CorrelationSensitivity
        alpha as a function of beta, and the betas of interest.
    """
    a, b, c, d = (float(x) / n for x in agreement)
    signal = a + d - b - c
    q = (a - d) ** 2 - (b - c) ** 2
    return CorrelationSensitivity(
        n=int(n),
        signal=signal,
        q=q,
        beta_no_swap=(signal - q) / 4.0,
        reconciling={
            name: _beta_for(signal, q, n, value) for name, value in (half_estimates or {}).items()
        },
    )


def _beta_for(signal: float, q: float, n: int, alpha: float) -> float:
    p = 2.0 * float(alpha) / n
    if not 0.0 <= p < 0.5:
        return float("nan")
    return float((signal - q / (1.0 - 2.0 * p) ** 2) / 4.0)


@dataclass(frozen=True)
class ConsensusEstimate(GroupSwapCountAliases, FrozenResult):
    """Result of :func:`consensus_swap_count` (Kifer 2015, Algorithm 2).

    Attributes
    ----------
    group_swap_count : float
        alpha from Lemma 4.3.
    rho : float
        Lemma 2.3: alpha (N - 1) / (2 n0 n1).
    perturbed_fraction : float
        p = 2 alpha / N, the share of records whose s changed.
    agreement : (A, B, C, D)
        The sums of Algorithm 2, lines 5-8.
    left, right : SwapCountEstimate
        Algorithm 1 on rL and on rR alone (their own alpha, imbalance and
        identifiability check).
    n, n0, n1 : int
    swap_attribute : str
    left_attributes, right_attributes : tuple of str
    standard_error : float
        Delta-method standard error of alpha from the per-record terms of A,
        B, C, D (records independent; the halves' fitted models held fixed,
        so it is a lower bound).
    calibration : SwapCalibration or None
        The re-swap calibration of the Consensus estimate (Sections 4.3.2,
        5.4; None when skipped).
    sensitivity : CorrelationSensitivity or None
        Lemma 4.4: the alpha each correlation between the halves implies.
    verdict : SwapVerdict
        What may be said (``verdict.code``); read it first.
    """

    group_swap_count: float
    rho: float
    perturbed_fraction: float
    agreement: tuple[float, float, float, float]
    left: SwapCountEstimate
    right: SwapCountEstimate
    n: int
    n0: int
    n1: int
    swap_attribute: str
    left_attributes: tuple[str, ...]
    right_attributes: tuple[str, ...]
    verdict: SwapVerdict
    standard_error: float = float("nan")
    calibration: SwapCalibration | None = None
    sensitivity: CorrelationSensitivity | None = None

    @property
    def identified(self) -> bool:
        """Both halves identify the swap count (their :attr:`SwapCountEstimate.identifiability`).

        Consensus needs two models that each predict the swap attribute: a
        half without detectable signal has class probabilities that are
        latent-class posteriors unrelated to s, and the agreement sums then
        measure how the attributes' clusters correlate, not the swap.
        """
        return self.left.identified and self.right.identified

    @property
    def identification_reason(self) -> str:
        """Why the estimate is or is not identified, naming the failing half."""
        failing = [
            f"{name} half {list(fit.attributes)}: {fit.identifiability.reason}"
            for name, fit in (("left", self.left), ("right", self.right))
            if not fit.identified
        ]
        if not failing:
            return "both halves carry information about the swap attribute"
        return "; ".join(failing)

    def summary(self) -> str:
        """The consensus estimate beside the two Algorithm 1 estimates."""
        a, b, c, d = self.agreement
        lines = [
            self.verdict.line(),
            f"Consensus (Algorithm 2), swap attribute {self.swap_attribute!r}, N = {self.n}",
            f"  left  = {list(self.left_attributes)}",
            f"  right = {list(self.right_attributes)}",
        ]
        if not self.identified:
            lines.append(
                "  NOT IDENTIFIED: the swap count cannot be estimated from these attributes; "
                "the alpha and rho below are not estimates of it"
            )
        lines.append(f"  A = {a:.1f}, B = {b:.1f}, C = {c:.1f}, D = {d:.1f}")
        lines += estimate_lines(
            self.verdict, self.group_swap_count, self.standard_error, self.n0, self.n1
        )
        for name, fit in (("left", self.left), ("right", self.right)):
            check = fit.identifiability
            lines.append(
                f"  Algorithm 1 on {name} alone (an input of Consensus, not an estimate):"
                f" alpha = {fit.alpha:.1f} (imbalance {fit.imbalance:.4f}; association "
                f"p = {check.association_p_value:.3g}, latent-class p = "
                f"{check.latent_class_p_value:.3g}: "
                f"{'identified' if check.identified else 'NOT IDENTIFIED'})"
            )
        if self.calibration is not None:
            lines.append(self.calibration.summary())
        if self.sensitivity is not None:
            lines.append(self.sensitivity.summary())
        return "\n".join(lines)


def consensus_swap_count(
    data: pd.DataFrame,
    swap_attribute: str,
    left: str | Sequence[str],
    right: str | Sequence[str],
    *,
    model: str | RecordModel | tuple[str | RecordModel, str | RecordModel] = "naive-bayes",
    positive: Any | Iterable[Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    calibrate: bool = True,
    calibration_rates: Sequence[float] = DEFAULT_CALIBRATION_RATES,
    confidence: float = 0.95,
    **gsc_options: Any,
) -> ConsensusEstimate:
    """Estimate alpha by the Consensus algorithm (Kifer 2015, Section 4.2, Algorithm 2).

    Parameters
    ----------
    data : DataFrame
        The released (swapped) microdata. Never modified.
    swap_attribute : str
        The swapped column s~ (binary, or split with ``positive``).
    left, right : str or sequence of str
        The two disjoint attribute sets rL and rR, chosen (by domain
        knowledge) so that their models' predictions are uncorrelated given
        the record's class (eq. 17).
    model : model name or RecordModel, or a pair (left model, right model)
        M_theta for both halves (Naive Bayes by default).
    positive : optional
        Values of the swap attribute coded 1 (Section 4.1.3).
    progress : callable, optional
        Passed to both runs of Algorithm 1.
    calibrate : bool, default True
        Re-swap the released data at ``calibration_rates`` and run Consensus
        again, to see whether it follows swaps of a known size: Lemma 4.4
        shows that correlated halves bias it non-linearly, and Section 4.3.2
        proposes exactly this check. Costs two Consensus runs per rate
        (without identifiability tests).
    calibration_rates : sequence of float, default (0.05, 0.1)
    confidence : float, default 0.95
        Confidence level of the verdict's interval.
    **gsc_options
        Further options of :func:`~sdckit.swaprate.gsc.estimate_swap_count`
        (``tol``, ``starts``, ...).

    Returns
    -------
    ConsensusEstimate

    Raises
    ------
    InfeasibleError
        When Lemma 4.3 has no feasible solution (see
        :func:`consensus_closed_form`).
    """
    check_dataframe(data, min_rows=2)
    [swap_attribute] = check_columns(data, [swap_attribute], "swap_attribute")
    left_cols = check_columns(data, as_sequence(left), "left")
    right_cols = check_columns(data, as_sequence(right), "right")
    if not left_cols or not right_cols:
        raise ParameterError("left and right must each name at least one attribute")
    shared = sorted(set(left_cols) & set(right_cols))
    if shared:
        raise ParameterError(f"left and right must be disjoint; both contain {shared}")
    for name, cols in (("left", left_cols), ("right", right_cols)):
        if swap_attribute in cols:
            raise ParameterError(f"{name} must not include the swap attribute {swap_attribute!r}")
    if isinstance(model, tuple):
        if len(model) != 2:
            raise ParameterError("model as a tuple must be (left model, right model)")
        left_model, right_model = model
    else:
        left_model = right_model = model
    gsc_options.setdefault("profile_se", False)
    rates = check_calibration_rates(calibration_rates) if calibrate else ()
    rng = check_random_state(gsc_options.pop("random_state", 0))
    gsc_options["calibrate"] = False
    left_fit = estimate_swap_count(
        data,
        swap_attribute,
        left_cols,
        model=left_model,
        positive=positive,
        progress=progress,
        random_state=rng,
        **gsc_options,
    )
    right_fit = estimate_swap_count(
        data,
        swap_attribute,
        right_cols,
        model=right_model,
        positive=positive,
        progress=progress,
        random_state=rng,
        **gsc_options,
    )
    s = left_fit.swapped_class
    a, b, c, d = agreement_sums(left_fit.class_probabilities(), right_fit.class_probabilities(), s)
    n, n0, n1 = left_fit.n, left_fit.n0, left_fit.n1
    alpha = consensus_closed_form(a, b, c, d, n)
    se = _consensus_standard_error(
        left_fit.class_probabilities(), right_fit.class_probabilities(), s, n
    )
    calibration = None
    if calibrate:
        options = {
            k: v
            for k, v in gsc_options.items()
            if k in ("starts", "tol", "max_iter", "max_em_iter", "accelerate")
        }
        models = (make_model(left_model), make_model(right_model))

        def re_estimate(frame: pd.DataFrame) -> float:
            probabilities = []
            for cols, half_model in zip((left_cols, right_cols), models, strict=True):
                fitted = fit_frame(
                    frame,
                    swap_attribute,
                    cols,
                    half_model,
                    positive,
                    profile_se=False,
                    permutations=0,
                    identify=False,
                    **options,
                )
                fit = fitted.fit
                probabilities.append(
                    class_probabilities(fit.record_log_likelihoods, fit.n0, fit.n1)
                )
            left_probabilities, right_probabilities = probabilities
            try:
                return consensus_closed_form(
                    *agreement_sums(left_probabilities, right_probabilities, fitted.swapped_class),
                    n,
                )
            except InfeasibleError:
                return float("nan")

        used = data[[*left_cols, *right_cols, swap_attribute]]
        calibration = reswap_calibration(
            used.reset_index(drop=True),  # positions, whatever the index
            swap_attribute,
            s,
            re_estimate,
            alpha,
            se,
            extra_rates=rates,
            random_state=rng,
        )
    verdict = judge_swap_estimate(
        n0=n0,
        n1=n1,
        alpha=alpha,
        standard_error=se,
        identified=left_fit.identified and right_fit.identified,
        associated=left_fit.identifiability.associated and right_fit.identifiability.associated,
        identification_reason="; ".join(
            f"{name} half {list(fit.attributes)}: {fit.identifiability.reason}"
            for name, fit in (("left", left_fit), ("right", right_fit))
            if not fit.identified
        ),
        calibration=calibration,
        confidence=confidence,
    )
    return ConsensusEstimate(
        group_swap_count=alpha,
        rho=swap_rate_from_count(alpha, n0, n1),
        perturbed_fraction=2 * alpha / n,
        agreement=(a, b, c, d),
        left=left_fit,
        right=right_fit,
        n=n,
        n0=n0,
        n1=n1,
        swap_attribute=swap_attribute,
        left_attributes=tuple(left_cols),
        right_attributes=tuple(right_cols),
        standard_error=se,
        calibration=calibration,
        sensitivity=correlation_sensitivity(
            (a, b, c, d), n, half_estimates={"left": left_fit.alpha, "right": right_fit.alpha}
        ),
        verdict=verdict,
    )


def _consensus_standard_error(
    left_probabilities: np.ndarray, right_probabilities: np.ndarray, s: np.ndarray, n: int
) -> float:
    """Delta-method SE of Lemma 4.3's alpha from the per-record terms of A, B, C, D.

    The records are taken as independent and the two fitted models as fixed,
    so the uncertainty of the halves' parameters is left out: a lower bound,
    which the re-swap calibration's widening and the calibration study check.
    """
    s = np.asarray(s).astype(np.intp)
    rows = np.arange(len(s))
    lr, lw = left_probabilities[rows, s], left_probabilities[rows, 1 - s]
    rr, rw = right_probabilities[rows, s], right_probabilities[rows, 1 - s]
    terms = np.column_stack([lr * rr, lr * rw, lw * rr, lw * rw])
    sums = terms.sum(axis=0)
    covariance = len(s) * np.cov(terms, rowvar=False)

    def alpha_of(x: np.ndarray) -> float:
        a, b, c, d = x
        product = (a * d - b * c) / (n * (a + d - b - c))
        return n / 4.0 * (1.0 - np.sqrt(max(1.0 - 4.0 * product, 0.0)))

    step = 1e-6 * max(float(np.abs(sums).max()), 1.0)
    gradient = np.array(
        [
            (alpha_of(sums + step * unit) - alpha_of(sums - step * unit)) / (2 * step)
            for unit in np.eye(4)
        ]
    )
    variance = float(gradient @ covariance @ gradient)
    return float(np.sqrt(variance)) if np.isfinite(variance) and variance >= 0 else float("inf")
