"""Linked tables restored together: additive each, one value per common cell."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.tables import (
    add_record_keys,
    cell_key_perturb,
    design_ptable,
    restore_additivity,
    restore_linked,
)
from sdckit.tables.linked import cell_identities


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 1500
    data = pd.DataFrame(
        {
            "region": rng.choice(["r1", "r2", "r3", "r4", "r5"], n, p=[0.4, 0.3, 0.2, 0.07, 0.03]),
            "sex": rng.choice(["f", "m"], n),
            "age": rng.choice(["young", "middle", "old"], n, p=[0.2, 0.5, 0.3]),
        }
    )
    return add_record_keys(data, seed=3)


def _additive(table: pd.DataFrame, column: str) -> bool:
    structure = table.attrs["structure"]
    relations, _ = structure.relations()
    y = np.zeros(structure.n_cells)
    y[structure.cell_positions(table)] = table[column].to_numpy()
    return bool(np.all(relations @ y == 0))


def _common(a: pd.DataFrame, b: pd.DataFrame, column: str) -> pd.DataFrame:
    """The values of ``column`` on the cells two tables share (same non-total coordinates)."""
    values = []
    for table in (a, b):
        structure = table.attrs["structure"]
        by_position = pd.Series(table[column].to_numpy(), index=structure.cell_positions(table))
        identities = cell_identities(structure)
        values.append({identities[pos]: v for pos, v in by_position.items()})
    shared = sorted(set(values[0]) & set(values[1]))
    return pd.DataFrame(
        {"a": [values[0][k] for k in shared], "b": [values[1][k] for k in shared]},
        index=[str(k) for k in shared],
    )


def test_linked_tables_are_additive_and_agree_on_common_cells(people) -> None:
    P = design_ptable(D=3, V=2.01)
    first = cell_key_perturb(people, P, dims=["region", "sex"]).internal
    second = cell_key_perturb(people, P, dims=["region", "age"]).internal
    third = cell_key_perturb(people, P, dims=["sex", "age"]).internal
    result = restore_linked([first, second, third], max_deviation=3)
    assert result.stats["shared_cells"] > 0
    for table, internal in zip(result.tables, result.internals, strict=True):
        assert "count" not in table.columns and "cell_key" not in table.columns
        assert _additive(internal, "restored")
        restored = internal["restored"].to_numpy()
        assert not np.isin(restored, [1, 2]).any()
        assert (np.abs(restored - internal["perturbed"].to_numpy()) <= 3).all()
        assert (restored[internal["count"].to_numpy() == 0] == 0).all()
    for i in range(3):
        for j in range(i + 1, 3):
            common = _common(result.internals[i], result.internals[j], "restored")
            assert len(common) and (common["a"] == common["b"]).all()
    assert "linked tables restored together: 3 tables" in result.summary()
    # the input tables are untouched
    assert "restored" not in first.columns


def test_separately_restored_tables_may_disagree_and_linked_ones_do_not(people) -> None:
    P = design_ptable(D=3, V=2.01)
    first = cell_key_perturb(people, P, dims=["region", "sex"]).internal
    second = cell_key_perturb(people, P, dims=["region", "age"]).internal
    alone = [
        restore_additivity(t, max_deviation=3, method="joint").internal for t in (first, second)
    ]
    together = restore_linked([first, second], max_deviation=3)
    common_alone = _common(alone[0], alone[1], "restored")
    common_together = _common(together.internals[0], together.internals[1], "restored")
    assert (common_together["a"] == common_together["b"]).all()
    # separately, nothing ties the common cells together: on these data (as on every seed
    # tried, 2-4 of the 6 common region totals) the two restorations publish two values
    assert len(common_alone) == len(common_together)
    assert (common_alone["a"] != common_alone["b"]).any()


def test_inconsistently_perturbed_tables_are_refused(people) -> None:
    P = design_ptable(D=3, V=2.01)
    first = cell_key_perturb(people, P, dims=["region", "sex"]).internal
    other_keys = add_record_keys(people.drop(columns="record_key"), seed=99)
    second = cell_key_perturb(other_keys, P, dims=["region", "age"]).internal
    with pytest.raises(DataError, match="not perturbed consistently"):
        restore_linked([first, second])


def test_bad_arguments(people) -> None:
    P = design_ptable(D=3, V=2.01)
    first = cell_key_perturb(people, P, dims=["region", "sex"]).internal
    with pytest.raises(ParameterError, match="at least two tables"):
        restore_linked([first])
    with pytest.raises(ParameterError, match="carries no table structure"):
        restore_linked([first, pd.DataFrame({"perturbed": [1]})])
    with pytest.raises(ParameterError, match="holds the true counts"):
        restore_linked([first, first], value="count")


def test_command_line_restores_linked_files(people, tmp_path, capsys) -> None:
    from sdckit.cli.main import main

    P = design_ptable(D=3, V=2.01)
    paths = []
    for dims in (["region", "sex"], ["region", "age"]):
        path = tmp_path / f"{'_'.join(dims)}.csv"
        cell_key_perturb(people, P, dims=dims).table.to_csv(path, index=False)
        paths.append(str(path))
    outs = [str(tmp_path / "a_restored.csv"), str(tmp_path / "b_restored.csv")]
    args = ["tables", "restore-linked", *paths, "-o", outs[0], "-o", outs[1]]
    assert main([*args, "--dims", "region,sex"]) == 2
    assert "one --output and one --dims per input" in capsys.readouterr().err
    assert main([*args, "--dims", "region,sex", "--dims", "region,age", "--quiet"]) == 0
    first, second = (pd.read_csv(o) for o in outs)
    assert "count" not in first.columns and "restored" in first.columns
    totals_a = first[first["sex"] == "Total"].set_index("region")["restored"]
    totals_b = second[second["age"] == "Total"].set_index("region")["restored"]
    assert (totals_a.sort_index() == totals_b.sort_index()).all()
