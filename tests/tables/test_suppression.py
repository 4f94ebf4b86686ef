"""Secondary suppression: optimal against brute force, hypercube and modular audited by the LP."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.tables import primary_suppression, suppress, tabulate
from sdckit.tables.audit import protection_met
from sdckit.tables.release import check_release
from sdckit.tables.suppression import (
    Protection,
    deviation_pattern,
    exhaustive_cost,
    hypercube_pattern,
    optimal_pattern,
    start_moves,
)


def count_table(seed: int, dims: int, hierarchical: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 120))
    data = pd.DataFrame(
        {
            "region": rng.choice(["d1", "d2", "d3", "d4"], n),
            "sector": rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2]),
            "size": rng.choice(["small", "large"], n, p=[0.7, 0.3]),
        }
    )
    hierarchies = {"region": {"north": ["d1", "d2"], "south": ["d3", "d4"]}}
    return tabulate(
        data,
        ["region", "sector", "size"][:dims],
        hierarchies=hierarchies if hierarchical else None,
    )


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(
    "dims, hierarchical, method",
    [
        (2, False, "hypercube"),
        (2, True, "hypercube"),
        (3, False, "hypercube"),
        (2, True, "modular"),
        (2, True, "modular-hypercube"),
        (3, True, "modular-hypercube"),
    ],
)
def test_no_primary_cell_is_left_exposed(
    seed: int, dims: int, hierarchical: bool, method: str, monkeypatch: pytest.MonkeyPatch
):
    table = count_table(seed, dims, hierarchical)
    forced = method == "modular-hypercube"
    if forced:  # every sub-table too large for the optimal model: hypercubes within it
        monkeypatch.setattr("sdckit.tables.suppression.MODULAR_OPTIMAL_SIZE", 0)
        method = "modular"
    result = suppress(table, rules=["freq>=3"], method=method)
    if method == "modular" and result.stats["primary"]:
        assert (result.stats["hypercube_subtables"] > 0) == forced
    audit = result.audit
    assert audit is not None and result.stats["exposed"] == 0
    primary = result.internal["status"] == "primary"
    assert (result.internal.loc[primary, "suppressed"]).all()
    # the audit's intervals reach the frequency rule's levels: 0 below and the threshold above
    intervals = audit.cells.merge(result.internal[primary], on=list(table.attrs["structure"].dims))
    assert (intervals["lower"] <= 1e-7).all()
    assert (intervals["upper"] >= 3 - 1e-7).all()


@pytest.mark.parametrize("seed", range(4))
def test_optimal_pattern_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 9, size=6)
    counts[int(rng.integers(3))] = 1  # one primary cell in the first row
    cells = pd.DataFrame({"a": ["x"] * 3 + ["y"] * 3, "b": ["u", "v", "w"] * 2})
    table = tabulate(cells.loc[cells.index.repeat(counts)], ["a", "b"])
    structure = table.attrs["structure"]
    values = table["count"].to_numpy(np.float64)
    result = suppress(table, rules=["freq>=2"], method="optimal")
    internal = result.internal
    primary = (internal["status"] == "primary").to_numpy()
    upper = internal["upper_protection"].to_numpy()
    lower = internal["lower_protection"].to_numpy()
    hidden = internal["suppressed"].to_numpy()
    weights = values + 1
    cost = weights[hidden & ~primary].sum()
    problem = Protection(values, primary, upper, lower, weights)
    assert cost == exhaustive_cost(structure, problem)
    relations, _ = structure.relations()
    assert protection_met(relations, values, hidden, primary, upper, lower)


def test_release_holds_no_true_values_and_flags(census: pd.DataFrame) -> None:
    table = primary_suppression(
        census, ["district", "age"], rules=["p% p=10", "freq>=3"], value="income"
    )
    result = suppress(table, method="optimal")
    check_release(result.table)
    assert list(result.table.columns) == ["district", "age", "published", "suppressed"]
    hidden = result.table["suppressed"].to_numpy()
    assert result.table["published"].isna().to_numpy().tolist() == hidden.tolist()
    assert set(result.internal["status"]) <= {"primary", "secondary", "published"}
    assert result.summary().startswith("every suppressed cell passed the audit")
    assert table.columns.tolist() == [c for c in result.internal.columns][: len(table.columns)]
    assert "status" not in table.columns  # input untouched


def test_methods_agree_on_what_they_protect_and_errors() -> None:
    table = count_table(3, 2, True)
    costs = {
        m: suppress(table, rules=["freq>=3"], method=m).stats["suppressed_value"]
        for m in ("optimal", "hypercube", "modular")
    }
    assert costs["optimal"] <= costs["hypercube"] + 1e-9
    assert costs["optimal"] <= costs["modular"] + 1e-9
    with pytest.raises(ParameterError, match="method must be one of"):
        suppress(table, rules=["freq>=3"], method="ghmiter")
    with pytest.raises(DataError, match="no 'primary' column"):
        suppress(table)


def test_optimal_model_started_from_hypercubes_returns_their_pattern_at_the_limit() -> None:
    # the modular method's sub-tables hand the optimal model the pattern of their hypercubes:
    # a search stopped by time_limit then returns a protected pattern no dearer than it
    # (before, it raised NoTableInTime or returned a pattern at any gap)
    rng = np.random.default_rng(1)
    n = 1500
    p = [0.4, 0.2, 0.15, 0.1, 0.1, 0.05]
    data = pd.DataFrame(
        {
            "a": rng.choice(list("pqrstu"), n, p=p),
            "b": rng.choice(list("ABCDEF"), n, p=p),
            "c": rng.choice(list("xyz"), n, p=[0.6, 0.3, 0.1]),
        }
    )
    table = primary_suppression(tabulate(data, ["a", "b", "c"]), rules=["freq>=3"])
    structure = table.attrs["structure"]
    values = np.zeros(structure.n_cells)
    values[structure.cell_positions(table)] = table["count"].to_numpy(np.float64)
    at = structure.cell_positions(table)
    primary = np.zeros(structure.n_cells, dtype=bool)
    upper, lower = np.zeros(structure.n_cells), np.zeros(structure.n_cells)
    primary[at] = table["primary"].to_numpy(bool)
    upper[at] = table["upper_protection"].fillna(0).to_numpy(np.float64)
    lower[at] = np.minimum(table["lower_protection"].fillna(0).to_numpy(np.float64), values[at])
    weights = values + 1.0
    chosen: list[tuple[np.ndarray, np.ndarray]] = []
    owners: list[int] = []
    cubes_pattern, missed = hypercube_pattern(
        structure,
        Protection(values, primary, upper, lower, weights),
        chosen=chosen,
        owners=owners,
    )
    assert len(missed) == 0 and sorted(owners) == np.flatnonzero(primary).tolist()
    relations, _ = structure.relations()
    pattern = optimal_pattern(
        relations,
        values,
        primary,
        upper,
        lower,
        weights,
        time_limit=0.01,
        cubes=dict(zip(owners, chosen, strict=True)),
    )
    assert pattern is not None
    assert weights[pattern].sum() <= weights[cubes_pattern].sum() + 1e-9
    assert protection_met(relations, values, pattern, primary, upper, lower)


def _problem(table: pd.DataFrame) -> tuple:
    structure = table.attrs["structure"]
    n = structure.n_cells
    at = structure.cell_positions(table)
    values, upper, lower = np.zeros(n), np.zeros(n), np.zeros(n)
    primary = np.zeros(n, dtype=bool)
    values[at] = table["count"].to_numpy(np.float64)
    primary[at] = table["primary"].to_numpy(bool)
    upper[at] = table["upper_protection"].fillna(0).to_numpy(np.float64)
    lower[at] = np.minimum(table["lower_protection"].fillna(0).to_numpy(np.float64), values[at])
    return structure, Protection(values, primary, upper, lower, values + 1.0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("neighbourhood", [3, 2_000])
def test_deviation_pattern_proves_each_cell_protected(
    seed: int, neighbourhood: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # starting from the primary cells alone (every one exposed through its margins), the
    # deviation LP completes the pattern so that the attacker's LP finds every primary cell
    # protected, and each certificate is a table the attacker cannot exclude; with a
    # neighbourhood of 3 cells the LPs start local and grow (8x) until one is feasible
    monkeypatch.setattr("sdckit.tables.suppression.DEVIATION_NEIGHBOURHOOD", neighbourhood)
    table = primary_suppression(count_table(seed, 3, True), rules=["freq>=3"])
    structure, problem = _problem(table)
    relations, _ = structure.relations()
    cells = np.flatnonzero(problem.primary)
    if len(cells) == 0:
        pytest.skip("no primary cell in this random table")
    hidden, certificates, failed = deviation_pattern(relations, problem, problem.primary, cells)
    assert len(failed) == 0 and len(certificates) >= len(cells)
    assert protection_met(
        relations, problem.values, hidden, problem.primary, problem.upper, problem.lower
    )
    for positions, steps in certificates:
        assert hidden[positions].all()
        step = np.zeros(structure.n_cells)
        step[positions] = steps
        assert np.abs(relations @ step).max() < 1e-6


def test_an_exposed_cell_no_hypercube_protects_is_repaired(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # before session 11 a primary cell the audit found exposed after the modular method and
    # that no hypercube protected stayed exposed (1 of 2,074 on the 11,200-cell benchmark
    # table): here the sub-tables suppress nothing and no hypercube is ever found
    table = primary_suppression(count_table(3, 3, True), rules=["freq>=3"])

    def nothing(structure, problem, *, time_limit=None):
        return np.asarray(problem.primary, dtype=bool).copy(), {"subtables": 0}

    def no_cube(structure, problem, *, start=None, chosen=None, owners=None):
        hidden = np.asarray(problem.primary, dtype=bool) | (False if start is None else start)
        return hidden, np.flatnonzero(problem.primary)

    monkeypatch.setattr("sdckit.tables.suppression.modular_pattern", nothing)
    monkeypatch.setattr("sdckit.tables.suppression.hypercube_pattern", no_cube)
    result = suppress(table, method="modular")
    assert result.stats["repaired"] > 0
    assert result.stats["lp_repaired"] == result.stats["repaired"]
    assert result.stats["exposed"] == 0
    monkeypatch.setattr("sdckit.tables.suppression.MODULAR_OPTIMAL_SIZE", 0)
    # every cell without a hypercube: those the audit finds exposed get their LP ...
    hyper = suppress(table, method="hypercube")
    assert hyper.stats["no_hypercube"] == hyper.stats["primary"]
    assert hyper.stats["lp_repaired"] == hyper.stats["repaired"] > 0
    assert hyper.stats["exposed"] == 0
    # ... and without the audit, every one of them
    blind = suppress(table, method="hypercube", audit=False)
    assert blind.stats["lp_repaired"] == blind.stats["primary"]
    relations, _ = table.attrs["structure"].relations()
    structure, problem = _problem(table)
    hidden = np.zeros(structure.n_cells, dtype=bool)
    hidden[structure.cell_positions(blind.internal)] = blind.internal["suppressed"].to_numpy()
    assert protection_met(
        relations, problem.values, hidden, problem.primary, problem.upper, problem.lower
    )


def test_optimal_at_a_time_limit_is_no_dearer_than_its_start_on_adult() -> None:
    # education x race x sex of Adult (306 cells, freq>=5): 3 primary cells have no hypercube
    # of their own, so before session 11 the optimal model had no start and a 10 s search
    # returned a pattern of 121,921 (the hypercubes': 676); the deviation LPs complete the start
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "adult.csv"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    data = pd.read_csv(path, usecols=["education", "race", "sex"])
    table = primary_suppression(tabulate(data, ["education", "race", "sex"]), rules=["freq>=5"])
    structure, problem = _problem(table)
    start, _ = start_moves(structure, problem)
    _, missed = hypercube_pattern(structure, problem)
    assert len(missed) > 0  # the case this test is about
    relations, _ = structure.relations()
    assert protection_met(
        relations, problem.values, start, problem.primary, problem.upper, problem.lower
    )
    result = suppress(table, method="optimal", time_limit=0.5)
    hidden = np.zeros(structure.n_cells, dtype=bool)
    hidden[structure.cell_positions(result.internal)] = result.internal["suppressed"].to_numpy()
    assert problem.weights[hidden].sum() <= problem.weights[start].sum() + 1e-9
    assert result.stats["exposed"] == 0
