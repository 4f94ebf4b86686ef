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
   cells (count 1 or 2; all costed at once, visited cheapest first) and either empty one (move its records to a
   neighbouring cell, differing in one variable, that then has at least 3) or
   fill it up to 3 from a neighbouring cell that keeps at least 3, choosing
   the move with the smallest resulting deviation in the controlled tables,
   and only moves within the current bound ``b`` on those deviations. When a
   pass stagnates the bound is raised, ``b = b + 1`` (to the cheapest move
   left when the pass made no move).
2. *Optimising the solution* (model (3)): lower the bound below the largest
   deviation reached and repair the controlled cells that now violate it
   with record moves between safe cells (both keep at least 3); repeat while
   every violation can be repaired (or up to ``max_rounds`` rounds), then keep
   the best solution.

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

#: The cost of a move that changes no controlled cell (below every real cost).
NO_TABLE = np.iinfo(np.int64).min // 2
# linear cell positions are int64: the cross-classification may have up to 2^62 cells
MAX_POSSIBLE_CELLS = 2**62


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
        ``unsafe_cells_before``, ``records_changed``, ``changed_per_variable``
        (records whose value of each classifying variable changed), ``moves``,
        ``max_abs_deviation`` (controlled tables), ``max_abs_deviation_by_table``,
        ``bound_history`` (bound after each stage), ``feasible_bound``,
        ``max_abs_excess`` (largest ``|deviation| - allowance``),
        ``elementary_cells_possible``, ``elementary_cells_nonempty`` (the size
        of the problem solved).
    """

    method: str = "safe_perturb"

    def summary(self) -> str:
        """Unsafe cells removed, records changed, deviations reached."""
        s = self.stats
        changes = ", ".join(f"{v} in {k:,}" for v, k in s.get("changed_per_variable", {}).items())
        return (
            f"SAFE: {s['unsafe_cells_before']} unsafe elementary cells removed by {s['moves']} moves; "
            f"{s['records_changed']} records changed ({changes}); max |deviation| in controlled "
            "tables "
            f"{s['max_abs_deviation']} (first feasible bound {s['feasible_bound']}); "
            f"problem solved on {s['elementary_cells_nonempty']:,} non-empty of "
            f"{s['elementary_cells_possible']:,} possible elementary cells"
            + (
                f"; phase 2 stopped at its round limit (max_rounds={self.params['max_rounds']}): "
                "the bound might be lowered further"
                if s.get("phase2_stop") == "round limit"
                else ""
            )
        )


class _State:
    """Counts of the non-empty elementary cells, controlled-table deviations, the move log.

    Sparse: only the elementary cells that hold records at the start exist
    (``ids``, sorted linear positions in the full cross-classification);
    every move of the heuristic goes into a cell that holds records, so no
    other cell is ever needed and the full table is never materialised.
    """

    def __init__(
        self,
        ids: np.ndarray,
        counts: np.ndarray,
        shape: tuple[int, ...],
        subtables: list[tuple[int, ...]],
        allowance: list[np.ndarray],
    ):
        self.ids = ids
        self.y = counts
        self.shape = shape
        self.coords = np.array(np.unravel_index(ids, shape), dtype=np.int64).reshape(len(shape), -1)
        self.subtables = subtables
        self.sub_shapes = [tuple(shape[a] for a in t) for t in subtables]
        # every controlled table's deviations and allowances in one flat array (table k
        # from offsets[k]), so that a move is costed over all tables in a few array operations
        sizes = [int(np.prod(s)) for s in self.sub_shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.flat_dev = np.zeros(int(self.offsets[-1]), dtype=np.int64)
        # how far each controlled cell may deviate beyond the common bound b (w + B offset)
        self.flat_allowance = np.concatenate(allowance).astype(np.int64)
        self.dev = [self.flat_dev[a:b] for a, b in itertools.pairwise(self.offsets)]
        self.allowance = [self.flat_allowance[a:b] for a, b in itertools.pairwise(self.offsets)]
        self.moves: list[tuple[int, int, int]] = []
        self._members: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # each elementary cell's controlled cell in every controlled table, computed once
        self.keys = [self.project(self.coords, k) for k in range(len(subtables))]
        # (tables, cells): each elementary cell's position in the flat deviations
        self.flat_keys = np.stack(self.keys) + self.offsets[:-1, None]
        # the controlled tables that hold each variable: a move between two cells that
        # differ in that variable only changes those tables, never the others
        self.tables_of_axis = [
            np.array([k for k, t in enumerate(subtables) if axis in t], dtype=np.int64)
            for axis in range(len(shape))
        ]
        # cells differing in one variable share every other coordinate: per variable, the
        # cells sorted by that key and where each key's group starts
        self._groups = []
        for axis in range(len(shape)):
            others = [a for a in range(len(shape)) if a != axis]
            key = (
                np.ravel_multi_index(
                    tuple(self.coords[a] for a in others), [shape[a] for a in others]
                )
                if others
                else np.zeros(len(ids), dtype=np.int64)
            )
            order = np.argsort(key, kind="stable")
            sorted_key = key[order]
            self._groups.append((order, sorted_key, key))

    def project(self, coords: np.ndarray, k: int) -> np.ndarray:
        axes = self.subtables[k]
        return np.ravel_multi_index(tuple(coords[a] for a in axes), self.sub_shapes[k])

    def cost(self, src: np.ndarray, dst: np.ndarray, amount: np.ndarray) -> np.ndarray:
        """Largest excess ``|deviation| - allowance`` among the controlled cells each move touches."""
        a, b = self.flat_keys[:, src], self.flat_keys[:, dst]
        dev, extra = self.flat_dev, self.flat_allowance
        after = np.maximum(np.abs(dev[a] - amount) - extra[a], np.abs(dev[b] + amount) - extra[b])
        return np.where(a != b, after, NO_TABLE).max(axis=0, initial=NO_TABLE)

    def cost_along(
        self, src: np.ndarray, dst: np.ndarray, amount: np.ndarray, axis: np.ndarray
    ) -> np.ndarray:
        """:meth:`cost` of moves between cells that differ in variable ``axis`` only.

        Such a move changes exactly the controlled tables that hold the variable
        (in each, its two cells differ), so its cost is the larger of two terms,
        one of each cell: ``max_k |dev_k(src) - amount| - allowance`` and
        ``max_k |dev_k(dst) + amount| - allowance`` over those tables ``k``. The
        terms are computed once per cell involved (for ``amount`` 1 and 2) and
        gathered per move: a cell is in many moves, so far fewer array
        operations than :meth:`cost` per move, with the same result.
        """
        if len(src) == 0:
            return np.zeros(0, dtype=np.int64)
        mark = np.zeros(len(self.y), dtype=bool)
        mark[src] = True
        mark[dst] = True
        needed = np.flatnonzero(mark)
        where = np.zeros(len(self.y), dtype=np.int64)
        where[needed] = np.arange(len(needed))
        leave, enter = self._terms(needed)
        # terms[direction, amount - 1, axis, cell]: direction 0 leaving the cell, 1 entering it
        terms = np.full((2, 2, len(self.shape), len(needed)), NO_TABLE, dtype=np.int64)
        for a, tables in enumerate(self.tables_of_axis):
            if len(tables):
                terms[0, :, a] = leave[:, tables].max(axis=1)
                terms[1, :, a] = enter[:, tables].max(axis=1)
        return np.maximum(
            terms[0, amount - 1, axis, where[src]], terms[1, amount - 1, axis, where[dst]]
        )

    def _terms(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Excess after a move of 1 or 2 records, per controlled table and cell.

        ``leave[m - 1, k, i]`` is ``|dev - m| - allowance`` of cell ``cells[i]``'s
        controlled cell in table ``k`` (``m`` records leave it), ``enter`` the
        same with ``+ m``.
        """
        keys = self.flat_keys[:, cells]
        dev, extra = self.flat_dev[keys], self.flat_allowance[keys]
        leave = np.stack([np.abs(dev - m) - extra for m in (1, 2)])
        enter = np.stack([np.abs(dev + m) - extra for m in (1, 2)])
        return leave, enter

    def entering(self) -> np.ndarray:
        """``[m - 1, cell]``: the largest excess over the controlled tables if ``m`` records enter the cell.

        An upper bound of the destination's part of :meth:`cost` (a table in
        which both cells of a move fall into the same controlled cell is not
        changed by it).
        """
        dev, extra = self.flat_dev[self.flat_keys], self.flat_allowance[self.flat_keys]
        return np.stack([(np.abs(dev + m) - extra).max(axis=0, initial=NO_TABLE) for m in (1, 2)])

    def cost_one(self, src: int, dst: int, amount: int) -> int:
        """:meth:`cost` of one move, in plain Python (no array set-up per controlled table)."""
        worst = NO_TABLE
        dev, extra = self.flat_dev, self.flat_allowance
        for a, b in zip(
            self.flat_keys[:, src].tolist(), self.flat_keys[:, dst].tolist(), strict=True
        ):
            if a != b:
                worst = max(
                    worst,
                    abs(int(dev[a]) - amount) - int(extra[a]),
                    abs(int(dev[b]) + amount) - int(extra[b]),
                )
        return int(worst)

    def apply(self, src: int, dst: int, amount: int) -> None:
        a, b = self.flat_keys[:, src], self.flat_keys[:, dst]
        moved = a != b
        self.flat_dev[a[moved]] -= amount  # one cell per table: no repeated position
        self.flat_dev[b[moved]] += amount
        self.y[src] -= amount
        self.y[dst] += amount
        self.moves.append((src, dst, amount))

    def max_deviation(self) -> int:
        return int(np.abs(self.flat_dev).max(initial=0))

    def max_excess(self) -> int:
        """The largest ``|deviation| - allowance``: the bound ``b`` the solution meets."""
        return int((np.abs(self.flat_dev) - self.flat_allowance).max(initial=0))

    def violations(self, target: int) -> list[tuple[int, int]]:
        """``(table, controlled cell)`` of every cell whose excess is above ``target``, in order."""
        where = np.flatnonzero(np.abs(self.flat_dev) - self.flat_allowance > target)
        table = np.searchsorted(self.offsets, where, side="right") - 1
        return list(zip(table.tolist(), (where - self.offsets[table]).tolist(), strict=True))

    def lookup(self, linear: np.ndarray) -> np.ndarray:
        """Positions among the non-empty cells of linear cell ids; -1 where a cell never held records."""
        where = np.searchsorted(self.ids, linear)
        where = np.minimum(where, len(self.ids) - 1)
        return np.where(self.ids[where] == linear, where, -1)

    def neighbours(self, cell: int) -> np.ndarray:
        """Non-empty elementary cells differing from ``cell`` in exactly one variable."""
        out = []
        for order, sorted_key, key in self._groups:
            lo, hi = np.searchsorted(sorted_key, [key[cell], key[cell] + 1])
            out.append(order[lo:hi])
        if not out:
            return np.array([], dtype=np.int64)
        found = np.concatenate(out)
        return found[found != cell]

    def members(self, k: int, cell: int) -> np.ndarray:
        """Non-empty elementary cells inside controlled cell ``cell`` of table ``k``."""
        if k not in self._members:
            key = self.keys[k]
            order = np.argsort(key, kind="stable")
            self._members[k] = (key[order], order)
        keys, order = self._members[k]
        lo, hi = np.searchsorted(keys, [cell, cell + 1])
        return order[lo:hi]


