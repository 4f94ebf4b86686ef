"""A regression may not release the cell means that the dominance rule suppresses in a table."""

from __future__ import annotations

import pytest
from server_fixtures import SECRET, make_people

from sdckit.server import AnalysisServer, CrosstabResult, Metadata, Refusal, RegressionResult


@pytest.fixture(scope="module")
def dominated_server():
    data = make_people(2000, seed=11)
    west = data.index[data.region == "west"][:2]
    data.loc[west, "wage"] = 40_000.0  # two units dominate the west's wage total
    metadata = Metadata.infer(data, beta=40)
    return AnalysisServer(data, metadata, {"gamma": 50}, secret=SECRET)


def test_table_suppresses_the_dominated_mean(dominated_server):
    table = dominated_server.crosstab("ALL", "region", mean_of="wage")
    assert isinstance(table, CrosstabResult)
    assert table.means[table.row_labels.index("west")][0] is None


@pytest.mark.parametrize(
    ("universe", "formula"),
    [
        ("ALL", "wage ~ region"),  # intercept + region[west] = the west's mean
        ("ALL", "wage ~ region + sex"),  # category means, adjusted by known proportions
        ("region = west", "wage ~ sex"),  # the universe's mean via the sex proportions
        ("region = west", "wage ~ age"),
    ],
)
def test_regression_refused_when_the_response_is_dominated(dominated_server, universe, formula):
    result = dominated_server.regress(universe, formula)
    assert isinstance(result, Refusal)
    assert "response_dominance" in result.rules
    reason = next(v.reason for v in result.verdicts if v.rule == "response_dominance")
    assert "40000" not in reason


def test_undominated_models_still_run(dominated_server):
    assert isinstance(dominated_server.regress("ALL", "log(wage) ~ region + age"), RegressionResult)
    assert isinstance(
        dominated_server.regress("region in {north, south}", "wage ~ sex + age"), RegressionResult
    )
    released = dominated_server.regress("ALL", "log(wage) ~ region")
    assert released.verdicts[[v.rule for v in released.verdicts].index("response_dominance")].passed
