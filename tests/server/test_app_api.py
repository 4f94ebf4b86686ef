"""The HTTP API over FastAPI's test client, run against SQLite and (when available) PostgreSQL.

Every test runs once per database backend; the PostgreSQL run gets a fresh
database on the server that ``make test`` starts (SDCKIT_TEST_POSTGRES_URL)
and is skipped with a printed reason where there is none.
"""

from __future__ import annotations

import asyncio
import json
import warnings

import httpx
import pytest
import sqlalchemy as sa

from sdckit.server import AnalysisServer
from sdckit.server.app import ServiceSettings, create_app
from sdckit.server.demo import demo_metadata, make_demo_data
from sdckit.server.engine import digest_response
from sdckit.server.store import Store, analyst_pseudonym
from service_helpers import BACKENDS, backend_url

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

INJECTIONS = [
    "wage ~ __import__('os').system('id')",
    "wage ~ 1/(abs(hours - 41) + 0.0001)",
    "wage ~ age; DROP TABLE audit_log",
    "wage ~ eval(age)",
    "wage ~ age.__class__",
    "wage ~ log(log(age))",
    "wage ~ I(age**2)",
]


@pytest.fixture(scope="module")
def data():
    return make_demo_data(3000, random_state=5)


@pytest.fixture(scope="module")
def metadata(data):
    return demo_metadata(data, beta=100)


@pytest.fixture(scope="module", params=BACKENDS)
def db_url(request, tmp_path_factory):
    yield from backend_url(request.param, tmp_path_factory.mktemp("db"))


@pytest.fixture(scope="module")
def service(db_url, data, metadata):
    """An app logging identity, and tokens of a few accounts."""
    store = Store(db_url)
    tokens = {}
    for name, kwargs in {
        "alice": {},
        "bob": {},
        "slow": {"rate_per_minute": 3},
        "thrifty": {"daily_budget": 2},
        "gone": {},
    }.items():
        tokens[name] = store.add_account(name, **kwargs)[1]
    store.revoke_account("gone")
    app = create_app(data, metadata, store=store, settings=ServiceSettings(log_identity=True))
    client = TestClient(app, raise_server_exceptions=False)
    yield app, client, tokens, store
    client.close()
    store.close()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_clean_error(response: httpx.Response, status: int, error: str | None = None) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert "Traceback" not in response.text and 'File "' not in response.text
    assert body["status"] in ("error", "refused")
    if error is not None:
        assert body["error"] == error
    return body


# --------------------------------------------------------------------------- accounts


