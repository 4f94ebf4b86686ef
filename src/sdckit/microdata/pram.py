"""PRAM: categorical values changed at random by a transition matrix, within strata.

The post-randomisation method (Kooiman, Willenborg & Gouweleeuw 1997;
Gouweleeuw, Kooiman, Willenborg & de Wolf 1998) replaces the value k of a
categorical variable by the value l with probability p_kl, drawn
independently for every record; the matrix P = (p_kl) (rows sum to 1) is
published, so an analyst can correct frequencies for it (T̂ = (P')^-1 T*,
:func:`pram_frequencies`).

Two kinds of matrix:

* **invariant** (the default): P with T'P = T', T the column's frequencies,
  so the released frequencies equal the original ones in expectation and an
  analyst needs no correction (Gouweleeuw et al. 1998). sdckit builds it by
  detailed balance: a symmetric flow w_kl = w_lk between every two values,
  p_kl = w_kl / T_k off the diagonal, which makes sum_k T_k p_kl = T_l for any
  such flow. sdckit takes w_kl = θ min(T_k, T_l) / (K - 1) (θ = 1 -
  ``min_diagonal``, K the number of values), so

      p_kl = θ min(T_k, T_l) / ((K - 1) T_k)   (l ≠ k),     p_kk = 1 - sum_{l ≠ k} p_kl.

  Each off-diagonal sum is at most θ, with equality for the rarest value:
  the rarest value is kept with probability exactly ``min_diagonal``, every
  other with at least that, and every transition between two values of the
  stratum has a positive probability; two frequent values exchange more
  records than a frequent and a rare one (a flow θ T_min / (K - 1) between
  every pair would do too, but would barely change a column whose rarest
  value is rare). ``min_diagonal`` is therefore what it says — the smallest
  probability of keeping a value — and it is honoured: every diagonal entry
  is at least it. (sdcMicro's ``pd`` is documented as that bound but its
  invariant matrix, the two-step R = PQ, falls below it for rare values: its
  issues #264 and #347.) The matrix reveals the ratios of the frequencies,
T_min / T_k, the frequency table of the column within each stratum.
* **given**: ``transition``, a matrix per column (rows: the value before;
  columns: the value after; labels as the values are written). Its exact
  zeros are never violated: a record moves from k to l only if p_kl > 0
  (sdcMicro's ``pram`` could, its issue #303).

**Strata** (``strata``): the records of each combination of the strata
columns are randomised among themselves, and a value is only ever replaced by
a value the column *takes in that stratum* — so a stratum leaks no value of
another (sdcMicro's strata drew a new matrix per stratum over every value of
the file, so that, for instance, "student" appeared among the over-60s: its
issues #234 and #358). The invariant matrix is built per stratum from the
stratum's frequencies; a given matrix is restricted to the stratum's values
and its rows renormalised (which only raises the diagonal; ``transitions``
holds the matrices actually used, so :func:`pram_frequencies` inverts the
right one). A stratum in which the column takes a single value cannot be
perturbed without leaking, and is left unchanged (``stats`` counts its
records). Without strata the file is one stratum: values are only replaced by
values the column takes.

Missing values are not randomised and no value becomes missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit._keys import combine_codes, key_codes
from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    check_fraction,
    check_random_state,
    check_required_columns,
    describe_row,
)
from sdckit.errors import DataError, ParameterError
from sdckit.microdata.base import MaskResult, register_masker
from sdckit.microdata.recode import value_text
from sdckit.schema import Schema

__all__ = ["PramResult", "invariant_transition", "pram", "pram_frequencies"]

#: Tolerance on a row sum of a given transition matrix.
ROW_SUM_TOLERANCE = 1e-6
#: A transition matrix whose condition number exceeds this is taken as not invertible.
MAX_CONDITION = 1e12


def invariant_transition(frequencies: np.ndarray, min_diagonal: float) -> np.ndarray:
    """The invariant PRAM matrix of the module's docstring, for one stratum.

    Parameters
    ----------
    frequencies : ndarray, shape (K,)
        Positive frequencies T_k of the K values.
    min_diagonal : float
        The smallest probability of keeping a value, in (0, 1).

    Returns
    -------
    ndarray, shape (K, K)
        P with rows summing to 1, T'P = T', diagonal >= ``min_diagonal``
        (equal for the rarest value) and every entry positive; ``[[1]]`` for
        a single value.
    """
    t = np.asarray(frequencies, dtype=np.float64)
    size = len(t)
    if size == 1:
        return np.ones((1, 1))
    # A symmetric flow between every two values: invariant by detailed balance.
    flow = (1.0 - min_diagonal) * np.minimum(t[:, None], t[None, :]) / (size - 1)
    np.fill_diagonal(flow, 0.0)
    out = flow / t[:, None]
    np.fill_diagonal(out, 1.0 - out.sum(axis=1))
    return out


@dataclass(frozen=True)
class PramResult(MaskResult):
    """Result of :func:`pram`.

    ``transitions[column][stratum]`` is the transition matrix used in that
    stratum (a DataFrame: rows the value before, columns the value after; the
    stratum is the strata columns' value, a tuple for several, None without
    strata). ``stats`` holds per column the ``expected_changed`` share of its
    non-missing cells and the records of ``unperturbable`` strata (one value
    only); ``diagnostics`` the number of columns changed per record.
    """

    transitions: Mapping[str, Mapping[Any, pd.DataFrame]] = field(default_factory=dict)

    def expected_selection_share(self) -> float | None:
        """None: the expected change differs per column (``stats["expected_changed"]``)."""
        return None

    def frequency_estimates(self, column: str) -> pd.DataFrame:
        """The analyst's unbiased frequencies of ``column``, from this release (:func:`pram_frequencies`).

        Parameters
        ----------
        column : str
            A randomised column.

        Returns
        -------
        DataFrame
            As :func:`pram_frequencies`.
        """
        if column not in self.transitions:
            raise ParameterError(
                f"column: {column!r} was not randomised; PRAM columns: {list(self.transitions)}"
            )
        return pram_frequencies(
            self.data,
            column=column,
            transitions=self.transitions[column],
            strata=self.params.get("strata"),
        )


def _label_lookup(labels: Iterable[object]) -> dict[str, int]:
    return {value_text(label): i for i, label in enumerate(labels)}


def _check_matrix(matrix: object, column: str) -> pd.DataFrame:
    """A given transition matrix: square, same labels both ways, entries in [0, 1], rows sum to 1."""
    if not isinstance(matrix, pd.DataFrame):
        raise ParameterError(
            f"transition for column {column!r} must be a DataFrame (rows: the value before, "
            f"columns: the value after), got {type(matrix).__name__}"
        )
    rows = [value_text(v) for v in matrix.index]
    cols = [value_text(v) for v in matrix.columns]
    if len(set(rows)) != len(rows) or sorted(rows) != sorted(cols):
        raise ParameterError(
            f"transition for column {column!r} must have the same values as rows and as "
            f"columns, each once; rows {rows}, columns {cols}"
        )
    values = matrix.set_axis(rows, axis=0).set_axis(cols, axis=1)[rows]
    try:
        numbers = values.to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"transition for column {column!r} holds a non-number") from None
    bad = ~np.isfinite(numbers) | (numbers < 0) | (numbers > 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ParameterError(
            f"transition for column {column!r}: the probability from {rows[i]!r} to "
            f"{rows[j]!r} is {float(numbers[i, j])!r}, not a number in [0, 1]"
        )
    sums = numbers.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1.0) > ROW_SUM_TOLERANCE)
    if len(off):
        raise ParameterError(
            f"transition for column {column!r}: the row of {rows[off[0]]!r} sums to "
            f"{float(sums[off[0]]):.6g}, not 1 (each row holds the probabilities of one value's "
            "replacements)"
        )
    return pd.DataFrame(numbers, index=rows, columns=rows)


def _check_transitions(transition: object, columns: list[str]) -> dict[str, pd.DataFrame] | None:
    if transition is None:
        return None
    if isinstance(transition, pd.DataFrame):
        if len(columns) != 1:
            raise ParameterError(
                f"transition: one DataFrame given for {len(columns)} columns {columns}; give "
                "a mapping {column: matrix}"
            )
        transition = {columns[0]: transition}
    if not isinstance(transition, Mapping):
        raise ParameterError(
            "transition must be None (invariant PRAM), a DataFrame or a mapping "
            f"{{column: DataFrame}}, got {type(transition).__name__}"
        )
    missing = [c for c in columns if c not in transition]
    stray = [c for c in transition if c not in columns]
    if missing or stray:
        raise ParameterError(
            f"transition must give a matrix for every PRAM column {columns} and no other; "
            f"missing {missing}, not randomised {stray}"
        )
    return {c: _check_matrix(transition[c], c) for c in columns}


def _stratum_ids(data: pd.DataFrame, strata: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Per record, its stratum number; and each stratum's values of the strata columns."""
    if not strata:
        return np.zeros(len(data), dtype=np.int64), pd.DataFrame(index=[0])
    ids, n_strata = combine_codes(key_codes(data, strata) + 1)
    first = np.zeros(n_strata, dtype=np.int64)
    first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
    return ids, data[strata].iloc[first].reset_index(drop=True)


