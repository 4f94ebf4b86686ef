"""The Consensus algorithm of Kifer (2015, seed 002), Section 4.2, Algorithm 2 and Lemma 4.3.

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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._validation import as_sequence, check_columns, check_dataframe
from sdckit.errors import InfeasibleError, ParameterError
from sdckit.swaprate.gsc import SwapCountEstimate, estimate_swap_count, swap_rate_from_count
from sdckit.swaprate.models import RecordModel

__all__ = ["ConsensusEstimate", "agreement_sums", "consensus_closed_form", "consensus_swap_count"]


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
class ConsensusEstimate:
    """Result of :func:`consensus_swap_count` (Algorithm 2, seed 002).

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
            f"Consensus (Algorithm 2), swap attribute {self.swap_attribute!r}, N = {self.n}",
            f"  left  = {list(self.left_attributes)}",
            f"  right = {list(self.right_attributes)}",
        ]
        if not self.identified:
            lines.append(
                "  NOT IDENTIFIED: the swap count cannot be estimated from these attributes; "
                "the alpha and rho below are not estimates of it"
            )
        lines += [
            f"  A = {a:.1f}, B = {b:.1f}, C = {c:.1f}, D = {d:.1f}",
            f"  group swap count alpha = {self.group_swap_count:.1f}, "
            f"alpha/N = {self.group_swap_rate:.4f}, rho = {self.rho:.4f}",
        ]
        for name, fit in (("left", self.left), ("right", self.right)):
            check = fit.identifiability
            lines.append(
                f"  Algorithm 1 on {name} alone:{' ' if name == 'left' else ''} "
                f"alpha = {fit.alpha:.1f} (imbalance {fit.imbalance:.4f}; association "
                f"p = {check.association_p_value:.3g}, latent-class p = "
                f"{check.latent_class_p_value:.3g}: "
                f"{'identified' if check.identified else 'NOT IDENTIFIED'})"
            )
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
    **gsc_options: Any,
) -> ConsensusEstimate:
    """Estimate alpha by the Consensus algorithm (seed 002, Section 4.2, Algorithm 2).

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
    left_fit = estimate_swap_count(
        data,
        swap_attribute,
        left_cols,
        model=left_model,
        positive=positive,
        progress=progress,
        **gsc_options,
    )
    right_fit = estimate_swap_count(
        data,
        swap_attribute,
        right_cols,
        model=right_model,
        positive=positive,
        progress=progress,
        **gsc_options,
    )
    s = left_fit.swapped_class
    a, b, c, d = agreement_sums(left_fit.class_probabilities(), right_fit.class_probabilities(), s)
    n, n0, n1 = left_fit.n, left_fit.n0, left_fit.n1
    alpha = consensus_closed_form(a, b, c, d, n)
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
    )
