"""Re-swap calibration: does the estimator follow swaps of a known size? (Kifer 2015, Sections 4.3.2, 5.4)

Swap the released data again at a few extra rates rho' with the rho data swap
itself, count the records the re-swap moved (known exactly), and estimate
again with the same estimator. After a first swap that changed p = 2 alpha / N
of the records, a second one moves alpha' records from each group to the other,
picked at random within the group: of the alpha' it moves out of group 0, a
share alpha / n0 were records the first swap had brought there (they go back),
and likewise alpha / n1 in group 1, so the group swap count becomes
alpha + alpha' (1 - alpha / n0 - alpha / n1) (1 - 4 alpha / N when n0 = n1;
with unbalanced groups the balanced form overstates the rise: at alpha/N = 0.1
and a 76/24 split, 0.60 instead of 0.45, which made a well-specified estimate
look as if it under-responded). A trustworthy estimator rises by about
e_k = alpha'_k (1 - alpha_hat / n0 - alpha_hat / n1) at each rate.

What is measured, per extra rate k: the observed rise d_k = alpha_hat_k -
alpha_hat, its expected value e_k, and their ratio (the estimator's response
per swapped record). The **slope** b = sum d_k e_k / sum e_k^2 (least squares
through the released data's estimate) and the **curvature**, the difference
between the responses at the largest and the smallest rate. Their noise comes
from which records the re-swap happens to move; we model the standard
deviation of d_k as SE sqrt(8 alpha'_k / N) (SE the standard error of alpha_hat:
a re-swap changes 2 alpha'_k of the N records, and the estimate moves with
the records it changes; the factor 8 rather than 4 is empirical): over six
repeated re-swaps of well-specified data (Naive Bayes, N = 2,000 and 20,000;
Section 5.1's Gaussian data, N = 10,000) the spread of d_k was 0.5 to 1.3 times
SE sqrt(4 alpha'_k / N), so the model with 8 matches or exceeds it.

Cost: one estimate per extra rate, without the identifiability test and the
profile standard error (see docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._validation import RandomState, check_random_state
from sdckit.errors import ParameterError
from sdckit.microdata.swap import swap

__all__ = ["DEFAULT_CALIBRATION_RATES", "SwapCalibration", "reswap_calibration"]

#: Extra swap rates of the default calibration.
DEFAULT_CALIBRATION_RATES = (0.05, 0.1)


@dataclass(frozen=True)
class SwapCalibration:
    """Result of :func:`reswap_calibration`.

    Attributes
    ----------
    extra_rates : tuple of float
        The re-swap rates rho'.
    added_counts : tuple of int
        alpha'_k: records the re-swap moved from group 0 to group 1.
    expected_rises : tuple of float
        e_k = alpha'_k (1 - alpha_hat / n0 - alpha_hat / n1).
    estimates : tuple of float
        alpha_hat after each re-swap.
    base_estimate : float
        alpha_hat on the released data.
    slope : float
        b, the estimator's response per swapped record (1 when it follows
        the swaps exactly).
    slope_se : float
        Its standard error under the noise model of the module docstring.
    curvature : float
        Response at the largest rate minus response at the smallest.
    curvature_se : float
    slope_tolerance : float
        Largest |b - 1| accepted: max(0.25, 3 slope_se).
    follows : bool
        |b - 1| <= slope_tolerance and |curvature| <= max(0.3, 3 curvature_se).
    reason : str
        Plain words.
    """

    extra_rates: tuple[float, ...]
    added_counts: tuple[int, ...]
    expected_rises: tuple[float, ...]
    estimates: tuple[float, ...]
    base_estimate: float
    slope: float
    slope_se: float
    curvature: float
    curvature_se: float
    slope_tolerance: float
    follows: bool
    reason: str

    def summary(self) -> str:
        """The table and the verdict."""
        lines = ["re-swap calibration (Kifer 2015, Sections 4.3.2, 5.4):"]
        lines.append("  extra rho'  records moved 0->1  expected rise  observed rise")
        for rate, added, expected, est in zip(
            self.extra_rates, self.added_counts, self.expected_rises, self.estimates, strict=True
        ):
            lines.append(
                f"  {rate:<10g}  {added:>18,}  {expected:>13,.1f}  "
                f"{est - self.base_estimate:>12,.1f}"
            )
        lines.append(
            f"  response per swapped record {self.slope:.2f} (SE {self.slope_se:.2f}), "
            f"curvature {self.curvature:+.2f}: {self.reason}"
        )
        return "\n".join(lines)


def _judge(
    rates: Sequence[float],
    added: Sequence[int],
    estimates: Sequence[float],
    base: float,
    standard_error: float,
    n: int,
    n1: int,
) -> SwapCalibration:
    n0 = n - n1
    if n0 <= 0 or n1 <= 0:
        raise ParameterError("the re-swap calibration needs records in both groups")
    a = float(np.clip(base, 0.0, n0 * n1 / n))
    expected = np.asarray(added, dtype=float) * (1.0 - a / n0 - a / n1)
    rises = np.asarray(estimates, dtype=float) - base
    se = standard_error if np.isfinite(standard_error) else np.inf
    noise = se * np.sqrt(8.0 * np.asarray(added, dtype=float) / n)
    usable = expected > 0
    if not usable.any():
        return SwapCalibration(
            tuple(rates),
            tuple(int(x) for x in added),
            tuple(expected),
            tuple(float(x) for x in estimates),
            float(base),
            float("nan"),
            float("inf"),
            float("nan"),
            float("inf"),
            float("inf"),
            False,
            "the re-swaps moved no records, so the estimator's response could not be measured",
        )
    e, d, sd = expected[usable], rises[usable], noise[usable]
    slope = float(d @ e / (e @ e))
    slope_se = float(np.sqrt(((e * sd) ** 2).sum()) / (e @ e))
    responses = d / e
    response_se = sd / e
    curvature = float(responses[-1] - responses[0]) if len(e) > 1 else 0.0
    curvature_se = float(np.sqrt(response_se[-1] ** 2 + response_se[0] ** 2)) if len(e) > 1 else 0.0
    tolerance = max(0.25, 3.0 * slope_se)
    bent = abs(curvature) > max(0.3, 3.0 * curvature_se)
    off = not abs(slope - 1.0) <= tolerance
    if not np.isfinite(d).all():
        reason = "the estimator failed on re-swapped data"
    elif off:
        reason = (
            f"the estimate does NOT follow known extra swaps: it rose by {slope:.2f} per "
            f"swapped record where 1 is expected (tolerance {tolerance:.2f})"
        )
    elif bent:
        reason = (
            f"the estimate does NOT follow known extra swaps linearly (it rose by "
            f"{responses[0]:.2f} per swapped record at rho' = {rates[0]:g}, {responses[-1]:.2f} "
            f"at {rates[-1]:g})"
        )
    else:
        reason = "the estimate follows known extra swaps as it should"
    return SwapCalibration(
        extra_rates=tuple(float(r) for r in rates),
        added_counts=tuple(int(x) for x in added),
        expected_rises=tuple(float(x) for x in expected),
        estimates=tuple(float(x) for x in estimates),
        base_estimate=float(base),
        slope=slope,
        slope_se=slope_se,
        curvature=curvature,
        curvature_se=curvature_se,
        slope_tolerance=tolerance,
        follows=not (off or bent),
        reason=reason,
    )


def check_calibration_rates(rates: Sequence[float]) -> tuple[float, ...]:
    """Validate re-swap rates: at least one, each in (0, 0.5), distinct, sorted."""
    try:
        values = sorted({float(r) for r in rates})
    except (TypeError, ValueError):
        raise ParameterError(f"calibration_rates must be numbers, got {list(rates)!r}") from None
    if not values:
        raise ParameterError("calibration_rates is empty; give e.g. (0.05, 0.1)")
    bad = [r for r in values if not 0 < r < 0.5]
    if bad:
        raise ParameterError(f"calibration_rates must lie in (0, 0.5), got {bad}")
    return tuple(values)


def reswap_calibration(
    data: pd.DataFrame,
    swap_attribute: str,
    swapped_class: np.ndarray,
    estimator: Callable[[pd.DataFrame], float],
    base_estimate: float,
    standard_error: float,
    *,
    extra_rates: Sequence[float] = DEFAULT_CALIBRATION_RATES,
    random_state: RandomState = 0,
) -> SwapCalibration:
    """Re-swap the released data at ``extra_rates`` and measure the estimator's response.

    Parameters
    ----------
    data : DataFrame
        The released data. Never modified.
    swap_attribute : str
    swapped_class : ndarray of 0/1
        The released swap attribute as coded for the estimate.
    estimator : callable
        ``estimator(frame) -> alpha_hat``, the same estimator as on the
        released data.
    base_estimate, standard_error : float
        alpha_hat on the released data and its standard error.
    extra_rates : sequence of float in (0, 0.5)
    random_state : None, int or numpy Generator
        Draws the re-swaps.

    Returns
    -------
    SwapCalibration
        The estimates after each re-swap, the slope and curvature of the
        response, and whether the estimator follows known swaps.
    """
    rates = check_calibration_rates(extra_rates)
    rng = check_random_state(random_state)
    s = np.asarray(swapped_class)
    added, estimates = [], []
    for rate in rates:
        reswapped = swap(data, columns=swap_attribute, rate=rate, random_state=rng)
        # A record moved between the two groups when its partner's group differs
        # (for a multi-valued attribute a change within a group moves nothing).
        partner = reswapped.diagnostics["partner"].to_numpy()
        paired = partner >= 0
        moved = np.zeros(len(s), dtype=bool)
        moved[paired] = s[partner[paired]] != s[paired]
        added.append(int((moved & (s == 0)).sum()))
        estimates.append(float(estimator(reswapped.data)))
    return _judge(
        rates, added, estimates, base_estimate, standard_error, len(s), int((s == 1).sum())
    )
