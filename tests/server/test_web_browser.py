"""The analyst's web page in headless Chromium against ``sdckit serve --demo`` in a subprocess.

Signs in with the printed demo token, builds a universe by picking
categories and bins (and sees a too-small piece refused with its reason),
runs a regression with a transformation and an interaction, and sees the
coefficient table and the synthetic residual plot. A
screenshot goes to test-artifacts/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chromium import CHROMIUM, CHROMIUM_ARGS, chromium_or_skip
from service_helpers import serving

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("web")
    log = directory / "server.log"
    with serving(["--demo", "--db", str(directory / "demo.db"), "--log-identity"], log) as url:
        match = re.search(r"demo token: (sdck_\S+)", log.read_text())
        assert match, log.read_text()
        yield url, match.group(1)


def test_sign_in_universe_regression_and_residual_plot(demo_server):
    chromium_or_skip()
    playwright = pytest.importorskip("playwright.sync_api")
    url, token = demo_server
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.set_default_timeout(60_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url + "/")

            # A wrong token is refused with a message.
            page.fill("#token", "sdck_wrong")
            page.click("#sign-in")
            page.wait_for_selector("#signin-error:not([hidden])")
            assert "unknown" in page.inner_text("#signin-error")

            page.fill("#token", token)
            page.click("#sign-in")
            page.wait_for_selector("#variables dl")
            assert "Hourly wage" in page.inner_text("#variables")

            # Universe: region in {north, south} AND age in bins 1..6.
            page.click("#add-piece")
            piece = page.locator("#pieces .piece").first
            piece.locator("select.add-variable").select_option("region")
            piece.locator(".add-condition").click()
            for level in ("north", "south"):
                page.check(f"#pieces .condition[data-variable=region] input[data-value={level}]")
            piece = page.locator("#pieces .piece").first
            piece.locator("select.add-variable").select_option("age")
            piece.locator(".add-condition").click()
            for code in range(1, 7):
                page.check(f"#pieces .condition[data-variable=age] input[data-value='{code}']")
            assert page.inner_text("#universe-text") == (
                "region in {north, south} AND age in bins 1, 2, 3, 4, 5, 6"
            )
            # A second, tiny piece (OR): refused by the Universe Gamma rule, with a reason.
            page.click("#add-piece")
            tiny = page.locator("#pieces .piece").nth(1)
            for variable, level in [
                ("region", "west"),
                ("education", "doctorate"),
                ("sex", "male"),
            ]:
                tiny = page.locator("#pieces .piece").nth(1)
                tiny.locator("select.add-variable").select_option(variable)
                tiny.locator(".add-condition").click()
                page.locator("#pieces .piece").nth(1).locator(
                    f".condition[data-variable={variable}] input[data-value={level}]"
                ).check()
            page.click("#check-universe")
            page.wait_for_selector("#universe-result .refusal")
            refusal = page.inner_text("#universe-result .refusal")
            assert "too few units" in refusal
            page.locator("#pieces .piece").nth(1).locator("h3 button").click()
            # The refusal was about the removed piece: it is no longer shown.
            assert page.locator("#universe-result .refusal").count() == 0
            page.click("#check-universe")
            page.wait_for_selector("#universe-result .size-class")
            assert page.inner_text("#universe-result .size-class") in {"small", "medium", "large"}

            # A correlation with no variable ticked: a plain sentence, no request sent.
            page.select_option("#analysis-kind", "correlation")
            page.click("#run")
            page.wait_for_selector("#result .error")
            assert page.inner_text("#result .error") == "tick at least two variables to correlate"

            # Regression: log(wage) ~ age + square(age) + education + sex + age:sex.
            page.select_option("#analysis-kind", "regression")
            page.select_option("#response-var", "wage")
            page.select_option("#response-transform", "log")
            for variable, transform in [
                ("age", ""),
                ("age", "square"),
                ("education", ""),
                ("sex", ""),
            ]:
                page.click("#add-predictor")
                page.locator("#predictors .predictor select.predictor-var").last.select_option(
                    variable
                )
                if transform:
                    page.locator(
                        "#predictors .predictor select.predictor-transform"
                    ).last.select_option(transform)
            page.click("#add-interaction")
            page.check("#interactions .interaction input[data-term=age]")
            page.check("#interactions .interaction input[data-term=sex]")
            assert page.inner_text("#formula-text") == (
                "log(wage) ~ age + square(age) + education + sex + age:sex"
            )
            page.click("#run")
            page.wait_for_selector("#result table.coefficients")
            terms = page.locator("#result table.coefficients tbody th").all_inner_texts()
            assert terms[:3] == ["Intercept", "age", "square(age)"]
            assert any(t.startswith("education[") for t in terms)
            assert any(t.startswith("age:sex[") for t in terms)
            assert "Analysis of variance" in page.inner_text("#result")

            page.wait_for_selector("#residual-plot img.residual-plot")
            width = page.evaluate(
                "document.querySelector('#residual-plot img.residual-plot').naturalWidth"
            )
            assert width > 300  # the PNG decoded and rendered

            # The history lists this analyst's queries (identity logging is on).
            page.click("#load-history")
            page.wait_for_selector("#history table.history")
            assert "regression" in page.inner_text("#history")

            ARTIFACTS.mkdir(exist_ok=True)
            page.select_option("#analysis-kind", "regression")
            page.click("#run")
            page.wait_for_selector("#residual-plot img.residual-plot")
            page.screenshot(path=str(ARTIFACTS / "server-web-regression.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert (ARTIFACTS / "server-web-regression.png").stat().st_size > 10_000


def test_every_page_loads_with_the_network_blocked(demo_server):
    # An offline deployment (the norm for confidential data) reaches nothing
    # outside the server: every request of every page goes to it and succeeds.
    chromium_or_skip()
    playwright = pytest.importorskip("playwright.sync_api")
    url, token = demo_server
    outside: list[str] = []
    failed: list[str] = []
    errors: list[str] = []

    def only_local(route, request):
        if request.url.startswith(url + "/") or request.url.startswith("data:"):
            route.continue_()
        else:
            outside.append(request.url)
            route.abort()

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            page.route("**/*", only_local)
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(url + "/")
            page.fill("#token", token)
            page.click("#sign-in")
            page.wait_for_selector("#variables dl")
            page.goto(url + "/api/docs")
            page.wait_for_selector("#endpoints .endpoint")
            assert "POST /api/crosstab" in page.inner_text("#endpoints")
            assert "CrosstabRequest" in page.inner_text("#schemas")
            page.goto(url + "/api/openapi.json")
        finally:
            browser.close()
    assert outside == []
    assert failed == []
    assert errors == []
