"""Targeted record swapping: households at risk move, similar households take their place.

A synthetic census with a known truth: households planted with a rare
combination of the risk variables must be swapped, at the coarsest level at
which they are at risk, with a household of the same size in another area of
the same parent; the counts of households by area and size are unchanged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError, ParameterError
from sdckit.microdata import record_swap

GEO = ["region", "district"]


def _census(n_households: int = 600, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for h in range(n_households):
        region = int(rng.integers(0, 3))
        district = f"{region}-{int(rng.integers(0, 4))}"
        size = int(rng.integers(1, 5))
        for _ in range(size):
            rows.append(
                {
                    "hid": h,
                    "region": f"R{region}",
                    "district": district,
                    "size": size,
                    "age": rng.choice(["0-17", "18-64", "65+"], p=[0.25, 0.6, 0.15]),
                    "sex": rng.choice(["f", "m"]),
                    "income": float(rng.lognormal(10, 0.5)),
                }
            )
    return pd.DataFrame(rows)


def _household_table(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.groupby("hid")[[*GEO, "size"]].first()


def test_planted_households_at_risk_are_swapped() -> None:
    data = _census()
    # Plant three households of one person aged 100+: unique in their district (and region).
    planted = data.groupby("hid").filter(lambda g: len(g) == 1).hid.unique()[:3]
    data.loc[data.hid.isin(planted), "age"] = "100+"
    before = data.copy()
    result = record_swap(
        data,
        columns=GEO,
        keys=["age", "sex"],
        household="hid",
        similarity=["size"],
        swap_rate=0.05,
        k_anonymity=3,
        random_state=4,
    )
    pd.testing.assert_frame_equal(data, before)
    out = result.data
    diag = result.diagnostics
    for h in planted:
        rows = data.hid == h
        # At risk already at the region level (no one else is 100+), so swapped there.
        assert (diag.loc[rows, "at_risk"] == 1).all() and (diag.loc[rows, "level"] == 1).all()
        assert (out.loc[rows, "region"] != data.loc[rows, "region"]).all()
    assert result.stats["at_risk_not_swapped"] == 0
    assert result.stats["swapped_share"] >= 0.05
    # Only the geography changed; within a household it is still one place.
    pd.testing.assert_frame_equal(out.drop(columns=GEO), data.drop(columns=GEO))
    assert (out.groupby("hid")[GEO].nunique() == 1).all().all()
    # Households by area and size unchanged, at each level.
    old, new = _household_table(data), _household_table(out)
    for depth in (1, 2):
        cols = [*GEO[:depth], "size"]
        pd.testing.assert_series_equal(
            old.value_counts(cols).sort_index(), new.value_counts(cols).sort_index()
        )
    # Each swap exchanges the places of two households of the same size.
    moved = old.index[(old[GEO] != new[GEO]).any(axis=1)]
    assert len(moved) % 2 == 0
    text = result.summary()
    assert "per column" in text and "district" in text


@st.composite
def _files(draw):
    n = draw(st.integers(2, 40))
    region = draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n))
    district = [
        f"{r}{d}"
        for r, d in zip(
            region, draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n)), strict=True
        )
    ]
    frame = pd.DataFrame(
        {
            "region": region,
            "district": district,
            "key": draw(st.lists(st.sampled_from(["p", "q", "r"]), min_size=n, max_size=n)),
            "size": draw(st.lists(st.sampled_from([1, 2]), min_size=n, max_size=n)),
        }
    )
    return frame, draw(st.floats(0.0, 1.0)), draw(st.integers(1, 4)), draw(st.integers(0, 99))


@settings(max_examples=60, deadline=None)
@given(_files())
def test_swaps_stay_within_parents_and_keep_counts(case) -> None:
    frame, rate, k, seed = case
    result = record_swap(
        frame,
        columns=GEO,
        keys=["key"],
        similarity=["size"],
        swap_rate=rate,
        k_anonymity=k,
        random_state=seed,
    )
    out, diag = result.data, result.diagnostics
    for cols in (["region", "size"], ["region", "district", "size"]):
        pd.testing.assert_series_equal(
            frame.value_counts(cols).sort_index(), out.value_counts(cols).sort_index()
        )
    level1 = diag.level == 1
    level2 = diag.level == 2
    assert (out.region[level1] != frame.region[level1]).all()
    assert (out.region[level2] == frame.region[level2]).all()
    assert (out.district[level2] != frame.district[level2]).all()
    unchanged = diag.level == 0
    pd.testing.assert_frame_equal(out[unchanged], frame[unchanged])
    # Every household at risk is swapped unless counted as having no donor.
    assert int(((diag.at_risk > 0) & ~diag.swapped).sum()) == result.stats["at_risk_not_swapped"]


def test_same_seed_same_release() -> None:
    data = _census(200)
    setting = {"columns": GEO, "keys": ["age"], "household": "hid", "similarity": ["size"]}
    a = record_swap(data, **setting, random_state=7)
    b = record_swap(data, **setting, random_state=7)
    pd.testing.assert_frame_equal(a.data, b.data)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, ParameterError, "columns: name the geographic hierarchy"),
        ({"columns": GEO, "swap_rate": 1.5}, ParameterError, "swap_rate"),
        ({"columns": GEO, "keys": ["region"]}, ParameterError, "keys and columns"),
        (
            {"columns": GEO, "household": "hid", "similarity": ["age"]},
            DataError,
            "column 'age' differs within a household",
        ),
        ({"columns": ["nope"]}, Exception, "unknown column"),
    ],
)
def test_bad_input_one_line(kwargs: dict, error: type, message: str) -> None:
    data = _census(30)
    with pytest.raises(error, match=message) as info:
        record_swap(data, **kwargs)
    assert "\n" not in str(info.value)


def test_cli_recordswap(tmp_path, capsys) -> None:
    from cli_words import sdckit

    data = _census(300)
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    data.to_csv(src, index=False)
    code = sdckit(
        "recordswap {} -o {} --geography region,district --keys age,sex --household hid "
        "--similarity size --swap-rate 0.1 --seed 2",
        src,
        out,
    )
    assert code == 0
    released = pd.read_csv(out)
    assert list(released.columns) == list(data.columns)
    assert (released.district != data.district).mean() > 0.05
    assert "record_swap" in capsys.readouterr().err
