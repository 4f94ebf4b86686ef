"""Universes: parsing, disjoint/joint classification and sizes through the implicit table.

Uses the gender x income universes of Lucero et al. (2011), Section 3.1.1 (Tables 1 and 2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.server import rules
from sdckit.server.cutpoints import Binning
from sdckit.server.metadata import CATEGORICAL, CONTINUOUS, Metadata, Variable
from sdckit.server.universe import (
    Universe,
    UniverseError,
    as_universe,
    evaluate_universe,
    parse_universe,
)

# n_{i,j} of Table 1: rows male, female; columns the four income bins
# [0, 28000), [28000, 39000), [39000, 45000), [45000, 53000].
COUNTS = np.array([[60, 45, 35, 70], [80, 30, 40, 55]])
EDGES = (0.0, 28000.0, 39000.0, 45000.0, 53000.0)


@pytest.fixture(scope="module")
def table1():
    mids = [14000.0, 33500.0, 42000.0, 49000.0]
    rows = []
    for i, gender in enumerate(["male", "female"]):
        for j, mid in enumerate(mids):
            rows += [(gender, mid)] * int(COUNTS[i, j])
    data = pd.DataFrame(rows, columns=["gender", "income"])
    metadata = Metadata(
        {
            "gender": Variable("gender", CATEGORICAL, "Gender", ("male", "female")),
            "income": Variable("income", CONTINUOUS, "Income", binning=Binning("given", EDGES)),
        }
    )
    return data, metadata, metadata.encode(data)


def test_table1_disjoint_universe(table1):
    _data, metadata, codes = table1
    # (1) gender = female AND 45000 < income <= 53000  OR  (2) gender = male AND 28000 < income <= 45000
    u = parse_universe(
        "gender = female AND income in bin 3 OR gender = male AND income in bins 1, 2", metadata
    )
    ev = evaluate_universe(u, metadata, codes)
    assert not ev.joint
    assert ev.size == COUNTS[1, 3] + COUNTS[0, 1] + COUNTS[0, 2]
    # Bins of income are combined within piece (2): n_{2,4} >= G and n_{1,2} + n_{1,3} >= G.
    assert [g.count for g in ev.groups] == [COUNTS[1, 3], COUNTS[0, 1] + COUNTS[0, 2]]
    assert {g.threshold for g in ev.groups} == {"gamma"}
    assert rules.universe_gamma(ev, gamma=55, gamma_star=10, rules="mas2011").passed
    refused = rules.universe_gamma(ev, gamma=56, gamma_star=10, rules="mas2011")
    assert not refused.passed
    assert "piece 1" in refused.reason and "55" not in refused.reason
    # The default set gives one generic reason, naming no piece.
    generic = rules.universe_gamma(ev, gamma=56, gamma_star=10)
    assert not generic.passed and "piece 1" not in generic.reason
    assert generic.reason == rules.GENERIC_SMALL_REASON


def test_table2_joint_universe(table1):
    _data, metadata, codes = table1
    # (3) gender = female  OR  (4) 39000 < income <= 53000
    u = parse_universe("gender = female OR income in bins 2, 3", metadata)
    ev = evaluate_universe(u, metadata, codes)
    assert ev.joint
    n2 = COUNTS[1].sum()
    n34 = COUNTS[:, 2:].sum()
    inter = COUNTS[1, 2] + COUNTS[1, 3]
    assert ev.size == n2 + n34 - inter
    assert [(g.count, g.threshold) for g in ev.groups] == [
        (n2, "gamma"),
        (n34, "gamma"),
        (inter, "gamma_star"),
    ]
    assert rules.universe_gamma(ev, gamma=150, gamma_star=inter, rules="mas2011").passed
    refused = rules.universe_gamma(ev, gamma=150, gamma_star=inter + 1, rules="mas2011")
    assert not refused.passed and "intersection" in refused.reason


def test_every_level_is_one_class(table1):
    _, metadata, codes = table1
    u = parse_universe("gender in {male, female} AND income in bin 3", metadata)
    ev = evaluate_universe(u, metadata, codes)
    # Every level of gender is "gender observed": one class; no unit lacks gender,
    # so the condition is no condition at all (nothing beside it to check).
    assert [(g.count, g.level_counts, g.missing_counts) for g in ev.groups] == [
        (COUNTS[:, 3].sum(), (), ())
    ]


def test_no_marginal_rule_on_table1(table1):
    _, metadata, codes = table1
    u = parse_universe("gender = female AND income in bin 3", metadata)
    ev = evaluate_universe(u, metadata, codes)
    # Margins n_{i.} and n_{.j} of Table 1 are all >= 3.
    assert rules.no_marginal_1_or_2(ev).passed


def test_members_match_pandas(table1):
    data, metadata, codes = table1
    u = parse_universe("gender = female OR income in bins 2, 3", metadata)
    ev = evaluate_universe(u, metadata, codes)
    expected = (data.gender == "female") | (data.income >= 39000)
    np.testing.assert_array_equal(ev.members, expected.to_numpy())


def test_everything_and_roundtrips(table1):
    _, metadata, codes = table1
    assert parse_universe("ALL", metadata).is_everything
    assert parse_universe("  ", metadata).is_everything
    assert as_universe(None, metadata).is_everything
    ev = evaluate_universe(Universe(()), metadata, codes)
    assert ev.size == COUNTS.sum()
    text = "gender = female AND income in bin 3 OR income in bins 0, 1"
    u = parse_universe(text, metadata)
    assert parse_universe(u.to_string(), metadata) == u
    assert as_universe(u.to_dict(), metadata) == u
    structure = {"pieces": [{"gender": ["female"], "income": {"bins": [3]}}, {"income": [0, 1]}]}
    assert as_universe(structure, metadata) == u


def test_same_units_different_expressions(table1):
    _, metadata, codes = table1
    a = evaluate_universe(parse_universe("gender = female", metadata), metadata, codes)
    b = evaluate_universe(
        parse_universe("gender = female AND income in bins 0, 1, 2, 3", metadata), metadata, codes
    )
    np.testing.assert_array_equal(a.members, b.members)


def test_keywords_case_insensitive_and_quotes():
    metadata = Metadata({"state": Variable("state", CATEGORICAL, "", ("New York", "Ohio", "or"))})
    u = parse_universe("state in {'New York', \"or\"} or state = Ohio", metadata)
    assert len(u.pieces) == 2
    assert parse_universe(u.to_string(), metadata) == u


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("income = 46000", "continuous"),
        ("income in bin 9", "bins 0..3"),
        ("gender = other", "no level"),
        ("age = 3", "not available"),
        ("gender female", "expected"),
        ("gender = female AND", "at the end"),
        ("gender = female; DROP TABLE", "unexpected character"),
        ("income in node 1", "not binned by partitioning"),
        ("gender = male AND gender = female", "selects nobody"),
        ("gender in bin 1", "categorical"),
    ],
)
def test_bad_universes(table1, text, match):
    _, metadata, _ = table1
    with pytest.raises(UniverseError, match=match):
        parse_universe(text, metadata)


def test_too_many_pieces(table1):
    _, metadata, codes = table1
    u = parse_universe(" OR ".join(f"income in bin {j}" for j in range(4)), metadata)
    with pytest.raises(UniverseError, match="pieces"):
        evaluate_universe(u, metadata, codes, max_pieces=3)