def test_tokens_authenticate_and_are_stored_hashed(service):
    _app, client, tokens, store = service
    assert_clean_error(client.get("/api/metadata"), 401, "unauthorized")
    response = client.get("/api/metadata", headers=auth("sdck_not-a-real-token"))
    assert_clean_error(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert_clean_error(client.get("/api/metadata", headers={"Authorization": "Basic x"}), 401)
    assert client.get("/api/metadata", headers=auth(tokens["alice"])).status_code == 200
    assert client.get("/api/me", headers=auth(tokens["alice"])).json()["name"] == "alice"
    with store.engine.connect() as conn:
        rows = [tuple(map(str, r)) for r in conn.execute(sa.text("SELECT * FROM accounts"))]
    stored = " ".join(" ".join(r) for r in rows)
    assert all(token not in stored for token in tokens.values())


def test_revoked_token_is_refused(service):
    _, client, tokens, _ = service
    body = assert_clean_error(client.get("/api/me", headers=auth(tokens["gone"])), 401)
    assert "revoked" in body["message"]


def test_rate_limit_per_account(service):
    _, client, tokens, _ = service
    codes = [client.get("/api/me", headers=auth(tokens["slow"])).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    last = client.get("/api/me", headers=auth(tokens["slow"]))
    assert_clean_error(last, 429, "rate_limited")
    assert 1 <= int(last.headers["Retry-After"]) <= 60
    # Other accounts are not affected.
    assert client.get("/api/me", headers=auth(tokens["bob"])).status_code == 200


def test_daily_budget(service):
    _, client, tokens, _ = service
    query = {"universe": None, "rows": "sex"}
    first = client.post("/api/crosstab", json=query, headers=auth(tokens["thrifty"]))
    second = client.post("/api/crosstab", json=query, headers=auth(tokens["thrifty"]))
    assert first.status_code == second.status_code == 200
    body = assert_clean_error(
        client.post("/api/crosstab", json=query, headers=auth(tokens["thrifty"])),
        429,
        "daily_budget_exhausted",
    )
    assert "00:00 UTC" in body["message"]
    # Metadata does not count against the budget.
    assert client.get("/api/metadata", headers=auth(tokens["thrifty"])).status_code == 200


# --------------------------------------------------------------------------- analyses


def test_metadata_is_public_part_only(service, metadata):
    _, client, tokens, _ = service
    body = client.get("/api/metadata", headers=auth(tokens["alice"])).json()
    assert list(body["variables"]) == list(metadata.names)
    binning = metadata.variable("age").binning
    assert body["variables"]["age"]["bins"] == list(binning.public_labels)
    # The outer edges are the data's minimum and maximum: never published.
    assert body["variables"]["age"]["cutpoints"]["inner_edges"] == list(binning.edges[1:-1])
    assert body["variables"]["age"]["bins"][0].startswith("< ")
    assert body["variables"]["age"]["bins"][-1].startswith(">= ")
    for edge in (binning.edges[0], binning.edges[-1]):
        assert f"{edge:g}" not in " ".join(body["variables"]["age"]["bins"])
    assert body["variables"]["education"]["levels"][0] == "primary"
    assert body["approved_transformations"] == ["square", "sqrt", "log"]
    text = json.dumps(body)
    for secret_name in ("counts", "gamma", "r_squared_max", "min_category_size", "secret"):
        assert secret_name not in text


def test_universe_check_gives_a_size_class_never_a_count(service):
    _, client, tokens, _ = service
    response = client.post(
        "/api/universe/check",
        json={"universe": {"pieces": [{"sex": ["female"], "age": {"bins": [0, 1, 2]}}]}},
        headers=auth(tokens["alice"]),
    )
    body = response.json()
    assert response.status_code == 200 and body["status"] == "ok"
    assert body["size_class"] in {"small", "medium", "large"}
    assert set(body) == {
        "status",
        "analysis",
        "universe",
        "joint",
        "size_class",
        "verdicts",
        "audit_id",
    }
    tiny = client.post(
        "/api/universe/check",
        json={"universe": "region = west AND sex = male AND age in bin 0"},
        headers=auth(tokens["alice"]),
    )
    assert tiny.status_code == 200
    refusal = tiny.json()
    assert refusal["status"] == "refused"
    assert "universe_gamma" in [v["rule"] for v in refusal["refusals"]]
    assert refusal["refusals"][0]["reason"]


def test_crosstab_is_the_engine_answer_and_is_audited(service, data, metadata):
    _app, client, tokens, store = service
    query = {
        "universe": "region in {north, south}",
        "rows": "sex",
        "cols": "education",
        "mean_of": "wage",
    }
    response = client.post("/api/crosstab", json=query, headers=auth(tokens["alice"]))
    assert response.status_code == 200
    body = response.json()
    # The stored secret drives Drop q: a library server with the same secret gives the same table.
    reference = AnalysisServer(data, metadata, secret=store.server_secret()).crosstab(
        "region in {north, south}", "sex", "education", mean_of="wage"
    )
    assert body["counts"] == reference.to_dict()["counts"]
    assert body["total"] < int(data["region"].isin(["north", "south"]).sum())  # Drop q removed some
    entry = next(e for e in store.audit_entries() if e.id == body["audit_id"])
    assert entry.analysis == "crosstab" and entry.outcome == "released"
    assert entry.query["universe"] == "region in {north, south}"
    payload = {k: v for k, v in body.items() if k != "audit_id"}
    assert entry.response_digest == digest_response(reference.to_dict()) == digest_response(payload)
    assert entry.analyst == analyst_pseudonym(store.server_secret(), "alice")
    assert [v["rule"] for v in entry.verdicts][:3] == [
        "no_marginal_1_or_2",
        "universe_gamma",
        "drop_q",
    ]


def test_regressions_ols_and_logit(service):
    _, client, tokens, _ = service
    ols = client.post(
        "/api/regression",
        json={
            "universe": "ALL",
            "formula": "log(wage) ~ age + square(age) + hours + sex + age:sex",
        },
        headers=auth(tokens["alice"]),
    ).json()
    assert ols["status"] == "ok" and ols["family"] == "ols"
    terms = [c["term"] for c in ols["coefficients"]]
    assert terms[0] == "Intercept" and "square(age)" in terms
    assert any(t.startswith("age:sex[") for t in terms)
    assert 0 < ols["r_squared"] < 1 and ols["anova"][-1]["source"] == "Residual"
    logit = client.post(
        "/api/regression",
        json={
            "universe": {"pieces": [{"region": ["north", "east"]}]},
            "formula": {
                "response": {"variable": "employed"},
                "terms": [[{"variable": "age"}], [{"variable": "education"}]],
            },
            "family": "logit",
        },
        headers=auth(tokens["alice"]),
    ).json()
    assert logit["status"] == "ok" and logit["event"] == "yes"
    assert logit["references"] == {"education": "secondary"}


def test_correlation_and_residual_plots(service):
    _, client, tokens, _ = service
    corr = client.post(
        "/api/correlation",
        json={"variables": ["age", "hours", "log(wage)"]},
        headers=auth(tokens["alice"]),
    ).json()
    assert corr["status"] == "ok" and corr["matrix"][0][0] == pytest.approx(1.0)
    query = {"universe": "sex = female", "formula": "log(wage) ~ age + education"}
    png = client.post("/api/residual-plot.png", json=query, headers=auth(tokens["alice"]))
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content[:8] == b"\x89PNG\r\n\x1a\n" and int(png.headers["X-Audit-Id"]) > 0
    plot = client.post("/api/residual-plot", json=query, headers=auth(tokens["alice"])).json()
    assert [p["predictor"] for p in plot["panels"]] == ["fitted values", "age", "education"]
    assert plot["png_base64"]
    refused = client.post(
        "/api/residual-plot.png",
        json={"universe": None, "formula": "employed ~ age"},
        headers=auth(tokens["alice"]),
    )
    assert refused.headers["content-type"].startswith("application/json")
    assert refused.json()["status"] == "refused"


def test_history_lists_only_own_queries(service):
    _, client, tokens, store = service
    mine = client.post("/api/crosstab", json={"rows": "region"}, headers=auth(tokens["bob"]))
    client.post("/api/crosstab", json={"rows": "education"}, headers=auth(tokens["alice"]))
    history = client.get("/api/history", headers=auth(tokens["bob"])).json()
    assert history["identity_logging"] is True
    ids = [e["id"] for e in history["entries"]]
    assert ids[0] == mine.json()["audit_id"]
    bob = analyst_pseudonym(store.server_secret(), "bob")
    assert set(ids) == {e.id for e in store.audit_entries(analyst=bob)}
    assert all(e["query"].get("rows") != "education" for e in history["entries"])


def test_identity_logging_off_by_default(service, data, metadata):
    _, _, tokens, store = service
    app = create_app(data, metadata, store=store)  # same database, default settings
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.post("/api/crosstab", json={"rows": "sex"}, headers=auth(tokens["bob"]))
        entry = next(e for e in store.audit_entries() if e.id == response.json()["audit_id"])
        assert entry.analyst is None
        history = client.get("/api/history", headers=auth(tokens["bob"])).json()
        assert history["identity_logging"] is False and history["entries"] == []
        assert "without analyst identity" in history["note"]


# --------------------------------------------------------------------------- refusals and robustness


@pytest.mark.parametrize("formula", INJECTIONS)
def test_formula_injection_is_a_typed_422(service, formula):
    _, client, tokens, store = service
    before = store.audit_count()
    response = client.post(
        "/api/regression", json={"formula": formula}, headers=auth(tokens["alice"])
    )
    body = assert_clean_error(response, 422)
    assert body["status"] == "refused"
    assert {v["rule"] for v in body["refusals"]} <= {"formula_syntax", "approved_transformations"}
    assert store.audit_count() == before + 1  # refused queries are logged too
    assert store.integrity_check() == "ok"  # and nothing reached the database as SQL


def test_unknown_variables_are_4xx(service):
    _, client, tokens, _ = service
    cases = [
        ("/api/regression", {"formula": "salary ~ age"}, 422, "allowed_variables"),
        ("/api/crosstab", {"universe": "planet = mars", "rows": "sex"}, 422, "universe_definition"),
        ("/api/crosstab", {"rows": "planet"}, 422, "allowed_variables"),
        ("/api/correlation", {"variables": ["age", "shoe_size"]}, 422, "allowed_variables"),
    ]
    for path, body, status, rule in cases:
        response = client.post(path, json=body, headers=auth(tokens["alice"]))
        answer = assert_clean_error(response, status)
        assert rule in [v["rule"] for v in answer.get("refusals", [])] or answer.get("error")
    bad_mean = client.post(
        "/api/crosstab", json={"rows": "sex", "mean_of": "region"}, headers=auth(tokens["alice"])
    )
    assert "categorical" in assert_clean_error(bad_mean, 400, "invalid_query")["message"]


def test_malformed_and_oversized_requests(service):
    _, client, tokens, _ = service
    headers = {**auth(tokens["alice"]), "Content-Type": "application/json"}
    assert_clean_error(
        client.post("/api/crosstab", content=b'{"rows": "sex",', headers=headers),
        400,
        "malformed_json",
    )
    assert_clean_error(client.post("/api/crosstab", content=b"[1, 2]", headers=headers), 422)
    for hostile in (b"[" * 30_000 + b"]" * 30_000, b'\xff\xfe{"rows": "sex"}', b"NaN"):
        response = client.post("/api/crosstab", content=hostile, headers=headers)
        assert response.status_code in (400, 422) and "Traceback" not in response.text
    body = assert_clean_error(
        client.post("/api/crosstab", json={"rows": 5}, headers=auth(tokens["alice"])),
        422,
        "invalid_request",
    )
    assert body["details"][0]["loc"] == ["body", "rows"]
    assert_clean_error(
        client.post(
            "/api/crosstab", json={"rows": "sex", "exec": "x"}, headers=auth(tokens["alice"])
        ),
        422,
    )
    assert_clean_error(client.post("/api/regression", json={}, headers=auth(tokens["alice"])), 422)
    assert_clean_error(
        client.post(
            "/api/regression",
            json={"formula": "wage ~ age", "family": "probit"},
            headers=auth(tokens["alice"]),
        ),
        422,
    )
    huge = {"rows": "sex", "universe": "sex = female OR " * 10_000}
    assert_clean_error(
        client.post("/api/crosstab", json=huge, headers=auth(tokens["alice"])),
        413,
        "request_too_large",
    )

    def chunks():  # no Content-Length: the limit applies to what is streamed
        for _ in range(100):
            yield b" " * 1024

    assert_clean_error(client.post("/api/crosstab", content=chunks(), headers=headers), 413)
    assert_clean_error(
        client.get("/api/nothing-here", headers=auth(tokens["alice"])), 404, "not_found"
    )
    assert_clean_error(client.get("/api/crosstab", headers=auth(tokens["alice"])), 405)


def test_internal_failure_is_a_clean_500(service, monkeypatch):
    app, client, tokens, _ = service

    def explode(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(app.state.engine, "crosstab", explode)
    response = client.post("/api/crosstab", json={"rows": "sex"}, headers=auth(tokens["alice"]))
    body = assert_clean_error(response, 500, "internal_error")
    assert "secret internal detail" not in response.text and "RuntimeError" not in response.text
    assert "incident" in body["message"]


def test_no_answer_without_an_audit_entry(service, monkeypatch):
    _app, client, tokens, store = service

    def broken(*args, **kwargs):
        raise sa.exc.OperationalError("INSERT", {}, Exception("disk I/O error"))

    monkeypatch.setattr(store, "append_audit", broken)
    response = client.post("/api/crosstab", json={"rows": "sex"}, headers=auth(tokens["alice"]))
    body = assert_clean_error(response, 503, "audit_unavailable")
    assert "counts" not in body and "disk" not in response.text


def test_concurrent_queries(service):
    app, _, tokens, store = service
    before = store.audit_count()
    requests = [
        ("/api/crosstab", {"universe": "sex = female", "rows": "region", "cols": "employed"}),
        ("/api/regression", {"formula": "log(wage) ~ age + sex + education"}),
        ("/api/regression", {"formula": "wage ~ import os"}),
        ("/api/crosstab", {"rows": "planet"}),
    ] * 6

    async def burst():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await asyncio.gather(
                *(client.post(p, json=b, headers=auth(tokens["bob"])) for p, b in requests)
            )

    responses = asyncio.run(burst())
    assert [r.status_code for r in responses] == [200, 200, 422, 422] * 6
    assert all("Traceback" not in r.text for r in responses)
    ids = [r.json()["audit_id"] for r in responses]
    assert len(set(ids)) == len(ids)
    assert store.audit_count() == before + len(requests)
    # Concurrent answers to the same query are identical (Drop q is keyed by the universe).
    tables = {json.dumps(r.json()["counts"]) for r in responses[::4]}
    assert len(tables) == 1


# --------------------------------------------------------------------------- secret, OpenAPI, page


def test_secret_is_stored_once_and_never_returned(service, data, metadata, db_url):
    _app, client, tokens, store = service
    secret = store.server_secret()
    with Store(db_url) as reopened:
        assert reopened.server_secret() == secret
    bodies = [
        client.get("/api/openapi.json").text,
        client.get("/api/metadata", headers=auth(tokens["alice"])).text,
        client.get("/api/history?limit=1000", headers=auth(tokens["alice"])).text,
        client.post(
            "/api/regression", json={"formula": "wage ~ age"}, headers=auth(tokens["alice"])
        ).text,
    ]
    for text in bodies:
        assert secret.hex() not in text and secret.hex().upper() not in text


def test_openapi_describes_typed_models(service):
    _, client, _, _ = service
    spec = client.get("/api/openapi.json").json()
    for path in (
        "/api/metadata",
        "/api/universe/check",
        "/api/crosstab",
        "/api/regression",
        "/api/correlation",
        "/api/residual-plot",
        "/api/residual-plot.png",
        "/api/history",
    ):
        assert path in spec["paths"]
    schemas = spec["components"]["schemas"]
    for model in ("CrosstabRequest", "RegressionResponse", "RefusalResponse", "ErrorResponse"):
        assert model in schemas
    assert "422" in spec["paths"]["/api/regression"]["post"]["responses"]


def test_web_page_is_served_with_a_strict_policy(service):
    _, client, _, _ = service
    page = client.get("/")
    assert page.status_code == 200 and 'id="token"' in page.text
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    script = client.get("/web/app.js")
    assert script.status_code == 200 and "textContent" in script.text
    assert client.get("/web/style.css").status_code == 200


def test_every_released_answer_is_what_the_log_digested(service):
    _, client, tokens, store = service
    queries = [
        ("/api/universe/check", {"universe": "sex = male"}),
        ("/api/crosstab", {"rows": "region"}),
        ("/api/crosstab", {"rows": "region", "cols": "employed", "mean_of": "hours"}),
        ("/api/regression", {"formula": "wage ~ age + region"}),
        ("/api/regression", {"formula": "employed ~ hours", "family": "logit"}),
        ("/api/correlation", {"variables": ["age", "hours"]}),
        ("/api/residual-plot", {"formula": "wage ~ age"}),
    ]
    for path, body in queries:
        answer = client.post(path, json=body, headers=auth(tokens["alice"])).json()
        assert answer["status"] == "ok", answer
        audit_id = answer.pop("audit_id")
        [entry] = [e for e in store.audit_entries(newest_first=True, limit=5) if e.id == audit_id]
        assert entry.response_digest == digest_response(answer), path


def test_correlation_without_variables_has_a_readable_reason(service):
    _, client, tokens, _ = service
    body = assert_clean_error(
        client.post("/api/correlation", json={"variables": []}, headers=auth(tokens["alice"])),
        422,
        "invalid_request",
    )
    assert body["message"] == (
        "the request is not valid: a correlation needs at least 2 variables, got 0"
    )
    body = assert_clean_error(
        client.post("/api/crosstab", json={}, headers=auth(tokens["alice"])), 422
    )
    assert body["message"] == "the request is not valid: rows is required"
