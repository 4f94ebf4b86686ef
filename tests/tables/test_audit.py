"""The attacker's intervals of suppressed cells against brute-force enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.tables import audit, audit_suppression
from sdckit.tables.audit import attacker_intervals
from sdckit.tables.tabulate import TableStructure


def small_table(
    seed: int, leaves: tuple[int, ...], hierarchies: dict | None = None
) -> tuple[TableStructure, np.ndarray]:
    """A random table of small counts (margins included) and its structure."""
    rng = np.random.default_rng(seed)
    structure = TableStructure.from_categories(
        [f"v{a}" for a in range(len(leaves))],
        [[f"c{i}" for i in range(n)] for n in leaves],
        hierarchies=hierarchies,
    )
    inner = rng.integers(0, 4, size=leaves)
    return structure, structure.aggregate(inner).ravel().astype(np.float64)


def brute_force(structure: TableStructure, values: np.ndarray, hidden: np.ndarray) -> dict:
    """Min and max of every hidden cell over all integer tables matching the published cells."""
    inner = np.flatnonzero(structure.inner_mask())
    n_inner = len(inner)
    # column k: the whole table made from a 1 in inner cell k
    operator = np.stack(
        [
            structure.aggregate(np.eye(n_inner)[k].reshape(structure.leaf_shape)).ravel()
            for k in range(n_inner)
        ],
        axis=1,
    )
    free = [k for k, cell in enumerate(inner) if hidden[cell]]
    # an inner cell is at most any published cell it adds into (cells are >= 0)
    caps = [
        int(min(values[c] for c in np.flatnonzero(operator[:, k]) if not hidden[c])) for k in free
    ]
    combos = np.array(list(itertools.product(*[range(c + 1) for c in caps])), dtype=float)
    trials = np.tile(values[inner], (len(combos), 1))
    trials[:, free] = combos
    full = trials @ operator.T
    fits = np.all(full[:, ~hidden] == values[~hidden], axis=1)
    return {int(c): [full[fits, c].min(), full[fits, c].max()] for c in np.flatnonzero(hidden)}


def random_hidden(structure: TableStructure, seed: int, n_inner: int) -> np.ndarray:
    """Some hidden inner cells and margins; the grand total stays published (bounded cells)."""
    rng = np.random.default_rng(seed)
    hidden = np.zeros(structure.n_cells, dtype=bool)
    inner = np.flatnonzero(structure.inner_mask())
    hidden[rng.choice(inner, size=n_inner, replace=False)] = True
    margins = np.flatnonzero(~structure.inner_mask())[:-1]
    hidden[rng.choice(margins, size=min(2, len(margins)), replace=False)] = True
    return hidden


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "leaves, hierarchies",
    [((2, 3), None), ((3, 3), None), ((4,), {"v0": {"g": ["c0", "c1"]}})],
)
def test_intervals_equal_brute_force(seed: int, leaves: tuple, hierarchies: dict | None) -> None:
    # two-way tables and one-way hierarchies have totally unimodular relations:
    # the LP's extreme points are integer tables, so enumeration gives the same interval
    structure, values = small_table(seed, leaves, hierarchies)
    hidden = random_hidden(structure, seed, n_inner=min(4, int(np.prod(leaves)) - 1))
    relations, _ = structure.relations()
    lower, upper, solves = attacker_intervals(relations, values, hidden)
    truth = brute_force(structure, values, hidden)
    assert solves == 2 * hidden.sum()
    for k, cell in enumerate(np.flatnonzero(hidden)):
        assert lower[k] == pytest.approx(truth[int(cell)][0], abs=1e-7)
        assert upper[k] == pytest.approx(truth[int(cell)][1], abs=1e-7)
        assert lower[k] <= values[cell] <= upper[k]


def tidy(structure: TableStructure, values: np.ndarray, hidden: np.ndarray) -> pd.DataFrame:
    frame = structure.labels()
    frame["count"] = values.astype(np.int64)
    frame["suppressed"] = hidden
    frame.attrs["structure"] = structure
    return frame


def test_single_suppressed_cell_is_exposed_and_rectangle_is_not() -> None:
    structure = TableStructure.from_categories(["a", "b"], [["x", "y"], ["u", "v"]])
    values = structure.aggregate(np.array([[1, 4], [5, 6]])).ravel().astype(float)
    one = np.zeros(structure.n_cells, dtype=bool)
    one[0] = True
    result = audit_suppression(tidy(structure, values, one))
    assert result.stats["exposed"] == 1 and result.stats["exact"] == 1
    assert result.summary().startswith("1 of the 1 suppressed cells are NOT protected")
    rectangle = np.zeros(structure.n_cells, dtype=bool)
    rectangle[[0, 1, 3, 4]] = True  # (x,u), (x,v), (y,u), (y,v) in a 3x3 grid with margins
    result = audit_suppression(tidy(structure, values, rectangle))
    cells = result.cells.set_index(["a", "b"])
    assert (cells.loc[("x", "u"), ["lower", "upper"]].to_list()) == [0.0, 5.0]
    assert result.stats["exposed"] == 0
    assert result.summary().startswith("none of the 4 suppressed cells can be recomputed exactly")
    # a required protection of 90% of the value is more than the rectangle gives the 6
    strict = audit_suppression(tidy(structure, values, rectangle), protection=0.9)
    assert strict.stats["exposed"] >= 1


def test_published_table_from_another_tool_is_read() -> None:
    structure = TableStructure.from_categories(["a", "b"], [["x", "y"], ["u", "v"]])
    values = structure.aggregate(np.array([[1, 4], [5, 6]])).ravel()
    truth = tidy(structure, values, np.zeros(structure.n_cells, dtype=bool)).drop(
        columns="suppressed"
    )
    published = truth[["a", "b"]].copy()
    published["published"] = pd.array(values, dtype="Int64")
    published.loc[0, "published"] = pd.NA
    result = audit_suppression(truth, published)
    assert result.stats["suppressed"] == 1 and result.stats["exposed"] == 1
    with pytest.raises(DataError, match="no 'suppressed' column"):
        audit_suppression(truth)
    with pytest.raises(ParameterError, match="protection"):
        audit_suppression(truth, published, protection=-1.0)


@pytest.fixture(params=[False, True], ids=["simplex", "afresh"])
def afresh(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways the settled audit solves its LPs: from the previous basis, or each afresh
    (presolve and interior point, as for a large component), here forced on small tables."""
    if request.param:
        monkeypatch.setattr("sdckit.tables.audit.LARGE_COMPONENT", 0)
    return bool(request.param)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("protection", [None, 0.3, 0.9])
