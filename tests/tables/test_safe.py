from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables import safe_perturb, tabulate

CONTROLLED = [["district", "age"], ["age", "sex"]]
VARIABLES = ["district", "age", "sex"]


@pytest.fixture
def result(census):
    return safe_perturb(census, CONTROLLED, random_state=3)


def test_no_small_cell_in_any_table(census, result):
    assert result.stats["unsafe_cells_before"] > 0
    for r in range(1, len(VARIABLES) + 1):
        for sub in itertools.combinations(VARIABLES, r):
            counts = tabulate(result.data, list(sub))["count"]
            assert not counts.isin([1, 2]).any(), sub


def test_records_kept_shape_and_other_columns(census, result):
    before = census.copy()
    out = result.data
    pd.testing.assert_frame_equal(census, before)
    assert out.index.equals(census.index)
    assert list(out.columns) == list(census.columns)
    assert (out.dtypes == census.dtypes).all()
    assert np.array_equal(out["income"], census["income"])
    changed = result.diagnostics["changed"]
    assert changed.sum() == result.stats["records_changed"] > 0
    same = (out[VARIABLES] == census[VARIABLES]).all(axis=1)
    assert np.array_equal(~same.to_numpy(), changed.to_numpy())
    # what changed per column, in the stats and the summary
    per_variable = {v: int((out[v] != census[v]).sum()) for v in VARIABLES}
    assert result.stats["changed_per_variable"] == per_variable
    assert sum(per_variable.values()) > 0
    for v, k in per_variable.items():
        assert f"{v} in {k:,}" in result.summary()


def test_controlled_deviation_is_reported_and_bounded(census, result):
    for table in CONTROLLED:
        before = tabulate(census, table)["count"].to_numpy()
        after = tabulate(result.data, table)["count"].to_numpy()
        assert np.abs(after - before).max() <= result.stats["max_abs_deviation"]
    assert result.stats["max_abs_deviation"] <= result.stats["feasible_bound"]
    assert "unsafe" in result.summary()


def test_same_seed_same_output(census):
    a = safe_perturb(census, CONTROLLED, random_state=11).data
    b = safe_perturb(census, CONTROLLED, random_state=11).data
    pd.testing.assert_frame_equal(a, b)


def test_categorical_columns_stay_categorical(census):
    data = census.assign(age=pd.Categorical(census["age"]))
    out = safe_perturb(data, CONTROLLED, random_state=0).data
    assert out["age"].dtype == data["age"].dtype


def test_errors(census):
    with pytest.raises(ParameterError):
        safe_perturb(census, [])
    with pytest.raises(ParameterError):
        safe_perturb(census, CONTROLLED, variables=["age", "sex"])
    with pytest.raises(InfeasibleError):
        safe_perturb(census.iloc[:2], [["sex"]])
    broken = census.copy()
    broken.loc[100, "sex"] = None
    with pytest.raises(DataError):
        safe_perturb(broken, [["sex"]])


def _deviations(before: pd.DataFrame, after: pd.DataFrame, table: list[str]) -> np.ndarray:
    """|after - before| of every cell of a table and its margins."""
    return np.abs(tabulate(after, table)["count"].to_numpy() - tabulate(before, table)["count"])


def test_two_valued_bounds_and_cell_weights_hold(census):
    # B = (1, 4): one-variable cells may move 3 less than cross-classified ones
    result = safe_perturb(census, CONTROLLED, bounds=(1, 4), random_state=5)
    excess = result.stats["max_abs_excess"]
    for variable in VARIABLES:
        assert _deviations(census, result.data, [variable]).max() <= excess - 3
    for table in CONTROLLED:
        assert _deviations(census, result.data, table).max() <= excess
    # w_i = floor(1.0 * sqrt(a_i)): a cell may exceed the common bound by its weight
    weighted = safe_perturb(census, CONTROLLED, cell_weights=1.0, random_state=5)
    for table in CONTROLLED:
        original = tabulate(census, table)["count"].to_numpy()
        allowance = np.floor(np.sqrt(original))
        dev = _deviations(census, weighted.data, table)
        assert (dev - allowance <= weighted.stats["max_abs_excess"]).all()
    with pytest.raises(ParameterError, match="bounds"):
        safe_perturb(census, CONTROLLED, bounds=(1,))
    with pytest.raises(ParameterError, match="cell_weights"):
        safe_perturb(census, CONTROLLED, cell_weights=lambda a: -np.ones(len(a)))


