"""sdckit's server beside emulations of ACRO's and DataSHIELD's rules: attacks and benign queries.

Rules checked on numbers where the verdict is known; then the peers attacked
on the planted people of the server tests (six doctorates alone in their age
bins): a peer answers exactly whatever its rules pass, so an isolating dummy,
an artificial outlier or a differenced pair of tables gives the value away
unless a rule stops it.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from attack_helpers import planted_people
from server_fixtures import SECRET

from sdckit.attacks import (
    ACRORules,
    Answer,
    ArtificialOutlier,
    DataSHIELDRules,
    LibraryServer,
    PeerServer,
    Refused,
    RegressionQuery,
    StrategicDummy,
    benign_corpus,
    compare_servers,
    run_corpus,
    server_attack,
)
from sdckit.errors import ParameterError
from sdckit.server import AnalysisServer, Metadata


@pytest.fixture(scope="module")
def planted():
    return planted_people()


def _rules(found):
    return [rule for rule, _ in found]


def test_acro_table_rules():
    rules = ACRORules()
    assert _rules(rules.check_table(np.array([[12, 15]]), None, 27)) == []
    assert _rules(rules.check_table(np.array([[12, 5]]), None, 17)) == ["threshold"]
    assert _rules(rules.check_table(np.array([[12, 0]]), None, 12)) == ["zeros"]
    assert ACRORules(zeros_are_disclosive=False).check_table(np.array([[12, 0]]), None, 12) == []
    dominated = [np.array([1000.0, 900.0, *([1.0] * 10)])]
    assert _rules(rules.check_table(np.array([[12]]), dominated, 12)) == ["nk-rule"]
    # The rest (5) is under 10% of the largest (100) while the top two stay under 99%.
    lopsided = [np.array([100.0, 50.0, *([0.5] * 10)])]
    assert _rules(ACRORules(nk_k=0.99).check_table(np.array([[12]]), lopsided, 12)) == ["p-ratio"]
    assert _rules(rules.check_regression(11, 2, [], 11)) == ["dof"]
    assert rules.check_regression(12, 2, [(1, 11)], 12) == []  # ACRO has no binary check


def test_datashield_rules():
    rules = DataSHIELDRules()
    assert rules.check_table(np.array([[3, 0, 5]]), None, 8) == []
    assert _rules(rules.check_table(np.array([[2, 0, 5]]), None, 7)) == ["nfilter.tab"]
    assert _rules(rules.check_table(np.array([[2]]), None, 2)) == ["nfilter.subset", "nfilter.tab"]
    assert _rules(rules.check_regression(8, 3, [], 0)) == ["nfilter.glm"]  # 3 > 0.33 x 8
    assert _rules(rules.check_regression(100, 2, [(2, 98)], 0)) == ["nfilter.tab"]
    assert rules.check_regression(100, 2, [(3, 97)], 0) == []


def _unique_unit(data):
    counts = data.groupby(["age", "hours"])["wage"].transform("size").to_numpy()
    position = int(np.flatnonzero(counts == 1)[0])
    row = data.iloc[position]
    return {"age": float(row["age"]), "hours": float(row["hours"])}, float(row["wage"])


def _prediction(answer: Answer, epsilon: float | None = None) -> float:
    slope = answer.coefficients[1]
    return answer.coefficients[0] + (slope / epsilon if epsilon else slope)


def test_an_isolating_dummy_passes_acro_and_is_refused_by_datashield(planted):
    data, metadata, _ = planted
    known, wage = _unique_unit(data)
    query = RegressionQuery("wage", (StrategicDummy(known),))
    acro = PeerServer(data, metadata, ACRORules()).fit(query)
    assert isinstance(acro, Answer) and _prediction(acro) == pytest.approx(wage, rel=1e-9)
    refused = PeerServer(data, metadata, DataSHIELDRules()).fit(query)
    assert isinstance(refused, Refused) and refused.reasons[0].startswith("nfilter.tab")


def test_an_artificial_outlier_passes_datashield(planted):
    data, metadata, _ = planted
    known, wage = _unique_unit(data)
    query = RegressionQuery("wage", (ArtificialOutlier(known, 1e-4),))
    answer = PeerServer(data, metadata, DataSHIELDRules()).fit(query)
    assert isinstance(answer, Answer)
    assert _prediction(answer, 1e-4) == pytest.approx(wage, rel=1e-3)


def test_differencing_two_tables_passes_datashield_exactly(planted):
    data, metadata, _ = planted
    peer = PeerServer(data, metadata, DataSHIELDRules())
    result = server_attack(data, target=peer, sensitive="wage", max_targets=2, padding_pairs=2)
    table = result.table.set_index("attack")
    # An exact server answers both variants of the pair with the true value: they agree, and
    # the intruder knows she has it (a leak counts as learned under the intruder's scoring).
    assert table.loc["narrow condition", "learned"] == 1.0
    assert table.loc["narrow condition", "estimates"] == 2
    assert table.loc["narrow condition", "median_error"] < 1e-9
    acro = server_attack(
        data, target=PeerServer(data, metadata, ACRORules()), sensitive="wage", max_targets=2,
        padding_pairs=2,
    )  # fmt: skip
    # ACRO's zero rule refuses the narrow universe's table (every other row is 0) ...
    assert "zeros" in acro.table.set_index("attack").loc["narrow condition", "refused_by"]
    # ... but not the complement of the target's cell against everyone.
    assert acro.table.set_index("attack").loc["complementary conditions", "learned"] == 1.0


@pytest.mark.parametrize("universes", ["stress", "realistic"])
def test_benign_corpus_is_drawn_from_the_metadata(planted, universes):
    data, metadata, _ = planted
    education = metadata.variable("education")
    grouped = replace(education, groups={"higher": ("tertiary", "doctorate")})
    metadata = Metadata({**metadata.variables, "education": grouped})
    public = metadata.to_dict(public=True)
    corpus = benign_corpus(public, n=60, universes=universes, random_state=1)
    assert corpus == benign_corpus(public, n=60, universes=universes, random_state=1)
    texts = [str(q.body["universe"]) for q in corpus]
    # The realistic corpus names one level, a declared group, ranges of bins, and
    # conjunctions of a level and a range; the stress corpus only broad single conditions.
    group = 'education in {"tertiary", "doctorate"}'
    assert universes == "stress" or any(group in t for t in texts)
    assert any(" AND " in t for t in texts) is (universes == "realistic")
    assert [q.analysis for q in corpus[:2]] == ["crosstab", "regression"]
    server = LibraryServer(AnalysisServer(data, metadata, {}, secret=SECRET))
    answers = run_corpus(server, corpus)
    assert len(answers) == 60
    # Every universe and formula is in the server's languages: none fails to parse.
    assert not answers["refused_by"].str.contains("definition|syntax").any()
    assert (answers.loc[~answers["answered"], "reason"] != "").all()
    assert (answers.loc[~answers["answered"], "adjusted_by"] == "").all()


def test_benign_corpus_kind():
    with pytest.raises(ParameterError, match="universes must be 'stress' or 'realistic'"):
        benign_corpus({"variables": {}}, universes="honest")


def test_compare_servers_side_by_side(planted):
    data, metadata, _ = planted
    servers = [
        LibraryServer(AnalysisServer(data, metadata, {}, secret=SECRET)),
        PeerServer(data, metadata, ACRORules()),
        PeerServer(data, metadata, DataSHIELDRules()),
    ]
    corpus = benign_corpus(servers[0].metadata, n=40, random_state=0)
    result = compare_servers(
        data, servers, sensitive="wage", background=["age", "education"], corpus=corpus,
        quantiles=(0.0,), max_targets=10, cell_targets=2, padding_pairs=4, random_state=0,
    )  # fmt: skip
    table = result.table.set_index("server")
    assert table.loc["sdckit AnalysisServer", "attacks_blocked"] == 1.0
    assert table.loc["DataSHIELD filters (our emulation)", "attacks_blocked"] < 1.0
    assert table.loc["ACRO rules (our emulation)", "attacks_blocked"] < 1.0
    assert result.summary().startswith("sdckit AnalysisServer: blocked 100% of")
    assert set(result.benign["server"]) == set(table.index)


def test_peer_server_needs_peer_rules(planted):
    data, metadata, _ = planted
    with pytest.raises(ParameterError, match="rules must be ACRORules or DataSHIELDRules"):
        PeerServer(data, metadata, "acro")  # type: ignore[arg-type]