def test_settled_audit_gives_the_exact_audit_verdict(
    seed: int, protection: float | None, afresh: bool
) -> None:
    # intervals="settle" solves fewer LPs; each of its intervals lies inside the exact one,
    # and which cells are exposed is the same (whichever way its LPs are solved)
    structure, values = small_table(seed, (4, 3), {"v0": {"g": ["c0", "c1"]}})
    hidden = random_hidden(structure, seed, n_inner=5)
    frame = tidy(structure, values, hidden)
    frame["primary"] = False
    frame.loc[np.flatnonzero(hidden)[:3], "primary"] = True
    exact = audit_suppression(frame, protection=protection).cells
    settled_result = audit_suppression(frame, protection=protection, intervals="settle")
    settled = settled_result.cells
    assert (exact["exposed"] == settled["exposed"]).all()
    assert (exact["interval"] == "exact").all()
    inner = settled["interval"] == "inner bound"
    assert (settled["lower"][inner] >= exact["lower"][inner] - 1e-7).all()
    assert (settled["upper"][inner] <= exact["upper"][inner] + 1e-7).all()
    same = settled["interval"] == "exact"
    assert np.allclose(settled["lower"][same], exact["lower"][same])
    assert np.allclose(settled["upper"][same], exact["upper"][same])
    assert settled_result.stats["lp_solves"] <= 2 * hidden.sum() + 2 * 40 + 1
    with pytest.raises(ParameterError, match="intervals"):
        audit_suppression(frame, intervals="fast")


