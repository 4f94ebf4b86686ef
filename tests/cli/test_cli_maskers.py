"""`sdckit rankswap`, `sdckit noise additive|multiplicative`, `sdckit microaggregate` end to end."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cli_words import masked_file, sdckit
from sdckit.cli.main import main


@pytest.fixture
def income_csv(tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    tax = rng.gamma(2.0, 1.0, n)
    data = pd.DataFrame(
        {
            "id": np.arange(n),
            "gross": tax + rng.gamma(3.0, 4.0, n),
            "tax": tax,
            "age": rng.integers(18, 90, n),
            "region": rng.choice(["n", "s"], n),
        }
    )
    path = tmp_path / "in.csv"
    data.to_csv(path, index=False)
    return path, data


def test_rankswap(tmp_path, income_csv):
    src, data = income_csv
    diag = tmp_path / "diag.csv"
    masked = masked_file(
        "rankswap {} -o {} --p 10 --columns gross,age --seed 1 --diagnostics {} --quiet",
        src,
        tmp_path / "out.csv",
        diag,
    )
    assert sorted(masked["gross"]) == sorted(data["gross"])
    assert (masked["tax"] == data["tax"]).all()
    assert pd.read_csv(diag)["gross_rank_shift"].max() <= 40


def test_noise_multiplicative_with_constraint_and_zones(tmp_path, income_csv, capsys):
    src, data = income_csv
    out = tmp_path / "out.parquet"
    code = sdckit(
        "noise multiplicative {} -o {} --columns gross,tax --constraint gross>=tax --zones region --zone-k n=0.2 --seed 2",
        src,
        out,
    )
    assert code == 0
    masked = pd.read_parquet(out)
    assert (masked["gross"] >= masked["tax"]).all() and (masked["tax"] >= 0).all()
    assert not np.allclose(masked["gross"], data["gross"])
    assert "covariance ratio" in capsys.readouterr().err


def test_noise_additive_and_error_line(tmp_path, income_csv, capsys):
    src, _ = income_csv
    out = tmp_path / "out.csv"
    assert (
        sdckit(
            "noise additive {} -o {} --columns gross,tax,age --zone-thresholds 20 --seed 0 --quiet",
            src,
            out,
        )
        == 0
    )
    assert pd.read_csv(out)["age"].dtype == np.int64
    code = sdckit("noise additive {} -o {} --columns gross,region", src, out)
    assert code == 2
    assert "region" in capsys.readouterr().err


def test_microaggregate(tmp_path, income_csv):
    src, _ = income_csv
    out = tmp_path / "out.csv"
    diag = tmp_path / "groups.csv"
    masked = masked_file(
        "microaggregate {} -o {} --k 4 --columns gross,tax,region --categorical mode --diagnostics {} --quiet",
        src,
        out,
        diag,
    )
    assert masked.groupby(["gross", "tax", "region"]).size().min() >= 4
    sizes = pd.read_csv(diag)["group_size"]
    assert sizes.min() >= 4 and sizes.max() <= 7
    assert (
        sdckit(
            "microaggregate {} -o {} --method individual-ranking --columns gross --quiet", src, out
        )
        == 0
    )


def test_old_k_spellings_still_work_with_a_note(tmp_path, income_csv, capsys):
    path, _ = income_csv
    base = ["--columns", "gross,tax", "--id", "id", "--quiet"]
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    assert main(["microaggregate", str(path), "-o", str(new), "--group-size", "4", *base]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert main(["microaggregate", str(path), "-o", str(old), "--k", "4", *base]) == 0
    err = capsys.readouterr().err
    assert "--k is deprecated" in err and "--group-size" in err
    pd.testing.assert_frame_equal(pd.read_csv(new), pd.read_csv(old))
    both = ["--group-size", "4", "--k", "5"]
    assert main(["microaggregate", str(path), "-o", str(old), *both, *base]) == 2
    assert "not both" in capsys.readouterr().err
    seed = ["--seed", "2"]
    assert (
        main(
            [
                "noise",
                "additive",
                str(path),
                "-o",
                str(new),
                "--variance-factor",
                "0.2",
                *seed,
                *base,
            ]
        )
        == 0
    )
    assert main(["noise", "additive", str(path), "-o", str(old), "--k", "0.2", *seed, *base]) == 0
    assert "--variance-factor" in capsys.readouterr().err
    pd.testing.assert_frame_equal(pd.read_csv(new), pd.read_csv(old))


def test_noise_covariance_shrinkage_option(tmp_path, income_csv, capsys):
    src, _ = income_csv
    out = tmp_path / "out.csv"
    args = ["noise", "multiplicative", str(src), "-o", str(out), "--columns", "gross,tax"]
    assert main([*args, "--covariance", "shrinkage", "--seed", "0", "--quiet"]) == 0
    assert "Ledoit-Wolf shrinkage" in capsys.readouterr().err
    assert main([*args, "--covariance", "ledoit"]) == 2
    assert "covariance must be 'sample' or 'shrinkage'" in capsys.readouterr().err