#: Cells drawn per unsafe cell that no neighbour helps, when all are costed at once.
BATCH_SAMPLE = 32
#: Draws shared out among the unsafe cells no neighbour helps, in one sweep.
LONELY_DRAWS = 200_000
#: Moves to drawn cells kept per unsafe cell (the best by an upper bound of their cost).
EXACT_DRAWN = 8
#: A pass that makes at most this share of the unsafe cells safe has stagnated: the bound rises.
STAGNANT = 0.03
#: Moves tried per unsafe cell in one pass of the first phase (its cheapest first).
TRIES = 4
#: Moves costed at once in the first phase (bounds its memory).
COST_CHUNK = 100_000


def _batch_options(
    state: _State, cells: np.ndarray, rng: np.random.Generator, sample: int, pool: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Moves that make each unsafe cell safe without creating another.

    ``src, dst, amount, owner, axis``: ``owner`` is each move's position in
    ``cells``, ``axis`` the one variable in which a neighbour differs (-1 for
    a cell drawn at random). A cell is emptied into a
    neighbouring cell (one variable different) that then holds at least 3,
    or filled up to 3 from a neighbour that keeps at least 3 (or is
    emptied). A cell no neighbour helps gets cells of ``pool`` drawn at
    random (with replacement) that can take its records: ``LONELY_DRAWS``
    shared out among such cells, at least ``BATCH_SAMPLE`` and at most ``4 *
    sample`` each; of these, the ``EXACT_DRAWN`` with the smallest excess after
    the records enter them (:meth:`_State.entering`, an upper bound of the
    cost) are kept.
    """
    c_all = state.y[cells]
    owners, near, axes = [], [], []
    for axis, (order, sorted_key, key) in enumerate(state._groups):
        k = key[cells]
        lo = np.searchsorted(sorted_key, k, side="left")
        counts = np.searchsorted(sorted_key, k, side="right") - lo
        own = np.repeat(np.arange(len(cells)), counts)
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        found = order[np.repeat(lo, counts) + offsets]
        keep = found != cells[own]
        owners.append(own[keep])
        near.append(found[keep])
        axes.append(np.full(int(keep.sum()), axis, dtype=np.int64))
    own = np.concatenate(owners)
    nb = np.concatenate(near)
    along = np.concatenate(axes)
    c = c_all[own]
    need = 3 - c
    yn = state.y[nb]
    into = (yn >= 1) & (yn + c >= 3)
    fill = (yn - need >= 3) | (yn == need)
    src = [cells[own[into]], nb[fill]]
    dst = [nb[into], cells[own[fill]]]
    amount = [c[into], need[fill]]
    owner = [own[into], own[fill]]
    axis_of = [along[into], along[fill]]
    helped = np.zeros(len(cells), dtype=bool)
    helped[own[into | fill]] = True
    lonely = np.flatnonzero(~helped)
    if len(lonely) and len(pool):
        # a few lonely cells get up to 4 * sample draws each, many of them BATCH_SAMPLE
        draws = min(4 * sample, max(BATCH_SAMPLE, LONELY_DRAWS // len(lonely)))
        # the drawn cells ranked by an upper bound of their cost (the excess if the records
        # enter them, every table counted); only each cell's EXACT_DRAWN best are costed
        entering = state.entering()
        keep = min(EXACT_DRAWN, draws)
        for part in np.array_split(lonely, max(1, len(lonely) * draws // 2_000_000)):
            drawn = pool[rng.integers(0, len(pool), size=(len(part), draws))]
            y = state.y[drawn]
            cp = c_all[part][:, None]
            ok = (y >= 1) & (y + cp >= 3) & (drawn != cells[part][:, None])
            rough = np.where(ok, entering[cp - 1, drawn], np.iinfo(np.int64).max)
            best = np.argpartition(rough, keep - 1, axis=1)[:, :keep]
            rows = np.repeat(np.arange(len(part)), keep)
            cols = best.ravel()
            valid = ok[rows, cols]
            rows, cols = rows[valid], cols[valid]
            src.append(cells[part][rows])
            dst.append(drawn[rows, cols])
            amount.append(c_all[part][rows])
            owner.append(part[rows])
            axis_of.append(np.full(len(rows), -1, dtype=np.int64))
    return (
        np.concatenate(src),
        np.concatenate(dst),
        np.concatenate(amount),
        np.concatenate(owner),
        np.concatenate(axis_of),
    )


def _option_costs(
    state: _State, src: np.ndarray, dst: np.ndarray, amount: np.ndarray, axis: np.ndarray
) -> np.ndarray:
    """The cost of every move: neighbours' by :meth:`_State.cost_along`, drawn cells' by :meth:`_State.cost`."""
    cost = np.empty(len(src), dtype=np.int64)
    near = axis >= 0
    cost[near] = state.cost_along(src[near], dst[near], amount[near], axis[near])
    far = np.flatnonzero(~near)
    for i in range(0, len(far), COST_CHUNK):
        part = far[i : i + COST_CHUNK]
        cost[part] = state.cost(src[part], dst[part], amount[part])
    return cost


def _still_valid(state: _State, s: int, src: int, dst: int, amount: int) -> bool:
    """Whether a move chosen for unsafe cell ``s`` earlier in the pass still makes it safe."""
    y = state.y
    if src == s:  # empty s into dst
        return bool(y[s] == amount and y[dst] >= 1 and y[dst] + amount >= 3)
    return bool(y[s] + amount == 3 and (y[src] - amount >= 3 or y[src] == amount))


def _visit(
    state: _State,
    cells: np.ndarray,
    bound: int,
    rng: np.random.Generator,
    sample: int,
    pool: np.ndarray,
) -> tuple[int, int]:
    """One pass over the unsafe ``cells``: ``(moves made, cheapest cost)``.

    Every cell's moves are costed at once; the cells are visited in the
    order of their cheapest move (ties at random) and that move is made when
    it is still valid and within ``bound`` (checked in plain Python over the
    flat deviations). A cell whose move earlier moves of the pass made
    invalid or dearer than the bound tries its next cheapest moves (``TRIES``
    in all, each checked the same way, none costed afresh), else waits for
    the next pass, which costs it afresh with the others: no cell is costed
    alone. ``cheapest`` is the cheapest move when the pass made none.
    """
    src, dst, amount, owner, axis = _batch_options(state, cells, rng, sample, pool)
    cost = _option_costs(state, src, dst, amount, axis)
    # each cell's moves cheapest first (ties at random), the cells by their cheapest move
    order = np.lexsort((rng.random(len(cost)), cost, owner))
    heads = (
        np.flatnonzero(np.r_[True, owner[order][1:] != owner[order][:-1]]) if len(order) else order
    )
    first = order[heads]
    visit = np.lexsort((rng.random(len(first)), cost[first]))
    if len(first) == 0 or cost[first[visit[0]]] > bound:
        return 0, int(cost[first[visit[0]]]) if len(first) else np.iinfo(np.int64).max
    visit = visit[cost[first[visit]] <= bound]
    ends = np.r_[heads[1:], len(order)]
    # a cell whose cheapest move an earlier move of the pass made invalid or dearer than
    # the bound tries its next moves (up to TRIES in all, each checked afresh)
    span = np.minimum(ends - heads, TRIES)
    made = 0
    y = state.y
    cost_o, src_o, dst_o, amount_o = (v[order].tolist() for v in (cost, src, dst, amount))
    for s, head, n in zip(
        cells[owner[first[visit]]].tolist(),
        heads[visit].tolist(),
        span[visit].tolist(),
        strict=True,
    ):
        for j in range(head, head + n):
            if y[s] != 1 and y[s] != 2:
                break  # made safe by an earlier move of the pass
            if cost_o[j] > bound:
                break
            move = (src_o[j], dst_o[j], amount_o[j])
            if _still_valid(state, s, *move) and state.cost_one(*move) <= bound:
                state.apply(*move)
                made += 1
                break
    return made, 0


def _first_feasible(
    state: _State, bound: int, limit: int, rng: np.random.Generator, history: list, sample: int
) -> tuple[int, int]:
    """Phase 1: every unsafe cell's options costed at once, the cells moved cheapest first.

    Passes (:func:`_visit`) over every unsafe cell until none is left; the
    bound rises (the paper's ``b = b + 1``) when a pass stagnates: it made no
    move (the bound then rises straight to the cheapest move found, skipping
    the passes in between that could make none), or it made safe at most
    ``STAGNANT`` of the unsafe cells (the bound rises by one while below
    ``limit``). The second rule cuts the long tails of passes that each make
    one or two moves at a bound the first moves have filled up (since session
    11). The first move of a pass is always made when it is within the bound
    (nothing has changed since it was costed); every move makes at least one
    unsafe cell safe and none unsafe, so the phase ends. Returns the bound
    reached and the number of passes.
    """
    passes = 0
    while True:
        unsafe = np.flatnonzero((state.y == 1) | (state.y == 2))
        if len(unsafe) == 0:
            return bound, passes
        pool = np.flatnonzero(state.y >= 1)
        made, cheapest = _visit(state, unsafe, bound, rng, sample, pool)
        passes += 1
        if made == 0:
            bound = max(bound + 1, min(cheapest, limit + 1))
            history.append(("raised", bound))
        elif made <= STAGNANT * len(unsafe) and bound < limit:
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
    """Moves of one record between safe elementary cells that shift controlled cell ``cell``.

    A move changes one variable of controlled table ``k`` of a record inside
    ``cell`` (out of it when the cell has too many, into it from outside
    when too few); both elementary cells keep at least 3. All the
    candidates are built at once from the linear cell positions.
    """
    axes = state.subtables[k]
    inside = state.members(k, cell)
    inside = inside[state.y[inside] >= (4 if too_many else 3)]
    if len(inside) > sample:
        inside = rng.choice(inside, sample, replace=False)
    strides = np.cumprod((*state.shape[1:], 1)[::-1])[::-1]
    src_list, dst_list = [], []
    for axis in axes:
        own = state.coords[axis, inside]  # the same category for every cell inside
        categories = np.arange(state.shape[axis], dtype=np.int64)
        if len(own):
            categories = categories[categories != own[0]]
        linear = state.ids[inside][:, None] + (categories[None, :] - own[:, None]) * int(
            strides[axis]
        )
        outside = state.lookup(linear.ravel())
        here = np.repeat(inside, len(categories))
        exists = outside >= 0
        here, there = here[exists], outside[exists]
        if too_many:
            ok = state.y[there] >= 3
            src_list.append(here[ok])
            dst_list.append(there[ok])
        else:
            ok = state.y[there] >= 4
            src_list.append(there[ok])
            dst_list.append(here[ok])
    if not src_list:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    return np.concatenate(src_list), np.concatenate(dst_list)


def _optimise(
    state: _State, rng: np.random.Generator, max_rounds: int | None, history: list, sample: int
) -> str:
    """Phase 2: lower the bound one round at a time; why it stopped.

    ``"bound 0"`` (nothing left to lower), ``"repair failed"`` (a controlled
    cell above the next bound found no move within it: the usual end) or
    ``"round limit"`` (``max_rounds`` rounds made, the bound might go lower).
    """
    best_moves = len(state.moves)
    best_max = state.max_excess()
    snapshot = (state.y.copy(), state.flat_dev.copy())
    rounds = 0
    stop = "repair failed"
    while True:
        target = best_max - 1
        if target < 0:
            stop = "bound 0"
            break
        if max_rounds is not None and rounds >= max_rounds:
            stop = "round limit"
            break
        rounds += 1
        repaired = True
        for _sweep in range(10 * (best_max + 1)):
            violations = state.violations(target)
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
            repaired = state.max_excess() <= target
        if repaired and state.max_excess() <= target:
            best_max = state.max_excess()
            best_moves = len(state.moves)
            snapshot = (state.y.copy(), state.flat_dev.copy())
            history.append(("tightened", best_max))
        else:
            break
    state.y = snapshot[0]
    state.flat_dev[:] = snapshot[1]
    del state.moves[best_moves:]
    return stop


def _cell_allowance(
    cell_weights: float | Callable[[np.ndarray], np.ndarray] | None, original: np.ndarray
) -> np.ndarray:
    """The per-cell weights ``w`` of a controlled table from its original counts."""
    if cell_weights is None:
        return np.zeros(len(original), dtype=np.int64)
    if callable(cell_weights):
        given = np.asarray(cell_weights(original), dtype=np.float64)
        if given.shape != original.shape or not np.isfinite(given).all() or (given < 0).any():
            raise ParameterError(
                "cell_weights must return one finite, non-negative weight per controlled cell"
            )
        return np.floor(given).astype(np.int64)
    scale = float(cell_weights)
    if not np.isfinite(scale) or scale < 0:
        raise ParameterError(f"cell_weights must be a non-negative number, got {cell_weights!r}")
    return np.floor(scale * np.sqrt(original)).astype(np.int64)


def safe_perturb(
    microdata: pd.DataFrame,
    controlled_tables: Sequence[Sequence[str]],
    *,
    variables: Sequence[str] | None = None,
    max_deviation_start: int = 1,
    bounds: Sequence[int] | None = None,
    cell_weights: float | Callable[[np.ndarray], np.ndarray] | None = None,
    max_deviation_limit: int = 50,
    optimise: bool = True,
    max_rounds: int | None = None,
    repair_sample: int = 256,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> SafeResult:
    """Protect microdata so that no table of their variables has a cell of 1 or 2.

    Giessing & Höhne (2011), Section 2 (the SAFE model (1) and the
    heuristic phases (2) and (3)). Only the non-empty cells of the elementary
    table are held (``stats["elementary_cells_nonempty"]`` of
    ``stats["elementary_cells_possible"]``): every move goes into a cell that
    holds records, so the full cross-classification is never built.

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
    bounds : (int, int), optional
        The two-valued bound set ``B`` of model (2): the initial bound for
        cells of one variable and for cross-classified cells (two or more
        variables); replaces ``max_deviation_start``. Both rise together when
        the first phase stagnates and fall together in the second.
    cell_weights : float or callable, optional
        The per-cell weights ``w`` of models (1)-(2): controlled cell ``i`` may
        deviate by ``w_i + b_i``. A number ``s`` gives ``w_i = floor(s *
        sqrt(a_i))`` for the original count ``a_i`` (larger perturbations for
        larger cells, the paper's example); a callable maps the original
        counts of a controlled table to whole, non-negative ``w``. The
        objective printed in (1), ``max(|d_i| + w_i)``, is read as
        ``max(|d_i| - w_i)``, the deviation beyond each cell's allowance, which
        is what constraint (2), ``|Ay - a| < w + b``, bounds (a misprint in
        the sign, we take it).
    max_deviation_limit : int, default 50
        Give up (InfeasibleError) if the bound must exceed this.
    optimise : bool, default True
        Run phase 2 (tighten the bound after the first feasible solution).
    max_rounds : int, optional
        At most this many tightening rounds in phase 2 (each lowers the bound
        by at least one). By default phase 2 runs until a round fails (a
        controlled cell above the next bound that no record move can bring
        within it), which is its natural end; a run stopped by the limit says
        so (``stats["phase2_stop"]`` and the summary).
    repair_sample : int, default 256
        Elementary cells examined per repair in phase 2, and per unsafe cell
        in phase 1 when no neighbouring cell can take or give its records
        (a random sample of all the cells that can).
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
    if max_rounds is not None:
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
    n_possible = int(np.prod(np.array(shape, dtype=object)))
    if n_possible > MAX_POSSIBLE_CELLS:
        raise ParameterError(
            f"the elementary table of {variables} has {n_possible} possible cells (more than "
            "2^62); use fewer or coarser variables"
        )
    # sparse: the non-empty elementary cells only (the paper's table has ~5 * 10^8 cells)
    ids, cell, counts = np.unique(
        np.ravel_multi_index(codes, shape), return_inverse=True, return_counts=True
    )
    cell = cell.ravel()
    n_cells = len(ids)
    position = {v: i for i, v in enumerate(variables)}
    subtables = sorted(
        {
            tuple(sorted(position[v] for v in sub))
            for t in tables
            for r in range(1, len(t) + 1)
            for sub in itertools.combinations(t, r)
        }
    )
    if bounds is None:
        b_one = b_cross = check_int(max_deviation_start, "max_deviation_start", minimum=0)
    else:
        if isinstance(bounds, (int, str)) or len(bounds) != 2:
            raise ParameterError(
                f"bounds must be two integers (one-variable cells, cross-classified cells), got {bounds!r}"
            )
        b_one = check_int(bounds[0], "bounds[0]", minimum=0)
        b_cross = check_int(bounds[1], "bounds[1]", minimum=0)
    start = b_cross
    limit = check_int(max_deviation_limit, "max_deviation_limit", minimum=max(b_one, b_cross))
    coords = np.array(np.unravel_index(ids, shape), dtype=np.int64).reshape(len(shape), -1)
    allowance = []
    for sub_axes in subtables:
        sub_shape = tuple(shape[a] for a in sub_axes)
        key = np.ravel_multi_index(tuple(coords[a] for a in sub_axes), sub_shape)
        original = np.bincount(key, weights=counts, minlength=int(np.prod(sub_shape)))
        extra = _cell_allowance(cell_weights, original)
        if len(sub_axes) == 1:
            extra = extra + (b_one - b_cross)  # B: a bound of its own for one-variable cells
        allowance.append(extra)
    state = _State(ids, counts.astype(np.int64), shape, subtables, allowance)
    unsafe_before = int(((counts == 1) | (counts == 2)).sum())
    history: list[tuple[str, int]] = [("start", start)]
    feasible_bound, passes = _first_feasible(state, start, limit, rng, history, repair_sample)
    if progress is not None:
        progress(1, 2)
    phase2_stop = "not run"
    if optimise:
        phase2_stop = _optimise(state, rng, max_rounds, history, repair_sample)
    if progress is not None:
        progress(2, 2)

    # realise the cell moves on records: each move takes records now in src
    order = rng.permutation(len(cell))
    order = order[np.argsort(cell[order], kind="stable")]
    edges = np.searchsorted(cell[order], np.arange(n_cells + 1))
    stacks: dict[int, list[int]] = {}
    new_cell = cell.copy()
    for src, dst, amount in state.moves:
        if src not in stacks:
            stacks[src] = order[edges[src] : edges[src + 1]].tolist()
        if dst not in stacks:
            stacks[dst] = order[edges[dst] : edges[dst + 1]].tolist()
        moving = [stacks[src].pop() for _ in range(amount)]
        stacks[dst].extend(moving)
        new_cell[moving] = dst
    new_codes = np.unravel_index(ids[new_cell], shape)
    out = data.copy()
    changed_vars = np.zeros(len(data), dtype=np.int64)
    per_variable: dict[str, int] = {}
    for axis, v in enumerate(variables):
        differs = new_codes[axis] != codes[axis]
        changed_vars += differs
        per_variable[str(v)] = int(differs.sum())
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
        "changed_per_variable": per_variable,
        "moves": len(state.moves),
        "max_abs_deviation": state.max_deviation(),
        "max_abs_deviation_by_table": by_table,
        "bound_history": history,
        "feasible_bound": feasible_bound,
        "max_abs_excess": state.max_excess(),
        "elementary_cells_possible": n_possible,
        "elementary_cells_nonempty": n_cells,
        "phase1_passes": passes,
        "phase2_stop": phase2_stop,
    }
    params = {
        "controlled_tables": [list(t) for t in tables],
        "variables": list(variables),
        "max_deviation_start": start,
        "max_deviation_limit": limit,
        "optimise": optimise,
        "max_rounds": max_rounds,
        "bounds": (b_one, b_cross),
        "cell_weights": cell_weights
        if cell_weights is None or isinstance(cell_weights, float | int)
        else "callable",
    }
    return SafeResult(data=out, diagnostics=diagnostics, params=params, stats=stats)
