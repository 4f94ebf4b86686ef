"""A steward's whole session in the studio page, in headless Chromium, on sdcMicro's testdata.

``sdckit studio testdata.csv`` runs in a subprocess; the page opens the URL it
printed, sets roles, applies two methods, undoes one, applies another and
exports. Then the exported recipe (``sdckit recipe run``), the exported Python
script and the exported commands replay the release from the original file,
and each output must equal the studio's release byte for byte. Every request
of the page stays on 127.0.0.1 (the rest are aborted and recorded), and the
input file is never written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from page_helpers import running_studio, screenshot, studio_tab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
NUMERIC = ["expend", "income", "savings"]
ROLES = {**dict.fromkeys(KEYS, "key"), "sampling_weight": "weight", "ori_hid": "household"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def figure(page, group: str, name: str) -> str:
    return page.inner_text(f"#{group} .measure[data-measure={name}] .value")


def apply_method(page, method: str, fill: dict[str, str], columns: list[str], seed: int) -> None:
    """Choose ``method``, tick ``columns``, fill the other fields, apply, wait for the step."""
    page.click("#tab-methods")
    steps = page.locator("#history li[data-step]").count()
    page.select_option("#method", method)
    for column in columns:
        page.locator("#p-columns label", has_text=column).locator("input").check()
    for name, value in fill.items():
        if page.get_attribute(f"#p-{name}", "type") is None:  # a <select>
            page.select_option(f"#p-{name}", value)
        else:
            page.fill(f"#p-{name}", value)
    page.fill("#seed", str(seed))
    page.click("#apply")
    page.wait_for_function(
        f"document.querySelectorAll('#history li[data-step]').length === {steps + 1}"
        " || !document.getElementById('message').hidden"
    )
    assert page.is_hidden("#message"), page.inner_text("#message")
    page.wait_for_selector("#job-bar", state="hidden")


def test_whole_session_and_its_exports_replay_byte_for_byte(tmp_path, testdata):
    work = testdata.parent
    out = tmp_path / "out"  # not made here: the command makes it, as the docs' walk-through expects
    data = testdata
    before = sha256(data)

    with (
        running_studio([str(data), "--output-dir", str(out)], cwd=work) as url,
        studio_tab(url.split("/?", 1)[0]) as (page, log),
    ):
        page.goto(url)
        page.wait_for_selector("body[data-ready=true]")
        assert "testdata.csv" in page.inner_text("#file-line")
        assert "4,580 rows" in page.inner_text("#file-line")
        # The preview is paged: 20 rows of 4,580 reach the page (filled after data-ready on a
        # busy machine: wait for its first row before counting).
        page.wait_for_selector("#preview tbody tr")
        assert page.locator("#preview tbody tr").count() == 20
        assert "rows 1–20 of 4,580" in page.inner_text("#preview-range")

        # Roles: seven keys, the weight, the household id.
        for column, role in ROLES.items():
            page.select_option(f"select.role[data-column={column}]", role)
        page.click("#save-roles")
        page.wait_for_selector("#risk .measure[data-measure=sample_uniques]")
        uniques_before = int(figure(page, "risk", "sample_uniques").replace(",", ""))
        assert uniques_before > 0
        screenshot(page, "data")

        # Step 1: local suppression to 3-anonymity of the keys, a blank counting as a category
        # of its own (the convention of the risk panel's key counts).
        apply_method(
            page,
            "local_suppression",
            {"k_anonymity": "3", "missing": "category"},
            KEYS,
            seed=1,
        )
        assert figure(page, "risk", "sample_uniques") == "0"
        screenshot(page, "methods")
        delta = page.inner_text("#risk .measure[data-measure=sample_uniques] .delta")
        assert delta.startswith(f"−{uniques_before:,}") and "from the previous step" in delta
        # Step 2: additive noise on the three amounts; then undo it.
        apply_method(page, "additive_noise", {"variance_factor": "0.1"}, NUMERIC, seed=2)
        page.click("#tab-history")
        page.click("#undo")
        page.wait_for_selector("#history li[data-step='1'] > .step.current")
        # Step 3, a branch from step 1: microaggregation of the amounts in groups of 3.
        apply_method(page, "microaggregation", {"group_size": "3"}, NUMERIC, seed=3)
        page.click("#tab-history")
        tree = page.inner_text("#history")
        assert "additive_noise" in tree and "microaggregation" in tree  # the branch is kept
        assert page.locator("#history li[data-step='1'] > ul > li").count() == 2
        screenshot(page, "history")

        # Export: the household id (confidential) is left out, and the page says so.
        page.click("#tab-export")
        page.click("#export")
        page.wait_for_selector("#export-result li[data-kind=release]")
        assert "ori_hid" in page.inner_text("#export-result .left-out")
        screenshot(page, "export")
        recipe_text = page.inner_text("#recipe")
        assert "microaggregation" in recipe_text and "additive_noise" not in recipe_text
    log.assert_clean()

    assert sha256(data) == before  # the input was never written
    release = out / "release.csv"
    header = release.read_text().splitlines()[0].split(",")
    assert "ori_hid" not in header and "income" in header

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    sdckit = [sys.executable, "-m", "sdckit"]
    # 1. The recipe, replayed by the command line.
    subprocess.run(
        [*sdckit, "recipe", "run", str(out / "release.toml"), str(data), "-o", "by-recipe.csv"],
        cwd=work,
        check=True,
        env=env,
    )
    # 2. The Python script.
    subprocess.run(
        [sys.executable, str(out / "release.py"), str(data), str(work / "by-script.csv")],
        cwd=work,
        check=True,
        env=env,
    )
    # 3. The shell commands, in a folder holding only the input, with `sdckit` on the PATH.
    commands = tmp_path / "commands"
    commands.mkdir()
    shutil.copy(data, commands / "testdata.csv")
    path = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    subprocess.run(
        ["sh", str(out / "release.sh")], cwd=commands, check=True, env={**env, "PATH": path}
    )
    expected = release.read_bytes()
    assert (work / "by-recipe.csv").read_bytes() == expected
    assert (work / "by-script.csv").read_bytes() == expected
    assert (commands / "release.csv").read_bytes() == expected
