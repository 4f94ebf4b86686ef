from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from tables_constants import REGIONS

from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables import (
    TableStructure,
    add_record_keys,
    additivity,
    cell_key_perturb,
    design_ptable,
    restore_additivity,
    tabulate,
)


@pytest.fixture(scope="module")
def ptable():
    return design_ptable(3, 2.01)


def _assert_additive_without_small_cells(table: pd.DataFrame) -> None:
    """Every relation of the structure holds (a margin is the sum of its cells), no restored
    count is 1 or 2, and empty cells stay empty."""
    structure = table.attrs["structure"]
    matrix, _ = structure.relations()
    y = np.zeros(structure.n_cells)
    y[structure.cell_positions(table)] = table["restored"]
    assert np.array_equal(matrix @ y, np.zeros(matrix.shape[0]))
    assert not table["restored"].isin([1, 2]).any()
    assert (table.loc[table["count"] == 0, "restored"] == 0).all()


@pytest.mark.parametrize("method", ["two-stage", "joint", "elementary"])
def test_restored_table_is_additive_within_bounds(keyed, ptable, method):
    perturbed = cell_key_perturb(
        keyed, ptable, dims=["district", "age", "sex"], hierarchies=REGIONS
    ).internal
    before = perturbed.copy()
    result = restore_additivity(perturbed, max_deviation=3, method=method)
    pd.testing.assert_frame_equal(perturbed, before)
    table = result.internal
    assert "count" not in result.table and "cell_key" not in result.table
    _assert_additive_without_small_cells(table)
    assert (np.abs(table["restored"] - table["perturbed"]) <= 3).all()
    assert (table["restored"] >= 0).all()
    assert result.stats["max_abs_change"] <= 3
    assert "relations" in result.summary()


def test_already_additive_table_is_unchanged(census):
    table = tabulate(census, ["district", "sex"])
    assert not table["count"].isin([1, 2]).any()
    table = table.assign(perturbed=table["count"])
    result = restore_additivity(table, max_deviation=2)
    assert (result.table["restored"] == table["count"]).all()


def _one_way(values):
    return pd.DataFrame({"x": ["a", "b", "Total"], "perturbed": values, "count": values})


def test_infeasible_names_the_relation():
    # 3 and 3 may only become 3 or 4 (not 2), so the total 4 +- 1 cannot be met
    with pytest.raises(InfeasibleError, match="x='Total' is the sum of"):
        restore_additivity(_one_way([3, 3, 4]), dims=["x"], max_deviation=1)


def test_undeclared_hierarchy_rows_are_named_not_blamed_on_max_deviation(keyed, ptable):
    """Issue 24: restore without --hierarchies on a table with hierarchy rows advised raising
    max_deviation; the gap is a double count, and the message must say so."""
    perturbed = cell_key_perturb(keyed, ptable, dims=["district", "sex"], hierarchies=REGIONS)
    published = perturbed.table.astype({"district": str, "sex": str})
    published.attrs = {}  # as read back from a file
    with pytest.raises(InfeasibleError, match="hierarchies") as info:
        restore_additivity(published, dims=["district", "sex"])
    assert "max_deviation" not in str(info.value).split("(")[0]
    assert "raise max_deviation" not in str(info.value).lower()
    # with the hierarchy declared the same table restores
    ok = restore_additivity(published, dims=["district", "sex"], hierarchies=REGIONS)
    assert not ok.table["restored"].isin([1, 2]).any()


def test_restoring_the_true_counts_is_refused():
    with pytest.raises(ParameterError, match="true counts"):
        restore_additivity(_one_way([3, 3, 6]), dims=["x"], value="count")


def test_weights_steer_the_adjustment():
    # 4 + 4 != 10: either the total or the inner cells must move by 2 in all
    heavy_total = restore_additivity(
        _one_way([4, 4, 10]), dims=["x"], max_deviation=3, weights=np.array([1.0, 1.0, 100.0])
    )
    assert heavy_total.table["restored"].tolist()[2] == 10
    heavy_inner = restore_additivity(
        _one_way([4, 4, 10]), dims=["x"], max_deviation=3, weights=np.array([100.0, 100.0, 1.0])
    )
    assert heavy_inner.table["restored"].tolist()[:2] == [4, 4]


def test_errors():
    with pytest.raises(ParameterError):
        restore_additivity(_one_way([3, 3, 6]))
    full = TableStructure.from_table(_one_way([3, 3, 6]), ["x"])
    with pytest.raises(DataError, match="every cell"):
        restore_additivity(_one_way([3, 3, 6]).iloc[:2], full)
    with pytest.raises(ParameterError):
        restore_additivity(_one_way([3, 3, 6]), dims=["x"], method="magic")
    with pytest.raises(DataError):
        restore_additivity(_one_way([3.5, 3, 6]), dims=["x"])


