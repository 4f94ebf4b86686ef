"""Additive and multiplicative noise (Oganian 2011): moments, positivity, constraints, zones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit import microdata
from sdckit.errors import DataError, InfeasibleError, ParameterError, SchemaError
from sdckit.microdata import additive_noise, multiplicative_noise

N = 10_000
K = 0.15
CORR = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 1.0]])


@pytest.fixture(scope="module")
def normal_data() -> pd.DataFrame:
    """Oganian Section 5: means about 3.5, variances 5-10, correlation 0.5."""
    sd = np.sqrt([5.0, 7.5, 10.0])
    x = np.random.default_rng(11).multivariate_normal([3.5] * 3, CORR * np.outer(sd, sd), size=N)
    return pd.DataFrame(x, columns=["a", "b", "c"], index=pd.RangeIndex(5, 5 + N))


@pytest.fixture(scope="module")
def lognormal_data() -> pd.DataFrame:
    z = np.random.default_rng(12).multivariate_normal(np.zeros(3), CORR, size=N)
    return pd.DataFrame(np.exp(0.2 + z * [0.6, 0.7, 0.8]), columns=["a", "b", "c"])


def _cov_tolerance(x: np.ndarray, k: float, *, centred: bool = False) -> np.ndarray:
    """Five standard errors of each covariance ratio under the noise, from the data's moments.

    The masked covariance differs from the original by the sample covariance of
    the data with the noise and of the noise with itself; for noise of relative
    variance about k both are of order sqrt(k * E[(X_i X_j)^2] / n) for
    multiplicative noise (raw values) and sqrt(k * E[(Xc_i Xc_j)^2] / n) for
    additive noise (centred values).
    """
    xc = x - x.mean(axis=0)
    cov = xc.T @ xc / len(x)
    base = xc if centred else x
    fourth = (base[:, :, None] * base[:, None, :]) ** 2
    spread = np.sqrt(np.maximum(fourth.mean(axis=0), np.outer(np.diag(cov), np.diag(cov))))
    return 5 * 2 * np.sqrt(k / len(x)) * spread / np.abs(cov) / (1 + k)


def _ratios(original: pd.DataFrame, masked: pd.DataFrame):
    mean_ratio = masked.mean().to_numpy() / original.mean().to_numpy()
    cov_ratio = masked.cov(ddof=0).to_numpy() / original.cov(ddof=0).to_numpy()
    return mean_ratio, cov_ratio


def test_additive_keeps_means_and_covariances(normal_data):
    # Input unmodified, index and dtypes kept: tests/microdata/test_contract.py.
    result = additive_noise(normal_data, variance_factor=K, random_state=0)
    out = result.data
    mean_ratio, cov_ratio = _ratios(normal_data, out)
    sd = normal_data.std(ddof=0).to_numpy()
    mean_tol = 5 * sd * np.sqrt(K / ((1 + K) * N)) / np.abs(normal_data.mean().to_numpy())
    assert np.all(np.abs(mean_ratio - 1) < mean_tol)
    tol = _cov_tolerance(normal_data.to_numpy(), K, centred=True)
    assert np.all(np.abs(cov_ratio - 1) < tol)
    assert np.all(tol < 0.12)  # the tolerance is not vacuous
    assert not np.allclose(out.to_numpy(), normal_data.to_numpy())
    assert result.stats["covariance_ratio_min"] == pytest.approx(np.nanmin(cov_ratio))


@pytest.mark.parametrize("variant", ["plain", "zscore"])
def test_multiplicative_on_lognormal(lognormal_data, variant):
    result = multiplicative_noise(
        lognormal_data, variance_factor=K, variant=variant, random_state=1
    )
    out = result.data
    assert (out.to_numpy() >= 0).all()
    assert result.stats["negative_values_in_nonnegative_columns"] == 0
    mean_ratio, cov_ratio = _ratios(lognormal_data, out)
    x = lognormal_data.to_numpy()
    mean_tol = 5 * np.sqrt(K * (x**2).mean(axis=0) / N) / x.mean(axis=0)
    assert np.all(np.abs(mean_ratio - 1) < mean_tol)
    tol = _cov_tolerance(x, K)
    assert np.all(np.abs(cov_ratio - 1) < tol)
    assert np.all(tol < 0.35)


@pytest.mark.parametrize("mixed_sign", ["auto", "magnitude", "shift"])
def test_multiplicative_on_normal_data_with_negative_values(normal_data, mixed_sign):
    assert (normal_data.to_numpy() < 0).any()
    result = multiplicative_noise(
        normal_data, variance_factor=K, mixed_sign=mixed_sign, random_state=2
    )
    _, cov_ratio = _ratios(normal_data, result.data)
    tol = _cov_tolerance(normal_data.to_numpy(), K)
    assert np.all(np.abs(cov_ratio - 1) < tol)
    # On symmetric data the shift gives a valid noise covariance, so "auto" takes it.
    used = result.stats["mixed_sign_used"]
    assert used == ("shift" if mixed_sign == "auto" else mixed_sign)
    if used == "shift":
        # Oganian's shift by |min|: the variables stay above their original minimum.
        assert (result.data.min() >= normal_data.min()).all()


def test_same_seed_same_output(lognormal_data):
    a = multiplicative_noise(lognormal_data, random_state=3).data
    b = multiplicative_noise(lognormal_data, random_state=3).data
    c = multiplicative_noise(lognormal_data, random_state=4).data
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_inequality_constraints_hold_in_every_row():
    rng = np.random.default_rng(6)
    taxes = rng.gamma(2.0, 2.0, size=3000)
    net = rng.gamma(3.0, 5.0, size=3000)
    data = pd.DataFrame(
        {
            "gross": taxes + net + rng.gamma(1.0, 1.0, size=3000),
            "net": net + taxes,
            "taxes": taxes,
            "age": rng.integers(18, 90, size=3000),
        }
    )
    data.loc[5, "net"] = data.loc[5, "taxes"]  # equality is allowed
    result = multiplicative_noise(
        data, variance_factor=0.3, constraints=[["gross", "net", "taxes"]], random_state=0
    )
    out = result.data
    assert (out["gross"] >= out["net"]).all() and (out["net"] >= out["taxes"]).all()
    assert (out["taxes"] >= 0).all()
    assert out["age"].dtype == data["age"].dtype
    assert result.stats["records_violating_constraints"] == 0
    mean_ratio, cov_ratio = _ratios(data, out)
    assert np.all(np.abs(mean_ratio - 1) < 0.03)
    assert np.all(np.abs(cov_ratio - 1) < _cov_tolerance(data.to_numpy(np.float64), 0.3))
    broken = data.copy()
    broken.loc[7, "taxes"] = broken.loc[7, "net"] + 1
    with pytest.raises(DataError, match=r"net >= taxes fails in 1 record.*row 8, counted from 1"):
        multiplicative_noise(broken, constraints=[["gross", "net", "taxes"]])


def test_eq10_makes_plain_scheme_impossible():
    # Two positive variables aligned along the axes (Oganian Figure 1).
    big = np.tile([5.0, 0.01], 200)
    data = pd.DataFrame({"left": big, "right": big[::-1].copy(), "other": np.linspace(1, 2, 400)})
    with pytest.raises(InfeasibleError, match=r"eq. 10.*left, right.*variant='zscore'"):
        multiplicative_noise(data, variant="plain", random_state=0)
    # The z-score variant's log exists, but its matrix is not positive semi-definite here.
    with pytest.raises(InfeasibleError, match="not positive semi-definite"):
        multiplicative_noise(data, variant="zscore", random_state=0)
    result = multiplicative_noise(
        data, variant="zscore", noise_covariance="nearest", random_state=0
    )
    assert (result.data.to_numpy() >= 0).all()
    assert result.stats["cells_with_adjusted_noise_covariance"] == 1
    low, high = result.stats["repair_covariance_ratio_range"]
    assert low < 1 or high > 1
    mean_ratio = result.data.mean() / data.mean()
    assert np.all(np.abs(mean_ratio - 1) < 0.1)


def test_two_zones_and_structural_zeros(lognormal_data):
    data = lognormal_data.copy()
    employed = np.random.default_rng(8).random(N) < 0.7
    pay = data["a"] * 10 * np.random.default_rng(9).lognormal(0, 0.3, N)
    data["income"] = np.where(employed, pay, 0.0)
    data["unemployed"] = ~employed
    result = multiplicative_noise(
        data,
        columns=["a", "b", "c", "income"],
        variance_factor=[0.15, 0.01],
        zone_thresholds=[15],
        structural_zeros={"income": "unemployed"},
        noise_covariance="nearest",  # the few outlying records of zone 1 need it
        random_state=5,
    )
    out = result.data
    assert (out.loc[~employed, "income"] == 0).all()
    assert (out.loc[employed, "income"] != data.loc[employed, "income"]).all()
    zone = result.diagnostics["zone"].to_numpy()
    expected_zone = (data[["a", "b", "c", "income"]].max(axis=1) > 15).to_numpy()
    assert np.array_equal(zone, expected_zone.astype(int))
    # Zone 1 (k=0.01) moves much less, relative to the values, than zone 0 (k=0.15).
    rel = (out["a"] / data["a"] - 1).abs()
    assert rel[zone == 1].median() < 0.5 * rel[zone == 0].median()
    assert result.stats["masking_cells"] == 4
    _, cov_ratio = _ratios(data[["a", "b", "c"]], out[["a", "b", "c"]])
    assert np.all(np.abs(cov_ratio - 1) < _cov_tolerance(data[["a", "b", "c"]].to_numpy(), 0.15))
    wrong = data.copy()
    wrong.loc[np.flatnonzero(~employed)[0], "unemployed"] = True
    wrong.loc[np.flatnonzero(employed)[0], "unemployed"] = True
    with pytest.raises(DataError, match="structural zero"):
        multiplicative_noise(
            wrong, columns=["a", "income"], structural_zeros={"income": "unemployed"}
        )


def test_structural_zero_error_names_the_row_and_value_as_a_person_writes_them():
    data = pd.DataFrame(
        {"a": [1.0, 2.0, 3.0, 4.0], "income": [0.0, 2.5, 0.0, 7.0], "none": [1, 1, 1, 0]},
        index=[10, 11, 12, 13],
    )
    with pytest.raises(DataError) as error:
        additive_noise(data, columns=["a", "income"], structural_zeros={"income": "none"})
    message = str(error.value)
    assert "first at row 2 (index 11) (2.5)" in message, message
    assert "np." not in message


def test_zones_by_column_and_k_mapping(normal_data):
    data = normal_data.assign(region=np.where(np.arange(N) % 3 == 0, "north", "south"))
    result = additive_noise(
        data,
        columns=["a", "b", "c"],
        variance_factor={"north": 0.3, "south": 0.05},
        zones="region",
        random_state=1,
    )
    assert result.params["variance_factor"] == {"north": 0.3, "south": 0.05}
    assert (result.data["region"] == data["region"]).all()
    with pytest.raises(ParameterError, match="no value for zone"):
        additive_noise(data, columns=["a", "b"], variance_factor={"north": 0.3}, zones="region")


def test_sample_weights_are_honoured():
    rng = np.random.default_rng(10)
    x = rng.normal(10, 2, size=N)
    w = np.where(
        x > 10, 9.0, 1.0
    )  # weights tied to the values: weighted mean far from the plain one
    data = pd.DataFrame({"x": x, "y": x + rng.normal(size=N), "w": w})
    weighted = additive_noise(data, columns=["x", "y"], sample_weights="w", random_state=0).data
    plain = additive_noise(data, columns=["x", "y"], random_state=0).data
    target = np.average(x, weights=w)
    assert abs(np.average(weighted["x"], weights=w) - target) < 5 * 2 * np.sqrt(K / N) * 3
    assert abs(np.average(plain["x"], weights=w) - target) > 0.05
    assert (weighted["w"] == data["w"]).all()


def test_bad_input_is_refused(mixed_data):
    with pytest.raises(SchemaError, match="region"):
        additive_noise(mixed_data, columns=["height", "region"])
    with pytest.raises(ParameterError, match="variance_factor must be > 0"):
        multiplicative_noise(mixed_data, columns=["height", "weight"], variance_factor=0)
    with pytest.raises(ParameterError, match="variant"):
        multiplicative_noise(mixed_data, columns=["height"], variant="log")
    with pytest.raises(ParameterError, match="zones or zone_thresholds"):
        additive_noise(mixed_data, columns=["height"], zones="region", zone_thresholds=[3])
    with pytest.raises(DataError, match=r"holds 1 record\(s\) \(row\(s\) \d+, counted from 1\)"):
        additive_noise(
            mixed_data,
            columns=["height", "weight"],
            zone_thresholds=[mixed_data["weight"].max() - 1e-9],
        )


def test_integer_columns_keep_dtype_and_registry(mixed_data):
    result = microdata.mask(
        "multiplicative_noise", mixed_data, columns=["height", "weight", "children"], random_state=0
    )
    assert result.data.dtypes.equals(mixed_data.dtypes)
    assert (result.data["children"] >= 0).all()
    assert "covariance ratio" in result.summary()
    assert (
        microdata.mask("additive_noise", mixed_data, columns=["height"], random_state=0).method
        == "additive_noise"
    )


def test_auto_repairs_small_defects_and_reports_their_effect():
    rng = np.random.default_rng(13)
    n = 2000
    height = rng.normal(70, 3, n)
    weight = rng.normal(180, 25, n) + 3 * (height - 70)
    data = pd.DataFrame(
        {
            "height": height,
            "weight": weight,
            "bmi": 703 * weight / height**2,
            "neck": 0.1 * weight + rng.normal(20, 1, n),
            "waist": 0.2 * weight + 0.5 * (703 * weight / height**2) + rng.normal(0, 0.5, n),
        }
    )
    auto = multiplicative_noise(data, random_state=0)
    # BMI beside weight and height: eq. 13's matrix misses semi-definiteness by a hair.
    assert auto.stats["cells_with_adjusted_noise_covariance"] == 1
    low, high = auto.stats["repair_covariance_ratio_range"]
    assert 0.999 < low <= high < 1.001
    assert auto.stats["repair_variance_ratio_range"] == (1.0, 1.0)  # variances kept
    assert "WARNING: the noise covariance was not positive semi-definite" in auto.summary()
    with pytest.raises(InfeasibleError, match="not positive semi-definite"):
        multiplicative_noise(data, noise_covariance="exact", random_state=0)
    assert auto.params["noise_covariance"] == "auto"


def test_weight_role_in_the_schema_is_honoured():
    from sdckit.schema import Schema

    rng = np.random.default_rng(14)
    data = pd.DataFrame({"x": rng.gamma(2, 2, 500), "y": rng.gamma(3, 1, 500)})
    data["w"] = np.where(data["x"] > 4, 5.0, 1.0)
    schema = Schema.infer(data, roles={"w": "weight"})
    by_role = multiplicative_noise(data, schema=schema, random_state=0)
    by_name = multiplicative_noise(data, columns=["x", "y"], sample_weights="w", random_state=0)
    pd.testing.assert_frame_equal(by_role.data, by_name.data)
    assert by_role.params["sample_weights"] == "w"


def test_small_integer_dtype_that_cannot_hold_the_noise_is_a_data_error():
    rng = np.random.default_rng(3)
    data = pd.DataFrame(
        {"count": rng.integers(0, 5, 200).astype("uint8"), "x": rng.normal(size=200)}
    )
    with pytest.raises(DataError, match=r"column 'count' has dtype uint8.*-\d"):
        additive_noise(data, variance_factor=2.0, random_state=0)
    data["count"] = data["count"].astype("UInt8")
    with pytest.raises(DataError, match="'count' has dtype UInt8"):
        additive_noise(data, variance_factor=2.0, random_state=0)
    # A wide enough integer dtype is kept.
    data["count"] = data["count"].astype("Int64")
    assert additive_noise(data, variance_factor=2.0, random_state=0).data["count"].dtype == "Int64"


def test_threshold_zones_may_be_empty_when_k_is_given_per_zone():
    rng = np.random.default_rng(4)
    data = pd.DataFrame({"a": rng.gamma(2.0, 3.0, 300), "b": rng.gamma(2.0, 2.0, 300)})
    top = float(data.max(axis=1).max())
    # Zone 2 (above 10 * top) is empty: k by zone number still refers to zones 0, 1, 2.
    thresholds = [float(data.max(axis=1).median()), 10 * top]
    by_list = multiplicative_noise(
        data, variance_factor=[0.15, 0.01, 0.5], zone_thresholds=thresholds, random_state=1
    )
    assert by_list.params["variance_factor"] == {0: 0.15, 1: 0.01}
    by_map = multiplicative_noise(
        data, variance_factor={0: 0.15, 1: 0.01}, zone_thresholds=thresholds, random_state=1
    )
    pd.testing.assert_frame_equal(by_list.data, by_map.data)
    with pytest.raises(
        ParameterError, match=r"variance_factor lists 2 value\(s\) but there are 3 zone"
    ):
        multiplicative_noise(data, variance_factor=[0.15, 0.01], zone_thresholds=thresholds)
    with pytest.raises(ParameterError, match=r"zone\(s\) \[3\], which are not among"):
        multiplicative_noise(
            data, variance_factor={0: 0.1, 1: 0.1, 3: 0.1}, zone_thresholds=thresholds
        )


def test_text_structural_zero_indicator_is_refused_not_read_as_all_true():
    data = pd.DataFrame(
        {"income": [0.0, 5.0, 0.0, 7.0, 3.0, 0.0], "out": ["yes", "no", "yes", "no", "no", "yes"]}
    )
    with pytest.raises(SchemaError, match="indicator 'out' must be boolean or numeric"):
        additive_noise(data, columns=["income"], structural_zeros={"income": "out"})
    data["out"] = data["out"] == "yes"
    result = additive_noise(
        data, columns=["income"], structural_zeros={"income": "out"}, random_state=0
    )
    assert (result.data.loc[data["out"], "income"] == 0).all()


def test_cell_coding_numbers_cells_as_np_unique_does():
    from sdckit.microdata.noise import _pattern_codes, _sorted_codes

    rng = np.random.default_rng(4)
    for values in (
        rng.integers(0, 6, 500),
        np.array(["south", "north", "east", "north"], dtype=object),
        np.array([2.5, -1.0, 2.5, 0.0]),
    ):
        uniques, codes = np.unique(values, return_inverse=True)
        got_uniques, got_codes = _sorted_codes(values)
        np.testing.assert_array_equal(got_uniques, uniques)
        np.testing.assert_array_equal(got_codes, codes.reshape(-1))
    for width in (1, 3, 7):
        pattern = rng.random((400, width)) < 0.3
        expected = np.unique(pattern, axis=0, return_inverse=True)[1].reshape(-1)
        np.testing.assert_array_equal(_pattern_codes(pattern), expected)
