"""Cross-tabulations: counts from the Drop-q subsample, never a cell or margin of 1 or 2."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from server_fixtures import SECRET, make_people

from sdckit.server import AnalysisServer, CrosstabResult, Metadata, Refusal


def test_counts_come_from_the_subsample(exact_server, people):
    server = exact_server
    result = server.crosstab("sex = female", "region", "employed")
    assert isinstance(result, CrosstabResult)
    universe = people[people.sex == "female"]
    full = pd.crosstab(universe.region, universe.employed).reindex(
        index=list(result.row_labels), columns=list(result.col_labels)
    )
    released = result.to_frame()
    dropped = (full - released).to_numpy()
    assert dropped.min() >= 0
    assert 2 <= dropped.sum() <= server.config.drop_q_k
    assert result.total == len(universe) - dropped.sum()
    assert list(result.row_totals) == released.sum(axis=1).tolist()


def test_one_way_table_and_continuous_bins(server, people_metadata):
    result = server.crosstab("ALL", "age")
    assert result.col_labels == ("count",)
    binning = people_metadata.variable("age").binning
    assert result.row_labels == binning.public_labels
    # the outer edges are the data's minimum and maximum: no label shows them
    outer = (f"{binning.edges[0]:g}", f"{binning.edges[-1]:g}")
    assert not any(edge in label for label in result.row_labels for edge in outer)


def test_refusal_of_a_raw_continuous_value_hides_the_extremes(server, people_metadata):
    binning = people_metadata.variable("age").binning
    refusal = server.universe_check("age = 40")
    assert isinstance(refusal, Refusal)
    reason = refusal.verdicts[-1].reason
    assert binning.public_labels[0] in reason
    assert f"[{binning.edges[0]:g}," not in reason
    assert f"{binning.edges[-1]:g}]" not in reason


@pytest.mark.parametrize("perturbation", [False, True])
def test_no_released_cell_of_one_or_two(perturbation):
    # Many small universes over sparse tables: every released table is free of 1s and 2s
    # (refused without perturbation, perturbed away with it).
    data = make_people(700, seed=3)
    metadata = Metadata.infer(data, beta=15)
    config = {"gamma": 30, "gamma_star": 15, "perturbation": perturbation}
    server = AnalysisServer(data, metadata, config, secret=SECRET)
    released = refused = 0
    for universe in ["ALL", "sex = male", "region = west", "region in {east, west}"]:
        for rows, cols in [("region", "employed"), ("age", "sex"), ("hours", "region")]:
            result = server.crosstab(universe, rows, cols)
            if isinstance(result, Refusal):
                refused += 1
                assert result.rules[-1] in {
                    "no_small_cells",
                    "universe_gamma",
                    "no_marginal_1_or_2",
                }
                continue
            released += 1
            counts = np.asarray(result.counts)
            every = np.concatenate([counts.ravel(), result.row_totals, result.col_totals])
            assert not np.any((every == 1) | (every == 2))
    assert released > 0
    assert (refused > 0) != perturbation


def test_small_cell_refusal_reason_hides_the_count():
    data = make_people(400, seed=9)
    data.loc[data.index[:2], "region"] = "island"
    metadata = Metadata.infer(data, beta=15)
    config = {"gamma": 30, "gamma_star": 15, "perturbation": False}
    server = AnalysisServer(data, metadata, config, secret=SECRET)
    # Two islanders: whatever Drop q removes, the island row holds 0, 1 or 2 units.
    results = [server.crosstab(u, "region", "sex") for u in ["ALL", "employed = yes"]]
    for result in results:
        if isinstance(result, Refusal):
            assert result.rules == ("no_small_cells",)
            assert "1" not in result.reasons[0].split(":", 1)[1].replace("one or two", "")
        else:
            island = result.row_labels.index("island")
            assert result.row_totals[island] == 0


def test_means_with_dominance(people, people_metadata):
    data = people.copy()
    # One huge wage in east/no dominates that cell.
    target = data.index[(data.region == "east") & (data.employed == "no")][0]
    data.loc[target, "wage"] = 1e7
    server = AnalysisServer(data, people_metadata, {"perturbation": False}, secret=SECRET)
    result = server.crosstab("ALL", "region", "employed", mean_of="wage")
    i, j = result.row_labels.index("east"), result.col_labels.index("no")
    kept = server._prepare("ALL", {}).positions
    if data.index.get_loc(target) in set(kept):
        assert result.means[i][j] is None
        assert result.row_means[i] is None and result.col_means[j] is None
        assert result.total_mean is None
        notes = [a for v in result.verdicts for a in v.adjustments]
        assert any("dominated" in n for n in notes)
    others = [
        m for r, row in enumerate(result.means) for c, m in enumerate(row) if (r, c) != (i, j)
    ]
    assert all(m is not None for m in others)
    d = result.to_dict()
    assert d["means"][i][j] is None


def test_input_errors(server):
    with pytest.raises(Exception, match="differ"):
        server.crosstab("ALL", "sex", "sex")
    with pytest.raises(Exception, match="continuous"):
        server.crosstab("ALL", "sex", mean_of="region")
    refused = server.crosstab("ALL", "ssn")
    assert isinstance(refused, Refusal) and refused.rules == ("allowed_variables",)


@pytest.mark.parametrize("perturbation", [True, False])
def test_rows_and_columns_the_universe_rules_out_are_left_out(
    people, people_metadata, perturbation
):
    server = AnalysisServer(people, people_metadata, {"perturbation": perturbation}, secret=SECRET)
    narrow = server.crosstab("region = north OR region = south", "sex", "region", mean_of="wage")
    assert isinstance(narrow, CrosstabResult)
    assert narrow.col_labels == ("north", "south")
    assert np.shape(narrow.counts) == (2, 2)
    assert np.shape(narrow.means) == (2, 2) and len(narrow.col_means) == 2
    if not perturbation:  # exact counts: nothing left out was counted
        assert narrow.total == sum(narrow.row_totals) == sum(narrow.col_totals)
    # The rule reads the query only: a universe whose pieces do not all restrict
    # region keeps every region, zero or not.
    wide = server.crosstab("region = north OR sex = male", "sex", "region")
    assert isinstance(wide, CrosstabResult)
    assert set(wide.col_labels) == {"north", "south", "east", "west"}
    # Bins of a continuous variable alike.
    bins = server.crosstab("age in bins 0, 1", "age", "sex")
    assert isinstance(bins, CrosstabResult)
    assert len(bins.row_labels) == 2
