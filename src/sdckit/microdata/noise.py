"""Noise that keeps means and covariances: additive and multiplicative, with constraints.

All formulas are from Oganian (2011), *Multiplicative noise for masking
numerical microdata with constraints*, SORT 35, in seed 004:

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
  variables of both signs are first shifted by ``|min X|`` and shifted back
  (end of Section 2);
* inequality constraints ``X_1 >= X_2 >= ... >= X_l`` preserved exactly by
  masking ``X_l`` and the successive differences and summing back (eq. 27,
  Section 4);
* multi-zone masking (Section 5): independent noise with its own k in every
  zone (a user partition or value thresholds), and variables paired with a
  "structural zero" indicator left at zero where the indicator says so.

Normal noise also needs the noise covariance matrix to be positive
semi-definite, which the paper does not establish: eq. 23 only makes its
entries exist. For a pair where eq. 10 rules out the plain scheme the z-score
matrix is never positive semi-definite when k < 0.618 (its off-diagonal entry
is below log((1+k)/(2+k)), its diagonal entries below log(1+k)), and small,
oddly shaped zones can fail too, as can (by a rounding-level margin)
near-collinear variables. ``noise_covariance="auto"`` (default) repairs
rounding-level defects (closest valid matrix within 0.1 %) and raises an
:class:`InfeasibleError` otherwise; ``"exact"`` always raises; ``"nearest"``
always uses the closest valid matrix. Repairs are reported in ``stats``.

Means and covariances are preserved in expectation: the masked sample's
moments differ from the original's by sampling noise of order 1/sqrt(n), as in
the paper's Section 5 experiment (reproduced in ``docs/validation.md``).
"""

from __future__ import annotations

import itertools
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
)
from sdckit.errors import DataError, InfeasibleError, ParameterError, SchemaError
from sdckit.microdata._weights import resolve_sample_weights, sample_weight_vector
from sdckit.microdata.base import MaskResult, register_masker
from sdckit.schema import Kind, Schema

__all__ = ["NoiseResult", "additive_noise", "multiplicative_noise"]

_VARIANTS = ("zscore", "plain")
#: "auto" repairs a noise covariance that is not positive semi-definite only when
#: the closest valid matrix is this close (relative Frobenius norm): rounding-level
#: defects of near-collinear variables, far below the sampling noise of any release.
_AUTO_REPAIR = 1e-3


@dataclass(frozen=True)
class NoiseResult(MaskResult):
    """Result of :func:`additive_noise` and :func:`multiplicative_noise`.

    ``diagnostics`` has, per record, ``zone`` (its masking zone),
    ``masking_cell`` (zone x structural-zero pattern; each cell gets its own
    independent noise) and ``max_change_in_sd`` (largest change over the
    masked variables, in standard deviations). ``stats`` has the masked over
    original ratios of the means and of the covariance entries (smallest and
    largest), the number of records with a constraint violated (always 0) and
    of negative values created in non-negative variables.
    """

    def summary(self) -> str:
        """Parameters and the moment ratios."""
        return super().summary()


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


def _nearest_psd(cov: np.ndarray) -> tuple[np.ndarray, float]:
    """Closest positive semi-definite matrix (negative eigenvalues set to 0), relative change."""
    values, vectors = np.linalg.eigh(cov)
    fixed = (vectors * np.clip(values, 0.0, None)) @ vectors.T
    fixed = (fixed + fixed.T) / 2.0
    change = float(np.linalg.norm(fixed - cov) / max(np.linalg.norm(cov), np.finfo(float).tiny))
    return fixed, change


def _additive_block(
    y: np.ndarray, w: np.ndarray, k: float, rng: np.random.Generator, names: list[str]
) -> np.ndarray:
    """Oganian eq. 1: X_m = mean + ((X - mean) + E) / sqrt(1 + k), E ~ N(0, k Sigma)."""
    mean, _, cov = _moments(y, w)
    noise = _normal(rng, len(y), np.zeros(len(mean)), k * cov, "noise covariance k*Sigma", names)
    return mean + ((y - mean) + noise) / np.sqrt(1.0 + k)


