"""Synthetic residual plots (Lucero et al. 2011, Section 3.2.1, after Reiter 2003)."""

from __future__ import annotations

import numpy as np
import pytest
from server_fixtures import SECRET, make_people

from sdckit.server import AnalysisServer, Metadata, Refusal, ResidualPlotResult
from sdckit.server.residuals import kde_inverse_cdf_sample


def test_residual_plot_panels_and_png(server):
    result = server.residual_plot("ALL", "log(wage) ~ age + hours + region")
    assert isinstance(result, ResidualPlotResult)
    assert result.png[:8] == b"\x89PNG\r\n\x1a\n"
    kinds = {p.predictor: p.kind for p in result.panels}
    assert kinds == {
        "fitted values": "scatter",
        "age": "scatter",
        "hours": "scatter",
        "region": "box",
    }
    for panel in result.panels:
        if panel.kind == "scatter":
            t = np.asarray(panel.residuals)
            assert t.size == len(panel.x) <= server.config.residual_max_points
            assert np.all(np.abs(t) <= server.config.residual_clip)
        else:
            assert {b.category for b in panel.boxes} == {"north", "south", "east", "west"}
    d = result.to_dict()
    assert "png_base64" in d and d["panels"][0]["kind"] == "scatter"


def test_same_response_same_plot_and_secret_matters(people, people_metadata):
    a = AnalysisServer(people, people_metadata, secret=SECRET)
    b = AnalysisServer(people, people_metadata, secret=SECRET)
    c = AnalysisServer(people, people_metadata, secret=b"a-different-secret-123456")
    pa = a.residual_plot("ALL", "log(wage) ~ age").panels[1]
    pb = b.residual_plot("ALL", "log(wage) ~ age").panels[1]
    pc = c.residual_plot("ALL", "log(wage) ~ age").panels[1]
    assert pa == pb
    assert pa.residuals != pc.residuals


def test_synthetic_values_are_not_the_real_ones(server, people):
    result = server.residual_plot("ALL", "log(wage) ~ age + hours")
    hours_panel = next(p for p in result.panels if p.predictor == "hours")
    real = set(np.round(people.hours.to_numpy(), 12))
    synthetic = np.round(np.asarray(hours_panel.x), 12)
    assert np.mean([v in real for v in synthetic]) < 0.01
    # Real standardized residuals never appear: synthetic = b + v + noise.
    kept = server._prepare("ALL", {}).positions
    sub = people.iloc[kept]
    x = np.column_stack([np.ones(len(sub)), sub.age, sub.hours])
    y = np.log(sub.wage.to_numpy())
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    real_t = set(np.round(resid / resid.std(), 10))
    assert not any(v in real_t for v in np.round(hours_panel.residuals, 10))


def test_residual_pattern_is_visible():
    # A missed quadratic: the smoother of synthetic residuals on x must curve.
    data = make_people(1500, seed=4)
    data["y"] = (data.age - 50.0) ** 2 / 100.0 + np.random.default_rng(1).normal(0, 1, len(data))
    server = AnalysisServer(data, Metadata.infer(data, beta=30), secret=SECRET)
    panel = server.residual_plot("ALL", "y ~ age").panels[1]
    sx, sy = np.asarray(panel.smooth_x), np.asarray(panel.smooth_y)
    middle = sy[np.abs(sx - 50) < 8].mean()
    ends = sy[(sx < 25) | (sx > 75)].mean()
    assert ends - middle > 1.0


def test_sparse_categories_suppressed(people):
    data = people.copy()
    data.loc[data.index[:4], "region"] = "island"
    server = AnalysisServer(data, Metadata.infer(data, beta=40), secret=SECRET)
    result = server.residual_plot("ALL", "log(wage) ~ age + region")
    box = next(p for p in result.panels if p.kind == "box")
    assert "island" not in {b.category for b in box.boxes}


def test_logit_has_no_residual_plot(server):
    result = server.residual_plot("ALL", "employed ~ age")
    assert isinstance(result, Refusal) and result.rules == ("response_variable",)


def test_kde_sampler_follows_the_distribution():
    rng = np.random.default_rng(0)
    x = rng.normal(10, 2, 4000)
    draws = kde_inverse_cdf_sample(x, 5000, np.random.default_rng(1))
    assert draws.mean() == pytest.approx(10, abs=0.15)
    assert draws.std() == pytest.approx(2, rel=0.08)
