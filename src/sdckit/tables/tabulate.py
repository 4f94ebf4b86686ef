"""Frequency tables with all margins and user hierarchies, as one tidy frame.

Giessing & Höhne (2011), *Eliminating small cells from census counts tables*,
Section 2.1: every cell of a published table is a sum of cells of
the *elementary* table (all combinations of the leaf categories), ``A y = a``.
:func:`tabulate` counts the elementary table once with ``numpy.bincount`` and
builds every margin and hierarchy level by aggregating along one axis at a
time with a 0/1 aggregation matrix, so the work is one pass over the records
plus small dense products, never a group-by loop.

:class:`TableStructure` holds the categories of every dimension and which
categories add up to which; it yields the additive relations of the table
that :func:`sdckit.tables.restore_additivity` enforces.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from sdckit._validation import check_columns, check_dataframe, number_text
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.tables.recordkeys import key_units

__all__ = ["TableStructure", "tabulate"]

#: Largest elementary table (product of leaf category counts) tabulate builds.
MAX_ELEMENTARY_CELLS = 50_000_000

Hierarchy = Mapping[Hashable, Sequence[Hashable]]


@dataclass(frozen=True)
class TableStructure:
    """Categories and additive relations of a (hierarchical) frequency table.

    Attributes
    ----------
    dims : tuple of str
        The classifying variables, in table order.
    categories : tuple of tuples
        Output categories of each dimension: its leaves first (in order), then
        hierarchy parents, then the total label (when margins are built).
    n_leaves : tuple of int
        How many of each dimension's categories are leaves.
    children : tuple of tuples
        For every dimension and every output category, the positions of its
        direct children (empty for a leaf).
    total_label : str
        Label of the overall margin of every dimension.
    """

    dims: tuple[str, ...]
    categories: tuple[tuple[Any, ...], ...]
    n_leaves: tuple[int, ...]
    children: tuple[tuple[tuple[int, ...], ...], ...]
    total_label: str = "Total"

    def __deepcopy__(self, memo: dict) -> TableStructure:
        # immutable: pandas deep-copies ``attrs`` on every operation, so share it
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of output categories per dimension."""
        return tuple(len(c) for c in self.categories)

    @property
    def leaf_shape(self) -> tuple[int, ...]:
        """Shape of the elementary (leaf) table."""
        return self.n_leaves

    @property
    def n_cells(self) -> int:
        """Number of cells of the table, margins included."""
        return int(np.prod(self.shape, dtype=np.int64))

    def aggregation_matrix(self, axis: int) -> np.ndarray:
        """0/1 matrix (output categories x leaves) of dimension ``axis``."""
        n_out, n_leaf = len(self.categories[axis]), self.n_leaves[axis]
        matrix = np.zeros((n_out, n_leaf), dtype=np.int64)
        matrix[np.arange(n_leaf), np.arange(n_leaf)] = 1
        # parents come after their children in the category order, so one pass suffices
        for position in range(n_leaf, n_out):
            for child in self.children[axis][position]:
                matrix[position] += matrix[child]
        return matrix

    def aggregate(self, elementary: np.ndarray) -> np.ndarray:
        """Every cell of the table from the elementary table (array of ``leaf_shape``)."""
        values = np.asarray(elementary)
        if values.shape != self.leaf_shape:
            raise ParameterError(
                f"elementary table has shape {values.shape}, expected {self.leaf_shape}"
            )
        for axis in range(len(self.dims)):
            n_leaf, n_out = self.n_leaves[axis], len(self.categories[axis])
            shape = list(values.shape)
            shape[axis] = n_out
            out = np.empty(shape, dtype=values.dtype)
            view = np.moveaxis(out, axis, 0)
            view[:n_leaf] = np.moveaxis(values, axis, 0)
            # parents follow their children, so each parent sums rows already filled
            for parent in range(n_leaf, n_out):
                view[parent] = view[list(self.children[axis][parent])].sum(axis=0)
            values = out
        return values

    def labels(self) -> pd.DataFrame:
        """One row per cell (C order), one categorical column per dimension."""
        grids = np.indices(self.shape).reshape(len(self.dims), -1)
        columns = {}
        for axis, dim in enumerate(self.dims):
            cats = pd.Index(self.categories[axis], dtype=object)
            columns[dim] = pd.Categorical.from_codes(grids[axis], categories=cats)
        return pd.DataFrame(columns)

    def inner_mask(self) -> np.ndarray:
        """Boolean per cell: True where every coordinate is a leaf category."""
        grids = np.indices(self.shape).reshape(len(self.dims), -1)
        mask = np.ones(self.n_cells, dtype=bool)
        for axis in range(len(self.dims)):
            mask &= grids[axis] < self.n_leaves[axis]
        return mask

    def relations(self) -> tuple[sparse.csr_matrix, list[tuple[int, int, tuple[int, ...]]]]:
        """The additive relations ``M x = 0`` of the table.

        Every aggregate category ``g`` of dimension ``d`` with direct children
        ``c_1..c_k`` gives, for every combination of the other coordinates, the
        relation ``x(g, rest) - sum_i x(c_i, rest) = 0``.

        Returns
        -------
        matrix : scipy.sparse.csr_matrix
            One row per relation, one column per cell (C order).
        described : list of (axis, parent position, rest coordinates)
            What each row says, to name relations in error messages.
        """
        shape = self.shape
        cell_ids = np.arange(self.n_cells).reshape(shape)
        rows, cols, vals = [], [], []
        described: list[tuple[int, int, tuple[int, ...]]] = []
        n_rel = 0
        for axis in range(len(self.dims)):
            rest_shape = shape[:axis] + shape[axis + 1 :]
            n_rest = int(np.prod(rest_shape, dtype=np.int64))
            moved = np.moveaxis(cell_ids, axis, 0).reshape(shape[axis], n_rest)
            rest_coords = (
                np.indices(rest_shape).reshape(len(rest_shape), -1).T
                if rest_shape
                else np.zeros((1, 0), dtype=np.int64)
            )
            for parent in range(self.n_leaves[axis], shape[axis]):
                kids = self.children[axis][parent]
                rel_ids = n_rel + np.arange(n_rest)
                rows.append(rel_ids)
                cols.append(moved[parent])
                vals.append(np.ones(n_rest))
                for kid in kids:
                    rows.append(rel_ids)
                    cols.append(moved[kid])
                    vals.append(-np.ones(n_rest))
                described.extend((axis, parent, tuple(int(c) for c in rc)) for rc in rest_coords)
                n_rel += n_rest
        if n_rel == 0:
            return sparse.csr_matrix((0, self.n_cells)), described
        matrix = sparse.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(n_rel, self.n_cells),
        )
        return matrix, described

    def describe_relation(self, described: tuple[int, int, tuple[int, ...]]) -> str:
        """Text for one relation returned by :meth:`relations`."""
        axis, parent, rest = described
        others = [d for a, d in enumerate(self.dims) if a != axis]
        other_axes = [a for a in range(len(self.dims)) if a != axis]
        where = ", ".join(
            f"{d}={self.categories[a][c]!r}"
            for d, a, c in zip(others, other_axes, rest, strict=True)
        )
        kids = [self.categories[axis][k] for k in self.children[axis][parent]]
        head = f"{self.dims[axis]}={self.categories[axis][parent]!r} is the sum of {kids!r}"
        return head + (f" at {where}" if where else "")

    def cell_positions(self, table: pd.DataFrame) -> np.ndarray:
        """Position (C order) of every row of a tidy ``table`` among this structure's cells."""
        codes = []
        for axis, dim in enumerate(self.dims):
            if dim not in table.columns:
                raise SchemaError(f"table has no column {dim!r} (a dimension of the structure)")
            lookup = {label_key(c): i for i, c in enumerate(self.categories[axis])}
            values = table[dim].astype(object).to_numpy()
            code = np.fromiter(
                (lookup.get(label_key(v), -1) for v in values), np.int64, len(values)
            )
            if (code < 0).any():
                bad = values[int(np.flatnonzero(code < 0)[0])]
                raise DataError(
                    f"table column {dim!r} has category {bad!r} that the structure does not know"
                )
            codes.append(code)
        positions = np.ravel_multi_index(codes, self.shape)
        if len(np.unique(positions)) != len(positions):
            raise DataError("table has the same cell more than once")
        return positions

    def summary(self) -> str:
        """Dimensions, category counts and number of cells."""
        parts = [
            f"{d}: {n} leaves + {len(c) - n} aggregates"
            for d, c, n in zip(self.dims, self.categories, self.n_leaves, strict=True)
        ]
        return f"table of {self.n_cells} cells; " + "; ".join(parts)

    @classmethod
    def from_categories(
        cls,
        dims: Sequence[str],
        leaves: Sequence[Sequence[Any]],
        *,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        margins: bool = True,
        total_label: str = "Total",
    ) -> TableStructure:
        """Build a structure from the leaf categories of each dimension."""
        hierarchies = dict(hierarchies or {})
        unknown = [h for h in hierarchies if h not in dims]
        if unknown:
            raise ParameterError(f"hierarchies: {unknown} are not among the dims {list(dims)}")
        cats_all, n_leaves_all, children_all = [], [], []
        for dim, dim_leaves in zip(dims, leaves, strict=True):
            cats, kids = _dimension_categories(
                dim, list(dim_leaves), hierarchies.get(dim), margins, total_label
            )
            cats_all.append(tuple(cats))
            n_leaves_all.append(len(dim_leaves))
            children_all.append(tuple(kids))
        return cls(
            tuple(dims), tuple(cats_all), tuple(n_leaves_all), tuple(children_all), total_label
        )

    @classmethod
    def from_table(
        cls,
        table: pd.DataFrame,
        dims: Sequence[str],
        *,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        total_label: str = "Total",
    ) -> TableStructure:
        """Infer the structure of a tidy table: leaves are the labels that are neither parents nor the total."""
        dims = check_columns(table, dims, "dims")
        hierarchies = dict(hierarchies or {})
        leaves, has_total = [], True
        for dim in dims:
            labels = pd.unique(table[dim].astype(object))
            parents = {label_key(p) for p in (hierarchies.get(dim) or {})}
            keys = [label_key(v) for v in labels]
            has_total &= label_key(total_label) in keys
            dim_leaves = [
                v
                for v, k in zip(labels, keys, strict=True)
                if k != label_key(total_label) and k not in parents
            ]
            if isinstance(table[dim].dtype, pd.CategoricalDtype):
                order = {label_key(c): i for i, c in enumerate(table[dim].cat.categories)}
                dim_leaves.sort(key=lambda v: order[label_key(v)])
            leaves.append(dim_leaves)
        return cls.from_categories(
            dims, leaves, hierarchies=hierarchies, margins=has_total, total_label=total_label
        )