def test_sparse_elementary_table_far_beyond_memory(census):
    # two coded variables of 10^5 categories each (few of them occur): 4 * 10^11 possible
    # elementary cells, at most 600 non-empty; a dense table could not be built
    rng = np.random.default_rng(0)
    codes = pd.CategoricalDtype(range(100_000))
    data = census.assign(
        block=pd.Series(
            rng.choice([7, 70, 700, 7_000, 70_000], len(census)), index=census.index
        ).astype(codes),
        street=pd.Series(rng.choice([1, 99_999], len(census)), index=census.index).astype(codes),
    )
    variables = [*VARIABLES, "block", "street"]
    result = safe_perturb(data, CONTROLLED, variables=variables, random_state=1)
    assert result.stats["elementary_cells_possible"] == 5 * 4 * 2 * 100_000 * 100_000
    assert 0 < result.stats["elementary_cells_nonempty"] <= len(census)
    assert result.stats["unsafe_cells_before"] > 0
    counts = result.data.groupby(variables, observed=True).size()
    assert not counts.isin([1, 2]).any()
    assert "non-empty of" in result.summary()


def _sparse_file(seed: int) -> pd.DataFrame:
    """1,500 skewed records over 40 x 12 x 2 x 15 categories: hundreds of unsafe cells."""
    rng = np.random.default_rng(seed)
    n = 1500

    def zipf(k: int, power: float) -> np.ndarray:
        p = 1.0 / np.arange(1, k + 1) ** power
        return rng.choice(k, size=n, p=p / p.sum())

    return pd.DataFrame(
        {
            "area": zipf(40, 1.2),
            "age": zipf(12, 0.5),
            "sex": rng.integers(0, 2, n),
            "job": zipf(15, 1.5),
        }
    )


def _counts(data: pd.DataFrame, variables: list[str]) -> pd.Series:
    return data.groupby(variables, observed=True).size()


def _deviation(before: pd.DataFrame, after: pd.DataFrame, variables: list[str]) -> pd.DataFrame:
    """Original and protected counts of every cell of a table that either file has."""
    a, b = _counts(before, variables), _counts(after, variables)
    return pd.concat({"original": a, "protected": b}, axis=1).fillna(0)


FILES = [
    # (seed, controlled tables, options): skewed files with hundreds of unsafe cells
    (1, [["area", "age"], ["age", "sex", "job"]], {}),
    (2, [["area", "age"], ["age", "sex", "job"]], {"bounds": (1, 3)}),
    (3, [["area", "age"], ["age", "sex", "job"]], {"cell_weights": 0.5}),
    (4, [["area", "sex", "job"]], {"bounds": (2, 4), "cell_weights": 1.0}),
    (5, [["area"], ["age", "job"]], {"optimise": False}),
    (6, [["age", "sex"], ["sex", "job"], ["area", "job"]], {"cell_weights": 0.25}),
]


