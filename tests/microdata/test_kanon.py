"""k-anonymity search: the optimum equals a brute force over the lattice; the result is k-anonymous."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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
