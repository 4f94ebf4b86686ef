"""Higher moments of multiplicatively masked data, and the original moments recovered.

Oganian (2011), §3 (eqs. 24-26), for the z-score scheme with
``lag = sqrt(1+k) mean / sd`` (eq. 21), which is what
:func:`sdckit.microdata.multiplicative_noise` does with ``variant="zscore"``
(its default) on non-negative variables. Writing ``r = sqrt(1+k)``, every
masked variable is

    ``X_m(j) = M_j exp(E_j) / r``,  ``M_j = X_o(j) + (r - 1) E[X_o(j)]``,

with normal noise ``E`` independent of the data, ``mu_E(j) = -Sigma_E(j,j)/2``
and ``Sigma_E(j,l) = log(1 + k Sigma_o(j,l) / E[M_j M_l])`` (eq. 13). Since
``E[M_j M_l] = E[X_j X_l] + k E[X_j] E[X_l]`` (because ``(r-1)^2 + 2(r-1) =
k``), ``Sigma_E(j,l) = log R_jl`` with

    ``R_jl = (1+k) E[X_j X_l] / (E[X_j X_l] + k E[X_j] E[X_l])``  (eq. 23).

For exponents ``p = (p_1, ..., p_d)`` of total order ``P``, the noise factor
``exp(sum_j p_j E_j)`` is lognormal and independent of ``M``, so

    ``E[prod_j X_m(j)^p_j] = A(p) r^-P E[prod_j M_j^p_j]``,
    ``A(p) = prod_j R_jj^(p_j (p_j - 1)/2) prod_{j<l} R_jl^(p_j p_l)``  (eq. 24),

and expanding ``M_j^p_j`` binomially gives eq. 25: a sum over ``i <= p``
(componentwise) of the original mixed moments ``E[prod_j X_o(j)^i_j]`` times
``prod_j C(p_j, i_j) ((r-1) E[X_o(j)])^(p_j - i_j)``. The term ``i = p`` is
``A(p) r^-P E[prod_j X_o(j)^p_j]``; every other term has a lower order, which
is eq. 26: the original moments are recovered order by order from the masked
ones, starting from the means and second moments, which the masking keeps.

**A misprint in the paper.** Eqs. 24-26 print the cross factor's denominator
as ``E[X_j X_l] + k E[X_j X_l]``, which would make ``R_jl = 1`` (no noise
correlation at all) whatever the data. Derived from the z-score scheme
(eqs. 11-14, 21 and the paper's own eq. 23) and from sdckit's implementation,
it is ``E[X_j X_l] + k E[X_j] E[X_l]``, the same form as the printed diagonal
factor ``E[X_j^2] + k E^2[X_j]``; this module uses that. (The middle line of
eq. 24 also writes ``i_j`` where the exponents are ``p_j``; its last line is
right.) The simulation test in ``tests/microdata/test_noise_moments.py``
checks the corrected form against sdckit's masker and rejects the printed one.

A variable taking both signs is shifted by ``c = |min|`` before masking and
back afterwards (Oganian end of §2; ``mixed_sign="shift"``): pass
``shift={column: c}`` and the moments are moved to the shifted scale, masked
or recovered there, and moved back. The formulas hold for one masking zone
with the moments of that zone, masked jointly (no ``zones``,
``structural_zeros``, ``constraints`` or rebuilt ``totals``), and for the
noise covariance of eq. 23 as it is (not repaired: ``noise_covariance=
"exact"`` guarantees it). The expectation is over the noise given the file;
the masked sample's moments scatter around it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import check_columns, check_dataframe
from sdckit.errors import DataError, ParameterError

__all__ = ["MixedMoments", "expected_masked_moments", "mixed_moments", "recover_moments"]

Powers = tuple[int, ...]

#: Highest total order computed (the number of mixed moments grows as C(d + order, order)).
_MAX_ORDER = 8


@dataclass(frozen=True)
class MixedMoments(FrozenResult):
    """Raw mixed moments ``E[prod_j X_j^p_j]`` of some variables, keyed by exponents.

    Attributes
    ----------
    columns : tuple of str
        The variables, in the order of the exponent tuples.
    moments : mapping
        ``{(p_1, ..., p_d): E[prod_j X_j^p_j]}`` for every exponent tuple of
        total order 1 to ``max_order``.
    max_order : int
        Highest total order held.
    source : str
        What the moments are: ``"sample"`` (computed from data, divisor n),
        ``"expected masked"`` (Oganian 2011, eq. 25) or ``"recovered original"``
        (eq. 26).
    params : mapping
        ``variance_factor`` and ``shift`` when the moments come from eq. 25 or 26.
    """

    columns: tuple[str, ...]
    moments: Mapping[Powers, float]
    max_order: int
    source: str = "sample"
    params: Mapping[str, Any] = field(default_factory=dict)

    def moment(self, powers: Mapping[str, int]) -> float:
        """One mixed moment by column name.

        Parameters
        ----------
        powers : mapping
            ``{column: exponent}``; columns left out have exponent 0, e.g.
            ``{"income": 2, "tax": 1}`` is ``E[income^2 tax]``.

        Returns
        -------
        float
            The moment.
        """
        unknown = [name for name in powers if name not in self.columns]
        if unknown:
            raise ParameterError(
                f"powers names {unknown}, which are not among the columns {list(self.columns)}"
            )
        key = tuple(int(powers.get(name, 0)) for name in self.columns)
        if key not in self.moments:
            raise ParameterError(
                f"powers {dict(powers)} has total order {sum(key)}; these moments hold orders "
                f"1 to {self.max_order} with non-negative exponents"
            )
        return float(self.moments[key])

    def to_frame(self) -> pd.DataFrame:
        """The moments as a table, one row per exponent tuple.

        Returns
        -------
        DataFrame
            One column per variable (its exponent), ``order`` and ``moment``,
            sorted by order.
        """
        rows = [(*key, sum(key), value) for key, value in self.moments.items()]
        frame = pd.DataFrame(rows, columns=[*self.columns, "order", "moment"])
        return frame.sort_values("order", kind="stable").reset_index(drop=True)

    def summary(self) -> str:
        """The source, the variables and the pure moments ``E[X_j^p]`` per order."""
        lines = [
            f"{self.source} mixed moments of {len(self.columns)} variable(s), orders 1 to "
            f"{self.max_order} ({len(self.moments)} moments)"
        ]
        if self.params:
            lines.append("  " + ", ".join(f"{key}={value}" for key, value in self.params.items()))
        for j, name in enumerate(self.columns):
            pure = [
                self.moments[tuple(p if i == j else 0 for i in range(len(self.columns)))]
                for p in range(1, self.max_order + 1)
            ]
            lines.append(
                f"  {name}: " + ", ".join(f"E[X^{p + 1}]={v:.6g}" for p, v in enumerate(pure))
            )
        return "\n".join(lines)


def _powers(d: int, max_order: int) -> list[Powers]:
    """Every exponent tuple of total order 1..max_order, lower orders first."""
    out: list[Powers] = []
    for order in range(1, max_order + 1):
        for combo in itertools.combinations_with_replacement(range(d), order):
            out.append(tuple(combo.count(j) for j in range(d)))
    return out


def _check_order(max_order: Any) -> int:
    if isinstance(max_order, bool) or not isinstance(max_order, int | np.integer):
        raise ParameterError(
            f"max_order must be an integer from 2 to {_MAX_ORDER}, got {max_order!r}"
        )
    if not 2 <= int(max_order) <= _MAX_ORDER:
        raise ParameterError(
            f"max_order must be an integer from 2 to {_MAX_ORDER}, got {max_order}"
        )
    return int(max_order)


def mixed_moments(
    data: pd.DataFrame, *, columns: Iterable[str] | None = None, max_order: int = 4
) -> MixedMoments:
    """Raw mixed moments of numeric columns, every order from 1 to ``max_order``.

    ``E[prod_j X_j^p_j]`` with divisor n, the moments Oganian (2011), §3,
    relates between original and masked data, and those
    :func:`sdckit.microdata.multiplicative_noise` preserves to second order.

    Parameters
    ----------
    data : DataFrame
        Never modified.
    columns : iterable of str, optional
        Numeric columns without missing values (default: every column).
    max_order : int, default 4
        Highest total order ``sum_j p_j`` (2 to 8).

    Returns
    -------
    MixedMoments
        With ``source="sample"``.
    """
    data = check_dataframe(data)
    cols = check_columns(data, columns)
    order = _check_order(max_order)
    for name in cols:
        if not pd.api.types.is_numeric_dtype(data[name]) or pd.api.types.is_bool_dtype(data[name]):
            raise DataError(f"column {name!r} is not numeric (dtype {data[name].dtype})")
        missing = data[name].isna().to_numpy()
        if missing.any():
            raise DataError(
                f"column {name!r} has a missing value in row {int(np.flatnonzero(missing)[0]) + 1}"
            )
    values = data[cols].to_numpy(dtype=float)
    moments = {
        p: float(np.mean(np.prod(values ** np.array(p), axis=1))) for p in _powers(len(cols), order)
    }
    return MixedMoments(columns=tuple(cols), moments=moments, max_order=order)


def _check_k(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ParameterError(f"variance_factor must be a finite number > 0, got {value!r}")
    k = float(value)
    if not (math.isfinite(k) and k > 0):
        raise ParameterError(f"variance_factor must be a finite number > 0, got {value!r}")
    return k


def _check_shift(shift: Mapping[str, float] | None, columns: tuple[str, ...]) -> np.ndarray:
    out = np.zeros(len(columns))
    for name, value in (shift or {}).items():
        if name not in columns:
            raise ParameterError(
                f"shift names {name!r}, which is not among the columns {list(columns)}"
            )
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise ParameterError(f"shift[{name!r}] must be a number, got {value!r}")
        out[columns.index(name)] = float(value)
    return out


def _as_moments(
    data: pd.DataFrame | MixedMoments,
    columns: Iterable[str] | None,
    max_order: int,
    shift: Mapping[str, float] | None,
) -> MixedMoments:
    if isinstance(data, MixedMoments):
        return data
    out = mixed_moments(data, columns=columns, max_order=max_order)
    negative = [
        name for name in out.columns if name not in (shift or {}) and (data[name] < 0).any()
    ]
    if negative:
        raise ParameterError(
            f"column(s) {negative} take negative values: the formulas of Oganian (2011) §3 hold "
            "for non-negative variables; a column of both signs is masked after a shift "
            "(mixed_sign='shift'), pass shift={column: |min|}"
        )
    return out


def _binomial_sum(
    moments: Mapping[Powers, float], p: Powers, base: np.ndarray, *, skip_top: bool
) -> float:
    """``sum_{i <= p} prod_j C(p_j, i_j) base_j^(p_j - i_j) E[X^i]`` (E[X^0] = 1)."""
    total = 0.0
    for i in itertools.product(*(range(pj + 1) for pj in p)):
        if skip_top and i == p:
            continue
        coefficient = 1.0
        for pj, ij, bj in zip(p, i, base, strict=True):
            coefficient *= math.comb(pj, ij) * bj ** (pj - ij)
        total += coefficient * (moments[i] if any(i) else 1.0)
    return total


def _shifted(moments: Mapping[Powers, float], shift: np.ndarray) -> dict[Powers, float]:
    """Moments of ``X + shift`` from those of ``X``."""
    if not shift.any():
        return dict(moments)
    return {p: _binomial_sum(moments, p, shift, skip_top=False) for p in moments}


def _ratios(moments: Mapping[Powers, float], k: float, d: int) -> np.ndarray:
    """``R_jl = (1+k) E[X_j X_l] / (E[X_j X_l] + k E[X_j] E[X_l])`` (eq. 23)."""
    unit = np.eye(d, dtype=int)
    mean = np.array([moments[tuple(unit[j])] for j in range(d)])
    second = np.array([[moments[tuple(unit[j] + unit[m])] for m in range(d)] for j in range(d)])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (1.0 + k) * second / (second + k * np.outer(mean, mean))
    if not (np.isfinite(ratio).all() and (ratio > 0).all()):
        raise ParameterError(
            "the noise covariance of Oganian (2011) eq. 23 does not exist for these moments "
            "(some E[X_j X_l] <= 0): the formulas hold for non-negative variables; pass "
            "shift={column: |min|} for a column taking both signs"
        )
    return ratio


def _factor(p: Powers, ratio: np.ndarray, root: float) -> float:
    """``A(p) / r^P`` of eqs. 24-26 (with the cross factor's denominator corrected)."""
    log_a = 0.0
    for j, pj in enumerate(p):
        log_a += pj * (pj - 1) / 2.0 * math.log(ratio[j, j])
        for m in range(j + 1, len(p)):
            log_a += pj * p[m] * math.log(ratio[j, m])
    return math.exp(log_a) / root ** sum(p)


def _transform(
    data: pd.DataFrame | MixedMoments,
    variance_factor: float,
    columns: Iterable[str] | None,
    max_order: int,
    shift: Mapping[str, float] | None,
    source: str,
) -> MixedMoments:
    """Eq. 25 (``source="expected masked"``) or its recursive inverse, eq. 26."""
    base = _as_moments(data, columns, max_order, shift)
    k = _check_k(variance_factor)
    offset = _check_shift(shift, base.columns)
    root = math.sqrt(1.0 + k)
    moved = _shifted(base.moments, offset)
    ratio = _ratios(moved, k, len(base.columns))
    unit = np.eye(len(base.columns), dtype=int)
    lead = (root - 1.0) * np.array([moved[tuple(unit[j])] for j in range(len(base.columns))])
    out: dict[Powers, float] = {}
    for p in sorted(moved, key=sum):
        if source == "expected masked":
            out[p] = _factor(p, ratio, root) * _binomial_sum(moved, p, lead, skip_top=False)
        elif sum(p) <= 2:
            out[p] = moved[p]  # kept by the masking (eqs. 16-17)
        else:
            out[p] = moved[p] / _factor(p, ratio, root) - _binomial_sum(out, p, lead, skip_top=True)
    return MixedMoments(
        columns=base.columns,
        moments=_shifted(out, -offset),
        max_order=base.max_order,
        source=source,
        params={"variance_factor": k, "shift": dict(shift or {})},
    )


def expected_masked_moments(
    original: pd.DataFrame | MixedMoments,
    *,
    variance_factor: float,
    columns: Iterable[str] | None = None,
    max_order: int = 4,
    shift: Mapping[str, float] | None = None,
) -> MixedMoments:
    """Expected mixed moments of the multiplicatively masked data (Oganian 2011, eq. 25).

    What the agency can compute before releasing: the moments
    :func:`sdckit.microdata.multiplicative_noise` (z-score variant, one zone,
    unrepaired noise covariance) gives the masked file in expectation over the
    noise, from the original file's moments. Means and second moments come
    back unchanged; third and higher orders are inflated (the module notes
    give the formula and the corrected misprint of eqs. 24-26).

    Parameters
    ----------
    original : DataFrame or MixedMoments
        The original data (never modified), or its moments from
        :func:`mixed_moments`.
    variance_factor : float
        Oganian's k > 0, the value the masking used.
    columns : iterable of str, optional
        With a DataFrame: the masked columns (default: every column).
    max_order : int, default 4
        With a DataFrame: the highest total order (2 to 8).
    shift : mapping, optional
        ``{column: c}`` for a column taking both signs, masked after adding
        ``c`` (``|min|`` of the original; ``mixed_sign="shift"``).

    Returns
    -------
    MixedMoments
        With ``source="expected masked"``.
    """
    return _transform(original, variance_factor, columns, max_order, shift, "expected masked")


def recover_moments(
    masked: pd.DataFrame | MixedMoments,
    *,
    variance_factor: float,
    columns: Iterable[str] | None = None,
    max_order: int = 4,
    shift: Mapping[str, float] | None = None,
) -> MixedMoments:
    """The original data's mixed moments estimated from the masked data (Oganian 2011, eq. 26).

    What a data user can do when the agency releases k: eq. 25 solved for
    the top term, order by order. Means and second moments are taken from the
    masked data (the masking keeps them); each higher moment is the masked
    one, less the lower-order terms of eq. 25 (computed from moments already
    recovered), divided by ``A(p) / r^P``. The estimates carry the sampling
    scatter of the masked moments, inflated by ``r^P / A(p)``.

    Parameters
    ----------
    masked : DataFrame or MixedMoments
        The released data (never modified), or its :func:`mixed_moments`.
    variance_factor : float
        Oganian's k > 0, as released by the agency.
    columns, max_order :
        With a DataFrame, as in :func:`expected_masked_moments`.
    shift : mapping, optional
        ``{column: c}``; the agency must release ``c`` with k for a column
        of both signs masked after adding ``c``.

    Returns
    -------
    MixedMoments
        With ``source="recovered original"``.
    """
    return _transform(masked, variance_factor, columns, max_order, shift, "recovered original")