def test_deviations_that_break_a_relation_settle_nothing() -> None:
    # a single suppressed cell is exposed; a "deviation" moving it alone breaks its row and
    # column sums, so it is refused and the verdict stays
    structure = TableStructure.from_categories(["a", "b"], [["x", "y"], ["u", "v"]])
    values = structure.aggregate(np.array([[1, 4], [5, 6]])).ravel().astype(float)
    one = np.zeros(structure.n_cells, dtype=bool)
    one[0] = True
    frame = tidy(structure, values, one)
    frame["primary"] = one
    bogus = [(np.array([0]), np.array([1]))]
    result = audit_suppression(frame, intervals="settle", deviations=bogus)
    assert result.stats["exposed"] == 1 and result.cells["exact"].all()
    # the rectangle's alternating move keeps every relation: it settles the cells, no LP
    rectangle = np.zeros(structure.n_cells, dtype=bool)
    rectangle[[0, 1, 3, 4]] = True
    frame = tidy(structure, values, rectangle)
    frame["primary"] = rectangle
    frame["upper_protection"] = np.where(rectangle, 1.0, 0.0)
    cube = [(np.array([0, 1, 3, 4]), np.array([1, -1, -1, 1]))]
    settled = audit_suppression(frame, intervals="settle", deviations=cube)
    assert settled.stats["exposed"] == 0 and settled.stats["lp_solves"] == 0
    lone = settled.cells.set_index(["a", "b"]).loc[("x", "u")]
    assert [lone["lower"], lone["upper"]] == [0.0, 5.0]
    # ... but a deviation through a published cell is refused: the LPs decide
    through = [(np.array([0, 1, 6, 7]), np.array([1, -1, -1, 1]))]
    again = audit_suppression(frame, intervals="settle", deviations=through)
    assert again.stats["exposed"] == 0 and again.stats["lp_solves"] > 0


