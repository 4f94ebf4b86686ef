"""AnalysisServer: the query pipeline, the audit record and the public surface."""

from __future__ import annotations

import json
import threading

import pytest
from server_fixtures import SECRET

from sdckit.errors import ParameterError
from sdckit.server import AnalysisServer, Refusal, UniverseCheckResult


def test_universe_check_releases_a_size_class_only(server):
    result = server.universe_check("sex = female AND region in {north, south}")
    assert isinstance(result, UniverseCheckResult)
    assert result.size_class in {"small", "medium", "large"}
    d = result.to_dict()
    assert set(d) == {"status", "analysis", "universe", "joint", "size_class", "verdicts"}
    text = json.dumps(d)
    assert not any(ch.isdigit() for ch in text.replace("no_marginal_1_or_2", ""))


def test_universe_check_refusals(server):
    refused = server.universe_check("region = west AND age in bin 0")
    assert isinstance(refused, Refusal)
    assert refused.rules == ("universe_gamma",)
    bad = server.universe_check("age = 40")
    assert isinstance(bad, Refusal) and bad.rules == ("universe_definition",)
    assert "bins" in bad.reasons[0]


def test_audit_records_every_query(server):
    server.crosstab("sex = female", "region")
    server.regress("ALL", "wage ~ 1/(hours)")
    with pytest.raises(ParameterError):
        server.regress("ALL", "wage ~ hours", family="probit")
    records = server.audit
    assert [r.analysis for r in records] == ["crosstab", "regression", "regression"]
    assert [r.outcome for r in records] == ["released", "refused", "error"]
    assert [r.sequence for r in records] == [1, 2, 3]
    assert records[0].query["universe"] == "sex = female"
    assert records[0].response_digest is not None and len(records[0].response_digest) == 64
    assert records[1].response_digest is None
    assert records[1].verdicts[-1].rule == "formula_syntax"
    assert "family" in records[2].error
    assert records[0].time.endswith("+00:00")
    json.dumps([r.to_dict() for r in records])


def test_audit_sink_runs_before_the_answer(people, people_metadata):
    seen = []
    server = AnalysisServer(
        people, people_metadata, secret=SECRET, audit_sink=seen.append, keep_audit=False
    )
    result = server.crosstab("ALL", "sex")
    assert len(seen) == 1 and seen[0].outcome == "released"
    assert server.audit == ()
    from sdckit.server.engine import digest_response

    assert seen[0].response_digest == digest_response(result.to_dict())

    def failing(record):
        raise RuntimeError("database down")

    strict = AnalysisServer(people, people_metadata, secret=SECRET, audit_sink=failing)
    with pytest.raises(RuntimeError, match="database down"):
        strict.crosstab("ALL", "sex")


def test_results_and_refusals_are_plain_dicts(server):
    for result in [
        server.crosstab("ALL", "region", "sex", mean_of="hours"),
        server.regress("ALL", "log(wage) ~ age + sex"),
        server.regress("ALL", "employed ~ age", family="logit"),
        server.correlation("ALL", ["age", "hours", "log(wage)"]),
        server.universe_check("ALL"),
        server.regress("ALL", "wage ~ ssn"),
    ]:
        d = result.to_dict()
        json.dumps(d, allow_nan=False)
        assert d["status"] in {"ok", "refused"}
        assert hasattr(result, "summary") and isinstance(result.summary(), str)


def test_correlation(server, people):
    result = server.correlation("sex = male", ["age", "hours"])
    assert result.matrix[0][0] == pytest.approx(1.0)
    assert abs(result.matrix[0][1]) < 0.2
    refused = server.correlation("ALL", ["age", "sex"])
    assert isinstance(refused, Refusal)
    with pytest.raises(ParameterError):
        server.correlation("ALL", "age")
    for bad in (None, 5, {"age", "hours"}):
        logged = len(server.audit)
        with pytest.raises(ParameterError, match="variables"):
            server.correlation("ALL", bad)
        assert server.audit[-1].outcome == "error" and len(server.audit) == logged + 1


def test_data_are_never_modified(people, people_metadata):
    before = people.copy(deep=True)
    server = AnalysisServer(people, people_metadata, secret=SECRET)
    server.crosstab("sex = female", "region", "employed", mean_of="wage")
    server.regress("ALL", "log(wage) ~ age + square(age) + sex + region")
    server.residual_plot("ALL", "log(wage) ~ age + sex")
    assert people.equals(before)
    assert list(people.dtypes) == list(before.dtypes)


def test_secret_never_shown(server):
    assert SECRET.decode() not in repr(server)
    assert "secret" not in json.dumps(server.public_metadata())
    assert "counts" not in json.dumps(server.public_metadata())


def test_concurrent_queries_get_unique_sequence_numbers(server):
    def work():
        for _ in range(5):
            server.crosstab("ALL", "region", "sex")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sequences = [r.sequence for r in server.audit]
    assert sorted(sequences) == list(range(1, 21))


def test_bad_construction(people, people_metadata):
    with pytest.raises(ParameterError, match="metadata"):
        AnalysisServer(people, 42)
    with pytest.raises(ParameterError, match="unknown config"):
        AnalysisServer(people, people_metadata, {"gamm": 3})
    with pytest.raises(ParameterError, match="16 bytes"):
        AnalysisServer(people, people_metadata, secret=b"short")