def test_no_table_within_the_time_limit_falls_back_to_soft_bounds(keyed, ptable, monkeypatch):
    """Issue 24: a CTA run that reaches its time limit must still return the best additive
    table without 1s and 2s, saying so, never nothing."""
    from sdckit.tables import additivity

    solve = additivity.solve_cta

    def out_of_time(*args, relax=False, **kwargs):
        if relax:  # the LP relaxation (for the warm start) still solves
            return solve(*args, relax=True, **kwargs)
        raise additivity.NoTableInTime("time limit")

    monkeypatch.setattr(additivity, "solve_cta", out_of_time)
    perturbed = cell_key_perturb(keyed, ptable, dims=["district", "age", "sex"]).internal
    result = restore_additivity(perturbed, max_deviation=3, method="joint", time_limit=5)
    table = result.internal
    _assert_additive_without_small_cells(table)
    assert result.stats["soft_bounds"]
    assert "bounds were made soft" in result.summary()
    with pytest.raises(InfeasibleError):
        restore_additivity(perturbed, method="joint", on_timeout="error")


def test_restore_after_threshold_suppression_keeps_the_hidden_cells_hidden() -> None:
    import numpy as np
    import pandas as pd

    from sdckit.tables import add_record_keys, cell_key_perturb, design_ptable, restore_additivity

    rng = np.random.default_rng(8)
    n = 900
    people = add_record_keys(
        pd.DataFrame(
            {
                "area": rng.choice(["a", "b", "c", "d"], n, p=[0.5, 0.3, 0.15, 0.05]),
                "age": rng.choice(["0-15", "16-64", "65+"], n, p=[0.2, 0.6, 0.2]),
                "sex": rng.choice(["f", "m"], n),
            }
        ),
        seed=2,
    )
    P = design_ptable(D=3, V=2.01)
    perturbed = cell_key_perturb(people, P, dims=["area", "age", "sex"], threshold=10).internal
    assert perturbed["suppressed"].sum() > 0
    with pytest.raises(DataError, match="give threshold"):
        restore_additivity(perturbed, max_deviation=3)
    # here every suppressed cell is alone in some relation: an additive table gives it away
    with pytest.raises(InfeasibleError, match="could be recomputed exactly"):
        restore_additivity(perturbed, max_deviation=3, threshold=10, method="joint")
    result = restore_additivity(
        perturbed, max_deviation=3, threshold=10, method="joint", allow_recoverable=True
    )
    assert result.stats["recoverable_cells"] == perturbed["suppressed"].sum()
    internal, published = result.internal, result.table
    hidden = perturbed["suppressed"].to_numpy()
    # hidden cells stay unpublished; their producer-side values lie below the threshold
    assert published["restored"][hidden].isna().all()
    assert published["restored"][~hidden].notna().all()
    assert internal["restored"][hidden].between(0, 9).all()
    # with those hidden values the whole table is additive
    structure = internal.attrs["structure"]
    relations, _ = structure.relations()
    y = np.zeros(structure.n_cells)
    y[structure.cell_positions(internal)] = internal["restored"].to_numpy()
    assert np.all(relations @ y == 0)
    shown = published["restored"][~hidden].to_numpy(dtype=np.int64)
    assert not np.isin(shown, [1, 2]).any()
    assert (np.abs(shown - perturbed["perturbed"][~hidden].to_numpy(dtype=np.int64)) <= 3).all()
    assert f"{int(hidden.sum())} suppressed cells stay hidden" in result.summary()


def test_suppressed_cells_in_a_rectangle_are_not_recoverable() -> None:
    """Four small cells at the corners of a rectangle: each relation holds two of them."""
    import numpy as np
    import pandas as pd

    from sdckit.tables import add_record_keys, cell_key_perturb, design_ptable, restore_additivity

    counts = {("a", "x"): 4, ("a", "y"): 5, ("b", "x"): 6, ("b", "y"): 3}
    rows = []
    for area in "abc":
        for age in "xyz":
            rows += [(area, age)] * counts.get((area, age), 30)
    people = add_record_keys(pd.DataFrame(rows, columns=["area", "age"]), seed=4)
    table = cell_key_perturb(people, design_ptable(D=3, V=2.01), dims=["area", "age"]).internal
    small = table.apply(lambda r: (r["area"], r["age"]) in counts, axis=1).to_numpy()
    table["perturbed"] = pd.array(np.where(small, 0, table["perturbed"]), dtype="Int64")
    table.loc[small, "perturbed"] = pd.NA
    table["suppressed"] = small
    result = restore_additivity(table, max_deviation=3, threshold=10, method="joint")
    assert result.stats["recoverable_cells"] == 0
    assert result.table["restored"][small].isna().all()


