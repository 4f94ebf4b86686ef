"""k-anonymity search: the optimum equals a brute force over the lattice; the result is k-anonymous."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_local_suppression import _smallest_class

from sdckit.assess import key_risk
from sdckit.errors import ParameterError
from sdckit.microdata import Hierarchy, kanon
from sdckit.microdata.kanon import search_lattice


def _people(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(16, 90, n),
            "job": rng.choice(
                ["clerk", "baker", "nurse", "cook", "pilot"], n, p=[0.4, 0.2, 0.2, 0.15, 0.05]
            ),
            "sex": rng.choice(["f", "m"], n),
            "income": rng.lognormal(10, 0.5, n),
        }
    )


def _hierarchies(tmp_path) -> dict[str, Hierarchy]:
    path = tmp_path / "job.csv"
    path.write_text(
        "clerk;office;*\nbaker;food;*\ncook;food;*\nnurse;care;*\npilot;care;*\n", encoding="utf-8"
    )
    return {"age": Hierarchy.from_intervals([5, 10, 20]), "job": Hierarchy.from_csv(path)}


@pytest.mark.parametrize(("k", "limit"), [(2, 0.0), (3, 0.02), (5, 0.05), (10, 0.1)])
def test_search_equals_brute_force(tmp_path, k, limit):
    data = _people()
    hierarchies = _hierarchies(tmp_path)
    keys = ["age", "job", "sex"]
    fast = search_lattice(data, keys, hierarchies, k=k, max_suppression=limit)
    brute = search_lattice(data, keys, hierarchies, k=k, max_suppression=limit, exhaustive=True)
    assert fast.loss == pytest.approx(brute.loss) and fast.levels == brute.levels
    assert brute.evaluated == brute.lattice_size == 5 * 3 * 1
    assert fast.suppressed_share <= limit


def test_kanon_result_is_k_anonymous(tmp_path):
    data = _people()
    before = data.copy()
    result = kanon(
        data, columns=["age", "job", "sex"], k_anonymity=5, hierarchies=_hierarchies(tmp_path)
    )
    pd.testing.assert_frame_equal(data, before)
    check = key_risk(result.data, ["age", "job", "sex"], missing="any")
    assert check.k_anonymity >= 5
    assert result.stats["achieved_k"] >= 5
    pd.testing.assert_series_equal(result.data["income"], data["income"])
    assert result.stats["levels"]["sex"] == 0


def test_impossible_search_is_explained():
    data = pd.DataFrame({"a": list("abcdef")})
    with pytest.raises(ParameterError, match="no generalisation reaches k-anonymity"):
        kanon(data, columns=["a"], k_anonymity=2, max_suppression=0.0, hierarchies={})


@st.composite
def _kanon_cases(draw):
    n = draw(st.integers(3, 25))
    frame = pd.DataFrame(
        {
            "age": draw(st.lists(st.integers(0, 39), min_size=n, max_size=n)),
            "job": draw(
                st.lists(st.one_of(st.none(), st.sampled_from("abcd")), min_size=n, max_size=n)
            ),
            "sex": draw(st.lists(st.sampled_from("fm"), min_size=n, max_size=n)),
        }
    )
    k = draw(st.integers(1, n))
    limit = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    combinations = draw(st.sampled_from([None, 1, 2]))
    missing = draw(st.sampled_from(["any", "category"]))
    return frame, k, limit, combinations, missing


_JOB = pd.DataFrame([("a", "ab", "*"), ("b", "ab", "*"), ("c", "cd", "*"), ("d", "cd", "*")])


@settings(max_examples=25, deadline=None)
@given(_kanon_cases())
def test_kanon_property_every_combination_k_anonymous(case):
    frame, k, limit, combinations, missing = case
    keys = ["age", "job", "sex"]
    hierarchies = {
        "age": Hierarchy.from_intervals([10, 20]),
        "job": Hierarchy(table=_JOB),
        "sex": Hierarchy(table=pd.DataFrame([("f", "*"), ("m", "*")])),
    }
    fast = search_lattice(frame, keys, hierarchies, k=k, max_suppression=limit)
    brute = search_lattice(frame, keys, hierarchies, k=k, max_suppression=limit, exhaustive=True)
    # The rolled-up class counts find the optimum the record counts find.
    assert fast.loss == pytest.approx(brute.loss) and fast.levels == brute.levels
    result = kanon(
        frame,
        columns=keys,
        k_anonymity=k,
        hierarchies=hierarchies,
        max_suppression=limit,
        combinations=combinations,
        missing=missing,
    )
    released = result.data.astype(object).where(result.data.notna(), None)
    size = len(keys) if combinations is None else combinations
    subsets = [keys] if combinations is None else None
    for m in range(1, size + 1):
        for combo in subsets or itertools.combinations(keys, m):
            assert _smallest_class(released, list(combo), missing) >= k, (combo, missing)
