"""``sdckit assess`` and ``sdckit sweep`` on files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cli_words import sdckit
from sdckit.cli.main import main


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(8)
    n = 120
    x = rng.multivariate_normal([0, 0, 0], [[1, 0.6, 0.2], [0.6, 1, 0.3], [0.2, 0.3, 1]], size=n)
    data = pd.DataFrame(
        {"x": x[:, 0], "y": x[:, 1], "z": x[:, 2], "sex": rng.choice([1, 2], size=n)}
    )
    original = tmp_path / "original.csv"
    data.to_csv(original, index=False)
    return tmp_path, original, data


def test_cli_assess_writes_report(files, capsys):
    tmp_path, original, data = files
    masked = tmp_path / "masked.csv"
    assert sdckit("rwn {} -o {} --k 5 --seed 1 --quiet --categorical sex", original, masked) == 0
    out = tmp_path / "report.html"
    code = sdckit(
        "assess {} {} --response y --predictors x,z --keys sex -o {}", original, masked, out
    )
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert 'data-figure="cooks_distance"' in html and 'data-figure="key_frequencies"' in html
    assert "re-identified" in _err(capsys)
    # The input files are untouched.
    pd.testing.assert_frame_equal(pd.read_csv(original), data)


@pytest.mark.slow
def test_cli_sweep_rwn(files, capsys):
    tmp_path, original, _ = files
    out = tmp_path / "sweep.html"
    table = tmp_path / "sweep.csv"
    code = sdckit(
        "sweep rwn {} --eps 0:0.4:0.4 --k 5 --reps 2 --response y --seed 3 --table {} -o {} --categorical sex --quiet",
        original,
        table,
        out,
    )
    assert code == 0
    runs = pd.read_csv(table)
    assert len(runs) == 4 and sorted(runs["eps"].unique()) == [0.0, 0.4]
    assert 'data-figure="sweep_outliers"' in out.read_text(encoding="utf-8")


def _err(capsys) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_cli_errors_are_reported(files, capsys):
    tmp_path, original, _ = files
    assert sdckit("sweep nosuch {} --k 5 -o {}", original, tmp_path / "s.html") == 2
    assert "unknown masking method" in _err(capsys)
    assert main(["sweep", "rwn", str(original), "-o", str(tmp_path / "s.html")]) == 2
    assert "at least one parameter" in _err(capsys)
    assert sdckit("sweep rwn {} --k 2.5,5 -o {}", original, tmp_path / "s.html") == 2
    assert "whole numbers" in _err(capsys)
    assert (
        main(
            ["assess", str(original), str(tmp_path / "missing.csv"), "-o", str(tmp_path / "r.html")]
        )
        == 2
    )
    assert "does not exist" in _err(capsys)


def test_cli_sweep_noise_k_is_a_float_and_text_parameters_reach_the_method(files, capsys):
    tmp_path, original, _ = files
    table = tmp_path / "noise.csv"
    args = ["--reps", "1", "--seed", "1", "--quiet", "-o", str(tmp_path / "s.html")]
    args += ["--categorical", "sex"]
    assert (
        main(
            [
                "sweep",
                "additive_noise",
                str(original),
                "--param",
                "variance_factor=0.05,0.3",
                "--table",
                str(table),
                *args,
            ]
        )
        == 0
    )
    assert sorted(pd.read_csv(table)["variance_factor"]) == [0.05, 0.3]
    table = tmp_path / "swap.csv"
    assert (
        main(
            [
                "sweep",
                "swap",
                str(original),
                "--param",
                "rate=0.05,0.2",
                "--param",
                "columns=sex",
                "--table",
                str(table),
                *args,
            ]
        )
        == 0
    )
    assert sorted(pd.read_csv(table)["rate"]) == [0.05, 0.2]
    # MDAV's k stays a whole number.
    assert main(["sweep", "microaggregation", str(original), "--k", "2.5,5", *args]) == 2
    assert "whole numbers" in _err(capsys)
