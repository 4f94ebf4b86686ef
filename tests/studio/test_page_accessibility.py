"""Accessibility of the studio page: axe-core's WCAG 2.1 A/AA rules in every state, and the keyboard.

axe-core (Deque) ships inside the ``axe-playwright-python`` package, a dev
dependency, and is injected into the page from disk: the check needs no
network. It runs on each tab, with a file open and roles set, after a step,
with an error shown and after an export, so the colours of the warning and
error boxes are checked as drawn (axe's ``color-contrast`` rule). The
keyboard test walks the page with Tab alone and reaches every control of a
session in document order.
"""

from __future__ import annotations

import pytest
from page_helpers import open_page, served_studio, studio_tab

pytestmark = pytest.mark.browser


@pytest.fixture
def studio_url(studio):
    with served_studio(studio) as urls:
        yield urls


WCAG = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def violations(axe, page, state: str) -> list[str]:
    found = axe.run(page, options=WCAG).response["violations"]
    return [
        f"{state}: {v['id']} ({v['impact']}) at {[n['target'] for n in v['nodes']][:3]}: {v['help']}"
        for v in found
    ]


def test_axe_finds_no_wcag_violation_in_any_state(studio_url):
    axe_module = pytest.importorskip("axe_playwright_python.sync_playwright")
    axe = axe_module.Axe()
    base, url = studio_url
    problems: list[str] = []
    with studio_tab(base) as (page, log):
        open_page(page, url)
        problems += violations(axe, page, "data tab")
        page.select_option("select.role[data-column=sex]", "key")
        page.select_option("select.role[data-column=income]", "sensitive")
        page.click("#save-roles")
        page.wait_for_selector("#risk .measure[data-measure=sample_uniques]")
        page.click("#tab-methods")
        page.select_option("#method", "microaggregation")
        page.fill("#p-group_size", "1")
        page.click("#apply")
        page.wait_for_selector("#message:not([hidden])")
        problems += violations(axe, page, "methods tab with an error")
        page.locator("#p-columns label", has_text="expend").locator("input").check()
        page.fill("#p-group_size", "3")
        page.click("#apply")
        page.wait_for_selector("#history li[data-step='1']", state="attached")
        page.wait_for_selector("#job-bar", state="hidden")
        problems += violations(axe, page, "methods tab after a step")
        page.click("#tab-history")
        problems += violations(axe, page, "history tab")
        page.click("#tab-export")
        page.check("#export-override-columns input[value=income]")
        page.click("#export")
        page.wait_for_selector("#export-result .warning")
        assert "'income'" in page.inner_text("#export-result .warning")  # names the column
        problems += violations(axe, page, "export tab with a warning")
        page.click("#tab-sweep")
        problems += violations(axe, page, "sweep tab")
    log.assert_clean()
    assert problems == []


def test_the_keyboard_alone_reaches_every_control_in_order(studio_url):
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        visited: list[str] = []
        for _ in range(200):
            page.keyboard.press("Tab")
            here = page.evaluate(
                "(() => { const e = document.activeElement; return e.dataset.column"
                " ? e.className + ':' + e.dataset.column : e.id || e.tagName; })()"
            )
            visited.append(here)
            if here == "preview":  # the scrollable preview, last control of the data tab
                break
        # The skip link first, then the tab list (one stop: arrows move within it), then the
        # data tab's controls in reading order.
        assert visited[0] == "A"  # the skip link
        assert visited[1] == "tab-data"
        order = [
            "open-name",
            "upload",
            "upload-file",
            "kind:urbrur",
            "role:urbrur",
            "save-roles",
            "take-suggestions",
            "preview",
        ]
        positions = [visited.index(name) for name in order]
        assert positions == sorted(positions), visited
        # Every role and kind select of the 15 columns is reached.
        assert sum(v.startswith(("role:", "kind:")) for v in visited) == 30
        # The focused control is always visibly outlined (the :focus-visible style).
        page.focus("#save-roles")
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline == "solid"
    log.assert_clean()
