"""Hierarchies from tau-ARGUS .hrc files and code lists; SDMX-CSV output."""

from __future__ import annotations

import pandas as pd
import pytest

from sdckit.cli.main import main
from sdckit.errors import DataError, ParameterError
from sdckit.tables import (
    cell_key_perturb,
    design_ptable,
    read_codelist_hierarchy,
    read_hrc,
    tabulate,
    to_sdmx_csv,
)
from sdckit.tables.release import ConfidentialColumnError

HRC = "land\n@north\n@@d1\n@@d2\n@south\n@@d3\n@@d4\n"


def test_hrc_nested_levels(tmp_path, census):
    path = tmp_path / "district.hrc"
    path.write_text(HRC)
    spec = read_hrc(path)
    assert spec == {"land": ["north", "south"], "north": ["d1", "d2"], "south": ["d3", "d4"]}
    table = tabulate(census, ["district"], hierarchies={"district": spec}).set_index("district")
    assert table.loc["north", "count"] == (census.district.isin(["d1", "d2"])).sum()
    assert table.loc["land", "count"] == (census.district != "d5").sum()


@pytest.mark.parametrize(
    ("text", "message"), [("a\n@@b\n", "line 2"), ("a\n@b\nc\n@b\n", "appears twice")]
)
def test_hrc_errors(tmp_path, text, message):
    bad = tmp_path / "bad.hrc"
    bad.write_text(text)
    with pytest.raises(DataError, match=message):
        read_hrc(bad)


def test_codelist_csv(tmp_path):
    path = tmp_path / "codes.csv"
    pd.DataFrame(
        {
            "dimension": ["district"] * 4 + ["age"],
            "parent": ["north", "north", "south", "south", "adult"],
            "child": ["d1", "d2", "d3", "d4", "18-39"],
        }
    ).to_csv(path, index=False)
    assert read_codelist_hierarchy(path, dimension="district") == {
        "north": ["d1", "d2"],
        "south": ["d3", "d4"],
    }
    with pytest.raises(ParameterError, match="name the one"):
        read_codelist_hierarchy(path)


def test_cli_hierarchy_files_and_sdmx(tmp_path, keyed):
    micro = tmp_path / "keyed.csv"
    keyed.to_csv(micro, index=False)
    (tmp_path / "district.hrc").write_text(HRC)
    out = tmp_path / "protected.csv"
    code = main(
        [
            "tables",
            "perturb",
            str(micro),
            "-o",
            str(out),
            "--dims",
            "district,sex",
            "--hierarchies",
            f"district={tmp_path / 'district.hrc'}",
            "--sdmx",
            "ESTAT:CENSUS(1.0)",
            "--quiet",
        ]
    )
    assert code == 0
    sdmx = pd.read_csv(out, keep_default_na=False)
    assert list(sdmx.columns) == ["DATAFLOW", "DISTRICT", "SEX", "OBS_VALUE", "OBS_STATUS"]
    assert {"north", "land", "_T"} <= set(sdmx["DISTRICT"])
    assert (sdmx["DATAFLOW"] == "ESTAT:CENSUS(1.0)").all()
    assert not sdmx["OBS_VALUE"].isin([1, 2]).any()


def test_sdmx_refuses_internal_table(keyed):
    result = cell_key_perturb(keyed, design_ptable(3, 2.01), dims=["sex"], threshold=5)
    with pytest.raises(ConfidentialColumnError):
        to_sdmx_csv(result.internal, ["sex"], dataflow="X:Y(1.0)")
    out = to_sdmx_csv(result.table, ["sex"], dataflow="X:Y(1.0)")
    assert set(out["OBS_STATUS"]) <= {"A", "C"}
