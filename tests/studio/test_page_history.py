"""The History tab in headless Chromium: go to any step, redo, branches kept, named snapshots.

Two steps are made through the library (``Project.apply``) before the page
opens, then undone once; the page must show the tree as the back end holds
it and drive it: redo, go to the original, name a step.
"""

from __future__ import annotations

import pytest
from page_helpers import open_page, served_studio, studio_tab

pytestmark = pytest.mark.browser


@pytest.fixture
def studio_url(studio):
    with served_studio(studio) as urls:
        yield urls


def test_history_tree_goto_redo_and_snapshot(studio_url, studio):
    project = studio.project
    project.set_columns(by_role={"key": ["urbrur", "sex"]})
    project.apply("pram", {"columns": ["urbrur"], "min_diagonal": 0.9}, seed=1)
    project.apply("pram", {"columns": ["sex"], "min_diagonal": 0.9}, seed=2)
    project.undo()
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        page.click("#tab-history")
        assert page.locator("#history li[data-step]").count() == 3
        assert page.get_attribute("#history li[data-step='1'] .go", "aria-current") == "step"
        assert "min_diagonal=0.9; seed 2" in page.inner_text("#history li[data-step='2']")

        page.click("#redo")
        page.wait_for_selector("#history li[data-step='2'] > .step.current")
        assert project.current == 2
        assert page.is_disabled("#redo") and page.is_enabled("#undo")

        # Any step, by its button: the original file; the other steps stay in the tree.
        page.click("#history li[data-step='0'] > .step .go")
        page.wait_for_selector("#history li[data-step='0'] > .step.current")
        assert project.current == 0
        assert page.locator("#history li[data-step]").count() == 3
        assert page.inner_text("#measures-step").startswith("At step #0: original file")

        page.click("#history li[data-step='2'] > .step .go")
        page.wait_for_selector("#history li[data-step='2'] > .step.current")
        page.fill("#snapshot-name", "both recoded")
        page.press("#snapshot-name", "Enter")
        page.wait_for_selector("#history li[data-step='2'] .snapshot-name")
        assert page.inner_text("#history li[data-step='2'] .snapshot-name") == "both recoded"
        assert project.snapshots == {"both recoded": 2}

        # An empty name is refused in the page, naming the field; nothing is sent.
        page.fill("#snapshot-name", "")
        page.click("#snapshot")
        assert page.inner_text("#message") == "name: give the snapshot a name"
        assert project.snapshots == {"both recoded": 2}
    log.assert_clean()


def test_a_recipe_loads_back_as_a_branch(studio_url, studio, tmp_path):
    from sdckit.studio.export import project_recipe

    project = studio.project
    project.set_columns(by_role={"key": ["urbrur", "sex"]})
    project.apply("pram", {"columns": ["urbrur"], "min_diagonal": 0.9}, seed=1)
    recipe = tmp_path / "release.toml"
    recipe.write_text(project_recipe(project).to_toml(), encoding="utf-8")
    other = tmp_path / "other.toml"
    other.write_text(
        recipe.read_text().replace(project.fingerprint, "sha256:" + "0" * 64), encoding="utf-8"
    )
    base, url = studio_url
    with studio_tab(base) as (page, log):
        open_page(page, url)
        page.click("#tab-history")
        # A recipe of another file: said, and nothing changes.
        page.set_input_files("#recipe-file", str(other))
        page.click("#load-recipe")
        page.wait_for_selector("#message:not([hidden])")
        assert "made from another file" in page.inner_text("#message")
        assert list(project.steps) == [0, 1]

        page.set_input_files("#recipe-file", str(recipe))
        page.click("#load-recipe")
        page.wait_for_selector("#history li[data-step='2'] > .step.current")
        assert "1 step(s) replayed, now at step #2" in page.inner_text("#notice")
        assert project.steps[2].params == project.steps[1].params
        assert project.steps[2].seed == 1
        # The replayed state is the recorded one: same data as step 1.
        assert project.state(2).equals(project.state(1))
    log.assert_clean()
