"""SAFE-style pre-tabular protection: microdata whose every table is free of 1s and 2s.

Giessing & Höhne (2011), Section 2 (after Höhne 2003): change
microdata records so that every cell of the elementary table (the full
cross-classification of the variables) has count 0 or at least 3; every
table computed from the protected records is then additive, consistent and
free of small cells. Among such changes, keep the deviations in a set of
*controlled* tables small (model (1): minimise the largest absolute
deviation).

The heuristic follows the paper's two phases:

1. *A first feasible solution* (model (2)): visit the unsafe elementary
   cells (count 1 or 2) and either empty one (move its records to a
   neighbouring cell, differing in one variable, that then has at least 3) or
   fill it up to 3 from a neighbouring cell that keeps at least 3, choosing
   the move with the smallest resulting deviation in the controlled tables,
   and only moves within the current bound ``b`` on those deviations. When a
   pass makes no progress the bound is raised, ``b = b + 1``.
2. *Optimising the solution* (model (3)): lower the bound below the largest
   deviation reached and repair the controlled cells that now violate it
   with record moves between safe cells (both keep at least 3); repeat while
   every violation can be repaired, then keep the best solution.

Every move changes whole records' categories, so the result is microdata.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._results import MicrodataResult
from sdckit._validation import (
    RandomState,
    check_columns,
    check_dataframe,
    check_int,
    check_random_state,
)
from sdckit.errors import DataError, InfeasibleError, ParameterError

__all__ = ["SafeResult", "safe_perturb"]

MAX_ELEMENTARY_CELLS = 20_000_000


@dataclass(frozen=True)
class SafeResult(MicrodataResult):
    """Result of :func:`safe_perturb`: protected microdata, as a masking method returns.

    A :class:`~sdckit._results.MicrodataResult` like every masking result, so
    :func:`sdckit.assess.assess` takes it as it takes a masking result.

    Attributes
    ----------
    data : DataFrame
        Protected microdata: same index, columns and dtypes; only the
        classifying variables of some records differ.
    diagnostics : DataFrame
        Per record: ``changed`` (bool) and ``variables_changed`` (int).
    params : mapping
        Every parameter used, defaults included.
    method : str
        ``"safe_perturb"``.
    stats : mapping
        ``unsafe_cells_before``, ``records_changed``, ``moves``,
        ``max_abs_deviation`` (controlled tables), ``max_abs_deviation_by_table``,
        ``bound_history`` (bound after each stage), ``feasible_bound``.
    """

    method: str = "safe_perturb"

    def summary(self) -> str:
        """Unsafe cells removed, records changed, deviations reached."""
        s = self.stats
        return (
            f"SAFE: {s['unsafe_cells_before']} unsafe elementary cells removed by {s['moves']} moves; "
            f"{s['records_changed']} records changed; max |deviation| in controlled tables "
            f"{s['max_abs_deviation']} (first feasible bound {s['feasible_bound']})"
        )


class _State:
    """Elementary counts, controlled-table deviations and the move log."""

    def __init__(
        self, counts: np.ndarray, shape: tuple[int, ...], subtables: list[tuple[int, ...]]
    ):
        self.y = counts
        self.shape = shape
        self.subtables = subtables
        self.sub_shapes = [tuple(shape[a] for a in t) for t in subtables]
        self.dev = [np.zeros(int(np.prod(s)), dtype=np.int64) for s in self.sub_shapes]
        self.moves: list[tuple[int, int, int]] = []

    def project(self, coords: np.ndarray, k: int) -> np.ndarray:
        axes = self.subtables[k]
        return np.ravel_multi_index(tuple(coords[a] for a in axes), self.sub_shapes[k])

    def cost(self, src: np.ndarray, dst: np.ndarray, amount: np.ndarray) -> np.ndarray:
        """Largest |deviation| among the controlled cells each move would touch."""
        cs = np.array(np.unravel_index(src, self.shape))
        cd = np.array(np.unravel_index(dst, self.shape))
        worst = np.zeros(len(src), dtype=np.int64)
        for k in range(len(self.subtables)):
            a, b = self.project(cs, k), self.project(cd, k)
            moved = a != b
            after = np.maximum(np.abs(self.dev[k][a] - amount), np.abs(self.dev[k][b] + amount))
            worst = np.maximum(worst, np.where(moved, after, 0))
        return worst

    def apply(self, src: int, dst: int, amount: int) -> None:
        cs = np.array(np.unravel_index([src], self.shape))
        cd = np.array(np.unravel_index([dst], self.shape))
        for k in range(len(self.subtables)):
            a, b = int(self.project(cs, k)[0]), int(self.project(cd, k)[0])
            if a != b:
                self.dev[k][a] -= amount
                self.dev[k][b] += amount
        self.y[src] -= amount
        self.y[dst] += amount
        self.moves.append((src, dst, amount))

    def max_deviation(self) -> int:
        return max((int(np.abs(d).max(initial=0)) for d in self.dev), default=0)

    def neighbours(self, cell: int) -> np.ndarray:
        """Elementary cells differing from ``cell`` in exactly one variable."""
        coords = np.array(np.unravel_index(cell, self.shape))
        out = []
        for axis, size in enumerate(self.shape):
            grid = np.repeat(coords[:, None], size, axis=1)
            grid[axis] = np.arange(size)
            keep = np.arange(size) != coords[axis]
            out.append(np.ravel_multi_index(tuple(grid[:, keep]), self.shape))
        return np.concatenate(out) if out else np.array([], dtype=np.int64)


def _fix_options(state: _State, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Moves that make unsafe cell ``s`` safe without creating another unsafe cell."""
    c = int(state.y[s])
    near = state.neighbours(s)
    yn = state.y[near]
    empty_into = near[(yn >= 1) & (yn + c >= 3)]
    need = 3 - c
    fill_from = near[(yn - need >= 3) | (yn == need)]
    if len(empty_into) == 0 and len(fill_from) == 0:
        # no neighbour helps: allow any cell that can take the records
        everywhere = np.flatnonzero((state.y >= 1) & (state.y + c >= 3))
        empty_into = everywhere[everywhere != s]
    src = np.concatenate([np.full(len(empty_into), s), fill_from])
    dst = np.concatenate([empty_into, np.full(len(fill_from), s)])
    amount = np.concatenate([np.full(len(empty_into), c), np.full(len(fill_from), need)])
    return src, dst, amount


