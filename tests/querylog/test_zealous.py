"""ZEALOUS query frequencies (Götz et al. 2012) and the planted-query attack."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import ParameterError
from sdckit.querylog import planted_query_attack, read_log, zealous, zealous_parameters
from sdckit.querylog.taxonomy import ODP239Taxonomy
from shared_data import SHARED_DATA


def crowd_log() -> pd.DataFrame:
    """200 users asking "weather"; 30 asking "news"; user u0 asks ten rare queries."""
    rows = [(f"u{i}", "weather") for i in range(200)]
    rows += [(f"u{i}", "news") for i in range(30)]
    rows += [("u0", f"rare query {j}") for j in range(10)] * 3
    return pd.DataFrame(rows, columns=["AnonID", "Query"])


def test_parameters_follow_the_stability_analysis() -> None:
    lam, tau_prime = zealous_parameters(epsilon=2.0, delta=1e-4, max_queries_per_user=4, tau=3)
    assert lam == pytest.approx(2.0)
    assert tau_prime == pytest.approx(3 + 2.0 * math.log(4 / 2e-4))


def test_release_holds_frequent_queries_only_and_no_user() -> None:
    log = crowd_log()
    before = log.copy()
    release = zealous(log, epsilon=1.0, delta=1e-5, max_queries_per_user=5, random_state=0)
    pd.testing.assert_frame_equal(log, before)
    assert list(release.data.columns) == ["Query", "count"]
    assert release.data["Query"].tolist() == ["weather"]  # 30 users < tau' = 63.1
    assert abs(int(release.data["count"].iloc[0]) - 200) < 40
    assert not release.data.isin(log["AnonID"].unique()).any().any()
    assert "differentially private" in release.summary().splitlines()[0]


def test_each_user_counts_at_most_m_queries() -> None:
    # u0 asks the ten rare queries three times each and "weather" once: with
    # m = 2 her two most repeated queries count, "weather" does not.
    log = crowd_log()
    release = zealous(log, epsilon=1.0, delta=0.4, max_queries_per_user=2, tau=1, random_state=0)
    assert release.stats["n_above_tau"] == 4  # weather, news, rare query 0, rare query 1


def test_same_seed_same_release() -> None:
    a = zealous(crowd_log(), epsilon=1.0, random_state=7).data
    b = zealous(crowd_log(), epsilon=1.0, random_state=7).data
    pd.testing.assert_frame_equal(a, b)


def test_a_query_of_one_user_passes_with_probability_delta_over_m() -> None:
    # m = 1, epsilon = 1, delta = 0.1: lambda = 1, tau' = 1 + ln 5; a query
    # asked by one user passes with probability exp(-ln 5) / 2 = 0.1.
    log = read_log(pd.DataFrame({"AnonID": ["a"], "Query": ["secret"]}))
    passed = [
        len(zealous(log, epsilon=1.0, delta=0.1, max_queries_per_user=1, random_state=s).data)
        for s in range(1500)
    ]
    assert np.mean(passed) == pytest.approx(0.1, abs=4 * math.sqrt(0.09 / 1500))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"epsilon": 0}, "epsilon must be above 0"),
        ({"delta": 1.5}, "delta must be above 0 and below 1"),
        ({"max_queries_per_user": 0}, "max_queries_per_user must be a whole number"),
        ({"noise_scale": 0.5}, "noise_scale 0.5 is below 5"),
        ({"tau_prime": 3.0}, "tau_prime 3.0 is below"),
    ],
)
def test_bad_parameters_are_refused(options: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        zealous(crowd_log(), **options)


def aol_log():
    path = SHARED_DATA / "aol_query_log_sample.csv"
    odp = SHARED_DATA / "odp239_taxonomy.csv"
    if not path.exists() or not odp.exists():
        pytest.skip("shared AOL sample or ODP239 taxonomy not present")
    return read_log(path), ODP239Taxonomy(odp)


def test_planted_queries_reveal_a_target_under_microaggregation() -> None:
    log, odp = aol_log()
    attack = planted_query_attack(log, target="479", k=5, taxonomy=odp, random_state=2)
    assert attack.grouped_with_sybils
    assert attack.n_correct > 5 and attack.precision == 1.0
    assert "revealed" in attack.summary().splitlines()[0]


def test_planted_queries_gain_no_more_than_the_noise_allows_under_zealous() -> None:
    log, _ = aol_log()
    results = [
        planted_query_attack(log, target=t, method="zealous", random_state=3)
        for t in ("479", "1020", "1021")
    ]
    tested = sum(r.n_claimed for r in results)
    accuracy = sum(r.n_correct for r in results) / tested
    assert accuracy <= results[0].bound + 4 * math.sqrt(0.25 / tested)


def test_attack_needs_a_known_target() -> None:
    with pytest.raises(ParameterError, match="target user 'nobody' is not in the log"):
        planted_query_attack(crowd_log(), target="nobody")