def test_elementary_sub_tables_give_an_additive_table_without_small_cells(
    keyed, ptable, monkeypatch
):
    # block_cells=1 takes the large-table path; an LP that does not finish in time (as
    # here: _lp_start gives nothing) leaves the two-way sub-tables before the whole model
    monkeypatch.setattr(additivity, "_lp_start", lambda *args: None)
    perturbed = cell_key_perturb(keyed, ptable, dims=["district", "age", "sex"]).internal
    result = restore_additivity(perturbed, max_deviation=3, method="elementary", block_cells=1)
    parts = result.stats["decomposition"]
    assert parts["subproblems"] > 0 and parts["sweeps"] >= 3  # every pair of dimensions freed
    table = result.internal
    _assert_additive_without_small_cells(table)
    assert result.stats["cells_beyond_max_deviation"] == 0
    assert "decomposed" in result.summary()


def _random_elementary_problem(seed: int, ptable) -> additivity._Elementary:
    """A perturbed random 3-way table as the CTA problem on its elementary cells (true zeros
    fixed, every cell within 3 of its perturbed value, elementary cells 0 or at least 3)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 400))
    records = pd.DataFrame(
        {
            "a": rng.choice(list("pqrst"), size=n, p=[0.4, 0.25, 0.15, 0.12, 0.08]),
            "b": rng.choice(list("wxyz"), size=n, p=[0.4, 0.3, 0.2, 0.1]),
            "c": rng.choice(["F", "M", "X"], size=n, p=[0.5, 0.4, 0.1]),
        }
    )
    perturbed = cell_key_perturb(add_record_keys(records, seed), ptable, dims=["a", "b", "c"])
    return additivity._Elementary.of_perturbed(perturbed.internal, max_deviation=3)


def _assert_whole_table(problem: additivity._Elementary, table: np.ndarray) -> None:
    """Additive, elementary cells within their bounds and free of 1s and 2s (only aggregates
    may be beyond their bounds)."""
    matrix, _ = problem.structure.relations()
    assert np.array_equal(matrix @ table, np.zeros(matrix.shape[0]))
    elementary = table[problem.inner]
    assert not np.isin(elementary[problem.binary[problem.inner]], [1, 2]).any()
    assert (elementary >= problem.lower[problem.inner]).all()
    assert (elementary <= problem.upper[problem.inner]).all()


def _problem_and_optimum(seed: int, ptable) -> tuple:
    """A random problem (:func:`_random_elementary_problem`), its movable cells and the whole
    model's optimal table; the test is skipped when no table meets the bounds."""
    problem = _random_elementary_problem(seed, ptable)
    free = problem.movable()
    exact = additivity._solve_elementary(problem, problem.centre, free, None, {})
    if exact is None:
        pytest.skip("no table within the bounds for this draw")
    return problem, free, exact


@pytest.mark.parametrize("seed", range(8))
def test_lp_dive_and_repair_against_the_exact_model(seed, ptable):
    # the start of large tables (LP relaxation dived to a whole table, then repaired
    # locally) against the whole model solved to optimality on small random tables
    problem, free, exact = _problem_and_optimum(seed, ptable)
    report: dict = {}
    dived = additivity._dive(problem, free, None, [], report)
    assert dived is not None
    repaired = additivity._repair(problem, dived, None, report)
    for table in (dived, repaired):
        _assert_whole_table(problem, table)  # only aggregates may leave their bounds
    assert len(additivity._beyond(problem, repaired)) == 0
    optimum = problem.cost(exact)
    assert report["lp_bound"] <= optimum + 1e-6  # the LP bounds every table from below
    assert optimum <= problem.cost(repaired) + 1e-9  # and the exact model is no worse