def _first_feasible(
    state: _State, bound: int, limit: int, rng: np.random.Generator, history: list
) -> int:
    while True:
        unsafe = np.flatnonzero((state.y == 1) | (state.y == 2))
        if len(unsafe) == 0:
            return bound
        progress = False
        for s in rng.permutation(unsafe):
            if state.y[s] not in (1, 2):
                continue
            src, dst, amount = _fix_options(state, int(s))
            if len(src) == 0:
                continue
            cost = state.cost(src, dst, amount)
            best = np.flatnonzero(cost == cost.min())
            pick = int(rng.choice(best))
            if cost[pick] <= bound:
                state.apply(int(src[pick]), int(dst[pick]), int(amount[pick]))
                progress = True
        if not progress:
            bound += 1
            history.append(("raised", bound))
            if bound > limit:
                raise InfeasibleError(
                    f"SAFE: no move removes the remaining {len(unsafe)} unsafe cells within "
                    f"max_deviation_limit={limit}"
                )


def _repair_options(
    state: _State, k: int, cell: int, too_many: bool, rng: np.random.Generator, sample: int
) -> tuple[np.ndarray, np.ndarray]:
    """Moves of one record between safe elementary cells that shift controlled cell ``cell``."""
    axes = state.subtables[k]
    target = np.unravel_index(cell, state.sub_shapes[k])
    free_axes = [a for a in range(len(state.shape)) if a not in axes]
    free_shape = [state.shape[a] for a in free_axes]
    n_free = int(np.prod(free_shape)) if free_axes else 1
    picks = np.arange(n_free) if n_free <= sample else rng.choice(n_free, sample, replace=False)
    coords = np.zeros((len(state.shape), len(picks)), dtype=np.int64)
    for a, t in zip(axes, target, strict=True):
        coords[a] = t
    if free_axes:
        free = np.unravel_index(picks, free_shape)
        for a, f in zip(free_axes, free, strict=True):
            coords[a] = f
    inside: np.ndarray = np.asarray(np.ravel_multi_index(tuple(coords), state.shape))
    src_list, dst_list = [], []
    for axis in axes:
        for category in range(state.shape[axis]):
            if category == target[axes.index(axis)]:
                continue
            moved = coords.copy()
            moved[axis] = category
            outside: np.ndarray = np.asarray(np.ravel_multi_index(tuple(moved), state.shape))
            if too_many:
                ok = (state.y[inside] >= 4) & (state.y[outside] >= 3)
                src_list.append(inside[ok])
                dst_list.append(outside[ok])
            else:
                ok = (state.y[outside] >= 4) & (state.y[inside] >= 3)
                src_list.append(outside[ok])
                dst_list.append(inside[ok])
    if not src_list:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    return np.concatenate(src_list), np.concatenate(dst_list)


