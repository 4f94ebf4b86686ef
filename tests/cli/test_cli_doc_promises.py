"""Each refusal the docs promise holds (docs/assess.md, docs/maskers.md, README):
an extra column in the masked file, a numeric key with many values, text inside a
numeric column (named with its 1-based row and value), a non-unique index."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.assess import assess
from sdckit.assess.risk import key_risk
from sdckit.cli.main import main
from sdckit.errors import DataError, SchemaError
from sdckit.io import read_table
from sdckit.microdata.microaggregation import microaggregate
from sdckit.microdata.rankswap import rank_swap
from sdckit.microdata.swap import swap


def _err(capsys) -> str:
    return " ".join(capsys.readouterr().err.split())


@pytest.fixture
def survey(tmp_path):
    rng = np.random.default_rng(21)
    n = 400
    data = pd.DataFrame(
        {
            "income": rng.gamma(3.0, 300.0, n).round(0) + np.arange(n) % 300,
            "hours": rng.normal(38, 6, n).round(1),
            "region": rng.choice(["north", "south", "east"], n),
        }
    )
    path = tmp_path / "survey.csv"
    data.to_csv(path, index=False)
    masked = tmp_path / "masked.csv"
    assert main(["rankswap", str(path), "-o", str(masked), "--columns", "hours", "--quiet"]) == 0
    return path, masked, data


def test_assess_refuses_an_extra_column_in_the_masked_file(survey, tmp_path, capsys):
    path, masked, _ = survey
    release = pd.read_csv(masked)
    release["secret"] = 1.0
    extra = tmp_path / "extra.csv"
    release.to_csv(extra, index=False)
    report = tmp_path / "r.html"
    assert main(["assess", str(path), str(extra), "-o", str(report), "--quiet"]) == 2
    err = _err(capsys)
    assert "'secret'" in err and "original lacks" in err
    assert not report.exists()
    with pytest.raises(SchemaError, match="secret"):
        assess(pd.read_csv(path), release)


def test_assess_refuses_a_numeric_key_with_many_values(survey, tmp_path, capsys):
    path, masked, data = survey
    assert data["income"].nunique() >= 300
    report = tmp_path / "r.html"
    code = main(["assess", str(path), str(masked), "-o", str(report), "--keys", "income"])
    assert code == 2
    err = _err(capsys)
    assert "'income'" in err and "distinct values" in err
    assert not report.exists()
    with pytest.raises(SchemaError, match="income"):
        key_risk(data, ["income"])
    # Declared categorical on purpose, it is used as it is (the explicit confirmation).
    code = main(
        [
            "assess",
            str(path),
            str(masked),
            "-o",
            str(report),
            "--keys",
            "income",
            "--categorical",
            "income",
            "--quiet",
        ]
    )
    assert code == 0


def test_text_in_a_numeric_column_is_named_with_row_and_value(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n = 50
    data = pd.DataFrame(
        {
            "income": rng.normal(100, 10, n).round(2).astype(str),
            "hours": rng.normal(38, 5, n).round(1),
        }
    )
    data.loc[6, "income"] = "abc"
    data.loc[20, "income"] = "n/k"
    path = tmp_path / "in.csv"
    data.to_csv(path, index=False)
    assert path.read_text().splitlines()[7].startswith("abc,")  # line 8 of the file
    out = tmp_path / "o.csv"
    for extra in ([], ["--impute"]):
        assert main(["rwn", str(path), "-o", str(out), *extra, "--quiet"]) == 2
        err = _err(capsys)
        assert "'income'" in err and "'abc'" in err
        assert "data row 7 (line 8 of the file)" in err
        assert "2 such value(s)" in err and "missing values" not in err
        assert not out.exists()
    for command in (["microaggregate"], ["rankswap"]):
        assert main([*command, str(path), "-o", str(out), "--quiet"]) == 2
        assert "data row 7" in _err(capsys)
    assert main(["assess", str(path), str(path), "-o", str(tmp_path / "r.html")]) == 2
    assert "data row 7" in _err(capsys)
    # Naming the words as missing makes the column numeric.
    code = main(["rwn", str(path), "-o", str(out), "--na-values", "abc,n/k", "--impute"])
    assert code == 0
    masked = read_table(out)
    assert pd.api.types.is_float_dtype(masked["income"])


def test_library_names_text_in_a_declared_numeric_column_by_1_based_row():
    from sdckit.schema import Schema

    data = pd.DataFrame({"x": ["1.5", "2.5", "oops", "4"]})
    with pytest.raises(SchemaError, match=r"'oops' at row 3 \(1 such"):
        Schema.infer(data, kinds={"x": "numeric"})
    indexed = data.set_axis(["a", "b", "c", "d"])
    with pytest.raises(SchemaError, match=r"row 3 \(index 'c'\)"):
        Schema.infer(indexed, kinds={"x": "numeric"})


def test_maskers_refuse_a_non_unique_index():
    data = pd.DataFrame(
        {"x": np.arange(10, dtype=float), "g": list("ababababab")},
        index=[0, 1, 2, 3, 4, 5, 6, 7, 8, 3],
    )
    for run in (
        lambda: rank_swap(data, columns=["x"], window_percent=50),
        lambda: microaggregate(data, columns=["x"], group_size=3),
        lambda: swap(data, columns=["g"], rate=0.2, random_state=1),
    ):
        with pytest.raises(DataError, match=r"label 3 appears again at row 10"):
            run()


def test_parquet_with_a_non_unique_index_is_refused(tmp_path):
    data = pd.DataFrame({"x": [1.0, 2.0, 3.0]}, index=[5, 5, 6])
    path = tmp_path / "d.parquet"
    data.to_parquet(path)
    with pytest.raises(DataError, match="not unique"):
        read_table(path)


def test_sample_weight_error_names_a_1_based_row_and_a_plain_value():
    data = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "w": [1.0, 2.0, -3.0, 1.0]})
    with pytest.raises(DataError) as info:
        microaggregate(data, columns=["x"], group_size=2, sample_weights="w")
    message = str(info.value)
    assert "row 3 has -3.0" in message and "np.float64" not in message
