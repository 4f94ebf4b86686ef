"""The small things a person notices: progress frames, counts of records, the sweep's
recommendation in the terminal, a wide sweep table, swap counts with strata, MDAV means."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
from rich.console import Console

import sdckit.cli._common as common
from sdckit.assess import assess
from sdckit.cli.main import main
from sdckit.microdata.microaggregation import microaggregate
from sdckit.microdata.rwn import rwn
from sdckit.microdata.swap import swap


def test_progress_bar_never_shows_none(monkeypatch):
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100)
    monkeypatch.setattr(common, "err_console", console)
    with common.progress_bar("work") as update:
        update(0, 10)
        update(5, 10)
    assert "None" not in buffer.getvalue()

    class _Task:
        total = None
        completed = 0

    assert str(common._DoneOfTotalColumn().render(_Task())) == ""
    _Task.total, _Task.completed = 10, 3
    assert str(common._DoneOfTotalColumn().render(_Task())) == "3/10"


def test_large_input_shows_a_reading_status(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    pd.DataFrame({"x": np.arange(100.0)}).to_csv(path, index=False)
    buffer = io.StringIO()
    monkeypatch.setattr(common, "err_console", Console(file=buffer, width=200))
    monkeypatch.setattr(common, "_LARGE_INPUT_BYTES", 10)
    data = common.read_input(path)
    assert len(data) == 100
    assert f"read 100 rows x 1 columns from {path}" in buffer.getvalue()
    buffer.truncate(0)
    common.read_input(path, quiet=True)
    assert buffer.getvalue().strip("\x00") == ""


def test_linkage_summary_counts_whole_records():
    rng = np.random.default_rng(1)
    data = pd.DataFrame(rng.normal(size=(203, 3)), columns=["a", "b", "c"])
    result = rwn(data, k=5, random_state=1)
    text = assess(data, result).risk.linkage.summary()
    match = re.search(r"\(about (\d+) of 203 records\)", text)
    assert match, text


def _sweep_file(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.multivariate_normal([0, 0, 0], [[1, 0.7, 0.3], [0.7, 1, 0.4], [0.3, 0.4, 1]], 150)
    path = tmp_path / "d.csv"
    pd.DataFrame(x, columns=["x", "y", "z"]).to_csv(path, index=False)
    return path


def test_sweep_prints_its_recommendation_and_the_table_fits(tmp_path, capsys):
    path = _sweep_file(tmp_path)
    html = tmp_path / "s.html"
    code = main(
        ["sweep", "rwn", str(path), "--k", "3,10", "-o", str(html), "--seed", "1", "--quiet"]
    )
    assert code == 0
    err = " ".join(capsys.readouterr().err.split())
    page = html.read_text(encoding="utf-8")
    recommended = re.search(r'id="recommendation">([^<]+)<', page).group(1)
    assert recommended.split(".")[0] in err
    assert "Recommended setting" in err or "No setting" in err
    # The wide table scrolls inside the page instead of stretching it.
    assert '<div class="table-wrap"><table>' in page
    assert "overflow-x: auto" in page


def test_swap_with_strata_reports_consistent_counts():
    rng = np.random.default_rng(7)
    n = 4885
    data = pd.DataFrame({"income": rng.normal(size=n), "region": rng.integers(0, 37, n)})
    result = swap(data, columns="income", rate=0.5 - 1e-9, strata="region", random_state=1)
    stats = result.stats
    assert stats["pairs_swapped"] <= stats["pairs_requested"]
    assert stats["pairs_at_rate_overall"] == round((0.5 - 1e-9) * n)
    text = result.summary()
    assert "pairs requested" in text and "pairs at rate overall" in text


def test_mdav_summary_says_how_far_integer_means_move():
    rng = np.random.default_rng(2)
    data = pd.DataFrame({"count": rng.integers(0, 1000, 301), "amount": rng.gamma(2.0, 10.0, 301)})
    result = microaggregate(data, columns=["count", "amount"], group_size=3)
    shift_count = abs(result.data["count"].mean() - data["count"].mean())
    shift_amount = abs(result.data["amount"].mean() - data["amount"].mean())
    assert shift_amount < 1e-9  # float columns keep their mean
    assert result.stats["largest_mean_change"] == max(shift_count, shift_amount)
    assert "largest mean change" in result.summary()
