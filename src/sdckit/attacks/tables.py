"""Attacks on protected frequency tables (Giessing & Höhne 2011, §5).

A table released by the cell key method (:func:`sdckit.tables.cell_key_perturb`)
is not additive: inner cells, margins and the total each carry their own
noise. Giessing & Höhne (2011, §5) name what an intruder does with that:

* :func:`interval_attack` — when the maximum deviation ``D`` is published
  (it usually is: the p-table's parameters are public), every true count
  lies within ``±D`` of its published value and the true table *is*
  additive. Two linear programmes per cell (HiGHS, set up as sdckit's CTA
  sets it up) bound each true count from those relations; their example, two inner cells published 3 and 3 with their
  total published 0 at ``D = 2``, pins both inner cells to 1. The same
  relations give the least-squares additive estimate of every cell (the
  projection of the published table on the additive tables), which is what
  differencing of margins can achieve at best.
* :func:`shared_cells` — several tables that share cells (a margin of one is
  a cell of another, or the tables were restored separately by CTA and no
  longer agree): the intruder intersects the ``±D`` intervals of each cell
  and averages its published values.
* :func:`averaging_attack` — the same cell published in many tables. With
  consistent record keys (one key per record, the cell key their sum) a
  cell has the same key, hence the same noise, in every table: averaging
  gains nothing. The function measures that, against the counterfactual of
  keys drawn afresh for each table, where averaging ``k`` tables divides
  the noise variance by ``k``.
* :func:`overlap_differencing_attack` — two tables over populations that
  differ by one record ``t``. Consistent keys give every cell without ``t``
  the same noise in both, so the cells that change are the cells of ``t``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse.linalg import lsqr

from sdckit._highs import solve_highs
from sdckit._results import FrozenResult
from sdckit._validation import check_dataframe, check_int, check_random_state
from sdckit.errors import ParameterError, SchemaError
from sdckit.tables import PTable, add_record_keys, cell_key_perturb
from sdckit.tables.linked import cell_identities
from sdckit.tables.tabulate import TableStructure

__all__ = [
    "AveragingAttackResult",
    "IntervalAttackResult",
    "OverlapAttackResult",
    "averaging_attack",
    "interval_attack",
    "overlap_differencing_attack",
    "shared_cells",
]

#: Columns of sdckit's table outputs that are values, never dimensions.
_VALUE_COLUMNS = frozenset(
    {
        "count",
        "cell_key",
        "noise",
        "perturbed",
        "perturbed_weighted",
        "weighted_count",
        "suppressed",
        "restored",
        "status",
    }
)


def _dims(table: pd.DataFrame, dims: Sequence[str] | None, value: str) -> list[str]:
    if value not in table.columns:
        raise SchemaError(f"value: the table has no column {value!r}")
    if dims is None:
        return [c for c in table.columns if c not in _VALUE_COLUMNS and c != value]
    missing = [d for d in dims if d not in table.columns]
    if missing:
        raise SchemaError(f"dims: the table has no column {missing[0]!r}")
    return list(dims)


@dataclass(frozen=True)
class IntervalAttackResult(FrozenResult):
    """Bounds on every true count of a perturbed table (:func:`interval_attack`).

    Attributes
    ----------
    table : DataFrame
        The dimensions, the published value, ``lower`` and ``upper`` (the
        integer bounds of the true count), ``additive_estimate`` (the
        least-squares additive table), and ``truth`` when given.
    stats : mapping
        ``cells``; ``narrowed`` (cells whose bounds are tighter than the
        published ``±D`` clipped at 0); ``pinned`` (lower = upper: the true
        count is known); ``mean_width``; with the truth: ``small_cells``
        (true counts 1 or 2), ``small_pinned``, ``small_shown_nonzero``
        (lower bound ≥ 1: the cell is shown to hold someone),
        ``outside_bounds`` (true counts outside their bounds: 0 unless ``D``
        was understated), ``rmse_published`` and ``rmse_additive`` (root mean
        squared error of the published and of the additive estimate).
    max_deviation : int
        The ``D`` assumed.
    """

    table: pd.DataFrame
    max_deviation: int
    stats: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The verdict first (what the bounds pin down), then the figures.

        Returns
        -------
        str
        """
        s = self.stats
        if s["pinned"]:
            first = (
                f"The ±{self.max_deviation} bounds and the table's additive relations pin "
                f"down {s['pinned']} of {s['cells']} true counts exactly"
            )
        elif s["narrowed"]:
            first = (
                f"The additive relations narrow {s['narrowed']} of {s['cells']} cells below "
                f"±{self.max_deviation} but pin none down"
            )
        else:
            first = f"The additive relations narrow none of {s['cells']} cells below ±{self.max_deviation}"
        if "small_cells" in s:
            first += (
                f"; of {s['small_cells']} true counts of 1 or 2, {s['small_pinned']} are pinned "
                f"and {s['small_shown_nonzero']} shown non-empty."
            )
        else:
            first += "."
        lines = [first, f"  mean width of the bounds: {s['mean_width']:.2f}"]
        if "rmse_published" in s:
            lines.append(
                f"  root mean squared error: published {s['rmse_published']:.3f}, "
                f"least-squares additive estimate {s['rmse_additive']:.3f}"
            )
        return "\n".join(lines)


