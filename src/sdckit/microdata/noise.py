"""Noise that keeps means and covariances: additive and multiplicative, with constraints.

All formulas are from Oganian (2011), *Multiplicative noise for masking
numerical microdata with constraints*, SORT 35 (2011):

* additive correlated noise (eq. 1; Kim 1986, Tendick 1991, Oganian & Karr
  2006): ``X_m = mean + ((X - mean) + E) / sqrt(1 + k)``, ``E ~ N(0, k Sigma)``;
* multiplicative noise for non-negative variables (eqs. 5-9, Oganian & Karr
  2011): ``X_m = ((sqrt(1+k) - 1) mean + X o exp(E)) / sqrt(1+k)`` with
  ``Sigma_E(i,j) = log(1 + k Sigma(i,j) / E[X_i X_j])`` and
  ``mu_E(i) = -Sigma_E(i,i) / 2``, which keeps positivity, means and the
  covariance matrix; impossible when eq. 10 holds (``1 + k Sigma(i,j) /
  E[X_i X_j] <= 0``);
* the z-score variant (eqs. 11-14) with ``lag = sqrt(1+k) mean / sd`` (eq. 21),
  for which the noise covariance (eq. 23) always exists for non-negative data;
  variables of both signs are, as in the paper (end of Section 2), shifted by
  ``|min X|`` and shifted back (``mixed_sign="shift"``) or get noise
  proportional to their magnitude (``mixed_sign="magnitude"``); the default
  ``"auto"`` shifts when that gives a valid noise covariance;
* inequality constraints ``X_1 >= X_2 >= ... >= X_l`` preserved exactly by
  masking one variable and the successive differences and summing back (eq. 27,
  Section 4), anchored at the lowest non-negative variable of the chain so
  that every variable keeps its sign;
* multi-zone masking (Section 5): independent noise with its own k in every
  zone (a user partition or value thresholds), and variables paired with a
  "structural zero" indicator left at zero where the indicator says so.

Why eq. 13's noise covariance is not positive semi-definite on business files.
Writing every scheme as ``X_m = mean + ((X - mean) + M o (exp(E) - 1)) /
sqrt(1+k)``, the noise adds ``E[M_i M_j] Cov(exp(E_i), exp(E_j))`` to the
covariance, and this must equal ``k Sigma(i,j)``. By Cauchy-Schwarz that is
possible only when ``|corr(X_i, X_j)| <= E[M_i M_j] / sqrt(E[M_i^2] E[M_j^2])``.
Two things break it on the CASC reference files:

* a variable shifted by a far negative minimum (Tarragona's
  FINANCIAL.OUTCOME: minimum -357,071, standard deviation 25,690) has a
  nearly constant ``M``, so its noise cannot follow the size of the
  companies, while the noise of its skewed partners (coefficient of variation
  about 2) does: their required noise correlations reach 1.2-1.5. Noise
  proportional to the magnitude (``mixed_sign="magnitude"``) removes every
  such pair on Tarragona;
* an accounting identity (CASC: PTOTVAL = PEARNVAL + POTHVAL in every record)
  has variance zero, and independent factors on its terms give it some.
  ``totals="detect"`` (default) masks the parts and rebuilds the total.

What remains (near-identities, strongly skewed small zones) is repaired by
the closest positive semi-definite matrix with the same diagonal (Higham
2002), which keeps every variance and bends covariances as little as
possible. The repair's effect is computed exactly: the released variance and
covariance ratios it implies in expectation are reported in ``stats`` and in
the summary, and ``noise_covariance="auto"`` (default) refuses the run when
one leaves ``[1 - repair_tolerance, 1 + repair_tolerance]``;
``"nearest"`` accepts any repair (still reported) and ``"exact"`` refuses any.

Means and covariances are preserved in expectation: the masked sample's
moments differ from the original's by sampling noise of order 1/sqrt(n), as in
the paper's Section 5 experiment (reproduced in ``docs/validation.md``).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    check_random_state,
    describe_row,
    number_text,
    row_label,
)
from sdckit.errors import DataError, InfeasibleError, ParameterError, SchemaError
from sdckit.microdata._weights import resolve_sample_weights, sample_weight_vector
from sdckit.microdata.base import MaskResult, deprecated_spellings, register_masker
from sdckit.schema import Kind, Schema

__all__ = ["NoiseResult", "additive_noise", "multiplicative_noise"]

_VARIANTS = ("zscore", "plain")
#: Below this absolute correlation a covariance ratio is meaningless (tiny denominator):
#: a repair's effect on such a pair is judged by its change of correlation instead.
_WEAK = 0.2


@dataclass(frozen=True)
class NoiseResult(MaskResult):
    """Result of :func:`additive_noise` and :func:`multiplicative_noise`.

    ``diagnostics`` has, per record, ``zone`` (its masking zone),
    ``masking_cell`` (zone x structural-zero pattern; each cell gets its own
    independent noise) and ``max_change_in_sd`` (largest change over the
    masked variables, in standard deviations). ``stats`` has the masked over
    original ratios of the means and of the covariance entries (smallest and
    largest), the number of records with a constraint violated (0 for the
    multiplicative scheme), of negative values created in non-negative
    variables, the values created outside a column's observed sign (per
    column), and, when a noise covariance was repaired, the released variance
    and covariance ratios the repair implies in expectation.
    """

    @property
    def warnings(self) -> list[str]:
        """One line per thing a person should know before publishing this release.

        The per-column lines of :class:`MaskResult` (mean and variance ratios,
        changed shares), then the scheme's own: values created outside a
        column's observed sign, constraint violations, a repaired noise
        covariance with the released ratios it implies.
        """
        out = list(super().warnings)
        outside = self.stats.get("values_outside_observed_sign") or {}
        if outside:
            listed = ", ".join(f"{col} ({count})" for col, count in outside.items())
            hint = (
                "; multiplicative_noise (sdckit noise multiplicative) keeps non-negative "
                "columns non-negative"
                if self.method == "additive_noise"
                else ""
            )
            out.append(
                "values outside the column's observed sign (e.g. negative values in a column "
                f"that has none): {listed}{hint}"
            )
        if self.stats.get("records_violating_constraints"):
            out.append(
                f"{self.stats['records_violating_constraints']} record(s) violate a constraint"
            )
        singular = self.stats.get("cells_with_singular_sample_covariance")
        if singular and self.stats.get("covariance_estimator") == "sample":
            out.append(
                f"the sample covariance is singular in {singular} masking cell(s) (collinear "
                "variables): the noise keeps their exact linear relations; covariance='shrinkage' "
                "uses a positive definite estimate"
            )
        if self.stats.get("shrinkage_intensity"):
            low_s, high_s = self.stats["shrinkage_intensity"]
            out.append(
                f"noise covariance from Ledoit-Wolf shrinkage (intensity {low_s:.3f}-{high_s:.3f}"
                f"{f', {singular} cell(s) with a singular sample covariance' if singular else ''}"
                "): released correlations move toward 0 by up to "
                f"{self.stats['shrinkage_largest_correlation_change']:.4f} in expectation"
            )
        if self.stats.get("cells_with_adjusted_noise_covariance"):
            low, high = self.stats["repair_covariance_ratio_range"]
            vlow, vhigh = self.stats["repair_variance_ratio_range"]
            out.append(
                "the noise covariance was not positive semi-definite in "
                f"{self.stats['cells_with_adjusted_noise_covariance']} masking cell(s) and was "
                f"repaired: expected released variance ratios {vlow:.3f}-{vhigh:.3f}, "
                f"covariance ratios {low:.3f}-{high:.3f}, largest correlation change "
                f"{self.stats['repair_largest_correlation_change']:.4f}"
            )
        return out

    def summary(self) -> str:
        """Parameters, the moment ratios, and a warning line for anything to check."""
        text = super().summary()
        if self.column_changes is None or not len(self.column_changes):
            # MaskResult prints the warning lines with its per-column table only.
            text += "".join(f"\n  WARNING: {line}" for line in self.warnings)
        return text


# ---------------------------------------------------------------------------
# moments and normal draws


def _moments(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted mean, second moments E[Y_i Y_j] and covariance (divisor: total weight)."""
    total = w.sum()
    mean = w @ y / total
    second = (y * w[:, None]).T @ y / total
    cov = second - np.outer(mean, mean)
    return mean, second, cov