def label_key(value: Any) -> str:
    """Labels are matched by their text, so 3, '3' and 3.0-as-'3' read back from a file agree."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _dimension_categories(
    dim: str,
    leaves: list[Any],
    hierarchy: Hierarchy | None,
    margins: bool,
    total_label: str,
) -> tuple[list[Any], list[tuple[int, ...]]]:
    leaf_keys = [label_key(v) for v in leaves]
    if len(set(leaf_keys)) != len(leaf_keys):
        raise DataError(f"dimension {dim!r} has categories that coincide as text: {leaves}")
    cats = list(leaves)
    kids: list[tuple[int, ...]] = [() for _ in leaves]
    position = {k: i for i, k in enumerate(leaf_keys)}
    parent_of: dict[str, str] = {}
    if hierarchy:
        if not isinstance(hierarchy, Mapping):
            raise ParameterError(
                f"hierarchies[{dim!r}] must map each parent to its list of children"
            )
        spec = {label_key(p): (p, [label_key(c) for c in ch]) for p, ch in hierarchy.items()}
        for pkey, (parent, child_keys) in spec.items():
            if pkey in position:
                raise ParameterError(
                    f"hierarchies[{dim!r}]: parent {parent!r} is also a category of the data"
                )
            if pkey == label_key(total_label):
                raise ParameterError(
                    f"hierarchies[{dim!r}]: parent {parent!r} clashes with the total label"
                )
            if not child_keys:
                raise ParameterError(f"hierarchies[{dim!r}]: parent {parent!r} has no children")
            for ck in child_keys:
                if ck not in position and ck not in spec:
                    raise ParameterError(
                        f"hierarchies[{dim!r}]: child {ck!r} of {parent!r} is neither a category "
                        f"of {dim!r} nor another parent"
                    )
                if ck in parent_of:
                    raise ParameterError(
                        f"hierarchies[{dim!r}]: {ck!r} has two parents, {parent_of[ck]!r} and {pkey!r}"
                    )
                parent_of[ck] = pkey
        # add parents once all their children are placed (children before parents)
        pending = dict(spec)
        while pending:
            ready = [p for p, (_, ch) in pending.items() if all(c in position for c in ch)]
            if not ready:
                raise ParameterError(f"hierarchies[{dim!r}] has a cycle among {sorted(pending)}")
            for pkey in ready:
                parent, child_keys = pending.pop(pkey)
                position[pkey] = len(cats)
                cats.append(parent)
                kids.append(tuple(position[c] for c in child_keys))
    if margins:
        top = tuple(i for i, c in enumerate(cats) if label_key(c) not in parent_of)
        if label_key(total_label) in position:
            raise ParameterError(
                f"dimension {dim!r} already has a category equal to the total label {total_label!r}"
            )
        cats.append(total_label)
        kids.append(top)
    if len(cats) > len(leaves) and not all(isinstance(c, str) for c in leaves):
        cats = [c if i >= len(leaves) else label_key(c) for i, c in enumerate(cats)]
    return cats, kids


def leaf_categories(
    data: pd.DataFrame, dim: str, given: Sequence[Any] | None
) -> tuple[list[Any], np.ndarray, bool]:
    """Leaf categories, record codes, and whether unobserved leaves may be dropped."""
    column = data[dim]
    if column.isna().any():
        row = int(np.flatnonzero(column.isna().to_numpy())[0]) + 1
        raise DataError(
            f"column {dim!r} has {int(column.isna().sum())} missing values (the first in row "
            f"{row}, counting data rows from 1); tabulate needs complete categories"
        )
    if given is not None:
        leaves = list(given)
        index = pd.Index(leaves)
        if not index.is_unique:
            raise ParameterError(f"categories of {dim!r} are not unique: {leaves}")
        codes = index.get_indexer(column).astype(np.int64)
        if (codes < 0).any():
            bad = column.iloc[int(np.flatnonzero(codes < 0)[0])]
            raise DataError(f"column {dim!r} has value {bad!r} outside the given categories")
        return leaves, codes, False
    # nullable integers (Int64) have no missing values here, so they convert exactly
    values = column.to_numpy(np.int64) if column.dtype.kind in "iu" else None
    if isinstance(column.dtype, pd.CategoricalDtype):
        return list(column.cat.categories), column.cat.codes.to_numpy(np.int64), False
    if values is not None and len(values):
        # integer codes: take the whole range now (no hashing, sorting or counting);
        # tabulate drops the values that do not occur from the elementary table
        values = values.astype(np.int64, copy=False)
        low, high = int(values.min()), int(values.max())
        if high - low < max(len(values), 1 << 16):
            return list(range(low, high + 1)), (values - low if low else values), True
    try:
        codes, uniques = pd.factorize(column, sort=True)
    except TypeError:  # values of mixed types cannot be sorted: keep first-seen order
        codes, uniques = pd.factorize(column)
    return list(uniques), codes.astype(np.int64, copy=False), False


def tabulate(
    data: pd.DataFrame,
    dims: Sequence[str] | str,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    weights: str | None = None,
    margins: bool = True,
    categories: Mapping[str, Sequence[Any]] | None = None,
    record_key: str | None = None,
    total_label: str = "Total",
    key_modulus: int | None = None,
) -> pd.DataFrame:
    """Frequency table of ``dims`` with all margins, one row per cell (empty cells included).

    Giessing & Höhne (2011), Section 2.1: the cells of a table are
    sums of elementary-table cells. The elementary table is counted with one
    ``numpy.bincount``; margins and hierarchy levels are sums along one axis.

    Parameters
    ----------
    data : DataFrame
        Microdata, one record per row; never modified.
    dims : list of str
        Classifying variables (categorical; no missing values).
    hierarchies : mapping, optional
        ``{dim: {parent: [children, ...]}}``; a child is a category of ``dim``
        or another parent (nested levels, e.g. region > district). Categories
        not under any parent add directly into the total.
    weights : str, optional
        Column of non-negative record weights: adds ``weighted_count``, the
        weighted total of each cell (float), beside the unweighted ``count``
        (which the cell key method perturbs, see
        :func:`sdckit.tables.cell_key_perturb`).
    margins : bool, default True
        Add the total of every dimension (labelled ``total_label``).
    categories : mapping, optional
        ``{dim: [leaf categories]}`` to fix the categories and their order
        (unobserved ones give empty cells). Default: categorical categories,
        else the sorted distinct values.
    record_key : str, optional
        Column of record keys (see :func:`sdckit.tables.add_record_keys`); adds
        a ``cell_key`` column: the keys of the cell's records summed modulo
        the key range (Giessing & Höhne 2011, Section 4).
    total_label : str, default "Total"
        Label of the margins.
    key_modulus : int, optional
        Integer record keys lie in ``0..key_modulus-1`` and are summed modulo
        ``key_modulus`` (256 or 4096 for the ONS p-tables, whose cell keys are
        sums modulo 256 or 4096); default ``2^31 - 1`` (see
        :mod:`sdckit.tables.recordkeys`).

    Returns
    -------
    DataFrame
        Columns ``dims`` (categoricals), ``count``, with ``weights``
        ``weighted_count`` and, with ``record_key``, ``cell_key``. It holds
        the true counts: an internal table, never a release. Rows in C order of the categories. The structure is kept
        in ``.attrs["structure"]`` (a :class:`TableStructure`).
    """
    data = check_dataframe(data)
    dims = check_columns(data, dims, "dims")
    if not dims:
        raise ParameterError("dims must name at least one column")
    categories = dict(categories or {})
    unknown = [c for c in categories if c not in dims]
    if unknown:
        raise ParameterError(f"categories: {unknown} are not among the dims {dims}")
    leaves, codes, observed_only = [], [], []
    for dim in dims:
        lv, cd, compact = leaf_categories(data, dim, categories.get(dim))
        leaves.append(lv)
        codes.append(cd)
        observed_only.append(compact)
    leaf_shape = tuple(len(lv) for lv in leaves)
    n_elementary = int(np.prod(leaf_shape, dtype=np.int64))
    if n_elementary > MAX_ELEMENTARY_CELLS:
        raise ParameterError(
            f"the table of {dims} has {n_elementary} elementary cells (more than "
            f"{MAX_ELEMENTARY_CELLS}); tabulate fewer or coarser dimensions"
        )
    cell = np.ravel_multi_index(codes, leaf_shape) if len(dims) > 1 else codes[0]
    elementary_counts = np.bincount(cell, minlength=n_elementary).astype(np.int64)
    elementary = None
    if weights is not None:
        check_columns(data, [weights], "weights")
        w = _check_weights(data[weights], weights)
        elementary = np.bincount(cell, weights=w, minlength=n_elementary)
    key_sums = None
    if record_key is not None:
        check_columns(data, [record_key], "record_key")
        units, modulus, uniform = key_units(data[record_key], name=record_key, modulus=key_modulus)
        key_sums = _exact_key_sums(cell, units, n_elementary, int(elementary_counts.max()), modulus)
    # integer variables were given their whole range: keep the values that occur
    arrays = [
        a.reshape(leaf_shape) for a in (elementary_counts, elementary, key_sums) if a is not None
    ]
    for axis, compact in enumerate(observed_only):
        if not compact:
            continue
        other = tuple(a for a in range(len(dims)) if a != axis)
        occurs = np.flatnonzero(arrays[0].sum(axis=other) > 0)
        if len(occurs) < len(leaves[axis]):
            leaves[axis] = [leaves[axis][i] for i in occurs]
            arrays = [np.take(a, occurs, axis=axis) for a in arrays]
    structure = TableStructure.from_categories(
        dims, leaves, hierarchies=hierarchies, margins=margins, total_label=total_label
    )
    out = structure.labels()
    out["count"] = structure.aggregate(arrays[0]).ravel()
    if elementary is not None:
        out["weighted_count"] = structure.aggregate(arrays[1]).ravel()
    if key_sums is not None:
        cell_sums = structure.aggregate(arrays[-1]).ravel() % modulus
        out["cell_key"] = cell_sums / modulus if uniform else cell_sums
    out.attrs["structure"] = structure
    return out


def _check_weights(column: pd.Series, name: str) -> np.ndarray:
    """Record weights as float64: finite and non-negative, else an error naming the first bad row.

    Rows are counted from 1 as a spreadsheet shows the data rows.
    """
    w = pd.to_numeric(column, errors="coerce").to_numpy(np.float64)
    bad = ~np.isfinite(w)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raw = column.iloc[k]
        shown = "missing" if pd.isna(raw) else repr(str(raw))
        raise DataError(f"weights column {name!r} must hold numbers; row {k + 1} has {shown}")
    negative = w < 0
    if negative.any():
        k = int(np.flatnonzero(negative)[0])
        raise DataError(
            f"weights column {name!r} has negative weights ({int(negative.sum())} rows); "
            f"the first is row {k + 1} with {number_text(w[k])}"
        )
    return w


def _exact_key_sums(
    cell: np.ndarray, units: np.ndarray, n_cells: int, largest_cell: int, modulus: int
) -> np.ndarray:
    """Integer sums of keys per elementary cell, exact.

    float64 holds integers below 2^53 exactly, so one weighted bincount is
    exact when the largest cell times the key range stays below 2^53;
    otherwise the keys are summed as two 16-bit halves (exact for up to 2^37
    records) and recombined in int64.
    """
    if largest_cell * modulus < 2**53:
        return np.bincount(cell, weights=units, minlength=n_cells).astype(np.int64)
    low = np.bincount(cell, weights=units & 0xFFFF, minlength=n_cells)
    high = np.bincount(cell, weights=units >> 16, minlength=n_cells)
    return high.astype(np.int64) * 65536 + low.astype(np.int64)
