"""Global recoding: intervals, groupings, hierarchies (CSV and intervals), top and bottom coding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.microdata import Hierarchy, recode


def test_intervals_groupings_top_bottom_by_hand():
    data = pd.DataFrame(
        {
            "age": np.array([17, 25, 34, 90], dtype=np.int64),
            "job": ["clerk", "baker", "clerk", None],
            "income": [10.0, 500.0, 80.0, 20.0],
        }
    )
    before = data.copy()
    out = recode(
        data,
        intervals={"age": [0, 20, 40, 100]},
        groupings={"job": {"clerk": "office", "baker": "trade"}},
        top={"income": 100.0},
        bottom={"income": 15.0},
    ).data
    pd.testing.assert_frame_equal(data, before)
    assert list(out["age"].astype(str)) == ["[0, 20)", "[20, 40)", "[20, 40)", "[40, 100)"]
    assert out["age"].cat.ordered
    assert list(out["job"].iloc[:3]) == ["office", "trade", "office"] and pd.isna(out["job"][3])
    assert list(out["income"]) == [15.0, 100.0, 80.0, 20.0] and out["income"].dtype == float


def test_hierarchy_from_csv_and_intervals(tmp_path):
    path = tmp_path / "job.csv"
    path.write_text("clerk;office;*\nbaker;trade;*\nnurse;care;*\n", encoding="utf-8")
    jobs = Hierarchy.from_csv(path)
    assert jobs.height == 2
    data = pd.DataFrame({"job": ["clerk", "nurse"], "age": [23, 47]})
    level1 = recode(data, hierarchies={"job": jobs}, levels={"job": 1}).data
    assert list(level1["job"]) == ["office", "care"]
    ages = Hierarchy.from_intervals([10, 20])
    assert ages.height == 3
    assert list(ages.generalise(data["age"], 1).astype(str)) == ["[20, 30)", "[40, 50)"]
    assert list(ages.generalise(data["age"], 2).astype(str)) == ["[20, 40)", "[40, 60)"]
    assert list(ages.generalise(data["age"], 3)) == ["*", "*"]
    with pytest.raises(DataError, match="does not cover the value 'cook' \\(row 2"):
        jobs.generalise(pd.Series(["clerk", "cook"]), 1, name="job")


def test_bad_settings_are_named():
    data = pd.DataFrame({"age": np.array([17, 25], dtype=np.int64)})
    with pytest.raises(DataError, match="intervals of 'age' cover \\[20, 30\\]; row 1 holds 17"):
        recode(data, intervals={"age": [20, 30]})
    with pytest.raises(ParameterError, match="top of 'age' must be a whole number"):
        recode(data, top={"age": 20.5})
    with pytest.raises(ParameterError, match="levels names column"):
        recode(data, levels={"age": 1})


def test_cli_recode_groupings(tmp_path) -> None:
    from cli_words import sdckit

    src, out, groups = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "g.csv"
    pd.DataFrame({"job": [1, 2, 3, 4, 1], "age": [20, 30, 40, 50, 60]}).to_csv(src, index=False)
    groups.write_text("1,manual\n2,manual\n3,office\n")
    assert sdckit("recode {} -o {} --groupings {}", src, out, f"job={groups}") == 0
    assert pd.read_csv(out).job.astype(str).tolist() == [
        "manual",
        "manual",
        "office",
        "4",
        "manual",
    ]
    groups.write_text("1,manual\n9,office\n")
    assert sdckit("recode {} -o {} --groupings {}", src, out, f"job={groups}") == 2
