"""The relaxed likelihood of Kifer (2015), Section 4.1.1, and the steps of Algorithm 1.

With a record model M_theta and the relaxed swap process (a true 0 becomes
1 with probability alpha/n0, a true 1 becomes 0 with probability alpha/n1),
the relaxed log-likelihood of the released data is::

    log L*(alpha, theta) = sum_{s~_i=0} log[(n0 - alpha) P0_i + alpha P1_i]
                         + sum_{s~_j=1} log[alpha P0_j + (n1 - alpha) P1_j] - N log N

with Pa_i = P_theta(r_i | s = a). This module holds that function and the
steps Algorithm 1 and the identifiability test share: the E and M steps of
EM for theta with alpha fixed, Newton steps on alpha with theta fixed
(Lemma 4.1: log L* is concave in alpha), SQUAREM extrapolation (Varadhan &
Roland 2008) and the profile-likelihood standard error. The estimator
itself is :func:`sdckit.swaprate.gsc.estimate_swap_count`.

Only :func:`relaxed_log_likelihood` is public; :class:`RelaxedProblem` and
:class:`AlgorithmRun` are the plumbing of :mod:`~sdckit.swaprate.gsc` and
:mod:`~sdckit.swaprate.identifiability`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit.swaprate.models import RecordModel

__all__ = ["relaxed_log_likelihood"]

#: ``progress(iteration, max_iter)`` after each outer iteration of Algorithm 1.
Progress = Callable[[int, int], None]
#: One map of an EM-type iteration: (t, alpha) -> (t, alpha, log L*).
_Step = Callable[[np.ndarray, float], tuple[np.ndarray, float, float]]


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
    top, p0, p1 = scaled_densities(record_log_likelihoods)
    return relaxed_terms(alpha, p0, p1, top, s, w, n0, n1)


def relaxed_terms(
    alpha: float,
    p0: np.ndarray,
    p1: np.ndarray,
    top: np.ndarray | None,
    s: np.ndarray,
    w: np.ndarray,
    n0: float,
    n1: float,
) -> tuple[float, float, float]:
    """log L* (NaN when ``top`` is None) and its first two alpha-derivatives."""
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


def scaled_densities(log_lik: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def change_probabilities(
    alpha: float, p0: np.ndarray, p1: np.ndarray, s: np.ndarray, n0: float, n1: float
) -> np.ndarray:
    """The E step of Algorithm 1: t_i = P(record i's s was changed | r_i, s~_i)."""
    denominator, _ = _mixture_terms(alpha, p0, p1, s, n0, n1)
    changed = alpha * np.where(s == 0, p1, p0)
    return np.divide(changed, denominator, out=np.zeros_like(changed), where=denominator > 0)


def class_weights(t: np.ndarray, s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Example 4.2: true class s~ with weight 1 - t, the other with weight t (times multiplicity)."""
    w1 = np.where(s == 1, 1.0 - t, t)
    return np.column_stack([w * (1.0 - w1), w * w1])


def _squarem_ratio(r: np.ndarray, v: np.ndarray) -> float:
    """SQUAREM step length (Varadhan & Roland 2008, scheme S3), at most -1."""
    denom = float(v @ v)
    return min(-np.sqrt(float(r @ r) / denom), -1.0) if denom > 0 else -1.0


@dataclass(frozen=True)
class AlgorithmRun:
    """One run of Algorithm 1 from one starting alpha: where it ended and how it got there."""

    alpha: float
    parameters: Any
    t: np.ndarray
    log_lik: np.ndarray
    iterations: int
    em_iterations: int
    converged: bool
    log_likelihood: float
    start: float


@dataclass(frozen=True)
class RelaxedProblem:
    """The released data as Algorithm 1 sees them, and the steps that climb log L*.

    ``records`` are the model's encoded records, ``s`` the released swap
    attribute (0/1), ``w`` the multiplicity of every row (identical records
    merged), ``n0`` and ``n1`` the weighted class sizes.
    """

    records: Any
    s: np.ndarray
    w: np.ndarray
    n0: float
    n1: float
    model: RecordModel

    @property
    def upper(self) -> float:
        """min(n0, n1): alpha cannot exceed the smaller class."""
        return min(self.n0, self.n1)

    def terms(
        self, alpha: float, p0: np.ndarray, p1: np.ndarray, top: np.ndarray | None
    ) -> tuple[float, float, float]:
        """log L* and its first two alpha-derivatives (see :func:`relaxed_terms`)."""
        return relaxed_terms(alpha, p0, p1, top, self.s, self.w, self.n0, self.n1)

    def change_probabilities(self, alpha: float, p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
        """The E step (see :func:`change_probabilities`)."""
        return change_probabilities(alpha, p0, p1, self.s, self.n0, self.n1)

    def m_step(self, t: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """M step for the change probabilities t: theta, log P(r | s), and its scaled form."""
        parameters = self.model.fit(self.records, class_weights(t, self.s, self.w))
        log_lik = self.model.log_likelihood(parameters, self.records)
        top, p0, p1 = scaled_densities(log_lik)
        return parameters, log_lik, top, p0, p1

    def newton_alpha(
        self, alpha: float, p0: np.ndarray, p1: np.ndarray, tol: float, max_steps: int = 50
    ) -> float:
        """Maximise log L* over alpha in (0, min(n0, n1)) with theta fixed (Lemma 4.1).

        Newton steps; log L* is concave in alpha, and a step leaving the
        interval goes halfway to the bound it crossed instead, so alpha stays
        feasible.
        """
        upper = self.upper
        for _ in range(max_steps):
            _, first, second = self.terms(alpha, p0, p1, None)
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

    def _final_run(
        self,
        alpha: float,
        t: np.ndarray,
        iterations: int,
        em_total: int,
        converged: bool,
        start: float,
    ) -> AlgorithmRun:
        """theta consistent with the final t, and the fit statistics there."""
        parameters, log_lik, top, p0, p1 = self.m_step(t)
        t = self.change_probabilities(alpha, p0, p1)
        value, _, _ = self.terms(alpha, p0, p1, top)
        return AlgorithmRun(
            alpha, parameters, t, log_lik, iterations, em_total, converged, value, start
        )

    def run_from(
        self,
        alpha: float,
        tol: float,
        max_iter: int,
        max_em_iter: int,
        progress: Progress | None,
    ) -> AlgorithmRun:
        """Algorithm 1 from one starting value of alpha (lines 2-18)."""
        start = alpha
        t = np.zeros(len(self.s))  # line 2
        alpha_tol = tol * (self.n0 + self.n1)
        em_total = 0
        converged = False
        iteration = 0
        for iteration in range(1, max_iter + 1):
            # EM for theta with alpha fixed (lines 4-13); the first block runs to
            # convergence whatever max_em_iter says (see run_accelerated).
            for _ in range(max_em_iter if iteration > 1 else max(max_em_iter, 1000)):
                _, _, _, p0, p1 = self.m_step(t)  # M step
                t_new = self.change_probabilities(alpha, p0, p1)  # E step
                em_change = float(np.max(np.abs(t_new - t)))
                t = t_new
                em_total += 1
                if em_change <= tol:
                    break
            # Newton on alpha with theta fixed (lines 14-16).
            new_alpha = self.newton_alpha(alpha, p0, p1, alpha_tol)
            moved = abs(new_alpha - alpha)
            alpha = new_alpha
            t = self.change_probabilities(alpha, p0, p1)
            if progress is not None:
                progress(iteration, max_iter)
            if moved <= alpha_tol and em_change <= tol:
                converged = True
                break
        return self._final_run(alpha, t, iteration, em_total, converged, start)

    def _squarem_cycle(
        self, step: _Step, t0: np.ndarray, a0: float
    ) -> tuple[np.ndarray, float, np.ndarray, float, int]:
        """One SQUAREM cycle (Varadhan & Roland 2008, scheme S3) of the map ``step``.

        Two steps, an extrapolation along them, and one step from the
        extrapolated point, falling back to the plain step whenever the
        extrapolation lowered log L*. Returns the point the last step started
        from, the point it reached, and the number of steps taken.
        """
        upper = self.upper
        t1, a1, _ = step(t0, a0)
        t2, a2, value2 = step(t1, a1)
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
        steps = 3
        if not np.isfinite(value3) or value3 < value2:
            t_x, a_x = t2, a2
            t3, a3, value3 = step(t2, a2)
            steps += 1
        return t_x, a_x, t3, a3, steps

    def _em_step(self, t: np.ndarray, alpha: float) -> tuple[np.ndarray, float, float]:
        """The EM map at fixed alpha: M step, then E step; alpha unchanged."""
        _, _, top, p0, p1 = self.m_step(t)
        value = self.terms(alpha, p0, p1, top)[0]
        return self.change_probabilities(alpha, p0, p1), alpha, value

    def run_accelerated(
        self, alpha: float, tol: float, max_iter: int, progress: Progress | None
    ) -> AlgorithmRun:
        """Algorithm 1 with one EM step per Newton block, accelerated by SQUAREM.

        The map G: (t, alpha) -> M step -> Newton on alpha -> E step is the
        alternation of Algorithm 1; each of its steps never lowers log L*.
        Along the ridge where alpha and theta trade off it converges slowly,
        so every cycle takes two G steps, extrapolates along them (Varadhan &
        Roland 2008, scheme S3) and then one G step from the extrapolated
        point, falling back to the plain step whenever the extrapolation
        lowered log L*. The fixed point is Algorithm 1's.
        """
        start = alpha
        alpha_tol = tol * (self.n0 + self.n1)

        def step(t: np.ndarray, a: float) -> tuple[np.ndarray, float, float]:
            _, _, top, p0, p1 = self.m_step(t)
            a = self.newton_alpha(a, p0, p1, alpha_tol)
            value = self.terms(a, p0, p1, top)[0]
            return self.change_probabilities(a, p0, p1), a, value

        # The first EM block runs to convergence at the starting alpha, as in
        # Algorithm 1: a Newton step taken from the naive theta (fitted with
        # t = 0) would throw every start to the same place.
        t0, _, em_total = self.em_fixed_alpha(alpha, np.zeros(len(self.s)), tol, 1000)
        a0 = alpha
        converged = False
        iteration = 0
        for iteration in range(1, max_iter + 1):
            t_x, a_x, t3, a3, steps = self._squarem_cycle(step, t0, a0)
            em_total += steps
            if progress is not None:
                progress(iteration, max_iter)
            done = float(np.max(np.abs(t3 - t_x))) <= tol and abs(a3 - a_x) <= alpha_tol
            t0, a0 = t3, a3
            if done:
                converged = True
                break
        return self._final_run(a0, t0, iteration, em_total, converged, start)

    def em_fixed_alpha(
        self, alpha: float, t: np.ndarray, tol: float, max_em_iter: int
    ) -> tuple[np.ndarray, float, int]:
        """EM for theta with alpha fixed (Algorithm 1, lines 4-13), from t.

        Returns the final t, log L*(alpha, theta) at the final theta, and the
        number of EM steps taken.
        """
        steps = 0
        for steps in range(1, max_em_iter + 1):  # noqa: B007 - the count is returned
            _, _, top, p0, p1 = self.m_step(t)
            t_new = self.change_probabilities(alpha, p0, p1)
            done = float(np.max(np.abs(t_new - t))) <= tol
            t = t_new
            if done:
                break
        # log L* once, at the final theta (not at every step: it costs a log per record).
        return t, self.terms(alpha, p0, p1, top)[0], steps

    def em_fixed_alpha_accelerated(
        self, alpha: float, t: np.ndarray, tol: float, max_iter: int
    ) -> float:
        """max over theta of log L*(alpha, theta) by EM from t, accelerated by SQUAREM.

        The EM map t -> M step -> E step at fixed alpha, extrapolated as in
        :meth:`run_accelerated` with a fall-back to the plain step whenever
        the extrapolation lowered log L*. A latent-class fit of overlapping
        classes converges too slowly for plain EM. Returns log L* at the
        final theta.
        """
        for _ in range(max_iter):
            t_x, _, t3, _, _ = self._squarem_cycle(self._em_step, t, alpha)
            done = float(np.max(np.abs(t3 - t_x))) <= tol
            t = t3
            if done:
                break
        return self._em_step(t, alpha)[2]

    def profile_standard_error(self, run: AlgorithmRun, fixed_se: float, tol: float) -> float:
        """SE of alpha from the curvature of the profile relaxed log-likelihood.

        Second difference of max_theta log L*(alpha, theta) at alpha_hat +- h
        (one-sided near the bounds), h = 2 x the theta-fixed SE: this accounts
        for the uncertainty in theta, which the theta-fixed curvature ignores.
        """
        upper = self.upper
        h = min(max(2.0 * fixed_se, 1.0), 0.25 * upper)
        a = run.alpha
        if a - h < 0:
            points = (a, a + h, a + 2 * h)
        elif a + h >= upper:
            points = (a - 2 * h, a - h, a)
        else:
            points = (a - h, a, a + h)
        values = [
            run.log_likelihood if x == a else self.em_fixed_alpha(x, run.t, tol, 1000)[1]
            for x in points
        ]
        curvature = (values[0] - 2 * values[1] + values[2]) / (h * h)
        if not np.isfinite(curvature) or curvature >= 0:
            return float("inf")
        return float(1.0 / np.sqrt(-curvature))
