"""The studio page in headless Chromium against a scripted back end (page_fake.py).

What the page itself does, whatever the library computes: the token goes
with every request and leaves the address bar, the form is generated from
the method's spec, the tabs work from the keyboard, and a refusal shows its
message next to the parameter or column it names, with the state unchanged.
"""

from __future__ import annotations

import pytest
from page_fake import TOKEN, fake_app
from page_helpers import serve_asgi, studio_tab

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def fake_url():
    with serve_asgi(fake_app()) as url:
        yield url


def test_page_renders_generated_form_and_keyboard_tabs(fake_url):
    with studio_tab(fake_url) as (page, log):
        page.goto(f"{fake_url}/?token={TOKEN}")
        page.wait_for_selector("body[data-ready=true]")
        # The token left the address bar but is kept for the next requests.
        assert "token" not in page.url
        assert "people.csv" in page.inner_text("#file-line")
        assert page.locator("#columns tbody tr").count() == 3
        assert "looks like a code" in page.inner_text("#columns tr[data-column=sex]")
        assert page.locator("#preview tbody tr").count() == 3

        # Tabs: arrow keys move between them and show their panel.
        page.focus("#tab-data")
        page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.id") == "tab-methods"
        assert page.is_visible("#panel-methods")
        assert not page.is_visible("#panel-data")

        # The form of "noise" comes from its spec: a checkbox per column, a number with its
        # range in the help text, a checkbox for the flag.
        assert page.locator("#p-columns input[type=checkbox]").count() == 3
        assert page.get_attribute("#p-level", "type") == "number"
        assert "≤ 1" in page.inner_text(".param[data-param=level] .hint")
        assert page.locator("#p-correlated[type=checkbox]").count() == 1

        # Out of range: the back end's message is shown beside the parameter; no step added.
        page.fill("#p-level", "3")
        page.click("#apply")
        page.wait_for_selector("#message:not([hidden])")
        assert "level must be between 0 and 1" in page.inner_text("#message")
        assert page.get_attribute("#p-level", "aria-invalid") == "true"
        assert "level must be" in page.inner_text(".param[data-param=level] .param-error")
        page.click("#tab-history")
        assert page.locator("#history li[data-step]").count() == 1

        # In range: a step, the risk panel updates with its change from the previous step.
        page.click("#tab-methods")
        page.fill("#p-level", "0.5")
        page.click("#apply")
        page.wait_for_selector("#history li[data-step='1']", state="attached")
        assert page.is_hidden("#message")
        page.click("#tab-history")
        assert "level=0.5" in page.inner_text("#history li[data-step='1']")
    log.assert_clean()


def test_role_conflict_names_the_column(fake_url):
    with studio_tab(fake_url) as (page, log):
        page.goto(f"{fake_url}/?token={TOKEN}")
        page.wait_for_selector("body[data-ready=true]")
        page.select_option("select.role[data-column=age]", "weight")
        page.select_option("select.role[data-column=income]", "weight")
        page.click("#save-roles")
        page.wait_for_selector("#message:not([hidden])")
        assert "column 'income'" in page.inner_text("#message")
        assert page.get_attribute("select.role[data-column=income]", "aria-invalid") == "true"
    log.assert_clean()


def test_page_without_token_says_how_to_open_it(fake_url):
    with studio_tab(fake_url) as (page, log):
        page.goto(f"{fake_url}/")
        page.wait_for_selector("#message:not([hidden])")
        assert "token" in page.inner_text("#message")
    log.assert_clean()
