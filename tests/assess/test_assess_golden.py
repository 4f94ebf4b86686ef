"""``sdckit assess`` on sdcMicro's testdata prints the same summary and writes the same report
as before the measure protocol and the neighbour-search layer (issue 14, items 2-3).

The golden files in ``golden/`` were written by this test (``SDCKIT_WRITE_GOLDEN=1``) on the
code before the refactoring; the report's embedded PNGs are replaced by a placeholder there, so
a newer matplotlib that draws a pixel differently does not fail the test, while every number,
note, table, caption and the figure list must stay the same.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from sdckit.cli import _common
from sdckit.cli.main import main
from shared_data import work_beside_shared_csv

GOLDEN = Path(__file__).parent / "golden"
PNG = re.compile(r"base64,[A-Za-z0-9+/=]+")


@pytest.mark.slow
def test_assess_summary_and_report_unchanged(tmp_path, capsys, monkeypatch):
    work_beside_shared_csv("testdata.csv", tmp_path, monkeypatch)
    monkeypatch.setattr(_common.err_console, "width", 1000)  # no wrapping of long lines
    roles = ["--id", "ori_hid", "--weight-column", "sampling_weight,household_weights"]
    categorical = "urbrur,roof,walls,water,electcon,relat,sex,hhcivil"
    rwn_args = ["rwn", "testdata.csv", "-o", "masked.csv", "--k", "5", "--seed", "42", "--quiet"]
    assert main([*rwn_args, *roles, "--categorical", categorical]) == 0
    capsys.readouterr()
    assess_args = [
        *("assess", "testdata.csv", "masked.csv", "--response", "income"),
        *("--predictors", "age,expend,savings", "--keys", "urbrur,sex", "--sensitive", "hhcivil"),
        *(
            "--categorical",
            "roof,walls,water,electcon,relat",
            "--linkage-columns",
            "age,income,expend",
        ),
        *("--prediction", "--reps", "2", "--seed", "3", "-o", "report.html"),
    ]
    code = main([*assess_args, *roles])
    assert code == 0
    summary = capsys.readouterr().err
    page = PNG.sub("base64,PNG", (tmp_path / "report.html").read_text(encoding="utf-8"))
    if os.environ.get("SDCKIT_WRITE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        (GOLDEN / "testdata_assess_summary.txt").write_text(summary, encoding="utf-8")
        (GOLDEN / "testdata_assess_report.html").write_text(page, encoding="utf-8")
    assert summary == (GOLDEN / "testdata_assess_summary.txt").read_text(encoding="utf-8")
    assert page == (GOLDEN / "testdata_assess_report.html").read_text(encoding="utf-8")