@pytest.mark.parametrize(("seed", "controlled", "options"), FILES)
def test_guarantees_of_safe_on_random_files(seed, controlled, options):
    # Giessing & Höhne (2011), §2: no cell of 1 or 2 in any table of the variables; every
    # table of the protected records is additive; every controlled cell within its bound
    data = _sparse_file(seed)
    variables = ["area", "age", "sex", "job"]
    result = safe_perturb(data, controlled, variables=variables, random_state=seed, **options)
    out, s = result.data, result.stats
    assert s["unsafe_cells_before"] > 100
    # microdata: the same records, only the classifying variables may change
    assert out.index.equals(data.index) and len(out) == len(data)
    for v in variables:
        assert set(out[v]) <= set(data[v])
    # no 1 or 2 in any table of any subset of the variables
    for r in range(1, len(variables) + 1):
        for sub in itertools.combinations(variables, r):
            assert not _counts(out, list(sub)).isin([1, 2]).any(), sub
    # additive: every margin of a controlled table is the sum of its cells
    for table in controlled:
        full = _counts(out, table)
        assert full.sum() == len(data)
        for r in range(1, len(table)):
            for sub in itertools.combinations(table, r):
                summed = full.groupby(level=list(sub)).sum()
                assert summed.equals(_counts(out, list(sub))), sub
    # bounds: |d_i| <= w_i + b_i for every controlled cell and its margins, with
    # w_i = floor(scale * sqrt(a_i)) and B = (one-variable bound, cross-classified bound)
    b_one, b_cross = options.get("bounds", (0, 0))
    scale = options.get("cell_weights", 0.0)
    worst = 0
    for table in controlled:
        for r in range(1, len(table) + 1):
            for sub in itertools.combinations(table, r):
                both = _deviation(data, out, list(sub))
                d = (both["protected"] - both["original"]).abs()
                w = np.floor(scale * np.sqrt(both["original"]))
                offset = (b_one - b_cross) if len(sub) == 1 else 0
                excess = (d - w - offset).max()
                assert excess <= s["max_abs_excess"], sub
                worst = max(worst, excess)
                if scale == 0 and offset == 0:
                    assert d.max() <= s["max_abs_deviation"], sub
    assert worst == s["max_abs_excess"]  # the reported bound is the one reached
    assert s["max_abs_excess"] <= s["feasible_bound"]
    for table in controlled:
        both = _deviation(data, out, table)
        reported = s["max_abs_deviation_by_table"][" x ".join(table)]
        assert (both["protected"] - both["original"]).abs().max() == reported


def test_phase_two_says_why_it_stopped():
    # by default phase 2 runs until a round fails (its natural end); a round limit is
    # reported in the stats and the summary, since the bound might have gone lower
    data = _sparse_file(7)
    controlled = [["area", "age"], ["age", "sex", "job"]]
    variables = ["area", "age", "sex", "job"]
    free = safe_perturb(data, controlled, variables=variables, random_state=7)
    assert free.stats["phase2_stop"] in {"repair failed", "bound 0"}
    assert "round limit" not in free.summary()
    capped = safe_perturb(data, controlled, variables=variables, random_state=7, max_rounds=1)
    assert capped.stats["phase2_stop"] == "round limit"
    assert "max_rounds=1" in capped.summary()
    assert capped.stats["max_abs_excess"] >= free.stats["max_abs_excess"]
    skipped = safe_perturb(data, controlled, variables=variables, random_state=7, optimise=False)
    assert skipped.stats["phase2_stop"] == "not run"
    assert skipped.stats["max_abs_excess"] <= skipped.stats["feasible_bound"]
    assert free.stats["phase1_passes"] >= 1


def test_neighbour_moves_costed_from_per_cell_terms_equal_the_full_cost():
    # _State.cost_along (two per-cell terms over the tables of the one variable that
    # differs) must give what _State.cost gives over every table, with deviations and
    # allowances of every sign
    from sdckit.tables.safe import _batch_options, _State

    rng = np.random.default_rng(3)
    shape = (6, 5, 3, 4)
    ids = np.unique(rng.integers(0, int(np.prod(shape)), 200))
    counts = rng.integers(1, 6, len(ids))
    subtables = [(0,), (1,), (0, 1), (1, 2), (0, 2, 3), (3,)]
    allowance = [rng.integers(0, 3, int(np.prod([shape[a] for a in t]))) for t in subtables]
    state = _State(ids, counts.astype(np.int64), shape, subtables, allowance)
    state.flat_dev[:] = rng.integers(-4, 5, len(state.flat_dev))
    unsafe = np.flatnonzero((state.y == 1) | (state.y == 2))
    pool = np.flatnonzero(state.y >= 1)
    src, dst, amount, _owner, axis = _batch_options(state, unsafe, rng, 16, pool)
    near = axis >= 0
    assert near.sum() > 50
    along = state.cost_along(src[near], dst[near], amount[near], axis[near])
    assert np.array_equal(along, state.cost(src[near], dst[near], amount[near]))
