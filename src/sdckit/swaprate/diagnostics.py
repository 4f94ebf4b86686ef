"""Diagnostics for swap-rate estimates (Kifer 2015, Sections 4.1.3, 4.1.4, 4.3.2, 5.2, 5.4).

* :func:`identifiability_check` — our addition: do the attributes identify the
  swap count at all? A likelihood-ratio test of association between the
  released swap attribute and the attributes (class-specific against pooled
  parameters at alpha = 0, permutation p-value) and the gain of the fit over
  the same model at alpha* = n0 n1 / N, where it is a latent-class model of
  the attributes that ignores the swap attribute. Without signal, Algorithm 1
  turns into a latent-class fit and reports a confident, meaningless alpha near
  alpha*; the imbalance check cannot see it (details in
  :class:`~sdckit.swaprate.gsc.IdentifiabilityCheck`).
* :func:`imbalance_check` — Section 4.1.4: Algorithm 1's t_i give A0 (estimated
  changes 1 -> 0) and A1 (0 -> 1). A swap changes as many records one way as
  the other, so |A0 - A1| / N near 0 says the model fits; a large value (about
  0.15 for Naive Bayes on Adult, Section 5.2) says it does not: use Consensus.
* :func:`reswap_linearity` — Sections 4.3.2 and 5.4: swap the released data
  again at several extra rates rho' and re-estimate. The true group swap count
  grows linearly in rho' (see below); an estimate that does not says the
  Consensus halves are correlated (or the model is wrong).
* :func:`split_concordance` — Section 4.1.3: a multi-valued swap attribute is
  split into two groups in several ways; every split estimates the same swap
  rate rho (Lemma 2.3), so the splits' rho estimates must agree.

Linearity, derived: after a first swap with p = 2 alpha / N of the records
changed, a second swap changing p' = 2 alpha' / N of them (alpha' = rho' 2 n0 n1
/ (N - 1), Lemma 2.3) leaves p + p' - 2 p p' changed (a record changed twice
is back; the re-swap moves alpha' records out of each group at random, of which
a share alpha / n0, resp. alpha / n1, the first swap had brought there), i.e. a
group swap count alpha + alpha' (1 - alpha / n0 - alpha / n1): a line in rho'
with slope (2 n0 n1 / (N - 1)) (1 - alpha / n0 - alpha / n1), which is
(1 - 4 alpha / N) only for balanced groups.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._validation import (
    RandomState,
    as_sequence,
    check_columns,
    check_dataframe,
    check_positive,
    check_random_state,
)
from sdckit.errors import ParameterError
from sdckit.microdata.swap import swap
from sdckit.swaprate.consensus import ConsensusEstimate, consensus_swap_count
from sdckit.swaprate.gsc import (
    IdentifiabilityCheck,
    SwapCountEstimate,
    binary_swap_attribute,
    count_text,
    estimate_swap_count,
    swap_rate_from_count,
)
from sdckit.swaprate.models import RecordModel

__all__ = [
    "IdentifiabilityCheck",
    "ImbalanceCheck",
    "LinearityCheck",
    "SplitConcordance",
    "identifiability_check",
    "imbalance_check",
    "reswap_linearity",
    "split_concordance",
]


def identifiability_check(
    estimate: SwapCountEstimate, level: float | None = None
) -> IdentifiabilityCheck:
    """Judge whether the attributes identify the swap count at all (our addition to Section 4.1).

    Algorithm 1 assumes that the attributes r predict the swap attribute s.
    When they carry no information about it, alpha is not identified: the
    relaxed likelihood is flat in alpha for P0 = P1, and otherwise Algorithm 1
    fits a latent-class model of r (at alpha* = n0 n1 / N the released value
    says nothing about the true one) and reports an alpha near alpha* with a
    small, meaningless standard error. Neither the imbalance (the latent
    classes are symmetric in s~, so A0 = A1) nor the standard error shows it.

    The check, computed by :func:`~sdckit.swaprate.gsc.estimate_swap_count`,
    makes two tests, both of which must reject for ``identified``:

    1. **association** of the released swap attribute with the attributes:
       the likelihood-ratio statistic G of class-specific against pooled
       (class-independent) parameters at alpha = 0, with a permutation
       p-value (exact under "s~ independent of r" whatever the model and the
       dependence among the attributes; the chi-square(df) p-value, df = the
       model's per-class parameter count, is shown beside it but is
       anti-conservative when the attributes are correlated under the model);
    2. **gain over latent-class freedom**: 2 [log L*(alpha_hat) -
       max_theta log L*(alpha*)] against chi-square(1). At alpha* the model
       uses s~ only through n0 and n1; a fit no better than that one owes its
       likelihood to clusters among the attributes, not to swaps. This
       catches a weak association that the first test finds but that is too
       weak to anchor the classes (we met it: alpha/N = 0.235, SE 0.010, on
       unswapped data whose four attributes share a latent cluster).

    See :class:`~sdckit.swaprate.gsc.IdentifiabilityCheck` for the derivation
    and why a parametric bootstrap under alpha = 0 would not do.

    Parameters
    ----------
    estimate : SwapCountEstimate
        A result of :func:`~sdckit.swaprate.gsc.estimate_swap_count` (for
        Consensus, check ``result.left`` and ``result.right``).
    level : float, optional
        Significance level of both tests; default: the level the estimate
        was computed with (``identification_level``, 0.05).

    Returns
    -------
    IdentifiabilityCheck
        ``identified``, both p-values and the reason in plain words.
    """
    if not isinstance(estimate, SwapCountEstimate):
        raise ParameterError(
            f"identifiability_check needs a SwapCountEstimate, got {type(estimate).__name__}; "
            "for a Consensus result check its .left and .right estimates"
        )
    check = estimate.identifiability
    return check if level is None else check.at_level(level)


@dataclass(frozen=True)
class ImbalanceCheck:
    """Section 4.1.4's model diagnostic.

    Attributes
    ----------
    imbalance : float
        |A0 - A1| / N.
    a0, a1 : float
        Estimated numbers of changes 1 -> 0 and 0 -> 1.
    threshold : float
    large : bool
        ``imbalance > threshold``.
    guidance : str
        What to do, in plain words.
    """

    imbalance: float
    a0: float
    a1: float
    threshold: float
    large: bool
    guidance: str
    n0: float | None = None
    n1: float | None = None

    def summary(self) -> str:
        """One paragraph for a person; a count above the records it could be is not shown."""
        a0 = count_text(self.a0, self.n1) if self.n1 is not None else f"{self.a0:,.1f}"
        a1 = count_text(self.a1, self.n0) if self.n0 is not None else f"{self.a1:,.1f}"
        return (
            f"imbalance |A0 - A1|/N = {self.imbalance:.4f} (A0 = {a0} changes 1->0, "
            f"A1 = {a1} changes 0->1; threshold {self.threshold:g}): {self.guidance}"
        )


def imbalance_check(
    estimate: SwapCountEstimate, threshold: float = 0.01, *, consensus_half: bool = False
) -> ImbalanceCheck:
    """Judge the fit of Algorithm 1's model by the estimated imbalance (Section 4.1.4).

    Parameters
    ----------
    estimate : SwapCountEstimate
        A result of :func:`~sdckit.swaprate.gsc.estimate_swap_count`.
    threshold : float, default 0.01
        Imbalance above which the model is judged a poor fit. In our runs
        well-specified models stay below 0.001 (Gaussian data, Naive Bayes on
        data drawn from Naive Bayes), while Naive Bayes on the real Adult data
        gives about 0.15 (as in the paper's Figures 8-9) on one half of the
        attributes and about 0.02 on the other, both badly biased.
    consensus_half : bool, default False
        The estimate is one half of a Consensus estimate: the guidance then
        does not advise Consensus, which is already in use.

    Returns
    -------
    ImbalanceCheck
        A0, A1, the imbalance and whether it is small.
    """
    threshold = check_positive(threshold, "threshold")
    large = estimate.imbalance > threshold
    if large and consensus_half:
        guidance = (
            "LARGE: the model fits this half poorly on its own, the case Consensus is designed "
            "for; Consensus' own assumption (the two halves' predictions uncorrelated) is what "
            "the re-swap calibration checks."
        )
    elif large:
        guidance = (
            "LARGE: the model disagrees with itself about how many records moved each way, so "
            "it fits the original data poorly and its alpha is likely biased. Use the "
            "Consensus algorithm (consensus_swap_count, or --left/--right on the command line) "
            "with two attribute sets believed independent given the swap attribute, or try a "
            "richer model."
        )
    elif not estimate.identified:
        guidance = (
            "small, but meaningless here: the attributes do not identify the swap count "
            "(see identifiability_check), and latent classes fitted in their place are "
            "balanced by construction."
        )
    else:
        guidance = (
            "small: the model agrees with itself about the moves each way (not proof that it "
            "fits: the model fit check and the calibration say more, and the verdict weighs them)."
        )
    return ImbalanceCheck(
        imbalance=estimate.imbalance,
        a0=estimate.a0,
        a1=estimate.a1,
        threshold=threshold,
        large=large,
        guidance=guidance,
        n0=estimate.n0,
        n1=estimate.n1,
    )


@dataclass(frozen=True)
class LinearityCheck:
    """Result of :func:`reswap_linearity` (Sections 4.3.2, 5.4).

    Attributes
    ----------
    extra_rates : ndarray
        The re-swap rates rho' (0 = the released data as they are).
    estimates : ndarray
        The estimated group swap count after each re-swap (mean over repeats).
    added_counts : ndarray
        Group swap count each re-swap itself realised (mean over repeats).
    intercept, slope : float
        Least-squares line estimate = intercept + slope * rho'.
    expected_slope : float
        (2 n0 n1 / (N - 1)) (1 - intercept / n0 - intercept / n1): the slope a correct
        estimator would show.
    slope_ratio : float
        slope / expected_slope.
    departure : float
        Largest absolute residual from the line divided by the range of the
        fitted line over the rates: the departure from linearity.
    nonlinear : bool
        ``departure > departure_threshold`` or the slope ratio outside
        [1 / slope_tolerance, slope_tolerance].
    method : str
        "consensus" or "gsc".
    """

    extra_rates: np.ndarray
    estimates: np.ndarray
    added_counts: np.ndarray
    intercept: float
    slope: float
    expected_slope: float
    slope_ratio: float
    departure: float
    nonlinear: bool
    method: str

    def summary(self) -> str:
        """The table and the verdict."""
        lines = [f"re-swap linearity ({self.method}):", "  rho'     added alpha   estimate"]
        for r, added, est in zip(self.extra_rates, self.added_counts, self.estimates, strict=True):
            lines.append(f"  {r:<8.3g} {added:>11.1f} {est:>10.1f}")
        lines.append(
            f"  line: {self.intercept:.1f} + {self.slope:.1f} rho' (expected slope "
            f"{self.expected_slope:.1f}, ratio {self.slope_ratio:.2f}); departure from "
            f"linearity {self.departure:.3f}"
        )
        lines.append(
            "  NONLINEAR: the estimate does not follow the extra swaps; the attribute halves are "
            "probably correlated (or the model is wrong): choose another split"
            if self.nonlinear
            else "  linear: the estimator follows the extra swaps as it should"
        )
        return "\n".join(lines)


def reswap_linearity(
    data: pd.DataFrame,
    swap_attribute: str,
    *,
    left: str | Sequence[str] | None = None,
    right: str | Sequence[str] | None = None,
    attributes: str | Sequence[str] | None = None,
    extra_rates: Sequence[float] = (0.0, 0.025, 0.05, 0.1, 0.15),
    model: str | RecordModel = "naive-bayes",
    positive: Any | Iterable[Any] | None = None,
    repeats: int = 1,
    departure_threshold: float = 0.15,
    slope_tolerance: float = 1.5,
    random_state: RandomState = None,
    **gsc_options: Any,
) -> LinearityCheck:
    """Re-swap the released data at extra rates and test the estimates for linearity.

    Kifer (2015), Sections 4.3.2 and 5.4. Uses Consensus when ``left`` and
    ``right`` are given, Algorithm 1 on ``attributes`` otherwise. The re-swap
    is the rho data swap :func:`sdckit.microdata.swap.swap`.

    Parameters
    ----------
    data : DataFrame
        The released data. Never modified.
    swap_attribute : str
    left, right, attributes : optional
        Attribute sets for Consensus, or for Algorithm 1.
    extra_rates : sequence of float in [0, 0.5)
        The re-swap rates rho'; at least three distinct values.
    model, positive, **gsc_options
        As for the estimators.
    repeats : int, default 1
        Re-swaps per rate (estimates averaged).
    departure_threshold : float, default 0.15
        Largest tolerated residual relative to the fitted range.
    slope_tolerance : float, default 1.5
        Largest tolerated factor between the fitted and the expected slope.
    random_state : None, int or numpy Generator

    Returns
    -------
    LinearityCheck
    """
    check_dataframe(data, min_rows=2)
    [swap_attribute] = check_columns(data, [swap_attribute], "swap_attribute")
    rates = np.array([float(r) for r in as_sequence(extra_rates)])
    if len(np.unique(rates)) < 3:
        raise ParameterError(f"extra_rates needs at least three distinct rates, got {list(rates)}")
    if ((rates < 0) | (rates >= 0.5)).any():
        raise ParameterError(f"extra_rates must lie in [0, 0.5), got {list(rates)}")
    if (left is None) != (right is None):
        raise ParameterError("give both left and right (Consensus) or neither (Algorithm 1)")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ParameterError(f"repeats must be an integer >= 1, got {repeats!r}")
    departure_threshold = check_positive(departure_threshold, "departure_threshold")
    slope_tolerance = check_positive(slope_tolerance, "slope_tolerance")
    if slope_tolerance < 1:
        raise ParameterError(f"slope_tolerance must be >= 1, got {slope_tolerance}")
    rng = check_random_state(random_state)
    s, _ = binary_swap_attribute(data[swap_attribute], positive)
    n = len(s)
    n1 = int(s.sum())
    n0 = n - n1

    def estimate(frame: pd.DataFrame) -> float:
        options: dict[str, Any]
        if left is not None and right is not None:
            options = {"calibrate": False, **gsc_options}
            return consensus_swap_count(
                frame, swap_attribute, left, right, model=model, positive=positive, **options
            ).alpha
        options = {"profile_se": False, "calibrate": False, **gsc_options}
        return estimate_swap_count(
            frame, swap_attribute, attributes, model=model, positive=positive, **options
        ).alpha

    estimates = np.empty(len(rates))
    added = np.empty(len(rates))
    for k, rate in enumerate(rates):
        values, counts = [], []
        for _ in range(repeats if rate > 0 else 1):
            if rate > 0:
                reswapped = swap(data, columns=swap_attribute, rate=float(rate), random_state=rng)
                frame = reswapped.data
                moved = reswapped.diagnostics["changed"].to_numpy()
                counts.append(float((moved & (s == 0)).sum()))
            else:
                frame = data
                counts.append(0.0)
            values.append(estimate(frame))
        estimates[k] = np.mean(values)
        added[k] = np.mean(counts)
    slope, intercept = np.polyfit(rates, estimates, 1)
    fitted = intercept + slope * rates
    span = abs(slope) * (rates.max() - rates.min())
    departure = float(np.max(np.abs(estimates - fitted)) / span) if span > 0 else float("inf")
    expected_slope = 2.0 * n0 * n1 / (n - 1) * (1.0 - intercept / n0 - intercept / n1)
    slope_ratio = float(slope / expected_slope) if expected_slope > 0 else float("nan")
    nonlinear = bool(
        departure > departure_threshold
        or not (1.0 / slope_tolerance <= slope_ratio <= slope_tolerance)
    )
    return LinearityCheck(
        extra_rates=rates,
        estimates=estimates,
        added_counts=added,
        intercept=float(intercept),
        slope=float(slope),
        expected_slope=float(expected_slope),
        slope_ratio=slope_ratio,
        departure=departure,
        nonlinear=nonlinear,
        method="consensus" if left is not None else "gsc",
    )


@dataclass(frozen=True)
class SplitConcordance:
    """Result of :func:`split_concordance` (Section 4.1.3).

    Attributes
    ----------
    table : DataFrame
        One row per split: ``group_1`` (values coded 1), ``n0``, ``n1``,
        ``verdict`` (the split's verdict code), ``alpha`` and ``rho`` (Lemma
        2.3 for that split; missing unless the split's verdict is
        ``estimated`` or ``no_evidence``), ``imbalance`` (Algorithm 1 only)
        and ``identified``.
    rho_mean, rho_spread : float
        Mean of the quotable splits' rho estimates, and their standard
        deviation divided by max(mean, 0.01); NaN when fewer than two splits
        are quotable.
    concordant : bool
        The splits are all ``estimated`` or ``no_evidence`` and their rho
        estimates agree (``rho_spread <= tolerance``).
    code : str
        ``estimated`` (concordant splits that found a swap), ``no_evidence``
        (every split found none), ``unreliable`` (a split is unreliable or
        not identified, or the splits disagree).
    reason : str
        Plain words.
    """

    table: pd.DataFrame
    rho_mean: float
    rho_spread: float
    concordant: bool
    code: str = "unreliable"
    reason: str = ""

    def summary(self) -> str:
        """The verdict first, then the table."""
        return (
            f"verdict: {self.code}: {self.reason}\n"
            f"split concordance (Section 4.1.3):\n{self.table.to_string(index=False)}"
        )


def split_concordance(
    data: pd.DataFrame,
    swap_attribute: str,
    attributes: str | Sequence[str] | None = None,
    *,
    splits: Sequence[Any] | None = None,
    left: str | Sequence[str] | None = None,
    right: str | Sequence[str] | None = None,
    model: str | RecordModel = "naive-bayes",
    tolerance: float = 0.25,
    **gsc_options: Any,
) -> SplitConcordance:
    """Estimate a multi-valued swap attribute's swap rate from several two-group splits.

    Kifer (2015), Section 4.1.3. A rho data swap of the whole attribute is, for
    every split A | B of its values, a rho swap of the binary "in B"
    indicator, so Lemma 2.3 turns each split's alpha into an estimate of the
    same rho; their agreement measures reliability. Each split gets its own
    verdict (:class:`~sdckit.swaprate.verdict.SwapVerdict`); only splits
    coded ``estimated`` or ``no_evidence`` are compared, and a split that is
    unreliable or not identified makes the whole unreliable. (Before, on an
    attribute never swapped, every split's alpha sat near the latent-class
    point rho = 1/2 and agreed, and the splits were called concordant.)

    Parameters
    ----------
    data : DataFrame
    swap_attribute : str
    attributes : optional
        Attributes for Algorithm 1 (default: all others) when no left/right.
    splits : sequence, optional
        Each item is a value or a list of values forming group 1. Default:
        every value against the rest.
    left, right : optional
        Use Consensus with these halves instead of Algorithm 1.
    model : str or RecordModel
    tolerance : float, default 0.25
        Largest coefficient of variation of the rho estimates called concordant.
    **gsc_options
        Passed to the estimator (``calibrate``, ``permutations``, ...).

    Returns
    -------
    SplitConcordance
        One row per split (its verdict, alpha, rho), and the overall code.
    """
    check_dataframe(data, min_rows=2)
    [swap_attribute] = check_columns(data, [swap_attribute], "swap_attribute")
    tolerance = check_positive(tolerance, "tolerance")
    if (left is None) != (right is None):
        raise ParameterError("give both left and right (Consensus) or neither (Algorithm 1)")
    values = pd.unique(data[swap_attribute].dropna())
    if len(values) < 3:
        raise ParameterError(
            f"swap attribute {swap_attribute!r} takes {len(values)} values; split concordance "
            "needs a multi-valued (three or more values) attribute"
        )
    if splits is None:
        splits = [[v] for v in values]
    if len(splits) < 2:
        raise ParameterError("give at least two splits to compare")
    rows = []
    for group in splits:
        ones = list(group) if isinstance(group, (list, tuple, set, np.ndarray)) else [group]
        fit: SwapCountEstimate | ConsensusEstimate
        if left is not None and right is not None:
            fit = consensus_swap_count(
                data, swap_attribute, left, right, model=model, positive=ones, **gsc_options
            )
            imbalance = float("nan")
        else:
            fit = estimate_swap_count(
                data,
                swap_attribute,
                attributes,
                model=model,
                positive=ones,
                **{"profile_se": False, **gsc_options},
            )
            imbalance = fit.imbalance
        quotable = fit.verdict.quotable
        rows.append(
            {
                "group_1": ", ".join(map(str, ones)),
                "n0": fit.n0,
                "n1": fit.n1,
                "verdict": fit.verdict.code,
                "alpha": fit.alpha if quotable else float("nan"),
                "rho": swap_rate_from_count(fit.alpha, fit.n0, fit.n1)
                if quotable
                else float("nan"),
                "imbalance": imbalance,
                "identified": fit.identified,
            }
        )
    table = pd.DataFrame(rows)
    codes = table["verdict"]
    quotable = table[codes.isin(["estimated", "no_evidence"])]
    rho = quotable["rho"].to_numpy()
    mean = float(rho.mean()) if len(rho) else float("nan")
    # Relative spread, with a floor of 0.01 on the scale so that rates near 0 compare sanely.
    spread = float(rho.std(ddof=1) / max(mean, 0.01)) if len(rho) > 1 else float("nan")
    failing = table.loc[~codes.isin(["estimated", "no_evidence"]), "group_1"].tolist()
    if failing:
        code = "unreliable"
        reason = (
            f"the split(s) {failing} are unreliable or not identified, so the splits cannot "
            "confirm each other; no swap rate can be quoted"
        )
    elif (codes == "no_evidence").all():
        code = "no_evidence"
        reason = "no split finds evidence of swapping"
    elif spread <= tolerance:
        code = "estimated"
        reason = (
            f"the splits agree on the swap rate: rho about {mean:.4f} (coefficient of "
            f"variation {spread:.3f} <= {tolerance:g})"
        )
    else:
        code = "unreliable"
        reason = (
            f"the splits disagree on the swap rate (coefficient of variation {spread:.3f} > "
            f"{tolerance:g}); no swap rate can be quoted"
        )
    return SplitConcordance(
        table=table,
        rho_mean=mean,
        rho_spread=spread,
        concordant=code == "estimated",
        code=code,
        reason=reason,
    )
