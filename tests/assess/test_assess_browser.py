"""The HTML report opens in headless Chromium without errors, with every figure drawn."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from chromium import CHROMIUM, chromium_or_skip
from sdckit.assess import assess, report, sweep
from sdckit.microdata import rwn

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.mark.browser
def test_report_renders_every_figure_in_chromium(tmp_path, assessment_figures):
    chromium_or_skip()
    playwright = pytest.importorskip("playwright.sync_api")

    rng = np.random.default_rng(5)
    n = 120
    x = rng.multivariate_normal([0, 0, 0], [[1, 0.7, 0.2], [0.7, 1, 0.4], [0.2, 0.4, 1]], size=n)
    data = pd.DataFrame(
        {
            "x": x[:, 0],
            "y": x[:, 1],
            "z": x[:, 2],
            "sex": rng.choice(["f", "m"], size=n),
            "area": rng.choice(["a", "b", "c"], size=n),
            "status": rng.choice(["p", "q"], size=n),
        }
    )
    result = rwn(data, k=5, eps=0.3, random_state=1)
    a = assess(
        data, result, response="y", predictors=["x", "z"], keys=["sex", "area"], sensitive="status"
    )
    s = sweep(
        "rwn",
        {"eps": [0.0, 0.3]},
        data[["x", "y", "z"]],
        fixed={"k": 5},
        response="y",
        random_state=2,
    )
    page = report(a, sweep=s, path=tmp_path / "report.html")

    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            # Any request leaving the page would mean it is not self-contained.
            tab.on(
                "request",
                lambda r: (
                    errors.append(f"request {r.url}")
                    if not r.url.startswith(("file:", "data:"))
                    else None
                ),
            )
            tab.goto(page.path.as_uri())
            tab.wait_for_load_state("load")
            manifest = json.loads(tab.locator("#figure-manifest").text_content())
            drawn = tab.evaluate(
                """() => Array.from(document.querySelectorAll('figure[data-figure]')).map(f => {
                       const img = f.querySelector('img');
                       return [f.dataset.figure, img !== null && img.complete
                               && img.naturalWidth > 100 && img.naturalHeight > 100];
                   })"""
            )
            title = tab.title()
        finally:
            browser.close()
    assert errors == []
    assert manifest == page.figures
    assert dict(drawn) == dict.fromkeys(page.figures, True)
    expected = assessment_figures | {"sweep_utility", "sweep_outliers", "sweep_risk", "ru_map"}
    assert expected <= set(page.figures)
    assert "sdckit" in title
