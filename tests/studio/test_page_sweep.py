"""The Sweep tab in headless Chromium: the R-U map of a method, and a point of it made a step.

Microaggregation of ``expend`` and ``savings`` on testdata.csv is swept over
three group sizes; the map draws one focusable point per setting, and
choosing a point with the keyboard applies that setting with the seed the
sweep used, to the step swept: the new step's figures are the point's.
"""

from __future__ import annotations

import pytest
from page_helpers import open_page, screenshot, served_studio, studio_tab

pytestmark = pytest.mark.browser


@pytest.fixture
def studio_url(studio):
    with served_studio(studio) as urls:
        yield urls


pytest.importorskip(
    "sdckit.studio.sweeps", reason="the studio's sweep (sdckit.studio.sweeps) is absent"
)


def sweep_group_sizes(page, values: str) -> None:
    """Fill the Sweep tab: microaggregation of expend and savings over ``values`` of group_size."""
    page.click("#tab-sweep")
    page.select_option("#sweep-method", "microaggregation")
    page.select_option("#sweep-param", "group_size")
    page.fill("#sweep-values", values)
    page.click("#sweep-fixed summary")
    for column in ("expend", "savings"):
        page.locator("#s-columns label", has_text=column).locator("input").check()


def test_sweep_map_and_a_point_made_a_step(studio_url, studio):
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        sweep_group_sizes(page, "2, 4, x")
        page.click("#sweep")
        assert page.inner_text("#message") == "values: 'x' is not a whole number"
        page.fill("#sweep-values", "2, 4, 8")
        page.fill("#sweep-seed", "7")
        page.click("#sweep")
        page.wait_for_selector("#sweep-map svg circle.point")
        assert page.locator("#sweep-map svg circle.point").count() == 3
        assert page.locator("#sweep-table tbody tr").count() == 3
        assert page.is_hidden("#message")
        page.click("#sweep-fixed summary")  # folded, so the map is in view
        screenshot(page, "sweep")

        # The keyboard chooses the second point (group_size=4): a new step from step 0.
        point = page.locator("#sweep-map svg circle.point").nth(1)
        point.focus()
        page.keyboard.press("Enter")
        page.wait_for_selector("#history li[data-step='1']", state="attached")
        page.wait_for_selector("#job-bar", state="hidden")
        step = studio.project.steps[1]
        assert step.parent == 0 and step.method == "microaggregation"
        assert step.params["group_size"] == 4
        assert step.params["columns"] == ["expend", "savings"]
        # The sweep's point and the step are the same release: the studio recorded its seed.
        row = page.locator("#sweep-table tbody tr").nth(1)
        assert "group_size=4" in row.inner_text()
        assert step.seed == int(row.locator("td.seed").inner_text())
    log.assert_clean()


def test_cancel_stops_a_running_sweep_and_keeps_the_state(studio_url, studio):
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        # Twenty settings, each a masking run and a full assessment: seconds of work at least.
        sweep_group_sizes(page, ", ".join(str(k) for k in range(2, 22)))
        page.click("#sweep")
        page.wait_for_selector("#job-bar:not([hidden])")
        assert page.inner_text("#job-label") == "Sweeping group_size of microaggregation"
        page.click("#job-cancel")
        page.wait_for_selector("#job-bar", state="hidden")
        assert "cancelled; the state is as it was" in page.inner_text("#notice")
        assert page.is_hidden("#sweep-result")
        assert list(studio.project.steps) == [0] and studio.project.current == 0
    log.assert_clean()