@pytest.mark.parametrize("seed", range(4))
def test_local_search_keeps_the_table_valid_and_never_costs_more(seed, ptable, monkeypatch):
    # local search on sub-cubes from the dived and repaired start, against the whole model
    # solved to optimality: every accepted table is additive, within its bounds and free
    # of 1s and 2s, and costs no more than the start and no less than the optimum
    monkeypatch.setattr(additivity, "LOCAL_CELLS", 12)
    monkeypatch.setattr(additivity, "LOCAL_STALE", 8)
    problem, free, exact = _problem_and_optimum(seed, ptable)
    report: dict = {}
    start = additivity._repair(
        problem, additivity._dive(problem, free, None, [], report), None, report
    )
    improved = additivity._improve(problem, start, free, None, report, seed=seed)
    _assert_whole_table(problem, improved)
    assert len(additivity._beyond(problem, improved)) == 0
    assert report["local_runs"] >= 8  # stopped by LOCAL_STALE runs without a gain
    assert report["cost_after_local_search"] == problem.cost(improved)
    assert problem.cost(exact) <= problem.cost(improved) <= problem.cost(start)


def test_a_dive_stopped_early_still_gives_a_whole_table(ptable):
    # past stop_fixing the dive fixes nothing more: its first LP is rounded, and the table is
    # still additive and free of 1s and 2s (only aggregates may be beyond their bounds)
    problem = _random_elementary_problem(5, ptable)
    report: dict = {}
    dived = additivity._dive(
        problem, problem.movable(), None, [], report, stop_fixing=time.perf_counter()
    )
    assert dived is not None and report["dive_lps"] == 1
    _assert_whole_table(problem, dived)


def test_sub_cube_takes_whole_leaves_of_every_dimension(ptable, monkeypatch):
    monkeypatch.setattr(additivity, "LOCAL_CELLS", 10)
    problem = _random_elementary_problem(3, ptable)
    free = problem.movable()
    coords = np.unravel_index(free, problem.structure.shape)
    cube = additivity._sub_cube(problem, free, coords, np.random.default_rng(0))
    assert 0 < len(cube) < len(free) and np.isin(cube, free).all()
    # a sub-cube is a product: every combination of its leaves that is movable is in it
    chosen = [np.unique(c[np.isin(free, cube)]) for c in coords]
    product = np.ones(len(free), dtype=bool)
    for axis, leaves in enumerate(chosen):
        product &= np.isin(coords[axis], leaves)
    assert np.array_equal(np.sort(free[product]), np.sort(cube))


def test_the_summary_gives_a_proven_lower_bound(keyed, ptable):
    perturbed = cell_key_perturb(keyed, ptable, dims=["district", "age", "sex"]).internal
    result = restore_additivity(perturbed, max_deviation=3, method="elementary", block_cells=1)
    parts = result.stats["decomposition"]
    assert parts["lp_bound"] <= parts["lower_bound"] <= result.stats["objective"] + 1e-6
    assert f"no table can have less than {parts['lower_bound']:.1f}" in result.summary()
    # without a time limit the whole model ends at the optimum: its proven bound is the
    # table's cost
    assert result.stats["status"][-1] == "Optimal"
    assert parts["lower_bound"] == pytest.approx(result.stats["objective"], abs=1e-6)


def test_large_table_path_starts_from_the_lp(keyed, ptable):
    perturbed = cell_key_perturb(keyed, ptable, dims=["district", "age", "sex"]).internal
    exact = restore_additivity(perturbed, max_deviation=3, method="elementary")
    result = restore_additivity(perturbed, max_deviation=3, method="elementary", block_cells=1)
    parts = result.stats["decomposition"]
    assert parts["start"] == "LP relaxation rounded and repaired"
    assert parts["lp_bound"] <= exact.stats["objective"] + 1e-6
    assert parts["subproblems"] == 0
    _assert_additive_without_small_cells(result.internal)
    assert result.stats["cells_beyond_max_deviation"] == 0
    # without a time limit the whole model ends at the optimum from that start
    assert result.stats["objective"] == exact.stats["objective"]


def test_cells_beyond_max_deviation_are_reported_never_hidden(keyed, ptable, monkeypatch):
    # a restoration that ends with aggregates beyond their bounds (here: the perturbed
    # elementary cells with every margin re-summed, as if no repair had had time) says so
    def unrepaired(problem, time_limit, block_cells, runs, start="lp"):
        return problem.table(problem.centre[problem.inner]), {}

    monkeypatch.setattr(additivity, "_restore_elementary", unrepaired)
    perturbed = cell_key_perturb(
        keyed, ptable, dims=["district", "age", "sex"], hierarchies=REGIONS
    ).internal
    result = restore_additivity(perturbed, max_deviation=3, method="elementary")
    beyond = result.stats["cells_beyond_max_deviation"]
    change = (result.internal["restored"] - result.internal["perturbed"]).abs()
    assert beyond == int((change > 3).sum()) > 0
    assert f"{beyond} cells deviate by more than max_deviation=3" in result.summary()
