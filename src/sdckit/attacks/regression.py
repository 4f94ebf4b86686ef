"""Regression attacks: artificial outliers and strategic dummies (Bleninger, Drechsler & Ronning 2011).

An intruder who knows a few variables of one target record ``m`` (its size,
its state, ...) asks a server for an ordinary least-squares regression of a
sensitive variable on a regressor she built from that knowledge, and reads
the target's value off the fitted prediction ``ŷ_m``:

* the *artificial outlier* ``z = 1/(|x - x̂_m| + ε)`` (eq. 1) makes ``m`` a
  leverage point whose prediction tends to ``y_m`` as ``ε -> 0`` when no
  other record shares ``x_m`` (Appendix A.1);
* the *strategic dummy* (eqs. 2-4) is 1 for the records matching the
  background exactly (eq. 2), within ``±γ`` or within ``±δ`` (eq. 3), on
  every background variable at once (eq. 4); when it picks out ``m`` alone,
  ``ŷ_m = y_m`` exactly, with or without other regressors (Appendix A.2).

:func:`regression_attack` runs both attacks with every record as the target
on subsets by quantile of a size variable and reports the paper's columns
(Tables 1-3): N, the share uniquely identified, and Δ, the mean absolute
relative error of ``ŷ_m`` (eq. 5), over all targets and over the uniquely
identified ones.

Every per-target fit reuses one QR factorisation of the design without the
attack regressor ``s``: by the Frisch-Waugh-Lovell theorem the coefficient of
``s`` is ``s̃'e / s̃'s̃`` with ``s̃ = s - Q Q's`` and ``e`` the base residuals,
so a target costs O(n k) instead of a new factorisation (a strategic dummy
costs O(|matches| k)). :mod:`sdckit.attacks.targets` runs the same attacks
against sdckit's analysis server and masked releases.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import check_dataframe, check_positive, plain_value
from sdckit.errors import DataError, ParameterError, SchemaError

__all__ = [
    "DEFAULT_QUANTILES",
    "RECOVERY_TOLERANCE",
    "RegressionAttackResult",
    "artificial_outlier",
    "dummy_mean_isolates",
    "dummy_variance_isolates",
    "isolated_dummy_variance",
    "outlier_distance",
    "quantile_subsets",
    "recover_value",
    "regression_attack",
    "strategic_dummy",
    "unique_maximum",
]

#: The paper's subsets: all records, then the records at or above these size quantiles.
DEFAULT_QUANTILES = (0.0, 0.5, 0.75, 0.9, 0.99, 0.999)

#: A target's value counts as recovered when ``|ŷ_m - y_m| <= 0.01 |y_m|``.
RECOVERY_TOLERANCE = 0.01

#: Targets per block of the artificial-outlier evaluation (block x n floats in memory).
_BLOCK = 256


# ---------------------------------------------------------------------------
# The intruder's regressors
# ---------------------------------------------------------------------------


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(
        series.dtype
    )


def outlier_distance(data: pd.DataFrame, *, known: Mapping[str, Any]) -> np.ndarray:
    """Distance of every record from the intruder's knowledge, the argument of eq. 1.

    For one numeric variable this is ``|x - x̂_m|`` (Bleninger, Drechsler &
    Ronning 2011, eq. 1). For several (their Table 2 interacts size with the
    federal state) it is the sum over the variables of ``|x_j - x̂_j|``,
    a categorical variable contributing 1 when it differs from the known
    level and 0 when it matches: the distance is 0 exactly for the records
    that match the whole combination, so ``z`` has a unique maximum exactly
    when the combination is unique in the data, which is what the paper's
    interaction term achieves. A missing value never matches.

    Parameters
    ----------
    data : DataFrame
        The records the server holds.
    known : mapping
        Column -> the value the intruder knows for the target.

    Returns
    -------
    numpy.ndarray
        One non-negative distance per record (``inf`` where a value is missing).
    """
    check_dataframe(data, "data")
    distance = np.zeros(len(data))
    for column, value in known.items():
        if column not in data.columns:
            raise SchemaError(f"known: column {column!r} is not in the data")
        series = data[column]
        if _is_numeric(series):
            values = series.to_numpy(dtype=float)
            part = np.abs(values - float(value))
        else:
            part = np.where(series.to_numpy(dtype=object) == value, 0.0, 1.0)
            part[series.isna().to_numpy()] = np.inf
        distance += np.where(np.isnan(part), np.inf, part)
    return distance


def artificial_outlier(distance: np.ndarray, *, epsilon: float = 1e-4) -> np.ndarray:
    """The artificial outlier ``z = 1/(|x - x̂_m| + ε)`` (Bleninger, Drechsler & Ronning 2011, eq. 1).

    Parameters
    ----------
    distance : array
        ``|x - x̂_m|`` per record, e.g. from :func:`outlier_distance`.
    epsilon : float, default 1e-4
        The paper's ``ε`` (they use 0.0001): the target's ``z`` is ``1/ε``;
        the smaller ``ε``, the closer ``ŷ_m`` comes to ``y_m`` (Appendix A.1).

    Returns
    -------
    numpy.ndarray
        ``z`` per record (0 where the distance is infinite).
    """
    epsilon = check_positive(epsilon, "epsilon")
    return 1.0 / (np.asarray(distance, dtype=float) + epsilon)


def strategic_dummy(
    data: pd.DataFrame,
    *,
    known: Mapping[str, Any],
    gamma: Mapping[str, float] | None = None,
    delta: Mapping[str, float] | None = None,
) -> np.ndarray:
    """The strategic dummy (Bleninger, Drechsler & Ronning 2011, eqs. 2-4).

    A record gets 1 when it matches the intruder's knowledge on every
    variable of ``known`` (the conjunction of eq. 4): exactly (eq. 2), within
    ``x - γ < x̂_m < x + γ`` for a variable in ``gamma`` or within
    ``(1 - δ) x < x̂_m < (1 + δ) x`` for a variable in ``delta`` (eq. 3 and
    its multiplicative form; the paper's approximate size uses δ = 0.025).
    A missing value never matches.

    Parameters
    ----------
    data : DataFrame
        The records the server holds.
    known : mapping
        Column -> the value the intruder knows (``x̂_m``).
    gamma : mapping, optional
        Column -> additive tolerance ``γ > 0`` (numeric columns only).
    delta : mapping, optional
        Column -> multiplicative tolerance ``δ`` in (0, 1) (numeric columns only).

    Returns
    -------
    numpy.ndarray of bool
        The dummy, one value per record.
    """
    check_dataframe(data, "data")
    gamma = dict(gamma or {})
    delta = dict(delta or {})
    for name, tolerances in (("gamma", gamma), ("delta", delta)):
        for column in tolerances:
            if column not in known:
                raise ParameterError(f"{name}: column {column!r} is not among the known columns")
    dummy = np.ones(len(data), dtype=bool)
    for column, value in known.items():
        if column not in data.columns:
            raise SchemaError(f"known: column {column!r} is not in the data")
        series = data[column]
        if column in gamma or column in delta:
            if not _is_numeric(series):
                raise SchemaError(
                    f"{column!r} is not numeric; an approximate match (gamma, delta) needs numbers"
                )
            values = series.to_numpy(dtype=float)
            target = float(value)
            if column in gamma:
                g = check_positive(gamma[column], f"gamma[{column!r}]")
                match = (values - g < target) & (target < values + g)
            else:
                d = check_positive(delta[column], f"delta[{column!r}]")
                if d >= 1:
                    raise ParameterError(f"delta[{column!r}] must be < 1, got {d!r}")
                low, high = (1 - d) * values, (1 + d) * values
                match = (np.minimum(low, high) < target) & (target < np.maximum(low, high))
                # (1 - δ)x < x̂ < (1 + δ)x is empty at x = 0: a size of 0 is known exactly.
                match |= (values == 0) & (target == 0)
        elif _is_numeric(series):
            match = series.to_numpy(dtype=float) == float(value)
        else:
            match = series.to_numpy(dtype=object) == value
        dummy &= match & series.notna().to_numpy()
    return dummy


def dummy_mean_isolates(mean: float, n: int, *, rtol: float = 1e-9) -> bool:
    """The intruder's check that a dummy picks out one record: its mean is 1/n.

    Bleninger, Drechsler & Ronning (2011), Section 4.2.

    Parameters
    ----------
    mean : float
        The mean of the dummy the server reported.
    n : int
        The number of records in the regression.
    rtol : float, default 1e-9
        Relative tolerance (a released mean is rounded).

    Returns
    -------
    bool
        True when ``mean`` equals ``1/n``.
    """
    return bool(np.isclose(float(mean), 1.0 / n, rtol=rtol, atol=0.0))


def isolated_dummy_variance(n: int, *, ddof: int = 0) -> float:
    """The variance of a dummy that is 1 for exactly one of n records.

    Bleninger, Drechsler & Ronning (2011, Section 4.2) print it as
    ``1/n + 1/n²``; that is a misprint. One 1 among n values has mean ``1/n``
    and variance ``(1/n)(1 - 1/n)`` with the divisor n (``ddof=0``), or
    exactly ``1/n`` with the divisor n - 1 (``ddof=1``, the sample variance
    most software reports).

    Parameters
    ----------
    n : int
        Number of records (at least 2).
    ddof : {0, 1}, default 0
        Delta degrees of freedom of the reported variance.

    Returns
    -------
    float
        ``(1/n)(1 - 1/n)`` for ``ddof=0``, ``1/n`` for ``ddof=1``.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise ParameterError(f"n must be an integer >= 2, got {n!r}")
    if ddof not in (0, 1):
        raise ParameterError(f"ddof must be 0 or 1, got {ddof!r}")
    return (1.0 / n) * (1.0 - 1.0 / n) if ddof == 0 else 1.0 / n


def dummy_variance_isolates(variance: float, n: int, *, ddof: int = 0, rtol: float = 1e-9) -> bool:
    """The intruder's check when means are suppressed: the dummy's variance.

    Compares ``variance`` with :func:`isolated_dummy_variance` (the paper's
    ``1/n + 1/n²`` is a misprint, see there). A dummy with one 0 among n
    records has the same variance; the intruder tells the two apart by the
    sign of its coefficient or by building the dummy the other way round.

    Parameters
    ----------
    variance : float
        The variance of the dummy the server reported.
    n : int
        The number of records in the regression.
    ddof : {0, 1}, default 0
        The divisor the server used (n - ddof).
    rtol : float, default 1e-9
        Relative tolerance.

    Returns
    -------
    bool
        True when the variance is that of a dummy isolating one record.
    """
    expected = isolated_dummy_variance(n, ddof=ddof)
    return bool(np.isclose(float(variance), expected, rtol=rtol, atol=0.0))


def unique_maximum(z: np.ndarray) -> bool:
    """Whether an artificial outlier has a unique maximum (Bleninger, Drechsler & Ronning 2011, §4.2).

    Parameters
    ----------
    z : array
        The artificial outlier of every record.

    Returns
    -------
    bool
        True when exactly one record attains the largest ``z``: only then has
        a single record been identified.
    """
    z = np.asarray(z, dtype=float)
    z = z[np.isfinite(z)]
    if len(z) == 0:
        return False
    return int(np.count_nonzero(z == z.max())) == 1


def recover_value(coefficients: Sequence[float], regressors: Sequence[float]) -> float:
    """The target's value read off a fitted regression: ``ŷ_m = x_m' β̂``.

    Parameters
    ----------
    coefficients : sequence of float
        The released coefficients, intercept first.
    regressors : sequence of float
        The target's regressors in the same order, the leading 1 included
        (for the strategic dummy its dummy is 1; for the artificial outlier
        its ``z`` is ``1/ε``).

    Returns
    -------
    float
        ``ŷ_m`` (Bleninger, Drechsler & Ronning 2011, Appendix A).
    """
    beta = np.asarray(coefficients, dtype=float)
    x = np.asarray(regressors, dtype=float)
    if beta.shape != x.shape:
        raise ParameterError(
            f"coefficients and regressors differ in length ({len(beta)} and {len(x)})"
        )
    return float(beta @ x)


# ---------------------------------------------------------------------------
# Fast per-target fits: one QR of the base design, FWL for the attack column
# ---------------------------------------------------------------------------


class _BaseFit:
    """OLS of ``y`` on a base design X1 (intercept + extra regressors), factorised once.

    Adding one column ``s`` and predicting at a point ``(x1, s_m)``:
    ``ŷ = x1'β1 + β_s (s_m - a'Q's)`` with ``a = R^{-T} x1`` and
    ``β_s = s̃'e / s̃'s̃``, ``s̃ = s - Q Q's`` (Frisch-Waugh-Lovell).
    """

    def __init__(self, x1: np.ndarray, y: np.ndarray) -> None:
        self.q, self.r = np.linalg.qr(x1)
        self.beta1 = np.linalg.solve(self.r, self.q.T @ y)
        self.resid = y - x1 @ self.beta1
        self.q_resid = self.q.T @ self.resid  # zero up to rounding

    def points(self, x1_points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Base prediction and ``a = R^{-T} x1`` at target points (rows of x1_points)."""
        base = x1_points @ self.beta1
        a = np.linalg.solve(self.r.T, x1_points.T).T
        return base, a

    def predict_dense(
        self, s: np.ndarray, s_target: np.ndarray, base: np.ndarray, a: np.ndarray
    ) -> np.ndarray:
        """Predictions for a block of dense attack columns ``s`` (block x n)."""
        qs = s @ self.q  # block x k
        s_tilde = s - qs @ self.q.T
        ss = np.einsum("ij,ij->i", s_tilde, s_tilde)
        se = s_tilde @ self.resid
        norm = np.einsum("ij,ij->i", s, s)
        identified = ss > 1e-12 * np.maximum(norm, 1.0)
        beta = np.where(identified, se / np.where(identified, ss, 1.0), 0.0)
        return base + beta * (s_target - np.einsum("ij,ij->i", a, qs))

    def predict_dummy(self, members: np.ndarray, base: float, a: np.ndarray) -> float:
        """Prediction at a point with dummy 1 when the dummy is 1 on ``members``."""
        if len(members) == 0:
            return base  # the dummy is all 0: its coefficient is not estimable
        qs = self.q[members].sum(axis=0)
        ss = len(members) - float(qs @ qs)
        if ss <= 1e-12 * len(members):
            return base  # the dummy lies in the span of the base design
        se = float(self.resid[members].sum()) - float(self.q_resid @ qs)
        return base + (se / ss) * (1.0 - float(a @ qs))


# ---------------------------------------------------------------------------
# Evaluation over every record as the target
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RegressionAttackResult(FrozenResult):
    """Regression attacks with every record as the target (Bleninger, Drechsler & Ronning 2011, Tables 1-3).

    Attributes
    ----------
    table : DataFrame
        One row per subset and attack: ``quantile`` (0 is all records),
        ``attack`` ("artificial outlier" or "strategic dummy"),
        ``indicators`` (the background used, in the paper's words),
        ``N`` (records in the subset), ``identified`` (share uniquely
        identified), ``delta_all`` and ``delta_identified`` (Δ of eq. 5 over
        all targets and over the uniquely identified ones; NaN when there
        are none), ``recovered`` (share of targets whose ``ŷ_m`` is within
        1% of ``y_m``, whether or not identified: a good model of the
        background predicts some records that well without isolating them),
        ``identified_recovered`` (share of targets both uniquely identified
        and recovered within 1%: the disclosures), ``answered`` (share of
        targets the server answered),
        ``targets`` (targets evaluated: all N, or a sample) and ``min_units``
        (for a server attacked query by query, the smallest number of units
        an answer reported using; NaN otherwise or when nothing was answered).
    target : str
        What was attacked ("naive server", "sdckit AnalysisServer", a masked release...).
    params : mapping
        The attack's settings (sensitive, background, approx, epsilon, ...).
    """

    table: pd.DataFrame
    target: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def headline(self) -> dict[str, float]:
        """The worst case over the table.

        Returns
        -------
        dict
            ``max_identified``, ``max_disclosed`` and ``max_recovered``: the
            largest share, over the rows, of targets uniquely identified, of
            targets identified and recovered within 1%, and of targets
            predicted within 1% whether identified or not.
        """
        return {
            "max_identified": float(self.table["identified"].max()),
            "max_disclosed": float(self.table["identified_recovered"].max()),
            "max_recovered": float(self.table["recovered"].max()),
        }

    def summary(self) -> str:
        """The table in the paper's layout, after a one-line verdict."""
        head = self.headline()
        if head["max_disclosed"] > 0:
            verdict = (
                f"{self.target}: the attack isolates targets and recovers their sensitive values — "
                f"up to {head['max_disclosed']:.1%} of the targets of a subset within 1%"
            )
        elif head["max_identified"] > 0:
            verdict = (
                f"{self.target}: the attack isolates up to {head['max_identified']:.1%} of the "
                "targets of a subset, but recovers none of their values within 1%"
            )
        else:
            verdict = (
                f"{self.target}: no target was isolated; up to {head['max_recovered']:.1%} of the "
                "targets of a subset were predicted within 1% without being singled out, as a "
                "regression on the background variables predicts them"
            )
        shown = self.table.copy()
        shown["quantile"] = [_quantile_label(q) for q in shown["quantile"]]
        return verdict + "\n" + shown.to_string(index=False, float_format=lambda v: f"{v:.4g}")


def _quantile_label(q: float) -> str:
    return "all" if q == 0 else f"{q:g}"


def relative_errors(predicted: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """|ŷ - y| / |y| (eq. 5); NaN where y is 0 (the relative error is undefined)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(truth != 0, np.abs(predicted - truth) / np.abs(truth), np.nan)


def result_row(
    quantile: float,
    attack: str,
    indicators: str,
    n: int,
    identified: np.ndarray,
    errors: np.ndarray,
    answered: np.ndarray,
    min_units: float = float("nan"),
) -> dict[str, Any]:
    """One row of an attack table (Table 3): shares identified and recovered, answers."""
    finite = np.isfinite(errors)
    chosen = identified & finite
    return {
        "quantile": quantile,
        "attack": attack,
        "indicators": indicators,
        "N": n,
        "identified": float(identified.mean()) if len(identified) else float("nan"),
        "delta_all": float(errors[finite].mean()) if finite.any() else float("nan"),
        "delta_identified": float(errors[chosen].mean()) if chosen.any() else float("nan"),
        "recovered": float((finite & (errors <= RECOVERY_TOLERANCE)).mean())
        if len(errors)
        else float("nan"),
        "identified_recovered": float((chosen & (errors <= RECOVERY_TOLERANCE)).mean())
        if len(errors)
        else float("nan"),
        "answered": float(answered.mean()) if len(answered) else float("nan"),
        "targets": len(identified),
        "min_units": min_units,
    }


def _codes(series: pd.Series) -> np.ndarray:
    """Integer codes of a column's values, -1 for missing (matching never succeeds on -1)."""
    codes, _ = pd.factorize(series, use_na_sentinel=True)
    return np.asarray(codes)


class _Released:
    """The released file's arrays for one subset: response, base design, background columns."""

    def __init__(
        self,
        released: pd.DataFrame,
        rows: np.ndarray,
        sensitive: str,
        extra: Sequence[str],
    ) -> None:
        sub = released.iloc[rows]
        self.frame = sub
        y = sub[sensitive].to_numpy(dtype=float)
        x1 = np.column_stack([np.ones(len(sub))] + [sub[c].to_numpy(dtype=float) for c in extra])
        ok = np.isfinite(y) & np.isfinite(x1).all(axis=1)
        if not ok.all():
            raise DataError(
                f"{int((~ok).sum())} record(s) have a missing {sensitive!r}"
                + (f" or {', '.join(repr(c) for c in extra)}" if extra else "")
                + "; drop them first (the regression would leave them out)"
            )
        self.fit = _BaseFit(x1, y)


def _dummy_predictions(
    released: _Released,
    known: pd.DataFrame,
    columns: Sequence[str],
    approx_column: str | None,
    approx: float | None,
    approx_mode: str,
    x1_targets: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """ŷ_m and "uniquely identified" for every target, with the strategic dummy of eqs. 2-4."""
    frame = released.frame
    base, a = released.fit.points(x1_targets)
    n_targets = len(known)
    predictions = np.empty(n_targets)
    counts = np.empty(n_targets, dtype=np.int64)
    exact = [c for c in columns if c != approx_column or approx is None]
    # Exact conditions: a joint code per released record and the target's code in the same scheme.
    if exact:
        joint = pd.concat([frame[exact], known[exact]], ignore_index=True)
        valid = joint.notna().all(axis=1).to_numpy()
        codes = np.asarray(pd.MultiIndex.from_frame(joint).factorize()[0])
        codes = np.where(valid, codes, -1)
        released_codes, target_codes = codes[: len(frame)], codes[len(frame) :]
    else:
        released_codes = np.zeros(len(frame), dtype=np.int64)
        target_codes = np.zeros(n_targets, dtype=np.int64)
    order = np.argsort(released_codes, kind="stable")
    sorted_codes = released_codes[order]
    starts = np.searchsorted(sorted_codes, target_codes, side="left")
    stops = np.searchsorted(sorted_codes, target_codes, side="right")
    stops = np.where(target_codes < 0, starts, stops)
    if approx is not None and approx_column is not None:
        values = frame[approx_column].to_numpy(dtype=float)
        targets = known[approx_column].to_numpy(dtype=float)
    for t in range(n_targets):
        members = order[starts[t] : stops[t]]
        if approx is not None and approx_column is not None:
            v = values[members]
            x = targets[t]
            if approx_mode == "additive":
                keep = (v - approx < x) & (x < v + approx)
            else:
                low, high = (1 - approx) * v, (1 + approx) * v
                keep = (np.minimum(low, high) < x) & (x < np.maximum(low, high))
                keep |= (v == 0) & (x == 0)
            members = members[keep]
        counts[t] = len(members)
        predictions[t] = released.fit.predict_dummy(members, float(base[t]), a[t])
    return predictions, counts == 1


def _outlier_predictions(
    released: _Released,
    known: pd.DataFrame,
    columns: Sequence[str],
    epsilon: float,
    x1_targets: np.ndarray,
    progress: Callable[[], None] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """ŷ_m and "unique maximum of z" for every target, with the artificial outlier of eq. 1."""
    frame = released.frame
    base, a = released.fit.points(x1_targets)
    numeric: list[tuple[np.ndarray, np.ndarray]] = []
    categorical: list[tuple[np.ndarray, np.ndarray]] = []
    for c in columns:
        if _is_numeric(frame[c]):
            numeric.append(
                (frame[c].to_numpy(dtype=float), known[c].to_numpy(dtype=float)),
            )
        else:
            both = _codes(pd.concat([frame[c], known[c]], ignore_index=True))
            categorical.append((both[: len(frame)], both[len(frame) :]))
    n_targets = len(known)
    predictions = np.empty(n_targets)
    unique = np.empty(n_targets, dtype=bool)
    s_target = np.full(_BLOCK, 1.0 / epsilon)
    for start in range(0, n_targets, _BLOCK):
        stop = min(start + _BLOCK, n_targets)
        distance = np.zeros((stop - start, len(frame)))
        for values, targets in numeric:
            distance += np.abs(values[None, :] - targets[start:stop, None])
        for rel_codes, tgt_codes in categorical:
            mismatch = rel_codes[None, :] != tgt_codes[start:stop, None]
            mismatch |= (rel_codes < 0)[None, :] | (tgt_codes[start:stop] < 0)[:, None]
            distance += mismatch
        distance[~np.isfinite(distance)] = np.inf
        z = 1.0 / (distance + epsilon)
        predictions[start:stop] = released.fit.predict_dense(
            z, s_target[: stop - start], base[start:stop], a[start:stop]
        )
        unique[start:stop] = np.count_nonzero(distance == 0, axis=1) == 1
        if progress is not None:
            progress()
    return predictions, unique


def check_attack_inputs(
    data: pd.DataFrame,
    sensitive: str,
    background: Sequence[str] | str,
    size: str | None,
    extra: Sequence[str] | str | None,
    approx: float | None,
    approx_mode: str,
    epsilon: float,
    quantiles: Sequence[float],
    attacks: Sequence[str] | str,
) -> tuple[list[str], str, list[str], float | None, float, list[float], list[str]]:
    """Check the arguments of a regression attack; the background, size and extras as lists."""
    check_dataframe(data, "data", min_rows=3)
    if not isinstance(sensitive, str) or sensitive not in data.columns:
        raise SchemaError(f"sensitive: column {sensitive!r} is not in the data")
    if not _is_numeric(data[sensitive]):
        raise SchemaError(
            f"sensitive: column {sensitive!r} is not numeric (dtype {data[sensitive].dtype}); "
            "a regression attack recovers a number"
        )
    bg = [background] if isinstance(background, str) else list(background)
    if not bg:
        raise ParameterError("background must name at least one column the intruder knows")
    for c in bg:
        if c not in data.columns:
            raise SchemaError(f"background: column {c!r} is not in the data")
    if sensitive in bg:
        raise ParameterError(f"background: {sensitive!r} is the sensitive column itself")
    if len(set(bg)) != len(bg):
        raise ParameterError(f"background lists a column more than once: {bg}")
    size_column = bg[0] if size is None else size
    if size_column not in data.columns:
        raise SchemaError(f"size: column {size_column!r} is not in the data")
    if not _is_numeric(data[size_column]):
        raise SchemaError(
            f"size: column {size_column!r} is not numeric; subsets are quantiles of a size variable"
        )
    extras = [] if extra is None else ([extra] if isinstance(extra, str) else list(extra))
    for c in extras:
        if c not in bg:
            raise ParameterError(
                f"extra: {c!r} is not a background column; the intruder must know the "
                "target's value of every extra regressor"
            )
        if not _is_numeric(data[c]):
            raise SchemaError(f"extra: column {c!r} is not numeric")
    if approx_mode not in ("multiplicative", "additive"):
        raise ParameterError(
            f"approx_mode must be 'multiplicative' or 'additive', got {approx_mode!r}"
        )
    if approx is not None:
        approx = check_positive(approx, "approx")
        if approx_mode == "multiplicative" and approx >= 1:
            raise ParameterError(f"approx (a relative tolerance δ) must be < 1, got {approx!r}")
        if not _is_numeric(data[bg[0]]):
            raise SchemaError(
                f"approx: the first background column {bg[0]!r} is not numeric; only a number "
                "can be known approximately"
            )
    epsilon = check_positive(epsilon, "epsilon")
    qs = sorted({float(q) for q in quantiles})
    for q in qs:
        if not 0 <= q < 1:
            raise ParameterError(f"quantiles must be in [0, 1), got {plain_value(q)!r}")
    chosen = [attacks] if isinstance(attacks, str) else list(attacks)
    for a in chosen:
        if a not in ("outlier", "dummy"):
            raise ParameterError(f"attacks must be among 'outlier' and 'dummy', got {a!r}")
    return bg, size_column, extras, approx, epsilon, qs, chosen


def attack_params(
    sensitive: str,
    background: list[str],
    size: str,
    approx: float | None,
    approx_mode: str,
    epsilon: float,
    quantiles: list[float],
    extra: list[str],
    attacks: list[str],
) -> dict[str, Any]:
    """The checked settings of a regression attack, as its result's ``params`` records them.

    Parameters
    ----------
    sensitive : str
        The attacked column.
    background : list of str
        The columns the intruder knows.
    size : str
        The size variable of the subsets.
    approx : float or None
        The tolerance of an approximately known first background column.
    approx_mode : str
        "multiplicative" or "additive".
    epsilon : float
        The artificial outlier's epsilon.
    quantiles : list of float
        The subsets' size quantiles.
    extra : list of str
        Extra regressors.
    attacks : list of str
        The attacks run.

    Returns
    -------
    dict
        ``{name: value}`` under the attack's parameter names.
    """
    return {
        "sensitive": sensitive,
        "background": background,
        "size": size,
        "approx": approx,
        "approx_mode": approx_mode,
        "epsilon": epsilon,
        "quantiles": quantiles,
        "extra": extra,
        "attacks": attacks,
    }


def quantile_subsets(
    data: pd.DataFrame, size: str, quantiles: Sequence[float]
) -> list[tuple[float, np.ndarray]]:
    """Row positions of each subset: the records whose size is at or above the quantile.

    Parameters
    ----------
    data : DataFrame
        The records.
    size : str
        The size column.
    quantiles : sequence of float
        Quantiles in [0, 1); 0 is every record.

    Returns
    -------
    list of (float, numpy.ndarray)
        Per quantile, the row positions of the records in the subset (the
        paper's "0.9" row holds the largest 10%).
    """
    values = data[size].to_numpy(dtype=float)
    ok = np.isfinite(values)
    out = []
    for q in quantiles:
        if q == 0:
            out.append((q, np.flatnonzero(ok)))
        else:
            threshold = np.quantile(values[ok], q)
            out.append((q, np.flatnonzero(ok & (values >= threshold))))
    return out


def indicator_rows(
    background: Sequence[str], approx: float | None, attack: str
) -> list[tuple[str, list[str], float | None]]:
    """(label, columns, approx) per row: the background variables added one at a time (Table 3)."""
    rows: list[tuple[str, list[str], float | None]] = []
    first = background[0]
    if attack == "outlier":
        for i in range(1, len(background) + 1):
            rows.append(("*".join(background[:i]), list(background[:i]), None))
        return rows
    rows.append((f"exact {first}", [first], None))
    if approx is not None:
        rows.append((f"approx. {first}", [first], approx))
    for i in range(2, len(background) + 1):
        rows.append((f"+ {background[i - 1]}", list(background[:i]), approx))
    return rows


def regression_attack(
    data: pd.DataFrame,
    *,
    sensitive: str,
    background: Sequence[str] | str,
    approx: float | None = None,
    approx_mode: str = "multiplicative",
    epsilon: float = 1e-4,
    size: str | None = None,
    quantiles: Sequence[float] = DEFAULT_QUANTILES,
    extra: Sequence[str] | str | None = None,
    attacks: Sequence[str] | str = ("outlier", "dummy"),
    released: pd.DataFrame | None = None,
    target_name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RegressionAttackResult:
    """Attack every record with artificial outliers and strategic dummies (Bleninger, Drechsler & Ronning 2011, §4).

    For each subset (the records at or above a quantile of ``size``) and
    each record of it as the target ``m``, the intruder knows the target's
    ``background`` values and fits OLS of ``sensitive`` on an intercept, the
    ``extra`` regressors and one attack regressor, on the file the server
    holds, then reads off ``ŷ_m``. The rows follow the paper's tables:

    * artificial outlier (eq. 1, exact knowledge) from the first background
      variable (Table 1), then from its combination with the next ones
      (Table 2: size × federal state), a record counting as uniquely
      identified when ``z`` has a unique maximum;
    * strategic dummy (eqs. 2-4): exact first variable, then approximate
      (``approx``), then the others added one at a time (Table 3), a record
      counting as uniquely identified when the dummy is 1 for it alone
      (its mean is 1/n, :func:`dummy_mean_isolates`).

    The fits are those of a naive server answering unrestricted OLS;
    :func:`sdckit.attacks.attack` runs the same attacks against sdckit's
    analysis server or a masked release.

    Parameters
    ----------
    data : DataFrame
        The confidential file: the intruder's background comes from it and
        ``ŷ_m`` is compared with its ``sensitive`` values. Not modified.
    sensitive : str
        The numeric variable to recover (the paper: turnover).
    background : str or sequence of str
        The variables the intruder knows for the target, the size variable
        first (the paper: size, federal state, legal form, branch).
    approx : float, optional
        The tolerance of the approximate knowledge of the first background
        variable: δ for ``approx_mode="multiplicative"`` (the paper's 0.025)
        or γ for ``"additive"`` (eq. 3). None: no approximate rows.
    approx_mode : {"multiplicative", "additive"}, default "multiplicative"
    epsilon : float, default 1e-4
        The ``ε`` of the artificial outlier (eq. 1; the paper's 0.0001).
    size : str, optional
        The size variable defining the quantile subsets; default the first
        background variable.
    quantiles : sequence of float, default (0, 0.5, 0.75, 0.9, 0.99, 0.999)
        0 is every record; q the records at or above the q-quantile of size.
    extra : str or sequence of str, optional
        Numeric background variables added as regressors (Appendix A.2:
        ``ŷ_m = y_m`` holds with other regressors in the model).
    attacks : {"outlier", "dummy"} or both, default both
    released : DataFrame, optional
        The file the regressions run on when it is not ``data`` (a masked
        release with the same rows in the same order); default ``data``.
    target_name : str, optional
        How the result names the attacked release.
    progress : callable, optional
        Called as ``progress(done, total)`` over the subsets.

    Returns
    -------
    RegressionAttackResult
        The table of the paper's columns (N, identified, Δ all, Δ identified)
        plus the share of targets recovered within 1%.
    """
    bg, size_column, extras, approx, epsilon, qs, chosen = check_attack_inputs(
        data, sensitive, background, size, extra, approx, approx_mode, epsilon, quantiles, attacks
    )
    if released is None:
        released = data
    else:
        check_dataframe(released, "released")
        if len(released) != len(data):
            raise DataError(
                f"released has {len(released)} rows and data {len(data)}; a masked release "
                "keeps every record in the same order"
            )
        for c in [sensitive, *bg]:
            if c not in released.columns:
                raise SchemaError(f"released: column {c!r} is not in the released file")
    truth_all = data[sensitive].to_numpy(dtype=float)
    if not np.isfinite(truth_all).all():
        raise DataError(f"sensitive: column {sensitive!r} has missing values; drop them first")
    subsets = quantile_subsets(data, size_column, qs)
    rows: list[dict[str, Any]] = []
    total = len(subsets)
    for done, (q, positions) in enumerate(subsets):
        if len(positions) < len(extras) + 3:
            # Too few records for a regression (the top 0.1% of a small file): the rows
            # stay in the table with N and no targets, their shares NaN.
            empty = np.zeros(0, dtype=bool)
            for attack in chosen:
                for label, _, _ in indicator_rows(bg, approx, attack):
                    name = "artificial outlier" if attack == "outlier" else "strategic dummy"
                    rows.append(
                        result_row(q, name, label, len(positions), empty, np.zeros(0), empty)
                    )
            continue
        fit = _Released(released, positions, sensitive, extras)
        known = data.iloc[positions].reset_index(drop=True)
        truth = truth_all[positions]
        x1_targets = np.column_stack(
            [np.ones(len(known))] + [known[c].to_numpy(dtype=float) for c in extras]
        )
        for attack in chosen:
            for label, columns, tolerance in indicator_rows(bg, approx, attack):
                if attack == "outlier":
                    predicted, identified = _outlier_predictions(
                        fit, known, columns, epsilon, x1_targets, None
                    )
                    name = "artificial outlier"
                else:
                    predicted, identified = _dummy_predictions(
                        fit, known, columns, bg[0], tolerance, approx_mode, x1_targets
                    )
                    name = "strategic dummy"
                errors = relative_errors(predicted, truth)
                rows.append(
                    result_row(
                        q,
                        name,
                        label,
                        len(positions),
                        identified,
                        errors,
                        np.ones(len(positions), dtype=bool),
                    )
                )
        if progress is not None:
            progress(done + 1, total)
    params = attack_params(
        sensitive, bg, size_column, approx, approx_mode, epsilon, qs, extras, chosen
    )
    return RegressionAttackResult(
        table=pd.DataFrame(rows),
        target=target_name or ("naive server" if released is data else "released file"),
        params=params,
    )