def _normal(
    rng: np.random.Generator, n: int, mean: np.ndarray, cov: np.ndarray, what: str, names: list[str]
) -> np.ndarray:
    """n draws of N(mean, cov); cov must be positive semi-definite."""
    values, vectors = np.linalg.eigh(cov)
    scale = max(float(np.abs(values).max()), np.finfo(float).tiny)
    if values.min() < -1e-10 * scale:
        raise InfeasibleError(
            f"the {what} for variables {names} is not positive semi-definite (smallest "
            f"eigenvalue {values.min():.3g}); no normal noise has it"
        )
    factor = vectors * np.sqrt(np.clip(values, 0.0, None))
    return rng.standard_normal((n, len(mean))) @ factor.T + mean


def _nearest_with_diagonal(
    cov: np.ndarray, *, tol: float = 1e-10, max_iter: int = 500
) -> np.ndarray:
    """Closest positive semi-definite matrix with the same diagonal (Higham 2002).

    Alternating projections with Dykstra's correction on the correlation form
    of ``cov`` (Higham, *Computing the nearest correlation matrix*, IMA J.
    Numer. Anal. 22, 2002, Algorithm 3.3), scaled back. Keeping the diagonal
    keeps every noise variance, so the masked variances stay exact in
    expectation; only covariances bend, by as little as the Frobenius norm of
    the correlation change allows. The last step projects onto the positive
    semi-definite cone, so the result is always a valid covariance; its
    diagonal is exact up to the convergence tolerance.
    """
    sd = np.sqrt(np.clip(np.diag(cov), np.finfo(float).tiny, None))
    target = cov / np.outer(sd, sd)
    y = target.copy()
    correction = np.zeros_like(target)
    x = target
    for _ in range(max_iter):
        residual = y - correction
        values, vectors = np.linalg.eigh(residual)
        x = (vectors * np.clip(values, 0.0, None)) @ vectors.T
        x = (x + x.T) / 2.0
        correction = x - residual
        y_next = x.copy()
        np.fill_diagonal(y_next, 1.0)
        if np.abs(y_next - y).max() < tol and np.abs(y_next - x).max() < tol:
            y = y_next
            break
        y = y_next
    return x * np.outer(sd, sd)


def _is_psd(matrix: np.ndarray) -> tuple[bool, float]:
    values = np.linalg.eigvalsh(matrix)
    scale = max(float(np.abs(values).max()), np.finfo(float).tiny)
    return bool(values.min() >= -1e-10 * scale), float(values.min())


_COVARIANCES = ("sample", "shrinkage")


def _shrunk_covariance(y: np.ndarray) -> tuple[np.ndarray, float]:
    """Ledoit-Wolf (2004) shrinkage of the correlations, every variance kept.

    Oganian (2011), §1: Sigma_o may be "the usual empirical estimator or a
    shrinkage-based estimator". The Ledoit-Wolf estimate (scikit-learn) is
    taken on the standardized variables, so its target is the identity
    correlation and the variances (divisor n, as :func:`_moments`) stay
    exact: ``Sigma = D ((1 - delta) R + delta I) D``, positive definite
    whenever ``delta > 0``, even when the sample covariance is singular
    (collinear variables). Returns the matrix and the intensity ``delta``.
    """
    from sklearn.covariance import ledoit_wolf

    sd = y.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    corr, delta = ledoit_wolf((y - y.mean(axis=0)) / sd, assume_centered=True)
    return corr * np.outer(sd, sd), float(delta)


def _additive_block(
    y: np.ndarray,
    w: np.ndarray,
    k: float,
    rng: np.random.Generator,
    names: list[str],
    target: np.ndarray | None = None,
) -> np.ndarray:
    """Oganian eq. 1: X_m = mean + ((X - mean) + E) / sqrt(1 + k), E ~ N(0, k Sigma).

    ``target``, when given, is the Sigma of the noise (a shrinkage estimate).
    """
    mean, _, cov = _moments(y, w)
    cov = cov if target is None else target
    noise = _normal(rng, len(y), np.zeros(len(mean)), k * cov, "noise covariance k*Sigma", names)
    return mean + ((y - mean) + noise) / np.sqrt(1.0 + k)


def _noise_scale(
    y: np.ndarray, w: np.ndarray, k: float, variant: str, mixed_sign: str
) -> np.ndarray:
    """Per record and variable, the value the lognormal factor multiplies.

    Every multiplicative scheme of Oganian (2011), Section 2, can be written
    ``X_m = mean + ((X - mean) + M o (exp(E) - 1)) / sqrt(1+k)``:

    * plain (eq. 7): ``M = X``;
    * z-score with the lag of eq. 21, for a non-negative variable:
      ``M = X + (sqrt(1+k) - 1) mean``, so that ``X_m = M o exp(E) / sqrt(1+k) >= 0``;
    * a variable taking both signs has no sign to keep. Oganian shifts it by
      ``|min|`` first (end of Section 2; ``mixed_sign="shift"``), which makes its
      ``M`` nearly constant when the minimum is a far outlier, so its noise
      cannot follow the size of the record as the noise of its skewed partners
      does. ``mixed_sign="magnitude"`` uses ``M = |X| + (sqrt(1+k) -
      1) E|X|``, eq. 21 applied to the magnitude: the noise grows with the size
      of the value, as it does for the non-negative variables.
    """
    root = np.sqrt(1.0 + k)
    if variant == "plain":
        return y.copy()
    total = w.sum()
    scale = y.copy()
    mixed = (y < 0).any(axis=0)
    if mixed.any():
        if mixed_sign == "magnitude":
            scale[:, mixed] = np.abs(y[:, mixed])
        else:
            scale[:, mixed] = y[:, mixed] - y[:, mixed].min(axis=0)
    return scale + (root - 1.0) * (w @ scale / total)


def _shift_is_valid(y: np.ndarray, w: np.ndarray, k: float) -> bool:
    """Whether Oganian's shift by |min| gives this cell a valid noise covariance as it is."""
    _, _, cov = _moments(y, w)
    scale = _noise_scale(y, w, k, "zscore", "shift")
    second = (scale * w[:, None]).T @ scale / w.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        argument = 1.0 + k * cov / second
    if not (np.isfinite(argument).all() and (argument > 0).all()):
        return False
    return _is_psd(np.log(argument))[0]