def _optimise(
    state: _State, rng: np.random.Generator, max_rounds: int, history: list, sample: int
) -> None:
    best_moves = len(state.moves)
    best_max = state.max_deviation()
    snapshot = (state.y.copy(), [d.copy() for d in state.dev])
    for _ in range(max_rounds):
        target = best_max - 1
        if target < 0:
            break
        repaired = True
        for _sweep in range(10 * (best_max + 1)):
            violations = [
                (k, int(i))
                for k, d in enumerate(state.dev)
                for i in np.flatnonzero(np.abs(d) > target)
            ]
            if not violations:
                break
            k, cell = violations[int(rng.integers(len(violations)))]
            too_many = state.dev[k][cell] > 0
            src, dst = _repair_options(state, k, cell, too_many, rng, sample)
            if len(src) == 0:
                repaired = False
                break
            cost = state.cost(src, dst, np.ones(len(src), dtype=np.int64))
            ok = np.flatnonzero(cost <= target)
            if len(ok) == 0:
                repaired = False
                break
            pick = int(rng.choice(ok))
            state.apply(int(src[pick]), int(dst[pick]), 1)
        else:
            repaired = state.max_deviation() <= target
        if repaired and state.max_deviation() <= target:
            best_max = state.max_deviation()
            best_moves = len(state.moves)
            snapshot = (state.y.copy(), [d.copy() for d in state.dev])
            history.append(("tightened", best_max))
        else:
            break
    state.y, state.dev = snapshot
    del state.moves[best_moves:]


