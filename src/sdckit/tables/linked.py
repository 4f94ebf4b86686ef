"""Linked tables restored together: one controlled tabular adjustment for several tables.

Tables built from the same microdata share cells: the ``region = north`` total
of a region x sex table is the ``region = north`` total of a region x age
table. Cell key perturbation gives such a cell the same noise in both
(Giessing & Höhne 2011, §4), but restoring each table's additivity on its own
(§5) adjusts the common cell twice, and the two published values may then
differ — which shows that both were adjusted and hands an intruder two
constraints instead of one (Giessing & Höhne 2011, §5, on tables restored
separately being no longer consistent with one another). Restoring the tables
together keeps one value per logical cell: the unknowns are the distinct
cells of all the tables, each table's additive relations hold on them, and the
model is the joint one of :func:`sdckit.tables.restore_additivity` (minimum
weighted absolute deviation, ``|restored - perturbed| <= max_deviation``,
zeros kept, no cell on 1 or 2), solved by HiGHS.

A cell is identified by its non-total coordinates: the cell of a table whose
dimension ``d`` is at the total label is the same cell as that of a table
without ``d``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from sdckit._highs import NoTableInTime
from sdckit._results import FrozenResult
from sdckit._validation import check_dataframe, check_int, check_positive, number_text
from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables.additivity import run_record, solve_cta
from sdckit.tables.release import CONFIDENTIAL_COLUMNS, release_frame
from sdckit.tables.tabulate import Hierarchy, TableStructure, label_key

__all__ = ["LinkedAdditivityResult", "restore_linked"]

#: Largest number of distinct cells restored together.
MAX_LINKED_CELLS = 2_000_000


@dataclass(frozen=True)
class LinkedAdditivityResult(FrozenResult):
    """Result of :func:`restore_linked`.

    Attributes
    ----------
    tables : tuple of DataFrame
        What may be published, one per input table in the order given: the
        table without its confidential columns plus ``restored`` (int64).
        A cell common to several tables has the same ``restored`` value in
        each.
    internals : tuple of DataFrame
        The input tables with ``restored``, confidential columns included.
        Never release them.
    params : mapping
    stats : mapping
        ``tables``, ``cells`` (distinct cells), ``shared_cells`` (cells in
        more than one table), ``relations``, ``cells_changed``,
        ``max_abs_change``, ``mean_abs_change``, ``binaries``, ``seconds``,
        ``status``, ``mip_gap``.
    """

    tables: tuple[pd.DataFrame, ...]
    internals: tuple[pd.DataFrame, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """Size of the joint problem and of the adjustment."""
        s = self.stats
        text = (
            f"linked tables restored together: {s['tables']} tables, {s['cells']} distinct cells "
            f"({s['shared_cells']} in more than one table), {s['relations']} relations; "
            f"{s['cells_changed']} cells adjusted, max |change| {s['max_abs_change']}, "
            f"mean |change| {s['mean_abs_change']:.3f}; every common cell has one value"
        )
        gap = s.get("mip_gap")
        if gap is not None and gap > 1e-6:
            text += (
                f"; stopped at the time limit ({s['status']}): best set of tables found, "
                f"with a relative gap of {gap:.1%} to the lower bound HiGHS proved"
            )
        return text


def cell_identities(structure: TableStructure) -> list[tuple[tuple[str, str], ...]]:
    """The non-total coordinates of every cell of ``structure`` (C order)."""
    total = label_key(structure.total_label)
    grids = np.indices(structure.shape).reshape(len(structure.dims), -1)
    keyed = [[label_key(c) for c in cats] for cats in structure.categories]
    out = []
    for cell in grids.T:
        out.append(
            tuple(
                sorted(
                    (dim, keyed[axis][code])
                    for axis, (dim, code) in enumerate(zip(structure.dims, cell, strict=True))
                    if keyed[axis][code] != total
                )
            )
        )
    return out


def _describe(identity: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{d}={v!r}" for d, v in identity) or "the grand total"


@dataclass(frozen=True)
class LinkedCells:
    """Several tables of one microdata file over their distinct cells.

    A cell is identified by its non-total coordinates, so the ``region =
    north`` total of a region x sex table and of a region x age table is one
    cell. Built by :func:`link_tables`.

    Attributes
    ----------
    frames : list of DataFrame
        The tables as given.
    structures : list of TableStructure
        Each table's structure.
    cell_ids : list of ndarray of int
        For each table, the distinct cell of each of its structure's cells.
    row_ids : list of ndarray of int
        For each table, the distinct cell of each of its rows.
    identities : list of tuple
        The non-total coordinates of each distinct cell.
    relations : sparse matrix
        Every table's additive relations, stacked, one column per distinct cell.
    """

    frames: list[pd.DataFrame]
    structures: list[TableStructure]
    cell_ids: list[np.ndarray]
    row_ids: list[np.ndarray]
    identities: list[tuple[tuple[str, str], ...]]
    relations: sparse.csr_matrix

    @property
    def n(self) -> int:
        """Number of distinct cells."""
        return len(self.identities)

    @property
    def shared(self) -> np.ndarray:
        """Whether each distinct cell is in more than one table."""
        return np.bincount(np.concatenate(self.cell_ids), minlength=self.n) > 1

    def describe(self, cell: int) -> str:
        """A distinct cell as a person reads it (``region='north', sex='f'``)."""
        return _describe(self.identities[cell])

    def labels(self) -> pd.DataFrame:
        """One row per distinct cell: every dimension, the total label where it is not set."""
        dims = list(dict.fromkeys(d for s in self.structures for d in s.dims))
        total = self.structures[0].total_label
        rows = [dict(identity) for identity in self.identities]
        return pd.DataFrame(rows, columns=dims).fillna(total).astype(object)

    def values(self, column: str, *, whole: bool, hint: str) -> np.ndarray:
        """One value per distinct cell from every table's ``column``; a disagreement is refused.

        Parameters
        ----------
        column : str
            The column every table holds.
        whole : bool
            Whether the values must be whole numbers.
        hint : str
            What a common cell with two values means, for the error.

        Returns
        -------
        ndarray of float
            The value of every distinct cell.
        """
        out = np.full(self.n, np.nan)
        owner = np.zeros(self.n, dtype=np.int64)
        for number, (frame, here) in enumerate(zip(self.frames, self.row_ids, strict=True), 1):
            if column not in frame.columns:
                raise DataError(f"table {number} has no column {column!r}")
            raw = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64)
            if (
                not np.isfinite(raw).all()
                or (raw < 0).any()
                or (whole and (raw != np.round(raw)).any())
            ):
                raise DataError(
                    f"table {number}: column {column!r} must hold non-negative "
                    + ("whole counts" if whole else "numbers")
                    + " (no missing values)"
                )
            earlier = ~np.isnan(out[here])
            clash = earlier & (out[here] != raw)
            if clash.any():
                k = int(np.flatnonzero(clash)[0])
                raise DataError(
                    f"the cell {self.describe(int(here[k]))} is {number_text(out[here[k]])} in "
                    f"table {int(owner[here[k]])} but {number_text(raw[k])} in table {number}: "
                    + hint
                )
            out[here] = raw
            owner[here[~earlier]] = number
        return out


def link_tables(
    tables: Sequence[pd.DataFrame],
    *,
    dims: Sequence[Sequence[str]] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    total_label: str = "Total",
) -> LinkedCells:
    """Map several tables of one microdata file onto their distinct cells.

    Shared by the linked restoration (:func:`restore_linked`) and the linked
    suppression (:func:`sdckit.tables.suppress_linked`): both solve one model
    over the distinct cells with every table's relations stacked.

    Parameters
    ----------
    tables : sequence of DataFrame
        Two or more tables with all their margins, each carrying its structure
        (``attrs["structure"]``) or classified by ``dims``.
    dims, hierarchies, total_label
        The classifying columns of each table (list of lists of str), for
        tables without structure; ``{dim: {parent: [children]}}`` and the
        label of the margins for the structures inferred from them.

    Returns
    -------
    LinkedCells
        The tables, their structures and the map of their cells.

    Raises
    ------
    ParameterError
        Fewer than two tables, a table without structure or margins, or a
        dimension classified differently in two tables.
    DataError
        A table lacks some of its structure's cells.
    """
    if isinstance(tables, pd.DataFrame) or not isinstance(tables, Sequence) or len(tables) < 2:
        raise ParameterError("tables must be a list of at least two linked tables")
    if dims is not None and len(dims) != len(tables):
        raise ParameterError(f"dims must list the dimensions of each of the {len(tables)} tables")
    frames, structures = [], []
    for number, table in enumerate(tables, start=1):
        frame = check_dataframe(table, f"table {number}")
        structure = frame.attrs.get("structure")
        if dims is not None:
            own = list(dims[number - 1])
            used = {d: h for d, h in (hierarchies or {}).items() if d in own}
            structure = TableStructure.from_table(
                frame, own, hierarchies=used, total_label=total_label
            )
        if not isinstance(structure, TableStructure):
            raise ParameterError(
                f"table {number} carries no table structure (.attrs['structure']); pass the "
                "tables sdckit returned, or their dims"
            )
        frames.append(frame)
        structures.append(structure)
    totals = {s.total_label for s in structures}
    if len(totals) > 1:
        raise ParameterError(f"the tables use different total labels {sorted(totals)}")
    by_dim: dict[str, tuple[int, TableStructure, int]] = {}
    for number, structure in enumerate(structures, start=1):
        for axis, dim in enumerate(structure.dims):
            if structure.n_leaves[axis] == len(structure.categories[axis]):
                raise ParameterError(
                    f"table {number} has no margins for {dim!r}: linked tables need their totals"
                )
            seen = by_dim.get(dim)
            if seen is None:
                by_dim[dim] = (number, structure, axis)
                continue
            first, other, other_axis = seen
            if (
                other.categories[other_axis] != structure.categories[axis]
                or other.children[other_axis] != structure.children[axis]
            ):
                raise ParameterError(
                    f"tables {first} and {number} classify {dim!r} differently (other categories "
                    "or hierarchy); linked tables must share their classifications"
                )
    uid: dict[tuple[tuple[str, str], ...], int] = {}
    identities: list[tuple[tuple[str, str], ...]] = []
    cell_ids, row_ids, blocks = [], [], []
    for number, (frame, structure) in enumerate(zip(frames, structures, strict=True), start=1):
        ids = np.empty(structure.n_cells, dtype=np.int64)
        for position, identity in enumerate(cell_identities(structure)):
            known = uid.get(identity)
            if known is None:
                known = uid[identity] = len(identities)
                identities.append(identity)
            ids[position] = known
        cell_ids.append(ids)
        positions = structure.cell_positions(frame)
        if len(positions) != structure.n_cells:
            raise DataError(
                f"table {number} has {len(positions)} of its structure's {structure.n_cells} "
                "cells; every cell (margins included) is needed"
            )
        row_ids.append(ids[positions])
        blocks.append(structure.relations()[0].tocoo())
    n = len(identities)
    if n > MAX_LINKED_CELLS:
        raise ParameterError(
            f"the tables have {n} distinct cells (more than {MAX_LINKED_CELLS}); link fewer "
            "tables together"
        )
    rows, cols, vals = [], [], []
    offset = 0
    for coo, ids in zip(blocks, cell_ids, strict=True):
        rows.append(coo.row + offset)
        cols.append(ids[coo.col])
        vals.append(coo.data)
        offset += coo.shape[0]
    relations = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(offset, n)
    )
    return LinkedCells(frames, structures, cell_ids, row_ids, identities, relations)


def restore_linked(
    tables: Sequence[pd.DataFrame],
    *,
    max_deviation: int = 3,
    value: str = "perturbed",
    original: str | None = "count",
    fix_zeros: bool = True,
    time_limit: float | None = None,
    dims: Sequence[Sequence[str]] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    total_label: str = "Total",
) -> LinkedAdditivityResult:
    """Restore the additivity of several linked tables together, one value per common cell.

    Parameters
    ----------
    tables : sequence of DataFrame
        Perturbed tables with all their margins, each carrying its structure
        in ``.attrs["structure"]`` (as the tables of
        :func:`sdckit.tables.cell_key_perturb` and
        :func:`sdckit.tables.tabulate` do), with the same total label and,
        for a dimension they share, the same categories and hierarchy.
        Never modified.
    max_deviation : int, default 3
        Largest allowed ``|restored - perturbed|`` per cell.
    value : str, default "perturbed"
        The column to restore.
    original : str or None, default "count"
        Column of true counts, used only to know the true zeros (when every
        table has it).
    fix_zeros : bool, default True
        Zero cells stay 0 (the true zeros when known, else the published ones).
    time_limit : float, optional
        Seconds for HiGHS; at the limit the best set of tables found is
        returned with its gap.
    dims : list of lists of str, optional
        The classifying columns of each table, for tables that carry no
        structure (read from files): the structure is then inferred from the
        table's labels, as :func:`sdckit.tables.restore_additivity` does.
    hierarchies : mapping, optional
        ``{dim: {parent: [children]}}`` for the inferred structures.
    total_label : str, default "Total"
        Label of the margins in the inferred structures.

    Returns
    -------
    LinkedAdditivityResult
        One restored table per input, additive, free of 1s and 2s, within
        ``max_deviation`` of the perturbed values, and equal on common cells.

    Raises
    ------
    DataError
        A common cell has different perturbed values in two tables (the
        tables were not perturbed consistently, e.g. with different record
        keys), or a table is missing cells.
    InfeasibleError
        No set of tables meets the relations and bounds (raise
        ``max_deviation``), or HiGHS found none within ``time_limit``.
    """
    if isinstance(tables, pd.DataFrame) or not isinstance(tables, Sequence) or len(tables) < 2:
        raise ParameterError("tables must be a list of at least two tables to restore together")
    max_deviation = check_int(max_deviation, "max_deviation", minimum=0)
    if time_limit is not None:
        time_limit = check_positive(time_limit, "time_limit")
    if value in CONFIDENTIAL_COLUMNS:
        raise ParameterError(
            f"value={value!r} holds the true counts: restoring them publishes the true tables"
        )
    link = link_tables(tables, dims=dims, hierarchies=hierarchies, total_label=total_label)
    frames, structures, row_ids = link.frames, link.structures, link.row_ids
    relations, n = link.relations, link.n
    n_relations = relations.shape[0]
    p = link.values(
        value,
        whole=True,
        hint="the tables were not perturbed consistently (use the same record keys and "
        "p-table for all)",
    )
    use_truth = original is not None and all(original in f.columns for f in frames)
    truth = np.full(n, np.nan)
    if use_truth:
        assert original is not None
        for frame, here in zip(frames, row_ids, strict=True):
            truth[here] = pd.to_numeric(frame[original], errors="coerce").to_numpy(np.float64)

    lower = np.maximum(p - max_deviation, 0.0)
    upper = p + max_deviation
    if fix_zeros:
        upper[(truth == 0) if use_truth else (p == 0)] = 0.0
    weights = np.ones(n)
    risky = np.flatnonzero((lower <= 2) & (upper >= 1))
    runs: list[dict] = []
    start = time.perf_counter()
    try:
        y, status = solve_cta(
            p, relations, lower, upper, weights, risky, time_limit, info=run_record(runs)
        )
    except NoTableInTime as exc:
        raise InfeasibleError(
            "restore_linked: HiGHS found no set of tables within the time limit; raise time_limit"
        ) from exc
    seconds = time.perf_counter() - start
    if y is None:
        raise InfeasibleError(
            f"no set of tables is additive, free of 1s and 2s and within max_deviation="
            f"{max_deviation} of the perturbed values ({status}); raise max_deviation"
        )
    change = np.abs(y - p)
    published, internals = [], []
    for frame, structure, here in zip(frames, structures, row_ids, strict=True):
        table = frame.copy()
        table["restored"] = y[here]
        table.attrs["structure"] = structure
        internals.append(table)
        released = release_frame(table)
        released.attrs["structure"] = structure
        published.append(released)
    stats = {
        "tables": len(frames),
        "cells": n,
        "shared_cells": int(link.shared.sum()),
        "relations": n_relations,
        "cells_changed": int((change > 0).sum()),
        "max_abs_change": int(change.max()) if n else 0,
        "mean_abs_change": float(change.mean()) if n else 0.0,
        "binaries": len(risky),
        "seconds": seconds,
        "status": runs[-1].get("status") if runs else status,
        "mip_gap": runs[-1].get("mip_gap") if runs else None,
    }
    params = {
        "max_deviation": max_deviation,
        "value": value,
        "fix_zeros": fix_zeros,
        "time_limit": time_limit,
    }
    return LinkedAdditivityResult(tuple(published), tuple(internals), params, stats)