@pytest.mark.parametrize("seed", range(6))
def test_hypercube_deviations_give_the_verdict_of_the_lps(seed: int, afresh: bool) -> None:
    from sdckit.tables import suppress

    structure, values = small_table(seed, (5, 4, 3), {"v0": {"g": ["c0", "c1"]}})
    frame = tidy(structure, values, np.zeros(structure.n_cells, dtype=bool)).drop(
        columns="suppressed"
    )
    result = suppress(frame, rules=["freq>=3"])  # its audit used the hypercubes
    plain = audit_suppression(result.internal, intervals="settle")  # LPs only
    exact = audit_suppression(result.internal)
    assert (result.audit.cells["exposed"] == exact.cells["exposed"]).all()
    assert (plain.cells["exposed"] == exact.cells["exposed"]).all()
    assert result.audit.stats["lp_solves"] <= plain.stats["lp_solves"]


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("cap, hops", [(3, 1), (6, 2), (12, 4)])
def test_local_restriction_and_relaxation_bracket_the_exact_interval(
    seed: int, cap: int, hops: int
) -> None:
    # the two local models of a large component, on small random tables: the restriction
    # (cells outside the neighbourhood fixed at their true values) gives an interval inside
    # the exact one, the relaxation (relations leaving the neighbourhood dropped) one around it
    structure, values = small_table(seed, (3, 3, 2))
    hidden = random_hidden(structure, seed, n_inner=8)
    relations, _ = structure.relations()
    lo, hi, _ = attacker_intervals(relations, values, hidden)
    columns = np.flatnonzero(hidden)
    matrix = relations.tocsr()
    sub = matrix[:, columns].tocsr()
    rows = np.flatnonzero(np.diff(sub.indptr) > 0)
    sub = sub[rows].tocsr()
    rhs = -(matrix[rows] @ np.where(hidden, 0.0, values))
    ub = np.full(len(columns), np.inf)
    for k in range(len(columns)):
        near = audit.relation_neighbourhood(sub, sub.tocsc(), k, hops, cap)
        assert k in near and len(near) <= cap
        (a, b), (c, d), _ = audit._local_intervals(sub, rhs, ub, values[columns], k, near)
        assert lo[k] - 1e-7 <= a <= values[columns[k]] <= b <= hi[k] + 1e-7
        assert c <= lo[k] + 1e-7 and d >= hi[k] - 1e-7


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("protection", [0.3, 0.9])
def test_local_certificates_give_the_exact_audit_verdict(
    seed: int, protection: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every component treated as large, with small neighbourhoods: the cells the local LPs
    # settle keep the exact audit's verdict, inner bounds inside and outer bounds around it
    monkeypatch.setattr(audit, "LOCAL_COMPONENT", 0)
    monkeypatch.setattr(audit, "LOCAL_CELLS", 5)
    monkeypatch.setattr(audit, "LOCAL_HOPS", 2)
    structure, values = small_table(seed, (4, 3, 2))
    hidden = random_hidden(structure, seed, n_inner=9)
    frame = tidy(structure, values, hidden)
    frame["primary"] = False
    frame.loc[np.flatnonzero(hidden)[:5], "primary"] = True
    exact = audit_suppression(frame, protection=protection).cells
    local = audit_suppression(frame, protection=protection, intervals="settle").cells
    assert (exact["exposed"] == local["exposed"]).all()
    inner = local["interval"] == "inner bound"
    assert (local["lower"][inner] >= exact["lower"][inner] - 1e-7).all()
    assert (local["upper"][inner] <= exact["upper"][inner] + 1e-7).all()
    outer = local["interval"] == "outer bound"
    assert (local["lower"][outer] <= exact["lower"][outer] + 1e-7).all()
    assert (local["upper"][outer] >= exact["upper"][outer] - 1e-7).all()
    assert local["exposed"][outer].all()


@pytest.mark.parametrize("seed", range(4))
def test_local_certificates_on_hypercube_patterns(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # protected patterns (the hypercube method's), audited from the true table alone with
    # every component treated as large: the local LPs keep the verdict of the exact audit
    from sdckit.tables import suppress

    monkeypatch.setattr(audit, "LOCAL_COMPONENT", 0)
    monkeypatch.setattr(audit, "LOCAL_CELLS", 400)  # the restriction then settles cells too
    structure, values = small_table(seed, (5, 4, 3), {"v0": {"g": ["c0", "c1"]}})
    frame = tidy(structure, values, np.zeros(structure.n_cells, dtype=bool)).drop(
        columns="suppressed"
    )
    result = suppress(frame, rules=["freq>=3"])
    local = audit_suppression(result.internal, intervals="settle").cells
    exact = audit_suppression(result.internal).cells
    assert (local["exposed"] == exact["exposed"]).all()
    inner = local["interval"] == "inner bound"
    assert (local["lower"][inner] >= exact["lower"][inner] - 1e-7).all()
    assert (local["upper"][inner] <= exact["upper"][inner] + 1e-7).all()


def test_witnesses_hold_the_true_value_of_cells_no_direction_moves():
    """A hidden cell no deviation moves keeps its true value as a finite witness.

    Before session 9 it got ``inf`` / ``-inf``, and any large component holding such a
    cell skipped the local LPs for whole-component LPs (about 55 s each on the sparse
    10^5-cell table).
    """
    from scipy import sparse

    # one relation: c0 + c1 - c2 = 0 over three cells, a fourth cell in no relation
    matrix = sparse.csr_matrix(np.array([[1.0, 1.0, -1.0, 0.0]]))
    truth = np.array([2.0, 3.0, 5.0, 7.0])
    hidden = np.array([True, True, True, True])
    ub = np.full(4, np.inf)
    low, high = audit._deviation_witnesses(
        matrix, hidden, truth.copy(), truth, ub, [(np.array([0, 2]), np.array([1.0, 1.0]))]
    )
    assert np.isfinite(low).all() and np.isfinite(high).all()
    assert low[1] == high[1] == 3.0 and low[3] == high[3] == 7.0
    assert low[0] == 0.0 and high[0] > 2.0  # the moved cells still get their range
    # a true table the attacker cannot see as possible: nothing is witnessed
    low, high = audit._deviation_witnesses(matrix, hidden, truth.copy(), truth + 1, ub, [])
    assert np.isinf(low).all() and np.isinf(high).all()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("local", [False, True])
def test_audit_time_limit_never_claims_protection(
    seed: int, local: bool, afresh: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a cell the settled audit cannot settle within time_limit counts as exposed ("not
    # settled"): the verdict can only lose cells protected, never gain any
    if local:
        monkeypatch.setattr("sdckit.tables.audit.LOCAL_COMPONENT", 0)
    structure, values = small_table(seed, (4, 3), {"v0": {"g": ["c0", "c1"]}})
    hidden = random_hidden(structure, seed, n_inner=5)
    frame = tidy(structure, values, hidden)
    frame["primary"] = False
    frame.loc[np.flatnonzero(hidden)[:3], "primary"] = True
    exact = audit_suppression(frame, protection=0.3).cells
    for limit, none_left in ((1e-9, False), (600.0, True)):
        result = audit_suppression(frame, protection=0.3, intervals="settle", time_limit=limit)
        cells = result.cells
        left = (cells["interval"] == "not settled").to_numpy()
        assert result.stats["unsettled"] == int(left.sum())
        assert (cells["exposed"].to_numpy() | ~exact["exposed"].to_numpy()).all()
        assert cells.loc[left, "exposed"].all()
        assert (cells["exposed"] == exact["exposed"]).all() or not none_left
        if none_left:
            assert not left.any()
    # with no time at all, every cell asked is left: the true table alone moves none of them
    instant = audit_suppression(frame, protection=0.3, intervals="settle", time_limit=1e-9)
    asked = (frame["primary"] | (frame["count"] > 0)).to_numpy() & hidden
    assert instant.stats["unsettled"] == int(asked.sum()) > 0
    assert "NOT settled within the audit's time limit" in instant.summary()