def safe_perturb(
    microdata: pd.DataFrame,
    controlled_tables: Sequence[Sequence[str]],
    *,
    variables: Sequence[str] | None = None,
    max_deviation_start: int = 1,
    max_deviation_limit: int = 50,
    optimise: bool = True,
    max_rounds: int = 20,
    repair_sample: int = 256,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> SafeResult:
    """Protect microdata so that no table of their variables has a cell of 1 or 2.

    Giessing & Höhne (2011), Section 2 (the SAFE model (1) and the
    heuristic phases (2) and (3)).

    Parameters
    ----------
    microdata : DataFrame
        Records with categorical classifying variables; never modified.
    controlled_tables : list of lists of str
        The controlled tables (e.g. ``[["region", "age"], ["age", "sex"]]``);
        each table's cells and all its margins are kept close to the original.
    variables : list of str, optional
        Variables of the elementary table (default: all variables of the
        controlled tables). Every table of any subset of them is protected.
    max_deviation_start : int, default 1
        Initial bound ``b`` on the absolute deviation in controlled cells.
    max_deviation_limit : int, default 50
        Give up (InfeasibleError) if the bound must exceed this.
    optimise : bool, default True
        Run phase 2 (tighten the bound after the first feasible solution).
    max_rounds : int, default 20
        Tightening rounds in phase 2.
    repair_sample : int, default 256
        Elementary cells examined per repair in phase 2.
    random_state : None, int or Generator
        Order of visits, tie-breaking and which records of a cell move.
    progress : callable, optional
        ``progress(done, total)`` after each phase.

    Returns
    -------
    SafeResult
    """
    data = check_dataframe(microdata, "microdata")
    if isinstance(controlled_tables, str) or not controlled_tables:
        raise ParameterError("controlled_tables must be a non-empty list of lists of variables")
    tables = [check_columns(data, t, "controlled_tables") for t in controlled_tables]
    if any(not t for t in tables):
        raise ParameterError("every controlled table needs at least one variable")
    union = list(dict.fromkeys(v for t in tables for v in t))
    variables = union if variables is None else check_columns(data, variables, "variables")
    missing = [v for v in union if v not in variables]
    if missing:
        raise ParameterError(f"variables must include every controlled variable; missing {missing}")
    start = check_int(max_deviation_start, "max_deviation_start", minimum=0)
    limit = check_int(max_deviation_limit, "max_deviation_limit", minimum=start)
    max_rounds = check_int(max_rounds, "max_rounds", minimum=0)
    repair_sample = check_int(repair_sample, "repair_sample", minimum=1)
    rng = check_random_state(random_state)
    if len(data) < 3:
        raise InfeasibleError("SAFE needs at least 3 records (a non-empty cell has at least 3)")

    leaves, codes = [], []
    for v in variables:
        column = data[v]
        if column.isna().any():
            raise DataError(f"column {v!r} has missing values; SAFE needs complete categories")
        if isinstance(column.dtype, pd.CategoricalDtype):
            cats = list(column.cat.categories)
            code = column.cat.codes.to_numpy(np.int64)
        else:
            uniques, code = np.unique(column.to_numpy(), return_inverse=True)
            cats = list(uniques)
        leaves.append(cats)
        codes.append(code.astype(np.int64))
    shape = tuple(len(c) for c in leaves)
    n_cells = int(np.prod(shape, dtype=np.int64))
    if n_cells > MAX_ELEMENTARY_CELLS:
        raise ParameterError(
            f"the elementary table of {variables} has {n_cells} cells (more than "
            f"{MAX_ELEMENTARY_CELLS}); use fewer or coarser variables"
        )
    cell = np.ravel_multi_index(codes, shape)
    counts = np.bincount(cell, minlength=n_cells).astype(np.int64)
    position = {v: i for i, v in enumerate(variables)}
    subtables = sorted(
        {
            tuple(sorted(position[v] for v in sub))
            for t in tables
            for r in range(1, len(t) + 1)
            for sub in itertools.combinations(t, r)
        }
    )
    state = _State(counts.copy(), shape, subtables)
    unsafe_before = int(((counts == 1) | (counts == 2)).sum())
    history: list[tuple[str, int]] = [("start", start)]
    feasible_bound = _first_feasible(state, start, limit, rng, history)
    if progress is not None:
        progress(1, 2)
    if optimise:
        _optimise(state, rng, max_rounds, history, repair_sample)
    if progress is not None:
        progress(2, 2)

    # realise the cell moves on records: each move takes records now in src
    order = rng.permutation(len(cell))
    order = order[np.argsort(cell[order], kind="stable")]
    bounds = np.searchsorted(cell[order], np.arange(n_cells + 1))
    stacks: dict[int, list[int]] = {}
    new_cell = cell.copy()
    for src, dst, amount in state.moves:
        if src not in stacks:
            stacks[src] = order[bounds[src] : bounds[src + 1]].tolist()
        if dst not in stacks:
            stacks[dst] = order[bounds[dst] : bounds[dst + 1]].tolist()
        moving = [stacks[src].pop() for _ in range(amount)]
        stacks[dst].extend(moving)
        new_cell[moving] = dst
    new_codes = np.unravel_index(new_cell, shape)
    out = data.copy()
    changed_vars = np.zeros(len(data), dtype=np.int64)
    for axis, v in enumerate(variables):
        differs = new_codes[axis] != codes[axis]
        changed_vars += differs
        if not differs.any():
            continue
        column = data[v]
        if isinstance(column.dtype, pd.CategoricalDtype):
            out[v] = pd.Categorical.from_codes(new_codes[axis], dtype=column.dtype)
        else:
            values = np.asarray(leaves[axis], dtype=object)[new_codes[axis]]
            out[v] = pd.Series(values, index=data.index).astype(column.dtype)
    final_counts = np.bincount(new_cell, minlength=n_cells)
    if ((final_counts == 1) | (final_counts == 2)).any():  # the moves keep this invariant
        raise InfeasibleError("SAFE: internal check failed, an elementary cell of 1 or 2 remains")
    by_table = {}
    for t in tables:
        axes = [position[v] for v in t]
        proj_shape = tuple(shape[a] for a in axes)
        before = np.bincount(
            np.ravel_multi_index(tuple(codes[a] for a in axes), proj_shape),
            minlength=int(np.prod(proj_shape)),
        )
        after = np.bincount(
            np.ravel_multi_index(tuple(new_codes[a] for a in axes), proj_shape),
            minlength=int(np.prod(proj_shape)),
        )
        by_table[" x ".join(t)] = int(np.abs(after - before).max())
    diagnostics = pd.DataFrame(
        {"changed": changed_vars > 0, "variables_changed": changed_vars}, index=data.index
    )
    stats = {
        "unsafe_cells_before": unsafe_before,
        "records_changed": int((changed_vars > 0).sum()),
        "moves": len(state.moves),
        "max_abs_deviation": state.max_deviation(),
        "max_abs_deviation_by_table": by_table,
        "bound_history": history,
        "feasible_bound": feasible_bound,
    }
    params = {
        "controlled_tables": [list(t) for t in tables],
        "variables": list(variables),
        "max_deviation_start": start,
        "max_deviation_limit": limit,
        "optimise": optimise,
        "max_rounds": max_rounds,
    }
    return SafeResult(data=out, diagnostics=diagnostics, params=params, stats=stats)
