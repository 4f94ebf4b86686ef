"""Binned residual plots of a logistic regression: no point is a unit, and they show misfit."""

from __future__ import annotations

import numpy as np
from fastapi.testclient import TestClient
from server_fixtures import SECRET, make_people

from sdckit.server import AnalysisServer, Metadata, Refusal
from sdckit.server.app import create_app
from sdckit.server.logit_diagnostics import LogitDiagnosticsResult
from sdckit.server.store import Store


def _server(data):
    return AnalysisServer(data, Metadata.infer(data, beta=40), secret=SECRET)


def test_every_point_averages_many_units_and_a_missed_curve_shows():
    data = make_people(3000, seed=8)
    rng = np.random.default_rng(2)
    # The outcome depends on age through a U shape; a linear age term misses it.
    logit = -1.0 + ((data.age - 50.0) / 12.0) ** 2
    data["event"] = np.where(rng.random(len(data)) < 1 / (1 + np.exp(-logit)), "yes", "no")
    server = _server(data)
    result = server.logit_diagnostics("ALL", "event ~ age + sex")
    assert isinstance(result, LogitDiagnosticsResult)
    by_name = {p.predictor: p for p in result.panels}
    assert set(by_name) == {"fitted probability", "age", "sex"}
    age = by_name["age"]
    # Groups are public cutpoint bins (merged when small): labels, never unit values.
    bins = set(server.metadata.variable("age").binning.public_labels)
    assert all(label.split(" .. ")[0] in bins for label in age.labels)
    resid, band = np.asarray(age.mean_residual), np.asarray(age.band)
    assert np.all(band > 0)
    # The missed U shape: the ends lie above the band, the middle below zero.
    assert resid[0] > band[0] and resid[-1] > band[-1]
    assert resid[len(resid) // 2] < 0
    # With the curve in the model the points stay mostly inside their bands.
    fitted = server.logit_diagnostics("ALL", "event ~ age + square(age) + sex")
    panel = {p.predictor: p for p in fitted.panels}["age"]
    inside = np.abs(np.asarray(panel.mean_residual)) <= np.asarray(panel.band)
    assert inside.mean() >= 0.8
    # Same query, same plot (the noise is keyed by each group's units).
    again = server.logit_diagnostics("ALL", "event ~ age + square(age) + sex")
    assert again.to_dict() == fitted.to_dict()


def test_refusals_and_the_api(tmp_path):
    data = make_people(1500, seed=9)
    server = _server(data)
    assert isinstance(server.logit_diagnostics("ALL", "wage ~ age"), Refusal)
    store = Store(f"sqlite:///{tmp_path / 'diag.db'}")
    _, token = store.add_account("analyst")
    client = TestClient(create_app(data, Metadata.infer(data, beta=40), store=store))
    response = client.post(
        "/api/logit-diagnostics",
        json={"universe": "sex = female", "formula": "employed ~ age + hours"},
        headers={"Authorization": f"Bearer {token}"},
    )
    body = response.json()
    assert response.status_code == 200 and body["status"] == "ok"
    assert [p["predictor"] for p in body["panels"]] == ["fitted probability", "age", "hours"]
    assert len(body["png_base64"]) > 1000
    store.close()