def interval_attack(
    table: pd.DataFrame,
    *,
    max_deviation: int,
    dims: Sequence[str] | None = None,
    value: str = "perturbed",
    truth: str | Sequence[float] | None = None,
    hierarchies: Mapping[str, Any] | None = None,
    total_label: str = "Total",
) -> IntervalAttackResult:
    """Bound every true count of a non-additive perturbed table from ``±D`` and its relations.

    Giessing & Höhne (2011), §5: the true table is additive and each true
    count lies in ``[max(0, p - D), p + D]``; the smallest and largest value
    of each cell over those tables (a linear programme, solved by HiGHS) are
    its bounds, rounded inwards to whole counts (the HiGHS set-up of
    :func:`sdckit.tables.restore_additivity`).

    Parameters
    ----------
    table : DataFrame
        The published table, one row per cell, margins included (as
        :func:`sdckit.tables.cell_key_perturb` releases it). Not modified.
    max_deviation : int
        The published maximum deviation ``D``.
    dims : sequence of str, optional
        The classifying columns (default: every column that is not a value).
    value : str, default "perturbed"
        The published counts.
    truth : str or sequence of float, optional
        The true counts (a column of ``table`` or one value per row), to score
        the attack; the intruder does not have them.
    hierarchies : mapping, optional
        As in :func:`sdckit.tables.tabulate`.
    total_label : str, default "Total"

    Returns
    -------
    IntervalAttackResult
    """
    table = check_dataframe(table, "table")
    d = check_int(max_deviation, "max_deviation", minimum=0)
    dims = _dims(table, dims, value)
    published = pd.to_numeric(table[value], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(published).all():
        raise SchemaError(f"value: column {value!r} has missing or non-numeric counts")
    structure = TableStructure.from_table(
        table, dims, hierarchies=hierarchies, total_label=total_label
    )
    positions = structure.cell_positions(table)
    n = structure.n_cells
    low = np.zeros(n)
    high = np.full(n, np.inf)
    low[positions] = np.maximum(0.0, published - d)
    high[positions] = published + d
    matrix, _ = structure.relations()
    csc = matrix.tocsc()
    zeros = np.zeros(matrix.shape[0])
    lower = np.empty(len(table))
    upper = np.empty(len(table))
    cost = np.zeros(n)
    for row, cell in enumerate(positions):
        for sign, out in ((1.0, lower), (-1.0, upper)):
            cost[cell] = sign
            # One LP per bound, with the CTA module's HiGHS set-up (no integer variables).
            solution, status = solve_highs(cost, csc, zeros, zeros, low, high, None, None, None)
            cost[cell] = 0.0
            if solution is None:
                raise ParameterError(
                    f"max_deviation: no additive table lies within ±{d} of the published one "
                    f"({status}); the table is not a ±{d} perturbation"
                )
            out[row] = solution[cell]
    lower = np.ceil(lower - 1e-7)
    upper = np.floor(upper + 1e-7)
    # The least-squares additive table: the published one minus its part outside the relations.
    full = np.zeros(n)
    full[positions] = published
    if matrix.shape[0]:
        correction = lsqr(matrix, matrix @ full, atol=1e-12, btol=1e-12)[0]
        additive = (full - correction)[positions]
    else:
        additive = published.copy()
    out = table[dims].copy()
    out[value] = table[value].to_numpy()
    out["lower"] = lower.astype(np.int64)
    out["upper"] = upper.astype(np.int64)
    out["additive_estimate"] = additive
    initial = np.minimum(published, d) + d
    width = upper - lower
    stats: dict[str, Any] = {
        "cells": len(table),
        "narrowed": int((width < initial).sum()),
        "pinned": int((width == 0).sum()),
        "mean_width": float(width.mean()) if len(width) else 0.0,
    }
    if truth is not None:
        true = (
            table[truth].to_numpy(dtype=float)
            if isinstance(truth, str)
            else np.asarray(truth, dtype=float)
        )
        if true.shape != published.shape:
            raise ParameterError(
                f"truth must give one count per row of the table ({len(table)}), got {true.shape}"
            )
        out["truth"] = true
        small = (true >= 1) & (true <= 2)
        stats.update(
            small_cells=int(small.sum()),
            small_pinned=int((small & (width == 0)).sum()),
            small_shown_nonzero=int((small & (lower >= 1)).sum()),
            outside_bounds=int(((true < lower) | (true > upper)).sum()),
            rmse_published=float(np.sqrt(np.mean((published - true) ** 2))),
            rmse_additive=float(np.sqrt(np.mean((additive - true) ** 2))),
        )
    return IntervalAttackResult(out, d, stats)


def _cell_identity(frame: pd.DataFrame, dims: Sequence[str], total_label: str) -> list[tuple]:
    """Each row's cell as its non-total coordinates, as :func:`sdckit.tables.restore_linked` matches them."""
    structure = TableStructure.from_table(frame, dims, total_label=total_label)
    identities = cell_identities(structure)
    return [identities[p] for p in structure.cell_positions(frame)]


def shared_cells(
    tables: Sequence[pd.DataFrame],
    *,
    max_deviation: int | None = None,
    value: str = "perturbed",
    total_label: str = "Total",
) -> pd.DataFrame:
    """The cells published in more than one table, their values and what combining them gives.

    A cell is the same in two tables when its non-total coordinates are
    (``sex = Female, race = Total`` in one table is ``sex = Female`` in a
    one-way table of sex). Giessing & Höhne (2011), §5: tables restored by
    CTA separately no longer agree; the intruder averages a cell's values,
    or intersects their ``±D`` intervals.

    Parameters
    ----------
    tables : sequence of DataFrame
        Published tables (dimensions and ``value``).
    max_deviation : int, optional
        The published ``D``; adds the intersection of the intervals.
    value : str, default "perturbed"
    total_label : str, default "Total"

    Returns
    -------
    DataFrame
        One row per shared cell: ``cell`` (text), ``tables`` (how many publish
        it), ``values`` (the distinct published values), ``mean`` and, with
        ``max_deviation``, ``lower`` and ``upper`` (the intersection).
    """
    if len(tables) < 2:
        raise ParameterError("shared_cells needs two or more tables")
    seen: dict[tuple, list[float]] = {}
    for table in tables:
        table = check_dataframe(table, "tables")
        dims = _dims(table, None, value)
        values = pd.to_numeric(table[value], errors="coerce").to_numpy(dtype=float)
        for key, v in zip(_cell_identity(table, dims, total_label), values, strict=True):
            seen.setdefault(key, []).append(float(v))
    rows = []
    for key, values in seen.items():
        if len(values) < 2:
            continue
        row: dict[str, Any] = {
            "cell": ", ".join(f"{d} = {v}" for d, v in key) or "total",
            "tables": len(values),
            "values": tuple(int(v) if v.is_integer() else v for v in sorted(set(values))),
            "mean": float(np.mean(values)),
        }
        if max_deviation is not None:
            row["lower"] = int(max(0.0, max(values) - max_deviation))
            row["upper"] = int(min(values) + max_deviation)
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class AveragingAttackResult(FrozenResult):
    """Averaging the cells that several cell-key tables share (:func:`averaging_attack`).

    Attributes
    ----------
    table : DataFrame
        One row per key scheme (``"consistent record keys"``, and
        ``"keys drawn per table"`` for the counterfactual): ``shared_cells``,
        ``mean_tables`` (tables per shared cell), ``distinct_values`` (share
        of shared cells published with more than one value),
        ``rmse_single`` (error of one publication) and ``rmse_average``
        (error of the intruder's average).
    """

    table: pd.DataFrame

    def summary(self) -> str:
        """The verdict first (does averaging help), then the table.

        Returns
        -------
        str
        """
        t = self.table.set_index("keys")
        c = t.loc["consistent record keys"]
        first = (
            f"Averaging {int(c['shared_cells'])} cells shared by {c['mean_tables']:.1f} tables on "
            f"average: with consistent record keys every copy of a cell carries the same noise "
            f"(error {c['rmse_single']:.3f} alone, {c['rmse_average']:.3f} averaged)"
        )
        if "keys drawn per table" in t.index:
            f = t.loc["keys drawn per table"]
            first += (
                f"; with keys drawn per table averaging would cut it from "
                f"{f['rmse_single']:.3f} to {f['rmse_average']:.3f}"
            )
        return first + ".\n" + self.table.to_string(index=False)


def _shared_errors(
    tables: Sequence[pd.DataFrame], truths: Mapping[tuple, float], total_label: str
) -> dict[str, float]:
    seen: dict[tuple, list[float]] = {}
    for table in tables:
        dims = _dims(table, None, "perturbed")
        for key, v in zip(
            _cell_identity(table, dims, total_label),
            table["perturbed"].to_numpy(dtype=float),
            strict=True,
        ):
            seen.setdefault(key, []).append(v)
    shared = {k: v for k, v in seen.items() if len(v) > 1}
    if not shared:
        raise ParameterError("tables: no cell is shared by two or more of the tables")
    single = [v[0] - truths[k] for k, v in shared.items()]
    average = [np.mean(v) - truths[k] for k, v in shared.items()]
    return {
        "shared_cells": len(shared),
        "mean_tables": float(np.mean([len(v) for v in shared.values()])),
        "distinct_values": float(np.mean([len(set(v)) > 1 for v in shared.values()])),
        "rmse_single": float(np.sqrt(np.mean(np.square(single)))),
        "rmse_average": float(np.sqrt(np.mean(np.square(average)))),
    }


def averaging_attack(
    data: pd.DataFrame,
    ptable: PTable,
    *,
    tables: Sequence[Sequence[str]],
    record_key: str = "record_key",
    counterfactual: bool = True,
    random_state: Any = None,
    total_label: str = "Total",
) -> AveragingAttackResult:
    """Publish several cell-key tables of ``data`` and average the cells they share.

    Parameters
    ----------
    data : DataFrame
        Microdata with a record-key column (:func:`sdckit.tables.add_record_keys`).
    ptable : PTable
        The perturbation table.
    tables : sequence of sequences of str
        The dimensions of each published table (e.g. ``[["sex", "race"],
        ["sex", "education"], ["sex", "race", "education"]]``).
    record_key : str, default "record_key"
    counterfactual : bool, default True
        Also publish the tables with record keys drawn afresh for each
        table, the scheme consistent keys replace.
    random_state : None, int or numpy.random.Generator
        Draws the counterfactual's keys.
    total_label : str, default "Total"

    Returns
    -------
    AveragingAttackResult
    """
    data = check_dataframe(data, "data")
    if record_key not in data.columns:
        raise SchemaError(
            f"record_key: data have no column {record_key!r}; add one with add_record_keys"
        )
    if len(tables) < 2:
        raise ParameterError("tables: averaging needs two or more tables")
    rng = check_random_state(random_state)
    truths: dict[tuple, float] = {}
    schemes: dict[str, list[pd.DataFrame]] = {"consistent record keys": []}
    if counterfactual:
        schemes["keys drawn per table"] = []
    for dims in tables:
        result = cell_key_perturb(data, ptable, dims=list(dims), record_key=record_key)
        internal = result.internal
        for key, count in zip(
            _cell_identity(internal, list(dims), total_label),
            internal["count"].to_numpy(dtype=float),
            strict=True,
        ):
            truths[key] = count
        schemes["consistent record keys"].append(result.table)
        if counterfactual:
            fresh = add_record_keys(
                data.drop(columns=[record_key]),
                rng,
                column=record_key,
                key_range=ptable.key_range,
            )
            schemes["keys drawn per table"].append(
                cell_key_perturb(fresh, ptable, dims=list(dims), record_key=record_key).table
            )
    rows = [
        {"keys": name, **_shared_errors(published, truths, total_label)}
        for name, published in schemes.items()
    ]
    return AveragingAttackResult(pd.DataFrame(rows))


@dataclass(frozen=True)
class OverlapAttackResult(FrozenResult):
    """Differencing two cell-key tables whose populations differ by one record.

    Attributes
    ----------
    dims : tuple of str
        The table's dimensions.
    stats : mapping
        ``trials``; ``located`` (share of trials where the only inner cells
        that changed are the target's: the intruder learns its categories);
        ``clean_one`` (share where the target's cell fell by exactly 1, the
        true difference); ``unchanged`` (share where no published cell
        changed: nothing learned).
    """

    dims: tuple[str, ...]
    stats: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """What the difference of the two tables showed, over the trials."""
        s = self.stats
        return (
            f"Over {s['trials']} targets, the difference of two tables of {' x '.join(self.dims)} "
            "whose populations differ by "
            f"the target located its cell in {s['located']:.0%} of trials (its count fell by "
            f"exactly 1 in {s['clean_one']:.0%}); nothing changed in {s['unchanged']:.0%}."
        )


def overlap_differencing_attack(
    data: pd.DataFrame,
    ptable: PTable,
    *,
    dims: Sequence[str],
    record_key: str = "record_key",
    n_targets: int = 100,
    random_state: Any = None,
) -> OverlapAttackResult:
    """Publish a table of ``data`` and of ``data`` less one target; difference them.

    With consistent record keys only the cells holding the target change
    key, so only they can change value; the count difference is 1 plus the
    difference of two noises.

    Parameters
    ----------
    data : DataFrame
        Microdata with a record-key column.
    ptable : PTable
    dims : sequence of str
        The table's dimensions.
    record_key : str, default "record_key"
    n_targets : int, default 100
        Targets drawn at random.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    OverlapAttackResult
    """
    data = check_dataframe(data, "data")
    n_targets = check_int(n_targets, "n_targets", minimum=1)
    rng = check_random_state(random_state)
    dims = list(dims)
    base = cell_key_perturb(data, ptable, dims=dims, record_key=record_key).table
    structure = TableStructure.from_table(base, dims)
    inner = structure.inner_mask()[structure.cell_positions(base)]
    labels = base[dims].astype(str).to_numpy()
    located = clean = unchanged = 0
    targets = rng.choice(len(data), min(n_targets, len(data)), replace=False)
    for position in targets:
        less = cell_key_perturb(
            data.drop(index=data.index[position]), ptable, dims=dims, record_key=record_key
        ).table
        merged = base.merge(less, on=dims, how="left", suffixes=("", "_less"))
        after = merged["perturbed_less"].fillna(0).to_numpy(dtype=float)
        changed = merged["perturbed"].to_numpy(dtype=float) != after
        own = np.all(labels == data.iloc[position][dims].astype(str).to_numpy(), axis=1)
        unchanged += not changed.any()
        changed_inner = changed & inner
        located += bool(changed_inner.any() and (changed_inner == (own & inner)).all())
        if own.any():
            i = int(np.flatnonzero(own)[0])
            clean += merged["perturbed"].iloc[i] - after[i] == 1
    total = len(targets)
    return OverlapAttackResult(
        tuple(dims),
        {
            "trials": total,
            "located": located / total,
            "clean_one": clean / total,
            "unchanged": unchanged / total,
        },
    )