def _value_codes(series: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes of a column's values (-1 missing) and the values; a Categorical's own codes."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return series.cat.codes.to_numpy(dtype=np.int64), series.cat.categories
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    return codes.astype(np.int64), pd.Index(uniques)


def _dense_ids(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ids 0..G-1 of non-negative integer keys, in increasing key order, and the keys."""
    if len(keys) and int(keys.max()) < 4 * len(keys) + 1_000_000:
        # A lookup table instead of hashing: the keys are small (stratum x value codes).
        seen = np.bincount(keys) > 0
        distinct = np.flatnonzero(seen)
        lookup = np.cumsum(seen) - 1
        return lookup[keys], distinct
    ids, distinct = pd.factorize(keys, sort=True)
    return ids.astype(np.int64), np.asarray(distinct)


def _rebuild(
    series: pd.Series, uniques: pd.Index, codes: np.ndarray, moved: np.ndarray
) -> pd.Series:
    """The column with the records ``moved`` given the values of their new ``codes``."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        values = pd.Categorical.from_codes(codes, dtype=series.dtype)
        return pd.Series(values, index=series.index, name=series.name)
    column = series.copy()
    column.iloc[moved] = uniques.take(codes[moved])
    return column


def _stratum_label(labels: pd.DataFrame, s: int) -> Any:
    if labels.shape[1] == 0:
        return None
    row = tuple(v.item() if isinstance(v, np.generic) else v for v in labels.iloc[s])
    return row[0] if len(row) == 1 else row


@dataclass(frozen=True)
class _Column:
    """One column randomised: the old and new value codes, the matrices used, figures."""

    old_codes: np.ndarray
    codes: np.ndarray
    matrices: dict[Any, pd.DataFrame]
    expected_changed: float
    unperturbable: int
    renormalised: int


def _randomise(
    series: pd.Series,
    stratum: np.ndarray,
    labels: pd.DataFrame,
    *,
    min_diagonal: float,
    given: pd.DataFrame | None,
    rng: np.random.Generator,
) -> tuple[_Column, pd.Index]:
    codes, uniques = _value_codes(series)
    names = [value_text(v) for v in uniques]
    position = None
    if given is not None:
        lookup = _label_lookup(given.index)
        position = np.array([lookup.get(name, -1) for name in names], dtype=np.int64)
        occurs = np.bincount(codes[codes >= 0], minlength=len(names)) > 0
        uncovered = np.flatnonzero((position < 0) & occurs)
        if len(uncovered):
            row = int(np.flatnonzero(codes == uncovered[0])[0])
            raise DataError(
                f"column {series.name!r}: the value {names[uncovered[0]]!r} "
                f"({describe_row(series.index, row)}) has no row in its transition matrix"
            )
    present = codes >= 0
    n_values = max(len(uniques), 1)
    pair_key = stratum[present] * n_values + codes[present]
    pair_of_record, pairs = _dense_ids(pair_key)
    pair_size = np.bincount(pair_of_record, minlength=len(pairs)).astype(np.float64)
    pair_stratum, pair_value = pairs // n_values, pairs % n_values
    cuts = np.flatnonzero(np.diff(pair_stratum)) + 1
    starts, ends = (np.r_[0, cuts], np.r_[cuts, len(pairs)]) if len(pairs) else ([], [])
    keys, targets, last = [], [], np.empty(len(pairs), dtype=np.int64)
    keep = np.empty(len(pairs))
    matrices: dict[Any, pd.DataFrame] = {}
    offset, expected, unperturbable, renormalised = 0, 0.0, 0, 0
    for lo, hi in zip(starts, ends, strict=True):
        values = pair_value[lo:hi]
        counts = pair_size[lo:hi]
        label = _stratum_label(labels, int(pair_stratum[lo]))
        if given is None:
            matrix = invariant_transition(counts, min_diagonal)
        else:
            assert position is not None
            sub = given.to_numpy()[np.ix_(position[values], position[values])]
            sums = sub.sum(axis=1)
            dead = np.flatnonzero(sums <= 0)
            if len(dead):
                where = "" if label is None else f" in stratum {label!r}"
                raise DataError(
                    f"column {series.name!r}: the transition matrix moves the value "
                    f"{names[values[dead[0]]]!r}{where} only to values the column does not take "
                    "there; PRAM would leak a value from outside the stratum"
                )
            renormalised += int((np.abs(sums - 1.0) > ROW_SUM_TOLERANCE).sum())
            matrix = sub / sums[:, None]
        if len(values) == 1:
            unperturbable += int(counts[0])
        expected += float(counts @ (1.0 - np.diag(matrix)))
        value_names = [names[v] for v in values]
        matrices[label] = pd.DataFrame(matrix, index=value_names, columns=value_names)
        # Each row's own value first: most draws keep it, and are settled by one comparison.
        size = len(values)
        order = np.argsort(
            np.arange(size)[None, :] != np.arange(size)[:, None], axis=1, kind="stable"
        )
        ordered = np.take_along_axis(matrix, order, axis=1)
        cum = np.cumsum(ordered, axis=1)
        # Set each row's last positive entry (and the zeros after it) to exactly 1, so rounding
        # never sends a draw past it; a zero entry keeps its predecessor's value, so it is
        # never the first above a draw: a transition of probability zero cannot happen.
        last_positive = size - 1 - np.argmax(ordered[:, ::-1] > 0, axis=1)
        cum[np.arange(size)[None, :] >= last_positive[:, None]] = 1.0
        keep[lo:hi] = cum[:, 0]
        rows = np.arange(lo, hi, dtype=np.float64)[:, None]
        keys.append((rows + cum).ravel())
        targets.append(values[order].ravel())
        last[lo:hi] = offset + np.arange(size) * size + last_positive
        offset += size * size
    new_codes = codes.copy()
    if len(pairs):
        flat_keys, flat_targets = np.concatenate(keys), np.concatenate(targets)
        draw = rng.random(len(pair_of_record))
        movers = np.flatnonzero(draw >= keep[pair_of_record])
        rows_of_movers = pair_of_record[movers]
        pos = np.searchsorted(flat_keys, rows_of_movers + draw[movers], side="right")
        pos = np.minimum(pos, last[rows_of_movers])
        moved_codes = new_codes[present]
        moved_codes[movers] = flat_targets[pos]
        new_codes[present] = moved_codes
    n_present = int(present.sum())
    return (
        _Column(
            old_codes=codes,
            codes=new_codes,
            matrices=matrices,
            expected_changed=expected / n_present if n_present else 0.0,
            unperturbable=unperturbable,
            renormalised=renormalised,
        ),
        uniques,
    )


@register_masker(
    "pram",
    "PRAM: categories changed at random by a transition matrix, within strata",
    ranges={"min_diagonal": (0, 1)},
)
def pram(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
    min_diagonal: float | None = None,
    transition: pd.DataFrame | Mapping[str, pd.DataFrame] | None = None,
    strata: str | Iterable[str] | None = None,
) -> PramResult:
    """Randomise categorical columns by PRAM: invariant, or by given matrices; within strata.

    See the module's docstring for the matrices, the strata and what is
    guaranteed. Each column is randomised independently of the others.

    Parameters
    ----------
    data : DataFrame
        The microdata; never modified.
    columns : iterable of str
        The categorical columns to randomise (required).
    schema : Schema, optional
        Checked against ``data`` when given.
    random_state : None, int or Generator
        Seed of the draws.
    progress : callable, optional
        ``progress(done, total)``, once per column.
    min_diagonal : float, optional
        Invariant PRAM: the smallest probability of keeping a value, in
        (0, 1); default 0.8. Not with ``transition``.
    transition : DataFrame or mapping of str to DataFrame, optional
        Given matrices instead of invariant PRAM: one DataFrame (one column)
        or ``{column: matrix}``; rows the value before, columns the value
        after, every row summing to 1.
    strata : str or iterable of str, optional
        Columns whose combinations the randomisation stays within.

    Returns
    -------
    PramResult
    """
    check_dataframe(data)
    cols = check_required_columns(
        data, columns, "the categorical variables to randomise", "variable to randomise"
    )
    strata_cols = check_columns(
        data, [strata] if isinstance(strata, str) else list(strata or []), "strata"
    )
    overlap = [c for c in strata_cols if c in cols]
    if overlap:
        raise ParameterError(
            f"strata and columns share {overlap}: a column cannot be randomised within its own values"
        )
    if schema is not None:
        schema.check_matches(data)
    given = _check_transitions(transition, cols)
    if given is not None and min_diagonal is not None:
        raise ParameterError(
            "give min_diagonal (invariant PRAM) or transition (given matrices), not both"
        )
    if given is None:
        keep = check_fraction(0.8 if min_diagonal is None else min_diagonal, "min_diagonal")
        if not 0.0 < keep < 1.0:
            raise ParameterError(
                f"min_diagonal must be in (0, 1) (the smallest probability of keeping a value; "
                f"0 would make a zero transition probability, 1 no randomisation), got {keep!r}"
            )
    rng = check_random_state(random_state)
    stratum, labels = _stratum_ids(data, strata_cols)
    out = data.copy()
    changed = np.zeros(len(data), dtype=np.int64)
    transitions: dict[str, dict[Any, pd.DataFrame]] = {}
    expected: dict[str, float] = {}
    unperturbable: dict[str, int] = {}
    renormalised = 0
    for j, col in enumerate(cols):
        result, uniques = _randomise(
            data[col],
            stratum,
            labels,
            min_diagonal=keep if given is None else 0.0,
            given=None if given is None else given[col],
            rng=rng,
        )
        moved = np.flatnonzero(result.codes != result.old_codes)
        if len(moved):
            out[col] = _rebuild(data[col], uniques, result.codes, moved)
        changed[moved] += 1
        transitions[col] = result.matrices
        expected[col] = result.expected_changed
        unperturbable[col] = result.unperturbable
        renormalised += result.renormalised
        if progress is not None:
            progress(j + 1, len(cols))
    stats: dict[str, Any] = {
        "strata": len(labels) if strata_cols else 1,
        "expected_changed": {c: round(v, 4) for c, v in expected.items()},
        "records_in_unperturbable_strata": unperturbable,
    }
    if given is not None:
        stats["rows_renormalised_to_stratum"] = renormalised
    return PramResult(
        data=out,
        diagnostics=pd.DataFrame({"changed": changed}, index=data.index),
        params={
            "columns": cols,
            "min_diagonal": keep if given is None else None,
            "transition": None if given is None else given,
            "strata": strata_cols or None,
        },
        method="pram",
        stats=stats,
        transitions=transitions,
    )


def pram_frequencies(
    released: pd.DataFrame,
    *,
    column: str,
    transitions: pd.DataFrame | Mapping[Any, pd.DataFrame],
    strata: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """An analyst's unbiased estimate of a PRAM column's original frequencies.

    With T* the released frequencies and P the published matrix,
    E[T*] = P'T, so T̂ = (P')^-1 T* is unbiased (Kooiman, Willenborg &
    Gouweleeuw 1997; Gouweleeuw et al. 1998), per stratum when the
    randomisation was stratified. For invariant PRAM T̂ equals T* in
    expectation already. An estimate can be negative for a rare value.

    Parameters
    ----------
    released : DataFrame
        The released file.
    column : str
        The randomised column.
    transitions : DataFrame or mapping
        The matrix used (no strata), or ``{stratum: matrix}`` as in
        :attr:`PramResult.transitions` (a stratum is the strata columns'
        value, a tuple for several).
    strata : str or iterable of str, optional
        The strata columns the randomisation stayed within.

    Returns
    -------
    DataFrame
        One row per stratum and value: the strata columns, ``value``,
        ``released`` (T*) and ``estimated`` (T̂).
    """
    check_dataframe(released)
    (col,) = check_columns(released, [column], "column")
    strata_cols = check_columns(
        released, [strata] if isinstance(strata, str) else list(strata or []), "strata"
    )
    if isinstance(transitions, pd.DataFrame):
        transitions = {None: transitions}
    stratum, labels = _stratum_ids(released, strata_cols)
    rows = []
    for s in range(len(labels)):
        label = _stratum_label(labels, s)
        if label not in transitions:
            raise ParameterError(
                f"transitions: no matrix for stratum {label!r} of the released file"
            )
        matrix = _check_matrix(transitions[label], col)
        names = list(matrix.index)
        lookup = _label_lookup(names)
        values = released[col][stratum == s].dropna()
        counts = np.zeros(len(names))
        for text, count in values.map(value_text).value_counts().items():
            if text not in lookup:
                raise DataError(
                    f"column {col!r}: the released value {text!r} is not in the transition matrix"
                    + ("" if label is None else f" of stratum {label!r}")
                )
            counts[lookup[text]] = count
        p = matrix.to_numpy()
        condition = np.linalg.cond(p)
        if not np.isfinite(condition) or condition > MAX_CONDITION:
            raise ParameterError(
                f"transitions: the matrix of column {col!r}"
                + ("" if label is None else f" in stratum {label!r}")
                + f" is not invertible (condition number {condition:.3g}): its frequencies "
                "cannot be estimated by inverting it"
            )
        estimated = np.linalg.solve(p.T, counts)
        for name, seen, est in zip(names, counts, estimated, strict=True):
            row = dict(zip(strata_cols, labels.iloc[s], strict=True))
            row.update(value=name, released=float(seen), estimated=float(est))
            rows.append(row)
    return pd.DataFrame(rows, columns=[*strata_cols, "value", "released", "estimated"])
