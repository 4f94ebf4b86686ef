"""Whole classes of a categorical condition under the Universe Gamma rule.

A condition that selects every level of a variable is "the variable
observed", and a declared group selected whole is one class (a recode's
category); both are checked as one piece. What differencing could isolate
next to them is checked against Gamma*: the units missing the variable
(ALL minus "observed") and the class's levels of fewer than Gamma units
taken together (the class minus the levels that can be asked one by one).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import SchemaError
from sdckit.server import AnalysisServer, rules
from sdckit.server.cutpoints import Binning
from sdckit.server.metadata import CATEGORICAL, CONTINUOUS, Metadata, Variable
from sdckit.server.universe import evaluate_universe, parse_universe

GAMMA, GAMMA_STAR = 50, 25
SECRET = b"universe-classes-test-secret-000"


def _people(rare: int, missing: int, *, groups=None) -> tuple[pd.DataFrame, Metadata]:
    """Countries a (300), b (200) and the rare c; ``missing`` people without a country."""
    countries = ["a"] * 300 + ["b"] * 200 + ["c"] * rare + [None] * missing
    n = len(countries)
    data = pd.DataFrame(
        {
            "country": countries,
            "age": np.tile([20.0, 40.0], n // 2 + 1)[:n],
            "wage": np.linspace(10.0, 90.0, n),
        }
    )
    metadata = Metadata(
        {
            "country": Variable(
                "country", CATEGORICAL, levels=("a", "b", "c"), groups=groups or {}
            ),
            "age": Variable("age", CONTINUOUS, binning=Binning("given", (0.0, 30.0, 60.0))),
            "wage": Variable("wage", CONTINUOUS, binning=Binning("given", (0.0, 50.0, 100.0))),
        }
    )
    return data, metadata


def _verdict(data, metadata, text, rule_set="default"):
    ev = evaluate_universe(parse_universe(text, metadata), metadata, metadata.encode(data))
    return rules.universe_gamma(ev, gamma=GAMMA, gamma_star=GAMMA_STAR, rules=rule_set)


EVERY = "country in {a, b, c}"


@pytest.mark.parametrize(
    ("rare", "missing", "passes"),
    [
        (60, 0, True),  # no missing value: every level is no condition at all
        (10, 0, True),  # ... even with a rare level: the universe is ALL
        (60, 30, True),  # the missing units are a set of at least Gamma*
        (60, 2, False),  # ALL minus "observed" would be those two units
        (10, 30, False),  # "observed" minus a and b asked one by one would be c's ten
        (30, 30, True),  # c alone is refused, but 30 units of c together are a Gamma* set
    ],
)
def test_every_level(rare, missing, passes):
    data, metadata = _people(rare, missing)
    assert _verdict(data, metadata, EVERY).passed is passes
    # Before: c was checked on its own, so a rare c refused every level.
    assert _verdict(data, metadata, "country = c").passed is (rare >= GAMMA)


def test_missing_complement_inside_the_piece():
    data, metadata = _people(60, 30)
    # Every missing unit is aged 20 or 40 alternately; one age bin alone holds 15 of them.
    inside = f"{EVERY} AND age in bin 0"
    assert not _verdict(data, metadata, inside).passed
    assert _verdict(data, metadata, f"{EVERY} AND age in bins 0, 1").passed


def test_default_refuses_an_empty_complement_like_a_small_one():
    # The missing units all sit in age bin 1: within bin 0, none lacks a country.
    data, metadata = _people(60, 30)
    data.loc[data["country"].isna(), "age"] = 40.0
    text = f"{EVERY} AND age in bin 0"
    default = _verdict(data, metadata, text)
    assert not default.passed and default.reason == rules.GENERIC_SMALL_REASON
    # The paper's rule set checks only non-empty sets, as for intersections.
    assert _verdict(data, metadata, text, "mas2011").passed
    small = _people(60, 2)
    refused = _verdict(*small, EVERY, "mas2011")
    assert not refused.passed and "missing the variable" in refused.reason


@pytest.mark.parametrize("missing", [0, 1, 2, 24])
def test_the_refusal_is_the_same_for_none_one_two_and_many(missing):
    data, metadata = _people(60, 30)
    data.loc[data["country"].isna(), "age"] = 40.0
    data.loc[data.index[data["country"].isna()][:missing], "age"] = 20.0
    verdict = _verdict(data, metadata, f"{EVERY} AND age in bin 0")
    assert not verdict.passed and verdict.reason == rules.GENERIC_SMALL_REASON


GROUPS = {"west": ["a", "c"]}


@pytest.mark.parametrize(("rare", "passes"), [(1, False), (2, False), (0, False), (30, True)])
def test_declared_group(rare, passes):
    data, metadata = _people(rare, 0, groups=GROUPS)
    # The group is one class, but "west" minus "a" (asked alone) would be c.
    assert _verdict(data, metadata, "country in {a, c}").passed is passes
    # Levels outside a whole group are still checked one by one.
    assert not _verdict(data, metadata, "country in {b, c}").passed
    assert _verdict(data, metadata, "country = a").passed


def test_group_checked_apart_from_other_levels():
    data, metadata = _people(30, 0, groups=GROUPS)
    ev = evaluate_universe(
        parse_universe("country in {a, b, c} AND age in bin 0", metadata),
        metadata,
        metadata.encode(data),
    )
    # Every level wins over the group: one class.
    assert len(ev.groups) == 1
    metadata = Metadata(
        {
            **metadata.variables,
            "country": Variable("country", CATEGORICAL, levels=("a", "b", "c", "d"), groups=GROUPS),
        }
    )
    ev = evaluate_universe(
        parse_universe("country in {a, b, c}", metadata), metadata, metadata.encode(data)
    )
    assert [g.description.rsplit("), ", 1)[1] for g in ev.groups] == [
        "country in group west",
        "country = b",
    ]
    assert [g.count for g in ev.groups] == [330, 200]


def _count_difference(server, big, small):
    """The differencing attack: the total count of two universes, subtracted."""
    answers = [server.crosstab(u, "country") for u in (big, small)]
    if any(a.refused for a in answers):
        return None
    return answers[0].total - answers[1].total


@pytest.mark.parametrize("perturbation", [True, False])
def test_differencing_every_level_against_all(perturbation):
    # Two people lack a country: ALL minus "every level" would count them.
    data, metadata = _people(60, 2)
    server = AnalysisServer(data, metadata, {"perturbation": perturbation}, secret=SECRET)
    assert not server.crosstab("ALL", "age").refused
    assert _count_difference(server, "ALL", EVERY) is None


@pytest.mark.parametrize("perturbation", [True, False])
def test_differencing_a_group_against_the_group_minus_one_category(perturbation):
    data, metadata = _people(1, 0, groups=GROUPS)
    server = AnalysisServer(data, metadata, {"perturbation": perturbation}, secret=SECRET)
    assert not server.crosstab("country = a", "age").refused
    # The group is answered without its rare category c: as "country = a", word for word.
    assert _count_difference(server, "country in {a, c}", "country = a") == 0
    mas = AnalysisServer(data, metadata, {"perturbation": perturbation, "rules": "mas2011"},
                         secret=SECRET)  # fmt: skip
    assert _count_difference(mas, "country in {a, c}", "country = a") is None


@pytest.mark.parametrize(
    ("universe", "answered_as"),
    [
        ("country in {b, c}", "country = b"),  # c (10 people) listed beside b
        (EVERY, "country in {a, b}"),  # every level: c's ten are too few beside it
        ("country in {a, b, c} AND age in bin 0", "age in bin 0 AND country in {a, b}"),
    ],
)
def test_rare_categories_are_left_out_and_said(universe, answered_as):
    data, metadata = _people(10, 30)
    server = AnalysisServer(data, metadata, secret=SECRET)
    answer = server.crosstab(universe, "age", mean_of="wage")
    direct = server.crosstab(answered_as, "age", mean_of="wage")
    assert not answer.refused and answer.universe == answered_as
    (gamma,) = [v for v in answer.verdicts if v.rule == "universe_gamma"]
    assert gamma.adjustments == (
        f"country: category 'c' left out of the universe, too small to be selected (Universe "
        f"Gamma rule); the answer is for the universe {answered_as}",
    )
    # Nothing but the answer to the narrower universe asked directly (same Drop q, same noise).
    same = ("counts", "row_totals", "total", "means", "row_means", "total_mean")
    assert [answer.to_dict()[k] for k in same] == [direct.to_dict()[k] for k in same]
    # The category alone is refused: leaving it out says what that refusal says.
    assert server.crosstab("country = c", "age").refused


@pytest.mark.parametrize(
    "universe",
    [
        "country = c",  # nothing would be left
        "country in {b, c} OR age in bin 0",  # several pieces
        "country in {b, c} AND age in bin 1 AND wage in bin 0",  # b's piece is too small too
    ],
)
def test_rare_categories_not_left_out(universe):
    data, metadata = _people(10, 30)
    data.loc[data["country"] == "b", "wage"] = 80.0  # no b in wage bin 0
    answer = AnalysisServer(data, metadata, secret=SECRET).crosstab(universe, "age")
    assert answer.refused and "universe_gamma" in answer.rules


def test_bad_groups():
    with pytest.raises(SchemaError, match="group 'west' lists unknown level"):
        Variable("country", CATEGORICAL, levels=("a", "b"), groups={"west": ["a", "z"]})
    with pytest.raises(SchemaError, match="level 'a' is in groups 'x' and 'y'"):
        Variable("country", CATEGORICAL, levels=("a", "b", "c"),
                 groups={"x": ["a", "b"], "y": ["a", "c"]})  # fmt: skip
    with pytest.raises(SchemaError, match="needs at least two levels"):
        Variable("country", CATEGORICAL, levels=("a", "b"), groups={"x": ["a"]})
    with pytest.raises(SchemaError, match="only a categorical variable has groups"):
        Variable("age", CONTINUOUS, binning=Binning("given", (0.0, 1.0)), groups={"x": ["a"]})


def test_groups_round_trip_and_are_public(tmp_path):
    _, metadata = _people(60, 0, groups={"west": ["c", "a"]})
    assert metadata.variable("country").groups == {"west": ("a", "c")}
    public = metadata.to_dict(public=True)["variables"]["country"]
    assert public["groups"] == {"west": ["a", "c"]}
    path = metadata.to_yaml(tmp_path / "meta.yaml")
    assert Metadata.from_yaml(path) == metadata