def _multiplicative_block(
    y: np.ndarray,
    w: np.ndarray,
    k: float,
    rng: np.random.Generator,
    names: list[str],
    variant: str,
    noise_covariance: str,
) -> tuple[np.ndarray, float]:
    """Oganian eqs. 7-9 (plain) or 11-14 with lag of eq. 21 and the shift (zscore).

    Returns the masked block and the relative change made to the noise
    covariance (0 unless ``noise_covariance="nearest"`` had to repair it).
    """
    root = np.sqrt(1.0 + k)
    if variant == "plain":
        z = y
        shift = np.zeros(y.shape[1])
    else:
        # Eq. 21: Z_p = (X + shift + (sqrt(1+k) - 1) mean') / sd, and the scheme of
        # eq. 7 on Z_p reduces to X_m' = (X' + (sqrt(1+k)-1) mean') o exp(E) / sqrt(1+k).
        shift = np.maximum(-y.min(axis=0), 0.0)
        shifted = y + shift
        z = shifted + (root - 1.0) * (w @ shifted / w.sum())
    mean, second, cov = _moments(z, w)
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
                "11-14 with the lag of eq. 21), whose noise covariance always has a logarithm; for "
                "pairs this far from the plain scheme's range its matrix is not positive "
                "semi-definite when k < 0.618, so add noise_covariance='nearest' (closest valid "
                "noise covariance; those covariances are then kept only approximately, see stats)"
            )
        raise InfeasibleError(
            f"the noise covariance (Oganian eq. 23) does not exist for variable pair(s) {shown}: "
            "their product is zero in every record of this masking cell. Mask them separately "
            "or declare the zeros structural (structural_zeros=...)"
        )
    noise_cov = np.log(argument)
    change = 0.0
    values = np.linalg.eigvalsh(noise_cov)
    if values.min() < -1e-10 * max(float(np.abs(values).max()), np.finfo(float).tiny):
        repaired, change = _nearest_psd(noise_cov)
        small = change <= _AUTO_REPAIR
        if noise_covariance == "exact" or (noise_covariance == "auto" and not small):
            raise InfeasibleError(
                f"the noise covariance of Oganian eq. {'8' if variant == 'plain' else '13'} for "
                f"variables {names} has a logarithm but is not positive semi-definite (smallest "
                f"eigenvalue {values.min():.3g}; the closest valid matrix differs by "
                f"{change:.2%}), so no normal noise keeps all their covariances exactly. Pass "
                "noise_covariance='nearest' to use the closest valid noise covariance (means "
                "stay exact in expectation; stats report the adjustment), or mask the "
                "variables in separate runs"
            )
        noise_cov = repaired
    noise_mean = -np.diag(noise_cov) / 2.0  # eq. 9: E[exp(E)] = 1, so means are kept
    noise = _normal(rng, len(z), noise_mean, noise_cov, "noise covariance", names)
    factor = np.exp(noise)
    if variant == "plain":
        return ((root - 1.0) * mean + z * factor) / root, change
    return z * factor / root - shift, change


# ---------------------------------------------------------------------------
# parameters