def _multiplicative_block(
    y: np.ndarray,
    w: np.ndarray,
    k: float,
    rng: np.random.Generator,
    names: list[str],
    variant: str,
    noise_covariance: str,
    mixed_sign: str,
    target: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Oganian eqs. 7-9 (plain) or 11-14 with the lag of eq. 21 (zscore), one masking cell.

    ``target``, when given, replaces the sample Sigma the noise adds (a
    shrinkage estimate); the expected released covariance is then
    ``(Sigma_sample + k target) / (1 + k)``.

    With ``M`` from :func:`_noise_scale`, the noise ``E ~ N(mu_E, Sigma_E)``
    has ``Sigma_E(i,j) = log(1 + k Sigma(i,j) / E[M_i M_j])`` (eq. 8 / eq. 23)
    and ``mu_E = -diag(Sigma_E)/2`` (eq. 9), so that ``E[M o (exp(E) - 1)] = 0``
    and the noise adds ``k Sigma`` to the covariance.

    Returns the masked block and, when the noise covariance had to be
    repaired, the change the repair makes to the block's expected released
    covariance (``None`` otherwise).
    """
    root = np.sqrt(1.0 + k)
    mean, _, cov = _moments(y, w)
    cov = cov if target is None else target
    scale = _noise_scale(y, w, k, variant, mixed_sign)
    second = (scale * w[:, None]).T @ scale / w.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        argument = 1.0 + k * cov / second  # eq. 8 / eq. 13
    bad = ~(argument > 0) | ~np.isfinite(argument)
    if bad.any():
        pairs = sorted(
            {
                (names[i], names[j]) if i <= j else (names[j], names[i])
                for i, j in zip(*np.nonzero(bad), strict=True)
            }
        )
        shown = ", ".join(f"({a}, {b})" for a, b in pairs[:6])
        if variant == "plain":
            raise InfeasibleError(
                f"the plain multiplicative scheme is impossible here: 1 + k*Sigma(i,j)/E[X_i X_j] "
                f"<= 0 (Oganian eq. 10) for variable pair(s) {shown}. Use variant='zscore' (eqs. "
                "11-14 with the lag of eq. 21), whose noise covariance always has a logarithm"
            )
        raise InfeasibleError(
            f"the noise covariance (Oganian eq. 23) does not exist for variable pair(s) {shown} "
            "in this masking cell: 1 + k*Sigma(i,j)/E[M_i M_j] <= 0, which for non-negative "
            "variables means their product is zero in every record (never both non-zero; a "
            "chain's differences are such variables when it has many ties). Mask them "
            "separately or declare the zeros structural (structural_zeros=...)"
        )
    noise_cov = np.log(argument)
    released_change = None
    valid, smallest = _is_psd(noise_cov)
    if not valid:
        if noise_covariance == "exact":
            raise InfeasibleError(
                f"the noise covariance of Oganian eq. {'8' if variant == 'plain' else '13'} for "
                f"variables {names} has a logarithm but is not positive semi-definite (smallest "
                f"eigenvalue {smallest:.3g}), so no normal noise keeps all their covariances "
                "exactly. Use noise_covariance='auto' (repair, verified against repair_tolerance)"
            )
        repaired = _nearest_with_diagonal(noise_cov)
        # Expected released covariance: (Sigma + E[M M'] o (exp(Sigma_E) - 1)) / (1 + k).
        released_change = second * (np.exp(repaired) - np.exp(noise_cov)) / (1.0 + k)
        noise_cov = repaired
    noise_mean = -np.diag(noise_cov) / 2.0  # eq. 9: E[exp(E)] = 1, so means are kept
    noise = _normal(rng, len(y), noise_mean, noise_cov, "noise covariance", names)
    return mean + ((y - mean) + scale * np.expm1(noise)) / root, released_change


# ---------------------------------------------------------------------------
# parameters


#: Above this k the released values are practically all noise (the data keep less than
#: 0.1 % of their own variation, 1/sqrt(1+k)), and k times a variance can overflow.
_MAX_K = 1e6


def _check_k(value: Any, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not np.isfinite(float(value))
    ):
        raise ParameterError(f"{name} must be a finite number > 0, got {value!r}")
    if float(value) <= 0:
        raise ParameterError(
            f"{name} must be > 0 (Oganian's k, the noise variance over the data's), got {value!r}"
        )
    if float(value) > _MAX_K:
        raise ParameterError(
            f"{name} must be at most {_MAX_K:g} (Oganian's k, the noise variance over the data's: the masked values "
            f"keep 1/sqrt(1+k) of the data's own variation; 0.15 is usual), got {value:g}"
        )
    return float(value)


def _zone_k(k: Any, labels: list, domain: list | None = None) -> dict:
    """k for every zone label: one number, a mapping {zone: k} or one k per zone in order.

    ``labels`` are the zones holding records; ``domain`` every zone there can be
    (with thresholds, zones 0..len(thresholds), some possibly empty): a mapping
    may name, and a sequence must cover, every zone of the domain.
    """
    domain = labels if domain is None else domain
    if isinstance(k, Mapping):
        missing = [z for z in labels if z not in k]
        if missing:
            raise ParameterError(
                f"variance_factor has no value for zone(s) {missing}; zones are {domain}"
            )
        extra = [z for z in k if z not in domain]
        if extra:
            raise ParameterError(
                f"variance_factor names zone(s) {extra}, which are not among the zones {domain}"
            )
        checked = {z: _check_k(v, f"variance_factor[{z!r}]") for z, v in k.items()}
        return {z: checked[z] for z in labels}
    if isinstance(k, Sequence) and not isinstance(k, str):
        if len(k) != len(domain):
            raise ParameterError(
                f"variance_factor lists {len(k)} value(s) but there are {len(domain)} zone(s) "
                f"{domain}"
            )
        checked = {
            z: _check_k(v, f"variance_factor[{i}]")
            for i, (z, v) in enumerate(zip(domain, k, strict=True))
        }
        return {z: checked[z] for z in labels}
    value = _check_k(k, "variance_factor")
    return dict.fromkeys(labels, value)


def _zone_labels(
    data: pd.DataFrame,
    x: np.ndarray,
    zones: str | Iterable | None,
    zone_thresholds: Sequence[float] | None,
) -> np.ndarray:
    n = len(data)
    if zones is not None and zone_thresholds is not None:
        raise ParameterError("give zones or zone_thresholds, not both")
    if zone_thresholds is not None:
        thresholds = np.asarray(list(zone_thresholds), dtype=np.float64)
        if thresholds.ndim != 1 or len(thresholds) == 0 or not np.isfinite(thresholds).all():
            raise ParameterError(f"zone_thresholds must be finite numbers, got {zone_thresholds!r}")
        if (np.diff(thresholds) <= 0).any():
            raise ParameterError(f"zone_thresholds must increase strictly, got {list(thresholds)}")
        # Zone i holds the records whose largest masked value lies in (t_{i-1}, t_i].
        return np.searchsorted(thresholds, x.max(axis=1), side="left")
    if zones is None:
        return np.zeros(n, dtype=np.int64)
    if isinstance(zones, str):
        check_columns(data, [zones], "zones")
        labels = data[zones].to_numpy()
        what = f"zones column {zones!r}"
    else:
        labels = np.asarray(list(zones) if not isinstance(zones, pd.Series) else zones.to_numpy())
        what = "zones"
        if labels.ndim != 1 or len(labels) != n:
            raise ParameterError(
                f"zones must give one label per record ({n}), got shape {labels.shape}"
            )
    missing = pd.isna(labels)
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise DataError(f"{what} has no zone for row {data.index[pos]!r}")
    return labels


def _check_chains(constraints: Any, cols: list[str]) -> list[list[str]]:
    if constraints is None:
        return []
    if isinstance(constraints, str) or not isinstance(constraints, Iterable):
        raise ParameterError(
            "constraints must be a list of chains, each a list of columns [X1, X2, ...] "
            f"meaning X1 >= X2 >= ...; got {constraints!r}"
        )
    chains = [list(chain) for chain in constraints]
    seen: set[str] = set()
    for chain in chains:
        if len(chain) < 2:
            raise ParameterError(f"constraint chain {chain} needs at least two columns")
        unknown = [c for c in chain if c not in cols]
        if unknown:
            raise ParameterError(
                f"constraint chain {chain}: column(s) {unknown} are not among the masked columns {cols}"
            )
        twice = seen.intersection(chain)
        if twice or len(set(chain)) != len(chain):
            raise ParameterError(
                f"constraint chains must not share columns; {sorted(twice) or chain} appear twice"
            )
        seen.update(chain)
    return chains


def _check_structural_zeros(
    data: pd.DataFrame, structural_zeros: Mapping[str, str] | None, cols: list[str]
) -> dict[str, np.ndarray]:
    if structural_zeros is None:
        return {}
    if not isinstance(structural_zeros, Mapping):
        raise ParameterError(
            "structural_zeros must be a mapping {variable: indicator column}, "
            f"got {type(structural_zeros).__name__}"
        )
    out = {}
    for var, indicator in structural_zeros.items():
        if var not in cols:
            raise ParameterError(
                f"structural_zeros: {var!r} is not among the masked columns {cols}"
            )
        check_columns(data, [indicator], f"structural_zeros[{var!r}]")
        flags = data[indicator]
        if flags.isna().any():
            pos = int(np.flatnonzero(flags.isna().to_numpy())[0])
            raise DataError(
                f"structural-zero indicator {indicator!r} is missing at row {data.index[pos]!r}"
            )
        if not (
            pd.api.types.is_bool_dtype(flags.dtype) or pd.api.types.is_numeric_dtype(flags.dtype)
        ):
            # astype(bool) would read every non-empty text ("no", "False") as true.
            raise SchemaError(
                f"structural-zero indicator {indicator!r} must be boolean or numeric (0/1), "
                f"got dtype {flags.dtype} (e.g. {flags.iloc[0]!r}); recode it first"
            )
        is_zero = flags.astype(bool).to_numpy()
        values = pd.to_numeric(data[var]).to_numpy(np.float64)
        wrong = is_zero & (values != 0)
        if wrong.any():
            pos = int(np.flatnonzero(wrong)[0])
            raise DataError(
                f"indicator {indicator!r} marks {var!r} as a structural zero in {int(wrong.sum())} "
                f"record(s) where it is not zero, first at {describe_row(data.index, pos)} "
                f"({number_text(values[pos])})"
            )
        out[var] = is_zero
    return out


# ---------------------------------------------------------------------------
# masking cells


def _sorted_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``, by hashing: only the distinct values are sorted.

    ``np.unique`` sorts all n values (most of the time of a whole masking run
    on 10^5 records); ``pandas.factorize`` codes them in one hashing pass in
    order of first appearance, and ranking its few distinct values gives the
    codes ``np.unique`` gives, so the cells, their order and the noise drawn
    for them are the same.
    """
    codes, uniques = pd.factorize(np.asarray(values), use_na_sentinel=False)
    uniques = np.asarray(uniques)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return uniques[order], rank[codes]


def _pattern_codes(pattern: np.ndarray) -> np.ndarray:
    """Codes of the rows of a boolean matrix, numbered as ``np.unique(pattern, axis=0)`` does.

    A row read as a binary number (first column most significant) orders rows
    as ``np.unique`` does (lexicographically, False before True), so the
    numbers are coded with :func:`_sorted_codes`; wider patterns than an int64
    holds fall back to the row-wise sort.
    """
    n, d = pattern.shape
    if d > 62:
        return np.unique(pattern, axis=0, return_inverse=True)[1].reshape(-1)
    if not pattern.any():
        return np.zeros(n, dtype=np.int64)
    weights = np.left_shift(np.int64(1), np.arange(d - 1, -1, -1, dtype=np.int64))
    return _sorted_codes(pattern.astype(np.int64) @ weights)[1]


# ---------------------------------------------------------------------------
# the shared driver


def _mask(
    data: pd.DataFrame,
    columns: Iterable[str] | None,
    k: Any,
    *,
    scheme: str,
    variant: str,
    noise_covariance: str,
    constraints: Any,
    zones: Any,
    zone_thresholds: Any,
    structural_zeros: Mapping[str, str] | None,
    sample_weights: str | None,
    schema: Schema | None,
    random_state: RandomState,
    progress: Callable[[int, int], None] | None,
    mixed_sign: str = "auto",
    totals: Any = None,
    repair_tolerance: float = 0.05,
    covariance: str = "sample",
) -> NoiseResult:
    check_dataframe(data, min_rows=2)
    if covariance not in _COVARIANCES:
        raise ParameterError(
            f"covariance must be 'sample' or 'shrinkage' (Ledoit-Wolf), got {covariance!r}"
        )
    n = len(data)
    rng = check_random_state(random_state)
    schema = schema if schema is not None else Schema.infer(data)
    schema.check_matches(data)
    sample_weights = resolve_sample_weights(schema, sample_weights)
    if covariance == "shrinkage" and sample_weights is not None:
        raise ParameterError(
            "covariance='shrinkage' (Ledoit-Wolf) has no weighted form: drop sample_weights "
            "or use covariance='sample'"
        )
    if columns is None:
        cols = [c for c in schema.maskable() if schema[c].kind is Kind.NUMERIC]
        if sample_weights is not None:
            cols = [c for c in cols if c != sample_weights]
    else:
        cols = check_columns(data, columns, "columns")
    if not cols:
        raise ParameterError("no numeric columns to mask: give columns=[...]")
    not_numeric = [c for c in cols if schema[c].kind is not Kind.NUMERIC]
    if not_numeric:
        raise SchemaError(
            f"noise is added to numbers; column(s) {not_numeric} are categorical or ordinal"
        )
    if sample_weights is not None and sample_weights in cols:
        raise ParameterError(f"sample_weights column {sample_weights!r} cannot also be masked")
    na = data[cols].isna().sum()
    if na.any():
        listed = ", ".join(f"{c!r} ({int(v)})" for c, v in na[na > 0].items())
        raise DataError(f"missing values in column(s) {listed}; impute or drop them first")
    weights = sample_weight_vector(data, sample_weights)
    w = weights if weights is not None else np.ones(n)
    x = np.column_stack([pd.to_numeric(data[c]).to_numpy(np.float64) for c in cols])
    if not np.isfinite(x).all():
        bad_col = cols[int(np.flatnonzero(~np.isfinite(x).all(axis=0))[0])]
        raise DataError(f"column {bad_col!r} holds infinite values")

    chains = _check_chains(constraints, cols)
    zeros = _check_structural_zeros(data, structural_zeros, cols)
    in_chain = {c for chain in chains for c in chain}
    both = sorted(in_chain.intersection(zeros))
    if both:
        raise ParameterError(
            f"column(s) {both} are both in an inequality constraint and have structural zeros; "
            "mask them with one of the two devices"
        )
    position = {c: i for i, c in enumerate(cols)}
    d = len(cols)
    nonneg = np.asarray((x >= 0).all(axis=0))
    nonpos = (x <= 0).all(axis=0) & ~nonneg
    # The masked variables y and the linear map back: final = masked_y @ rebuild.T.
    transformed = x.copy()
    rebuild = np.eye(d)
    names = list(cols)
    derived = np.zeros(d, dtype=bool)
    for chain in chains:
        transformed = _chain_transform(
            chain, data, x, transformed, rebuild, names, position, nonneg
        )
    found_totals = _resolve_totals(totals, data, x, cols, position, in_chain | set(zeros), nonneg)
    for total, parts in found_totals.items():
        j = position[total]
        derived[j] = True
        rebuild[j] = 0.0
        for part in parts:
            rebuild[j, position[part]] = 1.0

    zone = _zone_labels(data, x, zones, zone_thresholds)
    zone_values, zone_codes = _sorted_codes(zone)
    zone_list = zone_values.tolist()
    # With thresholds the zones are 0..len(thresholds) whether or not records fall in them.
    domain = None if zone_thresholds is None else list(range(len(list(zone_thresholds)) + 1))
    k_by_zone = _zone_k(k, zone_list, domain)
    pattern = np.zeros((n, d), dtype=bool)
    for var, is_zero in zeros.items():
        pattern[:, position[var]] = is_zero
    pattern_codes = _pattern_codes(pattern)
    cell_key = zone_codes.astype(np.int64) * (int(pattern_codes.max()) + 1) + pattern_codes
    cells, cell_codes = _sorted_codes(cell_key)

    # Every cell is checked before any noise is drawn.
    plan = []
    for number in range(len(cells)):
        rows = np.flatnonzero(cell_codes == number)
        zone_label = zone_list[int(zone_codes[rows[0]])]
        block = transformed[rows]
        active = ~pattern[rows[0]] & ~derived & (block.max(axis=0) > block.min(axis=0))
        count = int(active.sum())
        if len(rows) < max(count, 2):
            first = ", ".join(str(int(r) + 1) for r in rows[:5])
            raise DataError(
                f"masking zone {row_label(zone_label)!r} (with its structural-zero pattern) holds "
                f"{len(rows)} record(s) (row(s) {first}{', ...' if len(rows) > 5 else ''}, counted "
                f"from 1) for {count} variable(s); its noise must be calibrated on at least as many "
                "records as variables (and on two at least). Merge zones or change the thresholds"
            )
        plan.append((rows, zone_label, np.flatnonzero(active)))

    mixed_used = mixed_sign
    if mixed_sign == "auto":
        # Oganian's shift where it gives every cell a valid noise covariance (its
        # nearly homogeneous noise keeps covariance ratios tightest on symmetric
        # data); otherwise noise proportional to the magnitude (skewed files).
        has_mixed = (transformed < 0).any(axis=0) & ~derived
        mixed_used = "magnitude"
        if scheme == "multiplicative" and variant == "zscore" and has_mixed.any():
            mixed_used = (
                "shift"
                if all(
                    _shift_is_valid(
                        transformed[np.ix_(rows, vars_)], w[rows], k_by_zone[zone_label]
                    )
                    for rows, zone_label, vars_ in plan
                    if len(vars_)
                )
                else "magnitude"
            )

    masked = transformed.copy()
    released_change = np.zeros((d, d))
    repaired_cells = 0
    total_weight = w.sum()
    singular_cells = 0
    intensities: list[float] = []
    released_shift = np.zeros((d, d))
    for number, (rows, zone_label, vars_) in enumerate(plan):
        if len(vars_):
            sub = transformed[np.ix_(rows, vars_)]
            sub_names = [names[j] for j in vars_]
            kz = k_by_zone[zone_label]
            target = None
            # Never silent: a sample covariance that is not positive definite is counted.
            spectrum = np.linalg.eigvalsh(_moments(sub, w[rows])[2])
            singular_cells += bool(spectrum[0] <= 1e-10 * max(spectrum[-1], np.finfo(float).tiny))
            if covariance == "shrinkage":
                target, delta = _shrunk_covariance(sub)
                intensities.append(delta)
                released_shift[np.ix_(vars_, vars_)] += (
                    len(rows) / n * kz * (target - _moments(sub, w[rows])[2]) / (1.0 + kz)
                )
            if scheme == "additive":
                out = _additive_block(sub, w[rows], kz, rng, sub_names, target)
            else:
                out, change = _multiplicative_block(
                    sub, w[rows], kz, rng, sub_names, variant, noise_covariance, mixed_used, target
                )
                if change is not None:
                    repaired_cells += 1
                    share = w[rows].sum() / total_weight
                    released_change[np.ix_(vars_, vars_)] += share * change
            masked[np.ix_(rows, vars_)] = out
        if progress is not None:
            progress(number + 1, len(plan))

    repair: dict[str, Any] = {}
    if repaired_cells:
        _, _, cov_x = _moments(x, w)
        repair = _repair_effect(cov_x, rebuild @ released_change @ rebuild.T, cols)
        if noise_covariance == "auto" and repair["worst_deviation"] > repair_tolerance:
            raise InfeasibleError(
                "the noise covariance of Oganian eq. "
                f"{'8' if variant == 'plain' else '13'} is not positive semi-definite in "
                f"{repaired_cells} masking cell(s), and its closest valid repair would release "
                f"{repair['worst']} (expected), outside [1 - {repair_tolerance:g}, "
                f"1 + {repair_tolerance:g}]. Pass noise_covariance='nearest' to accept it, a "
                "larger repair_tolerance, or mask those variables in separate runs"
            )

    result = masked @ rebuild.T
    integer = np.array([pd.api.types.is_integer_dtype(data[c].dtype) for c in cols], dtype=bool)
    result[:, integer] = np.rint(result[:, integer])
    # A total is the sum of its released (rounded) parts, so the identity holds exactly.
    for total, parts in found_totals.items():
        j = position[total]
        result[:, j] = result[:, [position[c] for c in parts]].sum(axis=1)
        if integer[j]:
            result[:, j] = np.rint(result[:, j])

    out = data.copy()
    for j, col in enumerate(cols):
        values = result[:, j]
        if integer[j]:
            _check_fits(values, data[col], scheme)
        out[col] = pd.Series(values, index=data.index, name=col).astype(data[col].dtype)

    final = np.column_stack([out[c].to_numpy(np.float64) for c in cols])
    stats = _moment_stats(x, final, w, cols)
    violations = np.zeros(n, dtype=bool)
    for chain in chains:
        p = [position[c] for c in chain]
        violations |= (final[:, p[:-1]] < final[:, p[1:]]).any(axis=1)
    stats["records_violating_constraints"] = int(violations.sum())
    stats["negative_values_in_nonnegative_columns"] = int((final[:, nonneg] < 0).sum())
    outside = (final < 0) & nonneg | (final > 0) & nonpos
    stats["values_outside_observed_sign"] = {
        cols[j]: int(outside[:, j].sum()) for j in range(d) if outside[:, j].any()
    }
    stats["masking_cells"] = len(cells)
    stats["covariance_estimator"] = covariance
    stats["cells_with_singular_sample_covariance"] = singular_cells
    if covariance == "shrinkage":
        _, _, cov_x = _moments(x, w)
        expected = cov_x + rebuild @ released_shift @ rebuild.T
        with np.errstate(divide="ignore", invalid="ignore"):
            corr_x = cov_x / np.sqrt(np.outer(np.diag(cov_x), np.diag(cov_x)))
            corr_e = expected / np.sqrt(np.outer(np.diag(expected), np.diag(expected)))
        stats["shrinkage_intensity"] = (min(intensities), max(intensities)) if intensities else None
        stats["shrinkage_largest_correlation_change"] = float(
            np.nanmax(np.abs(corr_e - corr_x)) if d > 1 else 0.0
        )
    if scheme == "multiplicative":
        stats["cells_with_adjusted_noise_covariance"] = repaired_cells
        if repair:
            stats["repair_variance_ratio_range"] = repair["variance_range"]
            stats["repair_covariance_ratio_range"] = repair["covariance_range"]
            stats["repair_largest_correlation_change"] = repair["correlation_change"]
            stats["repair_largest_effect"] = repair["worst"]
            # Per variable and pair: the expected released ratios the repair moves
            # (variances by 0.05 % or more, covariances of |corr| >= 0.2 by 1 % or more).
            stats["repair_variance_ratios"] = repair["variance_ratios"]
            stats["repair_covariance_ratios"] = repair["covariance_ratios"]
        stats["totals_rebuilt"] = {t: " + ".join(p) for t, p in found_totals.items()}
        if variant == "zscore":
            stats["mixed_sign_used"] = mixed_used
    stats["zone_sizes"] = {
        row_label(z): int((zone_codes == i).sum()) for i, z in enumerate(zone_list)
    }

    sd = x.std(axis=0)
    change = np.abs(final - x) / np.where(sd > 0, sd, 1.0)
    diagnostics = pd.DataFrame(
        {
            "zone": zone,
            "masking_cell": cell_codes.astype(np.int64),
            "max_change_in_sd": change.max(axis=1),
        },
        index=data.index,
    )
    params: dict[str, Any] = {
        "columns": cols,
        "variance_factor": k_by_zone if len(zone_list) > 1 else k_by_zone[zone_list[0]],
        "zones": zones if isinstance(zones, str) or zones is None else "per-record",
        "zone_thresholds": None if zone_thresholds is None else list(zone_thresholds),
        "structural_zeros": dict(structural_zeros or {}),
        "sample_weights": sample_weights,
    }
    if scheme == "multiplicative":
        params["variant"] = variant
        params["mixed_sign"] = mixed_sign
        params["constraints"] = chains
        params["totals"] = {t: list(p) for t, p in found_totals.items()}
        params["noise_covariance"] = noise_covariance
        params["repair_tolerance"] = repair_tolerance
    params["covariance"] = covariance
    method = f"{scheme}_noise"
    return NoiseResult(data=out, diagnostics=diagnostics, params=params, method=method, stats=stats)


def _rows_text(positions: np.ndarray, limit: int = 5) -> str:
    """'rows 41, 57 and 90' counted from 1, as a spreadsheet shows them."""
    shown = [str(int(p) + 1) for p in positions[:limit]]
    more = f" and {len(positions) - limit} more" if len(positions) > limit else ""
    word = "row" if len(positions) == 1 else "rows"
    return f"{word} {', '.join(shown)}{more}"


def _chain_transform(
    chain: list[str],
    data: pd.DataFrame,
    x: np.ndarray,
    transformed: np.ndarray,
    rebuild: np.ndarray,
    names: list[str],
    position: dict[str, int],
    nonneg: np.ndarray,
) -> np.ndarray:
    """Oganian (2011), Section 4, eq. 27, anchored so that every variable keeps its sign.

    Eq. 27 masks the last variable and the successive differences and sums
    back up. When the last variable takes negative values and one above it
    does not (``SALES >= OPERATING.PROFIT``), the rebuilt upper variable can
    fall below zero. The chain is therefore anchored at its lowest
    non-negative variable: the variables above it are the anchor plus masked
    non-negative differences (so they stay >= the anchor >= 0), those below
    it the anchor minus masked non-negative differences (they take negative
    values in the original and have no sign to keep). With every variable
    non-negative this is eq. 27 itself. Means and covariances are kept for
    the same reason as in eq. 27: the map back is linear.
    """
    p = [position[c] for c in chain]
    diffs = x[:, p[:-1]] - x[:, p[1:]]
    wrong = (diffs < 0).any(axis=1)
    if wrong.any():
        rows = np.flatnonzero(wrong)
        first_pair = int(np.flatnonzero(diffs[rows[0]] < 0)[0])
        a, b = chain[first_pair], chain[first_pair + 1]
        raise DataError(
            f"constraint {' >= '.join(chain)} fails in {len(rows)} record(s) of the original "
            f"data ({_rows_text(rows)}, counted from 1; first: {a} = "
            f"{number_text(x[rows[0], p[first_pair]])} < {b} = "
            f"{number_text(x[rows[0], p[first_pair + 1]])}); it cannot be preserved"
        )
    anchor = next((j for j in range(len(p) - 1, -1, -1) if nonneg[p[j]]), len(p) - 1)
    out = transformed.copy()
    for j in range(len(p)):
        if j < anchor:
            out[:, p[j]] = x[:, p[j]] - x[:, p[j + 1]]
            names[p[j]] = f"{chain[j]} - {chain[j + 1]}"
        elif j > anchor:
            out[:, p[j]] = x[:, p[j - 1]] - x[:, p[j]]
            names[p[j]] = f"{chain[j - 1]} - {chain[j]}"
    for j in range(len(p)):
        row = np.zeros(rebuild.shape[1])
        row[p[anchor]] = 1.0
        for i in range(j, anchor):
            row[p[i]] += 1.0
        for i in range(anchor + 1, j + 1):
            row[p[i]] -= 1.0
        rebuild[p[j]] = row
    return out


def _resolve_totals(
    totals: Any,
    data: pd.DataFrame,
    x: np.ndarray,
    cols: list[str],
    position: dict[str, int],
    excluded: set[str],
    nonneg: np.ndarray,
) -> dict[str, list[str]]:
    """Accounting identities ``total = part_1 + part_2 + ...`` to rebuild from the masked parts.

    Multiplicative noise independent of the data cannot keep the covariance of
    a column that is exactly the sum of others (the identity has variance
    zero; independent factors on its terms give it some), so the noise
    covariance is not positive semi-definite (CASC: PTOTVAL = PEARNVAL +
    POTHVAL). Masking the parts and summing them keeps the identity in every
    record and, the map being linear, the means and covariances.
    """
    if totals is None:
        return {}
    if isinstance(totals, str):
        if totals != "detect":
            raise ParameterError(
                f"totals must be 'detect', None or a mapping {{total: [parts]}}, got {totals!r}"
            )
        return _detect_totals(x, cols, excluded, nonneg)
    if not isinstance(totals, Mapping):
        raise ParameterError(
            f"totals must be 'detect', None or a mapping {{total: [parts]}}, got {totals!r}"
        )
    out: dict[str, list[str]] = {}
    for total, parts in totals.items():
        parts = [parts] if isinstance(parts, str) else list(parts)
        unknown = [c for c in [total, *parts] if c not in position]
        if unknown:
            raise ParameterError(
                f"totals: column(s) {unknown} are not among the masked columns {cols}"
            )
        clash = [c for c in [total, *parts] if c in excluded]
        if clash:
            raise ParameterError(
                f"totals: column(s) {clash} are in a constraint or have structural zeros"
            )
        if total in parts or not parts:
            raise ParameterError(f"totals: {total!r} needs parts other than itself, got {parts}")
        gap = x[:, position[total]] - x[:, [position[c] for c in parts]].sum(axis=1)
        wrong = np.abs(gap) > 1e-9 * max(float(np.abs(x[:, position[total]]).max()), 1.0)
        if wrong.any():
            rows = np.flatnonzero(wrong)
            raise DataError(
                f"totals: {total} = {' + '.join(parts)} fails in {len(rows)} record(s) of the "
                f"original data ({_rows_text(rows)}, counted from 1)"
            )
        if nonneg[position[total]] and not nonneg[[position[c] for c in parts]].all():
            raise ParameterError(
                f"totals: {total} is non-negative but its part(s) "
                f"{[c for c in parts if not nonneg[position[c]]]} take negative values, so the "
                "rebuilt total could fall below zero"
            )
        out[total] = parts
    nested = [t for t in out if any(t in parts for parts in out.values())]
    if nested:
        raise ParameterError(f"totals: {nested} are both a total and a part")
    return out


def _detect_totals(
    x: np.ndarray, cols: list[str], excluded: set[str], nonneg: np.ndarray
) -> dict[str, list[str]]:
    """Columns exactly equal, in every record, to the sum of other masked columns."""
    candidates = [
        j for j, c in enumerate(cols) if c not in excluded and x[:, j].max() > x[:, j].min()
    ]
    found: dict[str, list[str]] = {}
    used_parts: set[int] = set()
    # Largest first: a total is larger than its parts.
    for j in sorted(candidates, key=lambda j: -float(np.abs(x[:, j]).mean())):
        if j in used_parts:
            continue
        others = [i for i in candidates if i != j and cols[i] not in found]
        if not others:
            continue
        coef = np.linalg.lstsq(x[:, others], x[:, j], rcond=None)[0]
        rounded = np.rint(coef)
        if not np.allclose(coef, rounded, atol=1e-6) or not set(rounded.tolist()) <= {0.0, 1.0}:
            continue
        parts = [others[i] for i in np.flatnonzero(rounded == 1.0)]
        if not parts:
            continue
        gap = x[:, j] - x[:, parts].sum(axis=1)
        if np.abs(gap).max() > 1e-9 * max(float(np.abs(x[:, j]).max()), 1.0):
            continue
        if nonneg[j] and not nonneg[parts].all():
            continue
        found[cols[j]] = [cols[i] for i in parts]
        used_parts.update(parts)
    return found


def _repair_effect(cov: np.ndarray, change: np.ndarray, cols: list[str]) -> dict[str, Any]:
    """Expected released variance and covariance ratios implied by a repaired noise covariance.

    Ratios of covariances whose correlation is below 0.2 in absolute value are
    dominated by their small denominator; for those pairs the change is
    measured as a change of correlation divided by 0.2 (the ratio it would be
    at correlation 0.2), so a tolerance of 0.05 allows them a correlation
    change of 0.01.
    """
    var = np.diag(cov)
    sd = np.sqrt(np.clip(var, 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        var_ratio = np.where(var > 0, 1.0 + np.diag(change) / var, 1.0)
        corr = np.where(np.outer(sd, sd) > 0, cov / np.outer(sd, sd), 0.0)
        corr_change = np.where(np.outer(sd, sd) > 0, change / np.outer(sd, sd), 0.0)
        ratio = np.where(np.abs(corr) >= _WEAK, 1.0 + change / cov, np.nan)
    d = len(cols)
    deviation = np.where(np.abs(corr) >= _WEAK, np.abs(ratio - 1.0), np.abs(corr_change) / _WEAK)
    np.fill_diagonal(deviation, np.abs(var_ratio - 1.0))
    i, j = np.unravel_index(int(np.nanargmax(deviation)), deviation.shape)
    if i == j:
        worst = f"a variance ratio of {var_ratio[i]:.3f} for {cols[i]}"
    elif np.abs(corr[i, j]) >= _WEAK:
        worst = f"a covariance ratio of {ratio[i, j]:.3f} for ({cols[i]}, {cols[j]})"
    else:
        worst = (
            f"a correlation change of {corr_change[i, j]:+.3f} for ({cols[i]}, {cols[j]}), "
            f"whose correlation is {corr[i, j]:.3f}"
        )
    off = ~np.eye(d, dtype=bool) & np.isfinite(ratio)
    moved = {
        cols[v]: round(float(var_ratio[v]), 4) for v in range(d) if abs(var_ratio[v] - 1.0) >= 5e-4
    }
    pairs = {
        f"{cols[a]} ~ {cols[b]}": round(float(ratio[a, b]), 4)
        for a, b in zip(*np.triu_indices(d, 1), strict=True)
        if np.isfinite(ratio[a, b]) and abs(ratio[a, b] - 1.0) >= 0.01
    }
    return {
        "variance_ratios": moved,
        "covariance_ratios": pairs,
        "worst_deviation": float(deviation[i, j]),
        "worst": worst,
        "variance_range": (round(float(var_ratio.min()), 4), round(float(var_ratio.max()), 4)),
        "covariance_range": (
            (round(float(ratio[off].min()), 4), round(float(ratio[off].max()), 4))
            if off.any()
            else (1.0, 1.0)
        ),
        "correlation_change": round(float(np.abs(corr_change).max()), 4),
    }


def _check_fits(values: np.ndarray, original: pd.Series, scheme: str) -> None:
    """Raise a DataError when an integer column's dtype cannot hold its masked values."""
    dtype = original.dtype
    limits = np.iinfo(getattr(dtype, "numpy_dtype", dtype))
    low, high = float(values.min()), float(values.max())
    if low >= limits.min and high <= limits.max:
        return
    hint = (
        " (or use multiplicative_noise, which keeps non-negative variables non-negative)"
        if scheme == "additive" and low < 0 <= limits.min
        else ""
    )
    raise DataError(
        f"column {original.name!r} has dtype {dtype}, which holds {limits.min}..{limits.max}, "
        f"but the masked values range from {low:g} to {high:g}; convert the column to a wider "
        f"type (int64 or float64) before masking{hint}"
    )


def _moment_stats(x: np.ndarray, final: np.ndarray, w: np.ndarray, cols: list[str]) -> dict:
    mean_o, _, cov_o = _moments(x, w)
    mean_m, _, cov_m = _moments(final, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_ratio = np.where(mean_o != 0, mean_m / mean_o, np.nan)
        sd = np.sqrt(np.clip(np.diag(cov_o), 0, None))
        meaningful = np.abs(cov_o) > 1e-8 * np.outer(sd, sd)
        cov_ratio = np.where(meaningful & (np.outer(sd, sd) > 0), cov_m / cov_o, np.nan)
    stats: dict[str, Any] = {}
    if np.isfinite(mean_ratio).any():
        stats["mean_ratio_min"] = float(np.nanmin(mean_ratio))
        stats["mean_ratio_max"] = float(np.nanmax(mean_ratio))
    if np.isfinite(cov_ratio).any():
        stats["covariance_ratio_min"] = float(np.nanmin(cov_ratio))
        stats["covariance_ratio_max"] = float(np.nanmax(cov_ratio))
    return stats


# ---------------------------------------------------------------------------
# public functions


@register_masker(
    "additive_noise", "Additive correlated noise keeping means and covariances (Oganian eq. 1)"
)
@deprecated_spellings("columns", "variance_factor", k="variance_factor")
def additive_noise(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    variance_factor: float | Mapping | Sequence[float] = 0.15,
    zones: str | Iterable | None = None,
    zone_thresholds: Sequence[float] | None = None,
    structural_zeros: Mapping[str, str] | None = None,
    sample_weights: str | None = None,
    covariance: str = "sample",
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> NoiseResult:
    """Add correlated normal noise that keeps the mean vector and covariance matrix.

    Oganian (2011), eq. 1 (after Kim 1986 and Tendick 1991):
    ``X_m = mean + ((X - mean) + E) / sqrt(1 + k)`` with ``E ~ N(0, k Sigma)``,
    so ``E[X_m] = mean`` and ``Cov(X_m) = Sigma``. Values can change sign: use
    :func:`multiplicative_noise` for variables that must stay non-negative.

    Parameters
    ----------
    data : DataFrame
        Never modified.
    columns : iterable of str, optional
        Numeric variables to mask (default: every numeric column whose role is
        not id, weight or ignore). Masked jointly.
    variance_factor : float, mapping or sequence, default 0.15
        Oganian's k > 0, the variance of the noise as a multiple of the
        data's (``E ~ N(0, k Sigma)``; 0.15 is the value Oganian uses). One
        number for all zones, ``{zone: k}``, or one k per zone in sorted zone
        order. Spelled ``k`` in sdckit 0.1 (still accepted for one release,
        with a DeprecationWarning). With ``zone_thresholds`` the zones are 0..len(thresholds), and
        a mapping or sequence refers to them even when some are empty.
    zones : str or array-like, optional
        A column name or one label per record: every zone is masked with
        independent noise calibrated on its own moments, which keeps the
        overall mean and covariance (Oganian Section 5).
    zone_thresholds : sequence of float, optional
        Zones by value instead: zone i holds the records whose largest masked
        value lies in (t_{i-1}, t_i] (zone 0: up to t_0; last zone: above the
        last threshold). Oganian's two-zone experiment is ``[15]``.
    structural_zeros : mapping, optional
        ``{variable: indicator column}``: where the indicator is true the
        variable must be 0 and stays 0; such records are masked separately
        (Oganian Section 5, last paragraph).
    sample_weights : str, optional
        Survey-weight column; means and covariances are weighted, so the
        weighted moments are the ones preserved. The column is not masked.
        When omitted, a column with the role "weight" in ``schema`` is used.
    covariance : {"sample", "shrinkage"}, default "sample"
        The Sigma_o the noise follows (Oganian 2011, §1: "the usual empirical
        estimator or a shrinkage-based estimator"). ``"shrinkage"``:
        Ledoit-Wolf (2004, scikit-learn) on the standardized variables, so
        every variance is kept and the correlations shrink toward 0; it is
        positive definite even when the sample covariance is singular
        (collinear variables, small zones), and the released covariance is
        ``(Sigma_sample + k Sigma_shrunk) / (1 + k)`` in expectation (reported:
        ``stats["shrinkage_intensity"]``,
        ``stats["shrinkage_largest_correlation_change"]`` and a warning line).
        Cells whose sample covariance is singular are counted in
        ``stats["cells_with_singular_sample_covariance"]`` either way. Not
        with ``sample_weights``.
    schema : Schema, optional
    random_state : None, int or Generator
        Same seed, same output.
    progress : callable, optional
        ``progress(done, total)`` over the masking cells.

    Returns
    -------
    NoiseResult
        Same index, columns and dtypes (integer columns are rounded).
    """
    return _mask(
        data,
        columns,
        variance_factor,
        scheme="additive",
        variant="",
        noise_covariance="exact",
        constraints=None,
        zones=zones,
        zone_thresholds=zone_thresholds,
        structural_zeros=structural_zeros,
        sample_weights=sample_weights,
        schema=schema,
        random_state=random_state,
        progress=progress,
        covariance=covariance,
    )


@register_masker(
    "multiplicative_noise",
    "Multiplicative noise keeping positivity, inequalities, means and covariances (Oganian 2011)",
)
@deprecated_spellings("columns", "variance_factor", k="variance_factor")
def multiplicative_noise(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    variance_factor: float | Mapping | Sequence[float] = 0.15,
    variant: str = "zscore",
    mixed_sign: str = "auto",
    noise_covariance: str = "auto",
    repair_tolerance: float = 0.05,
    constraints: Sequence[Sequence[str]] | None = None,
    totals: str | Mapping[str, Sequence[str]] | None = "detect",
    zones: str | Iterable | None = None,
    zone_thresholds: Sequence[float] | None = None,
    structural_zeros: Mapping[str, str] | None = None,
    sample_weights: str | None = None,
    covariance: str = "sample",
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> NoiseResult:
    """Multiply by lognormal noise, keeping positivity, inequalities, means and covariances.

    Oganian (2011), Sections 2, 4 and 5.

    ``variant="plain"`` is eqs. 5-9: ``X_m = ((sqrt(1+k)-1) mean + X o exp(E))
    / sqrt(1+k)`` with ``Sigma_E(i,j) = log(1 + k Sigma(i,j) / E[X_i X_j])``
    and ``mu_E = -diag(Sigma_E)/2``. It raises :class:`InfeasibleError` when
    ``1 + k Sigma(i,j) / E[X_i X_j] <= 0`` for some pair (eq. 10), naming the
    variables. ``variant="zscore"`` (default) is eqs. 11-14 with
    ``lag = sqrt(1+k) mean / sd`` (eq. 21), whose noise covariance (eq. 23)
    exists for any non-negative data; a variable taking both signs gets
    noise proportional to its magnitude (``mixed_sign``).

    Both keep non-negative variables non-negative and (in expectation) the
    means and covariance matrix. When the noise covariance is not positive
    semi-definite (see the module notes for why), the default repairs it and
    reports, and verifies, the released ratios the repair implies.

    Parameters
    ----------
    data : DataFrame
        Never modified.
    columns : iterable of str, optional
        Numeric variables to mask jointly (default: every numeric column whose
        role is not id, weight or ignore).
    variance_factor : float, mapping or sequence, default 0.15
        Oganian's k > 0, the noise variance as a multiple of the data's, one
        for all zones or per zone (see :func:`additive_noise`). Spelled ``k``
        in sdckit 0.1 (still accepted for one release).
    variant : {"zscore", "plain"}, default "zscore"
    mixed_sign : {"auto", "magnitude", "shift"}, default "auto"
        Noise for a variable taking both signs (zscore variant). Such a
        variable has no sign to keep. ``"auto"``: ``"shift"`` when it gives
        every masking cell a valid noise covariance without repair, else
        ``"magnitude"`` (``stats["mixed_sign_used"]`` says which); the shift's
        nearly homogeneous noise keeps covariance ratios tighter on symmetric
        data (Oganian's normal sets, docs/validation.md), the magnitude is
        what skewed files need. ``"magnitude"``: noise proportional to
        ``|X| + (sqrt(1+k) - 1) E|X|`` (eq. 21 on the magnitude), so it follows
        the size of the record like the noise of the non-negative variables;
        the sign of a value can change near zero. ``"shift"``: Oganian's shift
        by ``|min|`` (end of Section 2); the variable stays >= its original
        minimum, but a far negative outlier makes its noise nearly
        homogeneous, which on skewed files leaves no valid noise covariance.
    noise_covariance : {"auto", "exact", "nearest"}, default "auto"
        The noise covariance of eq. 8 / eq. 13 must be positive semi-definite
        for normal noise to have it, and eq. 23 only makes its entries exist.
        When it is not, ``"auto"`` and ``"nearest"`` use the closest positive
        semi-definite matrix with the same diagonal (Higham 2002): the means
        and variances stay exact in expectation and covariances bend. The
        released variance and covariance ratios this implies are computed and
        reported in ``stats`` and in the summary; ``"auto"`` raises
        :class:`InfeasibleError` with the worst figure when one leaves
        ``[1 - repair_tolerance, 1 + repair_tolerance]``, ``"nearest"``
        accepts it, ``"exact"`` raises whenever a repair is needed.
    repair_tolerance : float, default 0.05
        Largest accepted deviation from 1 of an expected released variance or
        covariance ratio after a repair. For a pair whose correlation is below
        0.2 in absolute value (whose ratio is dominated by its small
        denominator) the change of correlation divided by 0.2 is used instead.
    constraints : list of lists of str, optional
        Chains ``[X1, X2, ..., Xl]`` meaning ``X1 >= X2 >= ... >= Xl`` in every
        record, over masked columns; preserved exactly in every masked record
        (eq. 27): the lowest non-negative variable of the chain and the
        successive differences are masked, the variables above it rebuilt by
        adding differences (so they stay non-negative), those below it by
        subtracting them (they take negative values in the original). The
        original data must satisfy the chains, else :class:`DataError` naming
        the rows (counted from 1).
    totals : "detect", None or mapping, default "detect"
        Accounting identities ``total = part_1 + part_2 + ...`` holding in
        every record: the parts are masked and the total rebuilt as their sum,
        so the identity holds in the release and the means and covariances
        are kept. ``"detect"`` finds masked columns that equal a sum of other
        masked columns exactly (not in a constraint or with structural zeros;
        a non-negative total only from non-negative parts); a mapping
        ``{total: [parts]}`` declares them (checked; rows where it fails are
        named); ``None`` masks every column directly. ``stats["totals_rebuilt"]``
        lists them.
    zones, zone_thresholds, structural_zeros, sample_weights, covariance :
        As in :func:`additive_noise`.
    schema, random_state, progress :
        As in :func:`additive_noise` (the same seed gives the same output).

    Returns
    -------
    NoiseResult
        Same index, columns and dtypes (integer columns are rounded, which
        keeps signs and inequalities).
    """
    if variant not in _VARIANTS:
        raise ParameterError(f"variant must be one of {list(_VARIANTS)}, got {variant!r}")
    if mixed_sign not in ("auto", "magnitude", "shift"):
        raise ParameterError(
            f"mixed_sign must be 'auto', 'magnitude' or 'shift', got {mixed_sign!r}"
        )
    if noise_covariance not in ("auto", "exact", "nearest"):
        raise ParameterError(
            f"noise_covariance must be 'auto', 'exact' or 'nearest', got {noise_covariance!r}"
        )
    if (
        isinstance(repair_tolerance, bool)
        or not isinstance(repair_tolerance, numbers.Real)
        or not 0 <= repair_tolerance < 1
    ):
        raise ParameterError(
            f"repair_tolerance must be a number in [0, 1) (0.05 accepts released variance and "
            f"covariance ratios in [0.95, 1.05]), got {repair_tolerance!r}"
        )
    return _mask(
        data,
        columns,
        variance_factor,
        scheme="multiplicative",
        variant=variant,
        noise_covariance=noise_covariance,
        constraints=constraints,
        zones=zones,
        zone_thresholds=zone_thresholds,
        structural_zeros=structural_zeros,
        sample_weights=sample_weights,
        schema=schema,
        random_state=random_state,
        progress=progress,
        mixed_sign=mixed_sign,
        totals=totals,
        repair_tolerance=float(repair_tolerance),
        covariance=covariance,
    )
