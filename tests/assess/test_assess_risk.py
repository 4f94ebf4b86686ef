"""Risk measures: hand-computed distances, linkage rates, k-anonymity on a toy table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdckit.assess import (
    compare_cooks_distance,
    compare_key_risk,
    compare_mahalanobis,
    distance_to_closest,
    interval_disclosure,
    key_risk,
    mahalanobis_distances,
    record_linkage,
)
from sdckit.errors import DataError, ParameterError, SchemaError


def test_mahalanobis_hand_computed_square():
    # Corners of a square and its centre: mean (1, 1), covariance I (divisor n - 1 = 4).
    data = pd.DataFrame({"x": [0.0, 2, 0, 2, 1], "y": [0.0, 0, 2, 2, 1]}, index=list("abcde"))
    d = mahalanobis_distances(data)
    np.testing.assert_allclose(d, [math.sqrt(2)] * 4 + [0.0], atol=1e-12)
    assert list(d.index) == list("abcde")
    np.testing.assert_allclose(
        mahalanobis_distances(data, squared=True), [2, 2, 2, 2, 0], atol=1e-12
    )


def test_mahalanobis_hand_computed_one_dimension():
    # mean 4, variance (9 + 4 + 1 + 0 + 36) / 4 = 12.5: the outlier 10 is 6 / sqrt(12.5) away.
    data = pd.DataFrame({"v": [1.0, 2, 3, 4, 10]})
    d = mahalanobis_distances(data)
    assert d.iloc[4] == pytest.approx(6 / math.sqrt(12.5))
    assert d.iloc[0] == pytest.approx(3 / math.sqrt(12.5))


def test_mahalanobis_outlier_masked_away():
    rng = np.random.default_rng(0)
    original = pd.DataFrame(rng.normal(size=(200, 2)), columns=["x", "y"])
    original.loc[17] = [8.0, -8.0]
    masked = original.copy()
    masked.loc[17] = [0.1, 0.2]
    result = compare_mahalanobis(original, masked)
    assert result.most_extreme == 17
    assert result.rank_in_masked > 1
    assert not result.still_most_extreme
    assert "The record at row 18" in result.note()  # index 17 is the 18th row
    same = compare_mahalanobis(original, original.copy())
    assert same.still_most_extreme and same.rank_in_masked == 1


def test_cooks_distance_hand_computed_and_compared():
    # Worked by hand: residuals .8 -.4 -1.6 1.2, s^2 = 2.4, leverages .7 .3 .3 .7.
    original = pd.DataFrame({"x": [0.0, 1, 2, 3], "y": [0.0, 0, 0, 4]})
    masked = original.assign(y=[4.0, 0, 0, 0])  # the mirror image: record 0 now dominates
    result = compare_cooks_distance(original, masked, "y", ["x"])
    np.testing.assert_allclose(result.original, [28 / 27, 1 / 49, 16 / 49, 7 / 3])
    assert result.most_extreme == 3
    assert result.max_original == pytest.approx(7 / 3)
    np.testing.assert_allclose(result.masked, [7 / 3, 16 / 49, 1 / 49, 28 / 27])
    assert result.rank_in_masked == 2


def test_distance_to_closest_hand_computed():
    # One variable 0, 1, 3, 10; min-max scaled over both files (same here) -> /10.
    original = pd.DataFrame({"v": [0.0, 1, 3, 10]})
    masked = pd.DataFrame({"v": [1.0, 0, 3, 10]})
    result = distance_to_closest(original, masked)
    np.testing.assert_allclose(result.within_original, [0.1, 0.1, 0.2, 0.7])
    np.testing.assert_allclose(result.within_masked, [0.1, 0.1, 0.2, 0.7])
    np.testing.assert_allclose(result.original_to_masked, [0.0, 0.0, 0.0, 0.0])
    assert result.most_isolated == 3


def test_distance_to_closest_duplicates_are_zero():
    original = pd.DataFrame({"v": [0.0, 0.0, 5.0, 10.0]})
    result = distance_to_closest(original, original.copy())
    np.testing.assert_allclose(result.within_original, [0.0, 0.0, 0.5, 0.5])


def test_linkage_rate_one_when_masked_equals_original(numeric_pair):
    original, _ = numeric_pair
    result = record_linkage(original, original.copy())
    assert result.rate == 1.0
    assert (result.linked == 1.0).all()
    np.testing.assert_allclose(result.distance_to_own, 0.0)


def test_linkage_rate_about_one_over_n_for_random_permutation():
    rng = np.random.default_rng(11)
    n = 2000
    original = pd.DataFrame(rng.uniform(size=(n, 3)), columns=["x", "y", "z"])
    perm = rng.permutation(n)
    masked = pd.DataFrame(original.to_numpy()[perm], columns=original.columns)
    result = record_linkage(original, masked)
    # Original record i is found exactly, at masked position perm^-1(i): linked iff perm fixes i.
    assert result.rate == pytest.approx(np.mean(perm == np.arange(n)))
    assert result.rate <= 6 / n
    # Independent data: again a chance rate of about 1/n.
    fresh = pd.DataFrame(rng.uniform(size=(n, 3)), columns=original.columns)
    assert record_linkage(original, fresh).rate <= 8 / n


def test_linkage_ties_count_as_random_choice():
    original = pd.DataFrame({"x": [0.0, 0.0, 1.0, 2.0], "y": [1.0, 1.0, 0.0, 5.0]})
    result = record_linkage(original, original.copy())
    np.testing.assert_allclose(result.linked, [0.5, 0.5, 1.0, 1.0])
    assert result.rate == pytest.approx(0.75)


def test_linkage_on_a_subset_of_variables(numeric_pair):
    original, masked = numeric_pair
    masked = masked.assign(a=original["a"])
    # Knowing only the unmasked variable, the intruder links everyone.
    assert record_linkage(original, masked, columns=["a"]).rate == 1.0
    assert record_linkage(original, masked, columns=["b", "c"]).rate < 1.0


def test_interval_disclosure_hand_computed():
    original = pd.DataFrame({"x": [0.0, 1, 2, 3], "y": [0.0, 2, 4, 6]})
    # sd(x) = 1.29, sd(y) = 2.58; k = 0.5 -> half-widths 0.645 and 1.29.
    masked = pd.DataFrame({"x": [0.5, 1, 3, 3], "y": [0.0, 4, 4, 7]})
    result = interval_disclosure(original, masked, k=0.5)
    np.testing.assert_array_equal(result.at_risk, [True, False, False, True])
    assert result.rate == 0.5
    np.testing.assert_allclose(result.per_variable, [0.75, 0.75])
    with pytest.raises(ParameterError, match="k"):
        interval_disclosure(original, masked, k=-1)


@pytest.fixture
def toy_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sex": ["m", "m", "m", "f", "f", "f", "f", "m"],
            "age": ["30s", "30s", "30s", "40s", "40s", "40s", "40s", "50s"],
            "disease": ["flu", "flu", "flu", "flu", "cold", "hiv", "flu", "cold"],
        }
    )


def test_key_risk_toy_table(toy_table):
    result = key_risk(toy_table, ["sex", "age"], sensitive="disease")
    assert list(result.frequencies) == [3, 3, 3, 4, 4, 4, 4, 1]
    assert result.n_combinations == 3
    assert result.sample_uniques == 1
    assert result.k_anonymity == 1
    assert result.violations == {2: 1, 3: 1, 5: 8}
    assert result.expected_reidentifications == pytest.approx(3 / 3 + 4 / 4 + 1)
    # (m, 30s) all flu: 1 distinct; (f, 40s): flu, cold, hiv: 3; (m, 50s): 1.
    assert list(result.diversity) == [1, 1, 1, 3, 3, 3, 3, 1]
    assert result.l_diversity == 1


def test_key_risk_after_generalising(toy_table):
    masked = toy_table.assign(age=["30s", "30s", "30s", "40s", "40s", "40s", "40s", "30s"])
    result = compare_key_risk(toy_table, masked, ["sex", "age"], sensitive="disease")
    assert result.original.k_anonymity == 1
    assert result.masked.k_anonymity == 4
    assert result.masked.sample_uniques == 0
    assert result.masked.l_diversity == 2
    assert "4-anonymous" in result.note()


def test_key_risk_missing_key_is_its_own_category():
    data = pd.DataFrame({"k": ["a", None, None, "a"]})
    assert list(key_risk(data, ["k"]).frequencies) == [2, 2, 2, 2]


def test_key_risk_rejects_continuous_key(numeric_pair):
    original, _ = numeric_pair
    with pytest.raises(SchemaError, match="Recode it"):
        key_risk(original, ["a"])
    with pytest.raises(ParameterError, match="also a key"):
        key_risk(original, ["group"], sensitive="group")


def test_duplicated_index_is_refused_with_a_clear_error():
    original = pd.DataFrame({"x": [0.0, 1, 2, 3], "y": [1.0, 0, 1, 0]}, index=[1, 1, 2, 2])
    masked = original.assign(x=[1.0, 0, 2, 3])
    with pytest.raises(DataError, match=r"duplicated \(e.g. 1 appears"):
        compare_mahalanobis(original, masked)
    with pytest.raises(DataError, match="reset_index"):
        compare_cooks_distance(original, masked, "x", ["y"])


def test_masked_file_with_a_recoded_category_links_and_names_rows_by_label():
    # Record "d" is recoded to a level the original does not have: it becomes a
    # level of its own (its own dummy, distance sqrt(2) from "b"), so records a-c
    # still link to themselves and "d" links to record "b" (x 2/3 apart).
    original = pd.DataFrame(
        {"x": [0.0, 1, 2, 3], "k": pd.array(list("abab"), dtype="str")}, index=list("abcd")
    )
    masked = original.assign(k=pd.array(list("abaz"), dtype="str"))
    link = record_linkage(original, masked)
    assert link.linked.tolist() == [1.0, 1.0, 1.0, 0.0]
    assert link.distance_to_own["d"] == pytest.approx(math.sqrt(2))
    # An ordinal value outside the original's order is an error naming the masked row label.
    levels = pd.CategoricalDtype(["lo", "mid", "hi"], ordered=True)
    ordinal = pd.DataFrame(
        {"x": [0.0, 1, 2, 3], "o": pd.Series(["lo", "hi", "mid", "lo"], dtype=levels)},
        index=list("abcd"),
    )
    bad = ordinal.assign(o=pd.Series(["lo", "hi", "top", "lo"], index=list("abcd"), dtype="str"))
    with pytest.raises(SchemaError, match=r"'top' at row 3 \(index 'c'\)"):
        record_linkage(ordinal, bad)
