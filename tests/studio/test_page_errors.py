"""The studio page in headless Chromium: keyboard, generated forms and bad input, on the real app.

The app (``sdckit.studio.app``) serves testdata.csv in a thread. Each bad
input (a parameter out of range, a role conflict, an empty or unreadable
upload) must be shown in the page as one sentence naming the parameter or
column, next to the control at fault, with the state unchanged.
"""

from __future__ import annotations

import pytest
from page_helpers import open_page, served_studio, studio_tab

pytestmark = pytest.mark.browser


@pytest.fixture
def studio_url(studio):
    with served_studio(studio) as urls:
        yield urls


def step_count(page) -> int:
    return page.locator("#history li[data-step]").count()


def test_keyboard_forms_and_bad_parameters(studio_url, studio):
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        # The token left the address bar (screenshots, history) but goes with every request.
        assert "token" not in page.url
        assert page.locator("#columns tbody tr").count() == 15

        # Tabs: arrow keys move between them and show their panel.
        page.focus("#tab-data")
        page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.id") == "tab-methods"
        assert page.is_visible("#panel-methods") and not page.is_visible("#panel-data")

        # Every registered method has a generated form with a labelled control per parameter.
        from sdckit.microdata import available_maskers
        from sdckit.studio.forms import method_form

        names = page.eval_on_selector_all("#method option", "os => os.map(o => o.value)")
        assert names == sorted(available_maskers())
        for name in names:
            page.select_option("#method", name)
            for parameter in method_form(name)["parameters"]:
                wrap = page.locator(f"#method-params .param[data-param={parameter['name']}]")
                assert wrap.count() == 1, (name, parameter["name"])

        # Out of range: the back end's sentence, beside the parameter; no step, state unchanged.
        page.select_option("#method", "microaggregation")
        page.locator("#p-columns label", has_text="income").locator("input").check()
        page.fill("#p-group_size", "1")
        page.press("#p-group_size", "Enter")  # the keyboard submits the form
        page.wait_for_selector("#message:not([hidden])")
        message = page.inner_text("#message")
        assert "group_size" in message
        assert page.get_attribute("#p-group_size", "aria-invalid") == "true"
        assert "group_size" in page.inner_text(".param[data-param=group_size] .param-error")
        assert step_count(page) == 1 and studio.project.current == 0

        # Not a number: said by the page before anything is sent.
        page.fill("#p-group_size", "2.5")
        page.click("#apply")
        assert "group_size: '2.5' is not a whole number" in page.inner_text("#message")
        assert studio.project.current == 0
    log.assert_clean()


def test_role_conflict_names_the_column(studio_url, studio):
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        page.select_option("select.role[data-column=household_weights]", "weight")
        page.select_option("select.role[data-column=sampling_weight]", "weight")
        page.click("#save-roles")
        page.wait_for_selector("#message:not([hidden])")
        message = page.inner_text("#message")
        assert "weight" in message and "household_weights" in message
        invalid = page.eval_on_selector_all(
            "#columns [aria-invalid=true]", "xs => xs.map(x => x.dataset.column)"
        )
        assert invalid and set(invalid) <= {"household_weights", "sampling_weight"}
        assert studio.project.roles["household_weights"] != "weight"  # unchanged
    log.assert_clean()


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02 not a table"], ids=["empty", "unreadable"])
def test_bad_upload_is_said_and_the_open_file_kept(studio_url, studio, tmp_path, content):
    base, url = studio_url
    bad = tmp_path / "bad.csv"
    bad.write_bytes(content)
    with studio_tab(base) as (page, log):
        open_page(page, url)
        page.set_input_files("#upload", str(bad))
        page.click("#upload-file")
        page.wait_for_selector("#message:not([hidden])")
        message = page.inner_text("#message")
        assert "bad.csv" in message and "\n" not in message.strip()
        # The file open before is still the project, in the page and in the back end.
        assert "testdata.csv" in page.inner_text("#file-line")
        assert studio.project.path.name == "testdata.csv"
    log.assert_clean()


def test_an_upload_opens_and_its_columns_replace_the_forms(studio_url, studio, tmp_path):
    small = tmp_path / "people.csv"
    small.write_text("age,region,income\n34,north,1200.5\n51,south,800\n29,north,\n")
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        page.set_input_files("#upload", str(small))
        page.click("#upload-file")
        page.wait_for_selector("#file-line:has-text('people.csv')")
        assert "3 rows × 3 columns" in page.inner_text("#file-line")
        assert page.locator("#columns tbody tr").count() == 3
        # The preview shows the values as written (a missing one blank), not rounded.
        cells = page.locator("#preview tbody tr").first.locator("td").all_inner_texts()
        assert cells == ["34", "north", "1200.5"]
        # The generated forms now offer this file's columns.
        page.click("#tab-methods")
        page.select_option("#method", "microaggregation")
        offered = page.eval_on_selector_all("#p-columns input", "xs => xs.map(x => x.value)")
        assert offered == ["age", "region", "income"]
        assert studio.project.path.name == "people.csv"
    log.assert_clean()


def test_an_unmasked_export_and_a_required_column_list_are_refused_in_the_page(studio_url, studio):
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        # local_suppression cannot run without its key columns: the form says so at once.
        page.click("#tab-methods")
        page.select_option("#method", "local_suppression")
        steps = step_count(page)
        page.click("#apply")
        page.wait_for_selector("#message:not([hidden])")
        assert "columns" in page.inner_text("#message") and step_count(page) == steps
        assert page.get_attribute("#p-columns", "aria-invalid") == "true"
        # Nothing applied: the export is refused until the steward confirms, in the page.
        page.click("#tab-export")
        page.click("#export")
        page.wait_for_selector("#export-unmasked:not([hidden])")
        assert "no method was applied" in page.inner_text("#export-unmasked")
        assert not list(studio.output_dir.iterdir())
        page.check("#export-confirm-unmasked")
        page.click("#export")
        page.wait_for_selector("#export-result .warning")
        assert "nothing was masked" in page.inner_text("#export-result .warning")
    log.assert_clean()
