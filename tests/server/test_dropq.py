"""Drop q (Lucero et al. 2011, Section 3.1.2): deterministic per universe, secret, q uniform on {2..k}."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from server_fixtures import SECRET

from sdckit.errors import DataError, ParameterError
from sdckit.server import AnalysisServer
from sdckit.server.dropq import DropQ, unit_keys
from sdckit.server.universe import evaluate_universe, parse_universe


def kept_labels(server: AnalysisServer, data: pd.DataFrame, universe: str) -> set:
    prepared = server._prepare(universe, {})
    return set(data.index[prepared.positions])


def test_same_universe_same_subsample(server, people):
    first = kept_labels(server, people, "sex = female")
    again = kept_labels(server, people, "sex = female")
    assert first == again
    dropped = people.index[people.sex == "female"].difference(list(first))
    assert 2 <= dropped.size <= server.config.drop_q_k


def test_identical_universes_by_different_expressions(server, people):
    a = kept_labels(server, people, "sex = female")
    b = kept_labels(server, people, "sex = female AND region in {north, south, east, west}")
    c = kept_labels(
        server,
        people,
        "sex = female AND region in {north, south} OR sex = female AND region in {east, west}",
    )
    assert a == b == c


def test_different_secret_different_subsample(people, people_metadata):
    one = AnalysisServer(people, people_metadata, secret=SECRET)
    two = AnalysisServer(people, people_metadata, secret=b"another-secret-0123456789")
    universes = ["sex = female", "sex = male", "region = north", "ALL"]
    differ = [kept_labels(one, people, u) != kept_labels(two, people, u) for u in universes]
    assert all(differ)


def test_subsample_does_not_depend_on_row_order(people, people_metadata):
    shuffled = people.sample(frac=1.0, random_state=3)
    a = AnalysisServer(people, people_metadata, secret=SECRET)
    b = AnalysisServer(shuffled, people_metadata, secret=SECRET)
    assert kept_labels(a, people, "region = east") == kept_labels(b, shuffled, "region = east")


def test_q_uniform_on_2_to_k():
    rng = np.random.default_rng(0)
    keys = rng.permutation(100_000).astype(np.int64)[:3000]
    k = 5
    dropq = DropQ(keys, SECRET, k)
    qs = []
    for _ in range(2000):
        members = rng.random(keys.size) < 0.5
        sample = dropq.subsample(members)
        assert sample.kept.size == members.sum() - sample.q
        assert members[sample.kept].all()
        qs.append(sample.q)
    counts = np.bincount(qs, minlength=k + 1)[2:]
    assert counts.min() > 0
    # 2000 draws over 4 values: each share within 5 binomial standard errors of 1/4.
    se = np.sqrt(0.25 * 0.75 / 2000)
    assert np.all(np.abs(counts / 2000 - 0.25) < 5 * se)


def test_secret_and_universe_checks():
    keys = np.arange(50, dtype=np.int64)
    with pytest.raises(ParameterError, match="16 bytes"):
        DropQ(keys, b"short", 5)
    with pytest.raises(ParameterError, match="drop_q_k"):
        DropQ(keys, SECRET, 1)
    dropq = DropQ(keys, SECRET, 5)
    with pytest.raises(DataError, match="more than k"):
        dropq.subsample(np.arange(50) < 5)
    sample = dropq.subsample(np.ones(50, dtype=bool))
    assert str(sample.q) not in repr(sample).replace("kept=", "")[-3:]
    assert "q" not in repr(sample).split("(")[1].split("=")[0]


def test_unit_keys_strings_and_duplicates():
    keys = unit_keys(pd.Index(["a", "b", "c"]))
    assert keys.dtype == np.int64 and np.unique(keys).size == 3
    with pytest.raises(DataError, match="uniquely"):
        unit_keys(pd.Index([1, 1, 2]))


def test_seed_is_a_function_of_the_unit_set(people, people_metadata):
    codes = people_metadata.encode(people)
    dropq = DropQ(unit_keys(people.index), SECRET, 5)
    a = evaluate_universe(parse_universe("sex = male", people_metadata), people_metadata, codes)
    b = evaluate_universe(parse_universe("region = north", people_metadata), people_metadata, codes)
    assert dropq.seed(a.members) == dropq.seed(a.members.copy())
    assert dropq.seed(a.members) != dropq.seed(b.members)
