"""Categorical key risk: Benedetti-Franconi risk, missing-value conventions, diversity, t-closeness.

Reference values are derived by hand in the comments, or by an independent
brute-force count (every pair of records compared) on small random files.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import _keys
from sdckit.assess import individual_risk, key_risk, sensitive_diversity
from sdckit.assess.categorical import benedetti_franconi
from sdckit.errors import DataError, ParameterError, SchemaError


def _series_risk(f: int, big_f: float, terms: int = 20000) -> float:
    """E(1/F | f) by summing the negative binomial series directly (independent of the code)."""
    p = f / big_f
    total, log_p, log_q = 0.0, math.log(p), math.log1p(-p)
    for h in range(f, f + terms):
        log_term = math.lgamma(h) - math.lgamma(f) - math.lgamma(h - f + 1)
        total += math.exp(log_term + f * log_p + (h - f) * log_q) / h
    return total


def test_benedetti_franconi_closed_forms():
    # f = 1, F = 4: p = 1/4, r = p/(1-p) log(1/p) = (1/3) log 4.
    # f = 2, F = 8: p = 1/4, r = p/(1-p) - (p/(1-p))^2 log(1/p) = 1/3 - (1/9) log 4.
    # f = 3, F = 6: p = 1/2, sdcMicro's approximation p/(f - (1-p)) = 0.5/2.5 = 0.2.
    # f = F: the file is the population, r = 1/f.
    r = benedetti_franconi(np.array([1, 2, 3, 4]), np.array([4.0, 8.0, 6.0, 4.0]))
    np.testing.assert_allclose(
        r, [math.log(4) / 3, 1 / 3 - math.log(4) / 9, 0.2, 0.25], rtol=0, atol=1e-12
    )


@pytest.mark.parametrize(
    ("f", "big_f"), [(1, 4.0), (2, 8.0), (3, 6.0), (5, 40.0), (12, 30.0), (107, 10700.0)]
)
def test_benedetti_franconi_exact_equals_the_series(f, big_f):
    exact = benedetti_franconi(np.array([f]), np.array([big_f]), "exact")[0]
    assert exact == pytest.approx(_series_risk(f, big_f), abs=1e-9)
    if f <= 2:  # the closed forms are exact
        approx = benedetti_franconi(np.array([f]), np.array([big_f]))[0]
        assert approx == pytest.approx(exact, abs=1e-12)


def test_individual_risk_small_weighted_file():
    data = pd.DataFrame(
        {
            "region": ["n", "n", "s", "s", "s", "e"],
            "sex": ["f", "f", "m", "m", "m", "f"],
            "w": [10.0, 30.0, 2.0, 2.0, 2.0, 1.0],
            "hid": [1, 1, 2, 2, 3, 3],
        }
    )
    result = individual_risk(data, ["region", "sex"], weight="w", household="hid")
    assert list(result.frequencies) == [2, 2, 3, 3, 3, 1]
    assert list(result.population_frequencies) == [40, 40, 6, 6, 6, 1]
    # (n, f): f = 2, p = 2/40 = 0.05: r = .05/.95 - (.05/.95)^2 log 20.
    r_nf = 0.05 / 0.95 - (0.05 / 0.95) ** 2 * math.log(20)
    # (s, m): f = 3 = ... p = 3/6: approx 0.5/2.5 = 0.2.  (e, f): f = F = 1: r = 1.
    expected = [r_nf, r_nf, 0.2, 0.2, 0.2, 1.0]
    np.testing.assert_allclose(result.risk, expected, atol=1e-12)
    assert result.expected_reidentifications == pytest.approx(sum(expected))
    assert result.global_risk == pytest.approx(sum(expected) / 6)
    # Households: {0, 1}: 1 - (1 - r_nf)^2; {2, 3}: 1 - 0.8^2 = 0.36; {4, 5}: 1 - 0.8 * 0 = 1.
    house = [1 - (1 - r_nf) ** 2] * 2 + [0.36, 0.36, 1.0, 1.0]
    np.testing.assert_allclose(result.household_risk, house, atol=1e-12)
    assert result.household_expected_reidentifications == pytest.approx(sum(house))
    assert result.sample_uniques == 1
    text = result.explain(5)
    assert text.startswith("row 6 is unique in the file on region × sex (region=e, sex=f)")
    assert "about 1 people like it" in text and "probability about 1" in text
    assert "shares its combination" in result.explain(0)
    assert "expected re-identifications" in result.summary()
    assert list(result.table().columns) == [
        "row",
        "frequency",
        "population_frequency",
        "risk",
        "household_risk",
    ]


def test_without_weights_the_risk_is_one_over_f():
    data = pd.DataFrame({"k": ["a", "a", "b", "c", "c", "c"]})
    result = individual_risk(data, ["k"])
    np.testing.assert_allclose(result.risk, [0.5, 0.5, 1, 1 / 3, 1 / 3, 1 / 3])
    assert result.expected_reidentifications == pytest.approx(3.0)


def test_missing_matches_any_value_by_hand():
    data = pd.DataFrame({"k1": ["a", "a", None, "b"], "k2": ["x", "y", "x", "x"]})
    # (a,x) matches itself and (NA,x); (a,y) only itself; (NA,x) matches (a,x), (b,x) and itself.
    assert list(key_risk(data, ["k1", "k2"], missing="any").frequencies) == [2, 1, 3, 2]
    assert list(key_risk(data, ["k1", "k2"]).frequencies) == [1, 1, 1, 1]
    weighted = key_risk(data.assign(w=[1.0, 2, 4, 8]), ["k1", "k2"], missing="any", weight="w")
    assert list(weighted.population_frequencies) == [5, 2, 13, 12]


def _brute_force_matches(codes: np.ndarray) -> np.ndarray:
    """match[i, j]: on every key, i and j agree or one of them is missing (-1)."""
    a, b = codes[:, None, :], codes[None, :, :]
    return ((a == b) | (a < 0) | (b < 0)).all(axis=2)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(-1, 2), min_size=3, max_size=3), min_size=n, max_size=n),
            st.lists(st.integers(0, 3), min_size=n, max_size=n),
        )
    )
)
def test_missing_any_equals_brute_force(rows):
    codes_list, sensitive = rows
    codes = np.array(codes_list)
    frame = pd.DataFrame(
        {f"k{j}": [None if c < 0 else f"v{c}" for c in codes[:, j]] for j in range(3)}
    )
    frame["s"] = sensitive
    match = _brute_force_matches(codes)
    result = key_risk(frame, ["k0", "k1", "k2"], missing="any", sensitive="s")
    np.testing.assert_array_equal(result.frequencies, match.sum(axis=1))
    s = np.array(sensitive)
    distinct = [len(set(s[match[i]])) for i in range(len(s))]
    np.testing.assert_array_equal(result.diversity, distinct)


def test_diversity_and_t_closeness_by_hand():
    data = pd.DataFrame(
        {
            "sex": ["m", "m", "m", "f", "f", "f", "f", "m"],
            "age": ["30s", "30s", "30s", "40s", "40s", "40s", "40s", "50s"],
            "disease": ["flu", "flu", "flu", "flu", "cold", "hiv", "flu", "cold"],
        }
    )
    d = sensitive_diversity(data, ["sex", "age"], "disease")
    # (f, 40s): flu 2, cold 1, hiv 1: 3 distinct; entropy exp(-(.5 ln .5 + 2 * .25 ln .25)) = 2^1.5;
    # recursive c = 2: l = 2 holds (2 < 2 * 2), l = 3 fails (2 < 2 * 1 is false).
    assert d.distinct.iloc[3] == 3
    assert d.entropy.iloc[3] == pytest.approx(2**1.5)
    assert d.recursive.iloc[3] == 2
    # Single-valued classes: recursive (2, 1) holds (r1 < 2 r1), entropy l = 1.
    assert d.recursive.iloc[0] == 1 and d.entropy.iloc[0] == pytest.approx(1.0)
    # File: flu 5/8, cold 2/8, hiv 1/8. Equal distance = half the L1 distance:
    # (f, 40s): .5 (.125 + 0 + .125) = .125; (m, 30s): .5 (.375 + .25 + .125) = .375;
    # (m, 50s): .5 (.625 + .75 + .125) = .75.
    np.testing.assert_allclose(d.closeness.iloc[[0, 3, 7]], [0.375, 0.125, 0.75])
    assert d.t_closeness == pytest.approx(0.75)
    assert (d.l_distinct, d.l_recursive) == (1, 1) and not d.ordered


def test_t_closeness_ordered_distance_of_the_paper():
    # Li, Li & Venkatasubramanian (2007), §4.2: salaries 3k..11k; P1 = {3k, 4k, 5k} is 0.375
    # from the whole, P2 = {6k, 8k, 11k} is 0.167 (1/6).
    data = pd.DataFrame(
        {"zip": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "salary": [3, 4, 5, 6, 8, 11, 7, 9, 10]}
    )
    d = sensitive_diversity(data, ["zip"], "salary")
    assert d.ordered
    assert d.closeness.iloc[0] == pytest.approx(0.375)
    assert d.closeness.iloc[3] == pytest.approx(1 / 6)


def test_several_sensitive_variables_and_defaults_kept():
    data = pd.DataFrame({"k": ["a", "a", "b", "b"], "s1": [1, 2, 1, 1], "s2": ["x", "x", "y", "z"]})
    result = key_risk(data, ["k"], sensitive=["s1", "s2"])
    assert result.sensitive == "s1" and result.l_diversity == 1
    assert set(result.diversities) == {"s1", "s2"}
    assert result.diversities["s2"].l_distinct == 1
    assert "recursive (2, 1)-diverse" in result.diversities["s2"].summary()
    assert result.missing == "category" and result.population_frequencies is None
    assert "sensitive 's2': 1-diverse" in result.summary()
    assert "t-close" not in result.summary()  # the summary line is the one it always was


def test_bad_input_is_named():
    data = pd.DataFrame({"k": ["a", "b"], "w": [1.0, -2.0], "s": [1, 2]})
    with pytest.raises(SchemaError, match="nope"):
        individual_risk(data, ["nope"])
    with pytest.raises(DataError, match="weight 'w'.*row 2 has -2.0"):
        individual_risk(data, ["k"], weight="w")
    with pytest.raises(ParameterError, match="missing must be"):
        key_risk(data, ["k"], missing="drop")
    with pytest.raises(ParameterError, match="method"):
        individual_risk(data, ["k"], method="fast")
    with pytest.raises(ParameterError, match="also a key"):
        sensitive_diversity(data, ["k"], "k")
    before = data.copy()
    individual_risk(data, ["k"])
    pd.testing.assert_frame_equal(data, before)


ROUTES = {
    "enumerated or joined, marginals whenever they save": (0, 0, 0.0, False),
    "enumerated or joined, no marginal": (0, 0, math.inf, False),
    "default thresholds": (64, 1000, 2.0, False),
    "compared pairwise": (10**9, 10**9, 2.0, False),
    "joins only (codes too wide for one integer)": (64, 1000, 2.0, True),
}


@pytest.fixture(params=list(ROUTES), ids=list(ROUTES))
def route(request, monkeypatch):
    """Force one route per pair of missingness patterns (the thresholds that pick it)."""
    tiny, small, payback, joins_only = ROUTES[request.param]
    monkeypatch.setattr(_keys, "_TINY_PATTERN", tiny)
    monkeypatch.setattr(_keys, "_SMALL_PATTERN", small)
    monkeypatch.setattr(_keys, "_MARGINAL_PAYBACK", payback)
    if joins_only:
        monkeypatch.setattr(_keys, "_INT64_LIMIT", 1)
    return request.param


def _holes_file(seed: int = 7, n: int = 2500) -> tuple[np.ndarray, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, c, n) for c in (12, 9, 2, 15)], axis=1)
    codes[rng.random(codes.shape) < 0.12] = -1
    codes[:3] = -1  # a few records missing every key
    frame = pd.DataFrame(
        {f"k{j}": [None if c < 0 else f"v{c}" for c in codes[:, j]] for j in range(4)}
    )
    return codes, frame


def test_missing_any_every_route_equals_brute_force(route):
    """Patterns compared pairwise, enumerated, looked up in a marginal or joined: one answer."""
    codes, frame = _holes_file()
    weights = np.random.default_rng(8).uniform(1, 5, len(codes))
    result = key_risk(frame.assign(w=weights), ["k0", "k1", "k2", "k3"], missing="any", weight="w")
    match = _brute_force_matches(codes)
    np.testing.assert_array_equal(result.frequencies, match.sum(axis=1))
    np.testing.assert_allclose(result.population_frequencies, match @ weights)


def test_matched_histogram_every_route_equals_brute_force(route):
    """The weighted histogram of a sensitive code over the records each record matches."""
    codes, _ = _holes_file(seed=11, n=1500)
    rng = np.random.default_rng(12)
    sensitive = rng.integers(0, 6, len(codes))
    weights = rng.uniform(1, 3, len(codes))
    groups = _keys.group_keys(codes, "any")
    group, value, total = groups.matched_histogram(sensitive, weights)
    assert np.all(np.diff(group * 6 + value) > 0) and np.all(total > 0)
    dense = np.zeros((groups.n_groups, 6))
    dense[group, value] = total
    match = _brute_force_matches(codes)
    expected = (match * weights) @ np.eye(6)[sensitive]
    np.testing.assert_allclose(dense[groups.group], expected)


def test_weighted_counts_matched_in_one_pass(route, monkeypatch):
    """Counts and sums of weights: one matching of the patterns, the answers of two."""
    codes, frame = _holes_file(seed=21, n=1200)
    weights = np.random.default_rng(22).uniform(1, 5, len(codes))
    groups = _keys.group_keys(codes, "any")
    counts = groups.size.astype(np.float64)
    summed = groups.sum_by_group(weights)
    separately = np.column_stack([groups.matched(counts), groups.matched(summed)])
    # The grouping's packed codes reused, or recomputed by the matching: one answer.
    unpacked = dataclasses.replace(groups, packed=None)
    np.testing.assert_allclose(unpacked.matched(np.column_stack([counts, summed])), separately)
    calls = []
    matching = _keys._match_patterns
    monkeypatch.setattr(_keys, "_match_patterns", lambda *args: calls.append(1) or matching(*args))
    together = groups.matched(np.column_stack([counts, summed]))
    np.testing.assert_allclose(together, separately)
    result = key_risk(frame.assign(w=weights), ["k0", "k1", "k2", "k3"], missing="any", weight="w")
    assert len(calls) == 2  # one for the matched columns above, one for key_risk
    match = _brute_force_matches(codes)
    np.testing.assert_array_equal(together[groups.group, 0], match.sum(axis=1))
    np.testing.assert_allclose(together[groups.group, 1], match @ weights)
    np.testing.assert_array_equal(result.frequencies, match.sum(axis=1))
    np.testing.assert_allclose(result.population_frequencies, match @ weights)
