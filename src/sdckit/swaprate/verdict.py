"""The verdict on a swap-count estimate: one code an auditor can rely on, and a sentence from it.

Kifer (2015) gives the means to tell a trustworthy estimate from a
misspecified one (the imbalance of Section 4.1.4, the re-swap behaviour of
Sections 4.3.2 and 5.4); we add the identifiability check and the model fit
check. The verdict combines them into exactly one code:

``estimated``
    alpha with a confidence interval that may be quoted: the attributes
    identify the swap count, the fitted model reproduces the released data,
    the imbalance is small, and the estimator follows swaps of a known size
    (re-swap calibration). The interval is alpha_hat +- z SE, widened to
    also cover the slope-corrected estimate alpha_hat / b when the estimator
    responds to a swapped record by b rather than 1 (if it responds to every
    swapped record by b, alpha_hat estimates b alpha).
``no_evidence``
    The same checks pass and that interval includes 0; the calibration
    showed the estimator rising with known extra swaps, and the sentence
    states the smallest swap it would have detected: alpha_det = 2 z SE, the
    count whose estimate exceeds z SE with probability 1 - (1 - level) / 2.
``unreliable``
    A check disagrees with the model (misfit, large imbalance, an estimate
    that does not follow known swaps, an impossible number, no convergence):
    no number is quoted as an estimate.
``not_identified``
    The attributes carry no usable information about the swap attribute.

The sentence is built from the code, never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy import stats

from sdckit.swaprate.calibration import SwapCalibration
from sdckit.swaprate.fitcheck import ModelFitCheck

__all__ = ["VERDICT_CODES", "SwapVerdict", "judge_swap_estimate"]

VERDICT_CODES = ("estimated", "no_evidence", "unreliable", "not_identified")


@dataclass(frozen=True)
class SwapVerdict:
    """What may be said about the swap, for a person and for code.

    Attributes
    ----------
    code : str
        One of ``estimated``, ``no_evidence``, ``unreliable``,
        ``not_identified``.
    sentence : str
        The conclusion in plain words, built from the code.
    reasons : tuple of str
        Every check that decided an ``unreliable`` or ``not_identified``
        verdict (empty otherwise).
    interval : (float, float) or None
        Confidence interval for the group swap count alpha
        (``estimated`` and ``no_evidence`` only).
    rate_interval : (float, float) or None
        The same for the swap rate rho (Lemma 2.3).
    confidence : float
        Confidence level of the intervals.
    detectable_count, detectable_rate : float or None
        ``no_evidence``: the smallest group swap count (and swap rate) the
        estimator would have detected.
    calibrated : bool
        Whether the re-swap calibration ran.
    notes : tuple of str
        Caveats that do not change the code (e.g. the calibration was skipped).
    """

    code: str
    sentence: str
    reasons: tuple[str, ...] = ()
    interval: tuple[float, float] | None = None
    rate_interval: tuple[float, float] | None = None
    confidence: float = 0.95
    detectable_count: float | None = None
    detectable_rate: float | None = None
    calibrated: bool = True
    notes: tuple[str, ...] = ()

    @property
    def quotable(self) -> bool:
        """True for the confident verdicts ``estimated`` and ``no_evidence``."""
        return self.code in ("estimated", "no_evidence")

    def __str__(self) -> str:
        return f"{self.code}: {self.sentence}"

    def line(self) -> str:
        """The verdict as the first line of every output: ``verdict: <code>: <sentence>``."""
        return f"verdict: {self}"


def _no_conclusion(
    reason: str, confidence: float, calibrated: bool, notes: list[str]
) -> SwapVerdict:
    """``unreliable`` when the interval includes 0 but nothing shows a swap would have been seen."""
    return SwapVerdict(
        code="unreliable",
        sentence=f"No conclusion about swapping can be drawn, because {reason}.",
        reasons=(reason,),
        confidence=confidence,
        calibrated=calibrated,
        notes=tuple(notes),
    )


def _rate(alpha: float, n0: float, n1: float) -> float:
    n = n0 + n1
    return float(alpha) * (n - 1) / (2.0 * n0 * n1)


def judge_swap_estimate(
    *,
    n0: float,
    n1: float,
    alpha: float,
    standard_error: float,
    converged: bool = True,
    a0: float | None = None,
    a1: float | None = None,
    identified: bool = True,
    associated: bool = True,
    identification_reason: str = "",
    imbalance: float | None = None,
    imbalance_threshold: float = 0.01,
    fit: ModelFitCheck | None = None,
    calibration: SwapCalibration | None = None,
    confidence: float = 0.95,
) -> SwapVerdict:
    """Combine the checks of an estimate into a :class:`SwapVerdict`.

    Parameters
    ----------
    n0, n1 : float
        Records in group 0 and group 1.
    alpha, standard_error : float
        The maximiser of the likelihood (or Consensus' alpha) and its SE.
    converged : bool
    a0, a1 : float, optional
        Estimated changes 1 -> 0 and 0 -> 1 (Section 4.1.4).
    identified : bool
        The identifiability check.
    associated : bool
        Its association test: False means the attributes carry no detectable
        information about the swap attribute (``not_identified``). Associated
        but not identified (the fit no better than a latent-class model that
        ignores the swap attribute) means the model explains structure among
        the attributes rather than swaps: ``unreliable``.
    identification_reason : str
    imbalance : float, optional
        |A0 - A1| / N; judged against ``imbalance_threshold``.
    imbalance_threshold : float, default 0.01
        Imbalance above which the verdict is ``unreliable``.
    fit : ModelFitCheck, optional
        The model fit check (None when not applicable, as for Consensus).
    calibration : SwapCalibration, optional
        The re-swap calibration; None when skipped.
    confidence : float, default 0.95
        Confidence level of the interval.

    Returns
    -------
    SwapVerdict
        The code, the sentence built from it, and the interval when the code
        allows one.
    """
    n = n0 + n1
    calibrated = calibration is not None
    notes: list[str] = []
    if not calibrated:
        notes.append("the re-swap calibration was skipped: the interval assumes the model is right")
    if not identified and not associated:
        return SwapVerdict(
            code="not_identified",
            sentence=(
                "The swap count cannot be estimated from these attributes, "
                f"because {identification_reason.rstrip('.')}. Choose attributes that predict "
                "the swap attribute."
            ),
            reasons=(identification_reason,),
            confidence=confidence,
            calibrated=calibrated,
            notes=tuple(notes),
        )
    reasons: list[str] = []
    if not identified:
        reasons.append(identification_reason)
    # A rho data swap has rho < 1/2 (Definition 2.1), so alpha < n0 n1 / (N - 1) by Lemma 2.3.
    alpha_limit = n0 * n1 / (n - 1)
    if not alpha < alpha_limit:
        reasons.append(
            "the likelihood is largest at a swap rate of 1/2 or more, which no data swap "
            "produces (an impossible value)"
        )
    if a0 is not None and a0 > n1:
        reasons.append(
            f"the model counts more changes 1->0 than the {n1:,.0f} records of group 1 (an "
            "impossible value)"
        )
    if a1 is not None and a1 > n0:
        reasons.append(
            f"the model counts more changes 0->1 than the {n0:,.0f} records of group 0 (an "
            "impossible value)"
        )
    if not converged:
        reasons.append("Algorithm 1 did not converge")
    if not (standard_error == standard_error and standard_error < float("inf")):
        reasons.append("the likelihood has no curvature at its maximum (no standard error)")
    if imbalance is not None and imbalance > imbalance_threshold:
        reasons.append(
            f"the model disagrees with itself about how many records moved each way (imbalance "
            f"|A0 - A1|/N = {imbalance:.4f} > {imbalance_threshold:g}, Kifer 2015, Section 4.1.4)"
        )
    if fit is not None and not fit.fits:
        reasons.append(fit.reason)
    if calibration is not None and not calibration.follows:
        reasons.append(calibration.reason)
    if reasons:
        return SwapVerdict(
            code="unreliable",
            sentence=(
                "No estimate of the swap rate can be quoted, because "
                + "; ".join(r.rstrip(".") for r in reasons)
                + "."
            ),
            reasons=tuple(reasons),
            confidence=confidence,
            calibrated=calibrated,
            notes=tuple(notes),
        )
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    corrected = alpha
    if calibration is not None and calibration.slope > 0:
        corrected = alpha / calibration.slope
    low = min(alpha, corrected) - z * standard_error
    high = min(max(alpha, corrected) + z * standard_error, alpha_limit)
    pct = round(100 * confidence)
    if low > 0:
        interval = (float(low), float(high))
        rates = (_rate(low, n0, n1), _rate(high, n0, n1))
        return SwapVerdict(
            code="estimated",
            sentence=(
                f"About {100 * alpha / n:.2f}% of the records moved from "
                f"group 0 to group 1, and as many back (group swap count alpha = {alpha:,.0f}, "
                f"{pct}% interval {low:,.0f} to {high:,.0f}; swap rate rho = "
                f"{_rate(alpha, n0, n1):.4f}, {pct}% interval {rates[0]:.4f} to {rates[1]:.4f})."
            ),
            interval=interval,
            rate_interval=rates,
            confidence=confidence,
            calibrated=calibrated,
            notes=tuple(notes),
        )
    if not calibrated:
        return _no_conclusion(
            "the interval includes 0 and, without the re-swap calibration (skipped), nothing "
            "shows that the estimator would have seen a swap",
            confidence,
            calibrated,
            notes,
        )
    detectable = min(2.0 * z * standard_error, alpha_limit)
    detectable_rate = _rate(detectable, n0, n1)
    if detectable_rate >= 0.25:
        return _no_conclusion(
            "the interval includes 0 and the estimate is too uncertain to have seen a swap of "
            "rate below 0.25",
            confidence,
            calibrated,
            notes,
        )
    interval = (0.0, float(high))
    return SwapVerdict(
        code="no_evidence",
        sentence=(
            f"No evidence of swapping: the {pct}% interval for the group swap count, 0 to "
            f"{high:,.0f} (swap rate rho up to {_rate(high, n0, n1):.4f}), includes 0, and the "
            "re-swap calibration shows the estimator follows known swaps; a swap of rate "
            f"{detectable_rate:.4f} or more (alpha {detectable:,.0f} or more) would have been "
            "detected."
        ),
        interval=interval,
        rate_interval=(0.0, _rate(high, n0, n1)),
        confidence=confidence,
        detectable_count=float(detectable),
        detectable_rate=float(detectable_rate),
        calibrated=True,
        notes=tuple(notes),
    )
