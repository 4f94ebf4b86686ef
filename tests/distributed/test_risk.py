"""Key risk as map-reduce: identical to sdckit.assess.key_risk on the same records."""

from __future__ import annotations

import numpy as np
import pytest
from distributed_data import census_like, write_parts

from sdckit.assess import key_risk
from sdckit.distributed.risk import key_risk_by_partition
from sdckit.errors import SchemaError


@pytest.mark.parametrize(
    "keys", [["region", "age_group", "sex"], ["region", "age_group", "sex", "tenure"]]
)
def test_key_risk_identical(census, client, keys):
    frame, directory = census
    ours = key_risk_by_partition(
        directory, keys, sensitive="tenure" if "tenure" not in keys else None
    )
    single = key_risk(frame, keys, sensitive="tenure" if "tenure" not in keys else None)
    for name in ("n_combinations", "sample_uniques", "k_anonymity", "l_diversity", "sensitive"):
        assert getattr(ours, name) == getattr(single, name), name
    assert dict(ours.violations) == single.violations
    assert ours.expected_reidentifications == pytest.approx(
        single.expected_reidentifications, rel=1e-12
    )
    np.testing.assert_array_equal(ours.record_frequencies(), np.sort(single.frequencies.to_numpy()))
    if single.diversity is not None:
        per_record = np.repeat(ours.combinations["l_diversity"], ours.combinations["frequency"])
        np.testing.assert_array_equal(np.sort(per_record), np.sort(single.diversity.to_numpy()))
    assert ours.n_records == len(frame)
    assert "anonymous" in ours.summary()


def test_known_uniques_and_missing_keys(tmp_path, client):
    frame = census_like(600, 9)[["region", "sex", "tenure"]].astype(object)
    # plant three sample uniques and a missing key value shared by two records
    frame.loc[10, "region"] = "island"
    frame.loc[250, "region"] = "lighthouse"
    frame.loc[590, "region"] = "oil rig"
    frame.loc[[100, 400], "region"] = None
    frame.loc[[100, 400], "sex"] = "female"
    frame.loc[[100, 400], "tenure"] = "own"
    directory = write_parts(frame, tmp_path / "planted", 3)
    ours = key_risk_by_partition(directory, ["region", "sex", "tenure"])
    single = key_risk(frame, ["region", "sex", "tenure"])
    assert ours.sample_uniques == single.sample_uniques
    assert ours.k_anonymity == 1
    assert ours.sample_uniques >= 3
    unique_regions = set(ours.combinations.loc[ours.combinations.frequency == 1, "region"])
    assert {"island", "lighthouse", "oil rig"} <= unique_regions
    missing = ours.combinations[ours.combinations.region.isna()]
    assert missing["frequency"].tolist() == [2]


def test_continuous_key_refused(census, client):
    _, directory = census
    with pytest.raises(SchemaError, match="'income' is numeric"):
        key_risk_by_partition(directory, ["region", "income"])
