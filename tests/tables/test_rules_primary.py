"""Primary rules: parsing, frequency, dominance, p%, zero, holding-level aggregation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.tables import parse_rule, primary_suppression, tabulate


@pytest.fixture
def firms() -> pd.DataFrame:
    # cell (north, A): 100, 5, 5 (dominated); (north, B): 40, 30, 30; (south, A): 7, 0 (two
    # contributors); (south, B): zero turnover from two firms
    return pd.DataFrame(
        {
            "region": ["north"] * 6 + ["south"] * 4,
            "sector": ["A", "A", "A", "B", "B", "B", "A", "A", "B", "B"],
            "turnover": [100.0, 5, 5, 40, 30, 30, 7, 0, 0, 0],
            "holding": ["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9", "h10"],
        }
    )


def cell(table: pd.DataFrame, region: str, sector: str) -> pd.Series:
    return table[(table["region"] == region) & (table["sector"] == sector)].iloc[0]


def test_parse_rule_forms_and_errors() -> None:
    assert parse_rule("freq>=3").threshold == 3
    assert parse_rule("freq >= 5 protection=2").protection == 2.0
    rule = parse_rule("dominance n=2 k=85")
    assert (rule.kind, rule.n, rule.k) == ("dominance", 2, 85.0)
    assert parse_rule("p% p=10").p == 10.0
    assert parse_rule("zero").kind == "zero"
    with pytest.raises(ParameterError, match="not understood"):
        parse_rule("threshold 3")
    with pytest.raises(ParameterError, match=r"needs \['k'\]"):
        parse_rule("dominance n=2")
    with pytest.raises(ParameterError, match="'x' is not a number"):
        parse_rule("p% p=x")
    with pytest.raises(ParameterError, match="takes \\['p'\\], not 'k'"):
        parse_rule("p% k=3")
    with pytest.raises(ParameterError, match="whole number"):
        parse_rule("freq>=2.5")


def test_dominance_and_p_percent_protection_levels(firms: pd.DataFrame) -> None:
    table = primary_suppression(
        firms, ["region", "sector"], rules=["dominance n=1 k=80", "p% p=10"], value="turnover"
    )
    dominated = cell(table, "north", "A")
    assert dominated["primary"] and dominated["rule"] == "dominance n=1 k=80"
    # 100/80 * 100 - 110 = 15; p%: 0.1 * 100 - (110 - 100 - 5) = 5
    assert dominated["upper_protection"] == pytest.approx(15.0)
    assert dominated["sensitivity"] == pytest.approx(100 - 0.8 * 110)
    spread = cell(table, "north", "B")
    assert not spread["primary"] and spread["upper_protection"] == 0
    two = cell(table, "south", "A")  # 7 and 0: the second contributor knows the first exactly
    assert two["primary"] and two["lower_protection"] == pytest.approx(
        1.75
    )  # dominance: 100/80 * 7 - 7
    total = cell(table, "Total", "Total")
    assert total["true_sum"] == pytest.approx(217.0) and total["count"] == 10


def test_holding_level_aggregation_merges_contributors(firms: pd.DataFrame) -> None:
    merged = firms.assign(holding=["h1", "h1", "h1", "h4", "h5", "h6", "h7", "h8", "h9", "h10"])
    table = primary_suppression(
        merged,
        ["region", "sector"],
        rules=["freq>=2", "p% p=10"],
        value="turnover",
        contributor="holding",
    )
    north_a = cell(table, "north", "A")
    assert north_a["count"] == 1 and north_a["rule"] == "freq>=2"
    assert north_a["upper_protection"] == pytest.approx(11.0)  # range 10% of 110


def test_zero_rule_and_frequency_on_a_count_table(firms: pd.DataFrame) -> None:
    table = primary_suppression(firms, ["region", "sector"], rules=["zero"], value="turnover")
    assert cell(table, "south", "B")["primary"]
    assert not cell(table, "south", "A")["primary"]
    counts = tabulate(firms, ["region", "sector"])
    flagged = primary_suppression(counts, rules=["freq>=3"])
    south_a = cell(flagged, "south", "A")
    assert south_a["primary"]
    assert (south_a["upper_protection"], south_a["lower_protection"]) == (1.0, 2.0)
    assert int(flagged["primary"].sum()) == 2
    with pytest.raises(ParameterError, match="need individual contributions"):
        primary_suppression(counts, rules=["p% p=10"])


def test_bad_contributions_name_the_row(firms: pd.DataFrame) -> None:
    bad = firms.assign(turnover=np.where(np.arange(10) == 3, -1.0, firms["turnover"]))
    with pytest.raises(DataError, match="row 4 has -1.0"):
        primary_suppression(bad, ["region", "sector"], rules=["p% p=10"], value="turnover")
