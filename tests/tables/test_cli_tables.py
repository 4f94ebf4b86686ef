from __future__ import annotations

import itertools

import pandas as pd

from sdckit.cli.main import main


def test_cli_pipeline(tmp_path, census):
    micro = tmp_path / "micro.csv"
    census.to_csv(micro, index=False)
    keyed = tmp_path / "keyed.csv"
    assert main(["tables", "add-keys", str(micro), "-o", str(keyed), "--seed", "4"]) == 0
    table = tmp_path / "table.csv"
    assert (
        main(
            [
                "tables",
                "tabulate",
                str(keyed),
                "-o",
                str(table),
                "--dims",
                "district,sex",
                "--record-key",
                "record_key",
            ]
        )
        == 0
    )
    assert pd.read_csv(table)["count"].iloc[-1] == len(census)
    ptable = tmp_path / "ptable.csv"
    assert (
        main(["tables", "design-ptable", "-o", str(ptable), "--D", "3", "--V", "2.01", "--quiet"])
        == 0
    )
    perturbed = tmp_path / "perturbed.csv"
    assert (
        main(
            [
                "tables",
                "perturb",
                str(table),
                "-o",
                str(perturbed),
                "--ptable",
                str(ptable),
                "--quiet",
            ]
        )
        == 0
    )
    p = pd.read_csv(perturbed)
    assert not p["perturbed"].isin([1, 2]).any()
    restored = tmp_path / "restored.csv"
    code = main(
        [
            "tables",
            "restore",
            str(perturbed),
            "-o",
            str(restored),
            "--dims",
            "district,sex",
            "--quiet",
        ]
    )
    assert code == 0
    r = pd.read_csv(restored)
    inner = r[(r.district != "Total") & (r.sex != "Total")]
    assert (
        inner["restored"].sum()
        == r.loc[(r.district == "Total") & (r.sex == "Total"), "restored"].item()
    )
    dist = tmp_path / "dist.csv"
    assert (
        main(["tables", "infoloss", str(restored), "--protected", "restored", "-o", str(dist)]) == 0
    )
    assert pd.read_csv(dist)["percent"].sum() > 99.99


def test_cli_safe_and_errors(tmp_path, census):
    micro = tmp_path / "micro.csv"
    census.to_csv(micro, index=False)
    out = tmp_path / "safe.csv"
    code = main(
        [
            "tables",
            "safe",
            str(micro),
            "-o",
            str(out),
            "--tables",
            "district,age;age,sex",
            "--seed",
            "1",
            "--quiet",
        ]
    )
    assert code == 0
    protected = pd.read_csv(out)
    for r in (1, 2, 3):
        for sub in itertools.combinations(["district", "age", "sex"], r):
            assert not protected.groupby(list(sub)).size().isin([1, 2]).any()
    assert main(["tables", "tabulate", str(micro), "-o", str(out), "--dims", "nope"]) == 2
    assert main(["tables", "design-ptable", "-o", str(out), "--D", "2", "--js", "2"]) == 2
