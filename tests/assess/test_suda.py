"""SUDA: the MSUs found equal an enumeration of every record's subsets; scores follow them."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.assess import suda
from sdckit.assess.suda import msu_weight
from sdckit.errors import ParameterError
from shared_data import shared_csv


def _brute_force_msus(frame: pd.DataFrame, keys: list[str], max_size: int) -> set:
    """Every (record, key set) with the record unique on the set and on none of its proper subsets."""
    values = frame[keys].astype(object).fillna("<missing>").to_numpy()
    n = len(values)

    def unique(i: int, subset: tuple[int, ...]) -> bool:
        cols = list(subset)
        return all(not np.array_equal(values[i, cols], values[j, cols]) for j in range(n) if j != i)

    found = set()
    for i in range(n):
        for m in range(1, max_size + 1):
            for subset in itertools.combinations(range(len(keys)), m):
                if not unique(i, subset):
                    continue
                proper = (t for r in range(1, m) for t in itertools.combinations(subset, r))
                if not any(unique(i, t) for t in proper):
                    found.add((i, tuple(keys[j] for j in subset)))
    return found


@st.composite
def _files(draw):
    n = draw(st.integers(1, 14))
    p = draw(st.integers(1, 4))
    value = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))
    frame = pd.DataFrame({f"k{j}": draw(st.lists(value, min_size=n, max_size=n)) for j in range(p)})
    return frame, draw(st.integers(1, p))


@settings(max_examples=80, deadline=None)
@given(_files())
def test_msus_equal_brute_force_and_scores_follow(case) -> None:
    frame, max_size = case
    keys = list(frame.columns)
    result = suda(frame, keys, max_size=max_size, keep_msus=True)
    assert result.msus is not None
    found = {
        (int(r), tuple(k)) for r, k in zip(result.msus.record, result.msus["keys"], strict=True)
    }
    assert found == _brute_force_msus(frame, keys, max_size)
    p = len(keys)
    expected = np.zeros(len(frame))
    for record, subset in found:
        expected[record] += msu_weight(len(subset), p, max_size)
    np.testing.assert_allclose(result.scores.to_numpy(), expected)
    counts = result.msu_counts.to_numpy()
    for record in range(len(frame)):
        sizes = [len(s) for r, s in found if r == record]
        assert counts[record].tolist() == [sizes.count(m) for m in range(1, max_size + 1)]


def test_weights_and_contributions_by_hand() -> None:
    # p = 3 keys, M = 3: w(1) = (3-1)(3-2) = 2, w(2) = 1, w(3) = 1 (empty product).
    assert [msu_weight(k, 3, 3) for k in (1, 2, 3)] == [2.0, 1.0, 1.0]
    # M = 2 of 4 keys: w(1) = 4 - 1 = 3, w(2) = 1.
    assert [msu_weight(k, 4, 2) for k in (1, 2)] == [3.0, 1.0]
    data = pd.DataFrame(
        {
            "sex": ["f", "f", "m", "m", "m"],
            "region": ["n", "n", "n", "s", "s"],
            "job": ["a", "a", "a", "a", "b"],
        }
    )
    result = suda(data, ["sex", "region", "job"], keep_msus=True)
    # Record 5 (m, s, b) is unique on job alone: one MSU of size 1, score 2.
    # Record 3 (m, n, a) is unique on sex × region only, record 4 (m, s, a) on region × job
    # only: score 1 each.
    assert result.scores.tolist() == [0.0, 0.0, 1.0, 1.0, 2.0]
    assert result.contributions.loc[4].tolist() == [0.0, 0.0, 1.0]
    assert result.contributions.loc[2].tolist() == [1.0, 1.0, 0.0]
    assert result.attribute_contributions.to_dict() == pytest.approx(
        {"sex": 1 / 4, "region": 2 / 4, "job": 3 / 4}
    )
    assert "unique" in result.explain(4) and "job" in result.explain(4)
    assert result.special_uniques == 3


def test_scores_equal_sdcmicro_suda2() -> None:
    """The values sdcMicro's own tests expect of ``suda2`` (original scores, its default).

    Three records (2, 0, 0), (1, 3, 6), (1, 0, 0) on keys a, b, c: record 1 is
    unique on a (weight (3-1)! = 2), record 2 on b and on c (2 + 2), record 3
    on a × b and a × c (1 + 1); a carries 4 of the total 8, b and c 3 each:
    50%, 37.5%, 37.5%. On testdata2, seven keys, the first record scores 180.
    """
    tiny = pd.DataFrame({"a": ["2", "1", "1"], "b": ["0", "3", "0"], "c": ["0", "6", "0"]})
    result = suda(tiny, ["a", "b", "c"])
    assert result.scores.tolist() == [2.0, 4.0, 2.0]
    assert (100 * result.attribute_contributions).tolist() == [50.0, 37.5, 37.5]
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    data = shared_csv("testdata2.csv").astype({key: str for key in keys})
    assert suda(data, keys).scores.iloc[0] == 180.0


def test_dis_probability_by_hand() -> None:
    # Classes on all keys: two singletons, one pair: theta = pi n1 / (pi n1 + 2 (1 - pi) n2).
    data = pd.DataFrame({"a": ["x", "y", "z", "z"], "b": ["1", "1", "1", "1"]})
    pi = 0.1
    result = suda(data, ["a", "b"], sampling_fraction=pi)
    assert result.dis == pytest.approx(pi * 2 / (pi * 2 + 2 * (1 - pi) * 1))
    scored = result.dis_scores[result.scores > 0]
    assert scored.mean() == pytest.approx(result.dis)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_size": 3}, "max_size = 3 is larger than the number of keys"),
        ({"max_size": 0}, "max_size"),
        ({"sampling_fraction": 0.0}, "sampling_fraction"),
    ],
)
def test_bad_input(kwargs: dict, message: str) -> None:
    data = pd.DataFrame({"a": ["x", "y"], "b": ["1", "2"]})
    with pytest.raises(ParameterError, match=message):
        suda(data, ["a", "b"], **kwargs)


def test_suda_on_adult_agrees_with_uniqueness() -> None:
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "adult.csv"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    data = pd.read_csv(path, nrows=3000)
    keys = ["age", "education", "marital_status", "occupation", "race", "sex"]
    result = suda(data, keys, max_size=3)
    # A record with an MSU of at most 3 keys is unique on all keys together.
    on_all = data.groupby(keys, dropna=False)[keys[0]].transform("size")
    assert (on_all[result.scores > 0] == 1).all()
    # A record unique on one key is unique on age alone, say; check one MSU of size 1 directly.
    singles = result.msu_counts[1] > 0
    for key in keys:
        once = data[key].map(data[key].value_counts()) == 1
        assert not (once & ~singles).any()


def test_cli_risk_with_suda(tmp_path, capsys) -> None:
    from cli_words import sdckit

    data = pd.DataFrame(
        {
            "sex": ["f", "f", "m", "m", "m", "f"],
            "region": ["n", "n", "n", "s", "s", "n"],
            "job": ["a", "a", "a", "a", "b", "a"],
        }
    )
    src, out = tmp_path / "in.csv", tmp_path / "risk.csv"
    data.to_csv(src, index=False)
    assert sdckit("risk {} --keys sex,region,job --suda 2 -o {}", src, out) == 0
    assert "SUDA on sex × region × job (MSUs up to 2 keys)" in capsys.readouterr().out
    table = pd.read_csv(out)
    expected = suda(data, ["sex", "region", "job"], max_size=2).scores
    np.testing.assert_allclose(table["suda_score"], expected)