def _check_k(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ParameterError(f"{name} must be a finite number > 0, got {value!r}")
    if value <= 0:
        raise ParameterError(f"{name} must be > 0 (the variance inflation factor), got {value!r}")
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
            raise ParameterError(f"k has no value for zone(s) {missing}; zones are {domain}")
        extra = [z for z in k if z not in domain]
        if extra:
            raise ParameterError(f"k names zone(s) {extra}, which are not among the zones {domain}")
        checked = {z: _check_k(v, f"k[{z!r}]") for z, v in k.items()}
        return {z: checked[z] for z in labels}
    if isinstance(k, Sequence) and not isinstance(k, str):
        if len(k) != len(domain):
            raise ParameterError(
                f"k lists {len(k)} value(s) but there are {len(domain)} zone(s) {domain}"
            )
        checked = {
            z: _check_k(v, f"k[{i}]") for i, (z, v) in enumerate(zip(domain, k, strict=True))
        }
        return {z: checked[z] for z in labels}
    value = _check_k(k, "k")
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
                f"record(s) where it is not zero, first row {data.index[pos]!r} ({values[pos]!r})"
            )
        out[var] = is_zero
    return out


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
) -> NoiseResult:
    check_dataframe(data, min_rows=2)
    n = len(data)
    rng = check_random_state(random_state)
    schema = schema if schema is not None else Schema.infer(data)
    schema.check_matches(data)
    sample_weights = resolve_sample_weights(schema, sample_weights)
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
    # Eq. 27: mask X_l and the successive differences X_{j} - X_{j+1} >= 0.
    transformed = x.copy()
    names = list(cols)
    for chain in chains:
        p = [position[c] for c in chain]
        diffs = x[:, p[:-1]] - x[:, p[1:]]
        wrong = (diffs < 0).any(axis=1)
        if wrong.any():
            pos = int(np.flatnonzero(wrong)[0])
            raise DataError(
                f"constraint {' >= '.join(chain)} fails in {int(wrong.sum())} record(s) of the "
                f"original data, first row {data.index[pos]!r}; it cannot be preserved"
            )
        transformed[:, p[:-1]] = diffs
        for a, b in itertools.pairwise(chain):
            names[position[a]] = f"{a} - {b}"

    zone = _zone_labels(data, x, zones, zone_thresholds)
    zone_values, zone_codes = np.unique(zone, return_inverse=True)
    zone_list = zone_values.tolist()
    # With thresholds the zones are 0..len(thresholds) whether or not records fall in them.
    domain = None if zone_thresholds is None else list(range(len(list(zone_thresholds)) + 1))
    k_by_zone = _zone_k(k, zone_list, domain)
    pattern = np.zeros((n, len(cols)), dtype=bool)
    for var, is_zero in zeros.items():
        pattern[:, position[var]] = is_zero
    pattern_codes = np.unique(pattern, axis=0, return_inverse=True)[1].reshape(-1)
    cell_key = zone_codes.astype(np.int64) * (int(pattern_codes.max()) + 1) + pattern_codes
    cells, cell_codes = np.unique(cell_key, return_inverse=True)

    masked = transformed.copy()
    adjusted: list[float] = []
    for number in range(len(cells)):
        rows = np.flatnonzero(cell_codes == number)
        zone_label = zone_list[int(zone_codes[rows[0]])]
        if len(rows) < 2:
            raise DataError(
                f"masking zone {zone_label!r} (with its structural-zero pattern) holds only "
                f"{len(rows)} record, row {data.index[rows[0]]!r}; noise calibrated on one record "
                "would leave it unchanged. Merge zones or change the thresholds"
            )
        block = transformed[rows]
        active = ~pattern[rows[0]] & (block.max(axis=0) > block.min(axis=0))
        if active.any():
            vars_ = np.flatnonzero(active)
            sub = block[:, vars_]
            sub_names = [names[j] for j in vars_]
            kz = k_by_zone[zone_label]
            if scheme == "additive":
                out = _additive_block(sub, w[rows], kz, rng, sub_names)
            else:
                out, change = _multiplicative_block(
                    sub, w[rows], kz, rng, sub_names, variant, noise_covariance
                )
                if change > 0:
                    adjusted.append(change)
            masked[np.ix_(rows, vars_)] = out
        if progress is not None:
            progress(number + 1, len(cells))

    # Back from (X_l, differences) to the chain: cumulative sums of non-negative terms.
    result = masked.copy()
    for chain in chains:
        p = [position[c] for c in chain]
        running = masked[:, p[-1]].copy()
        for j in range(len(p) - 2, -1, -1):
            running = running + masked[:, p[j]]
            result[:, p[j]] = running

    out = data.copy()
    for j, col in enumerate(cols):
        values = result[:, j]
        if pd.api.types.is_integer_dtype(data[col].dtype):
            values = np.rint(values)
            _check_fits(values, data[col], scheme)
        out[col] = pd.Series(values, index=data.index, name=col).astype(data[col].dtype)

    final = np.column_stack([out[c].to_numpy(np.float64) for c in cols])
    stats = _moment_stats(x, final, w, cols)
    violations = np.zeros(n, dtype=bool)
    for chain in chains:
        p = [position[c] for c in chain]
        violations |= (final[:, p[:-1]] < final[:, p[1:]]).any(axis=1)
    nonneg = (x >= 0).all(axis=0)
    stats["records_violating_constraints"] = int(violations.sum())
    stats["negative_values_in_nonnegative_columns"] = int((final[:, nonneg] < 0).sum())
    stats["masking_cells"] = len(cells)
    if scheme == "multiplicative":
        stats["cells_with_adjusted_noise_covariance"] = len(adjusted)
        stats["largest_noise_covariance_adjustment"] = max(adjusted, default=0.0)
    stats["zone_sizes"] = {z: int((zone_codes == i).sum()) for i, z in enumerate(zone_list)}

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
        "k": k_by_zone if len(zone_list) > 1 else k_by_zone[zone_list[0]],
        "zones": zones if isinstance(zones, str) or zones is None else "per-record",
        "zone_thresholds": None if zone_thresholds is None else list(zone_thresholds),
        "structural_zeros": dict(structural_zeros or {}),
        "sample_weights": sample_weights,
    }
    if scheme == "multiplicative":
        params["variant"] = variant
        params["constraints"] = chains
        params["noise_covariance"] = noise_covariance
    method = f"{scheme}_noise"
    return NoiseResult(data=out, diagnostics=diagnostics, params=params, method=method, stats=stats)


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
def additive_noise(
    data: pd.DataFrame,
    columns: Iterable[str] | None = None,
    k: float | Mapping | Sequence[float] = 0.15,
    *,
    zones: str | Iterable | None = None,
    zone_thresholds: Sequence[float] | None = None,
    structural_zeros: Mapping[str, str] | None = None,
    sample_weights: str | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> NoiseResult:
    """Add correlated normal noise that keeps the mean vector and covariance matrix.

    Oganian (2011, seed 004), eq. 1 (after Kim 1986 and Tendick 1991):
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
    k : float, mapping or sequence, default 0.15
        Variance inflation factor k > 0 (0.15 is the value Oganian uses). One
        number for all zones, ``{zone: k}``, or one k per zone in sorted zone
        order. With ``zone_thresholds`` the zones are 0..len(thresholds), and
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
        k,
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
    )


@register_masker(
    "multiplicative_noise",
    "Multiplicative noise keeping positivity, inequalities, means and covariances (Oganian 2011)",
)
def multiplicative_noise(
    data: pd.DataFrame,
    columns: Iterable[str] | None = None,
    k: float | Mapping | Sequence[float] = 0.15,
    *,
    variant: str = "zscore",
    noise_covariance: str = "auto",
    constraints: Sequence[Sequence[str]] | None = None,
    zones: str | Iterable | None = None,
    zone_thresholds: Sequence[float] | None = None,
    structural_zeros: Mapping[str, str] | None = None,
    sample_weights: str | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> NoiseResult:
    """Multiply by lognormal noise, keeping positivity, inequalities, means and covariances.

    Oganian (2011, seed 004), Sections 2, 4 and 5.

    ``variant="plain"`` is eqs. 5-9: ``X_m = ((sqrt(1+k)-1) mean + X o exp(E))
    / sqrt(1+k)`` with ``Sigma_E(i,j) = log(1 + k Sigma(i,j) / E[X_i X_j])``
    and ``mu_E = -diag(Sigma_E)/2``. It raises :class:`InfeasibleError` when
    ``1 + k Sigma(i,j) / E[X_i X_j] <= 0`` for some pair (eq. 10), naming the
    variables. ``variant="zscore"`` (default) is eqs. 11-14 with
    ``lag = sqrt(1+k) mean / sd`` (eq. 21), whose noise covariance (eq. 23)
    exists for any non-negative data; a variable with negative values is
    first shifted by ``|min|`` and shifted back afterwards.

    Both keep non-negative variables non-negative and (in expectation) the
    means and covariance matrix; a shifted variable stays >= its original
    minimum.

    Parameters
    ----------
    data : DataFrame
        Never modified.
    columns : iterable of str, optional
        Numeric variables to mask jointly (default: every numeric column whose
        role is not id, weight or ignore).
    k : float, mapping or sequence, default 0.15
        Variance inflation factor k > 0, one for all zones or per zone (see
        :func:`additive_noise`).
    variant : {"zscore", "plain"}, default "zscore"
    noise_covariance : {"auto", "exact", "nearest"}, default "auto"
        The noise covariance of eq. 8 / eq. 13 must be positive semi-definite
        for normal noise to have it. Oganian shows the z-score variant keeps
        its logarithm defined, but not that the matrix is positive
        semi-definite, and it is not for strongly axis-aligned pairs (exactly
        those where eq. 10 rules out the plain scheme, whenever k < 0.618), for
        some small, oddly shaped zones, and (by a rounding-level margin) for
        near-collinear variables such as BMI beside weight and height.
        ``"exact"`` raises :class:`InfeasibleError` whenever it is not;
        ``"nearest"`` always uses the closest valid matrix (negative
        eigenvalues set to zero: means stay exact in expectation, the
        covariances are kept approximately); ``"auto"`` repairs only when the
        closest valid matrix differs by at most 0.1 % and raises otherwise.
        ``stats`` report the cells repaired and the largest relative change.
    constraints : list of lists of str, optional
        Chains ``[X1, X2, ..., Xl]`` meaning ``X1 >= X2 >= ... >= Xl`` in every
        record; preserved exactly in every masked record by masking ``Xl`` and
        the differences and summing back (eq. 27). The original data must
        satisfy them (else :class:`DataError` naming the first row).
    zones, zone_thresholds, structural_zeros, sample_weights :
        As in :func:`additive_noise`.
    schema : Schema, optional
    random_state : None, int or Generator
        Same seed, same output.
    progress : callable, optional
        ``progress(done, total)`` over the masking cells.

    Returns
    -------
    NoiseResult
        Same index, columns and dtypes (integer columns are rounded, which
        keeps signs and inequalities).
    """
    if variant not in _VARIANTS:
        raise ParameterError(f"variant must be one of {list(_VARIANTS)}, got {variant!r}")
    if noise_covariance not in ("auto", "exact", "nearest"):
        raise ParameterError(
            f"noise_covariance must be 'auto', 'exact' or 'nearest', got {noise_covariance!r}"
        )
    return _mask(
        data,
        columns,
        k,
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
    )
