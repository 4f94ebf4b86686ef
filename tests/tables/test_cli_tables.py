from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from cli_words import sdckit
from sdckit.cli.main import main
from sdckit.errors import ParameterError
from sdckit.tables import cell_key_perturb, design_ptable, tabulate
from sdckit.tables.release import ConfidentialColumnError, check_release


def test_cli_pipeline(tmp_path, census):
    micro = tmp_path / "micro.csv"
    census.to_csv(micro, index=False)
    keyed = tmp_path / "keyed.csv"
    assert sdckit("tables add-keys {} -o {} --seed 4", micro, keyed) == 0
    table = tmp_path / "table.csv"
    assert (
        sdckit("tables tabulate {} -o {} --dims district,sex --record-key record_key", keyed, table)
        == 0
    )
    assert pd.read_csv(table)["count"].iloc[-1] == len(census)
    ptable = tmp_path / "ptable.csv"
    assert sdckit("tables design-ptable -o {} --D 3 --V 2.01 --quiet", ptable) == 0
    perturbed = tmp_path / "perturbed.csv"
    assert sdckit("tables perturb {} -o {} --ptable {} --quiet", table, perturbed, ptable) == 0
    p = pd.read_csv(perturbed)
    assert not p["perturbed"].isin([1, 2]).any()
    restored = tmp_path / "restored.csv"
    code = sdckit("tables restore {} -o {} --dims district,sex --quiet", perturbed, restored)
    assert code == 0
    r = pd.read_csv(restored)
    inner = r[(r.district != "Total") & (r.sex != "Total")]
    assert (
        inner["restored"].sum()
        == r.loc[(r.district == "Total") & (r.sex == "Total"), "restored"].item()
    )
    dist = tmp_path / "dist.csv"
    assert (
        sdckit("tables infoloss {} --protected {} --dims district,sex -o {}", table, restored, dist)
        == 0
    )
    assert pd.read_csv(dist)["percent"].sum() > 99.99


def test_cli_safe_and_errors(tmp_path, census):
    micro = tmp_path / "micro.csv"
    census.to_csv(micro, index=False)
    out = tmp_path / "safe.csv"
    code = sdckit(
        "tables safe {} -o {} --tables district,age;age,sex --seed 1 --bounds 2,3 --cell-weights 0.5 --quiet",
        micro,
        out,
    )
    assert code == 0
    protected = pd.read_csv(out)
    for r in (1, 2, 3):
        for sub in itertools.combinations(["district", "age", "sex"], r):
            assert not protected.groupby(list(sub)).size().isin([1, 2]).any()
    assert sdckit("tables tabulate {} -o {} --dims nope", micro, out) == 2
    bad = ["tables", "safe", str(micro), "-o", str(out), "--tables", "age", "--bounds", "2"]
    assert main(bad) == 2
    assert sdckit("tables design-ptable -o {} --D 2 --js 2", out) == 2


CONFIDENTIAL = {"count", "cell_key", "noise", "record_key"}


@pytest.fixture
def keyed_file(tmp_path, census):
    micro = tmp_path / "micro.csv"
    census.assign(w=np.linspace(1.0, 50.0, len(census))).to_csv(micro, index=False)
    keyed = tmp_path / "keyed.csv"
    assert sdckit("tables add-keys {} -o {} --seed 4", micro, keyed) == 0
    return keyed


def _run(args, capsys):
    capsys.readouterr()
    code = main(args)
    return code, capsys.readouterr().err.replace("\n", " ")


def test_perturb_writes_only_what_may_be_published(tmp_path, keyed_file, capsys):
    """Issue 11: `tables perturb ... -o protected.csv` wrote the true count and cell key."""
    table = tmp_path / "table.csv"
    base = ["tables", "tabulate", str(keyed_file), "-o", str(table), "--dims", "district,sex"]
    assert main([*base, "--record-key", "record_key"]) == 0
    for source, extra in ((table, []), (keyed_file, ["--dims", "district,sex"])):
        out = tmp_path / "protected.csv"
        assert main(["tables", "perturb", str(source), "-o", str(out), "--quiet", *extra]) == 0
        published = pd.read_csv(out)
        assert list(published.columns) == ["district", "sex", "perturbed"]
        assert not CONFIDENTIAL & set(published.columns)
    # the internal file only on request, under a name that says so
    code, err = _run(
        ["tables", "perturb", str(table), "-o", str(tmp_path / "p.csv"), "--with-true-counts"],
        capsys,
    )
    assert code == 2 and "internal" in err
    assert not (tmp_path / "p.csv").exists()
    internal = tmp_path / "table_internal.csv"
    assert sdckit("tables perturb {} -o {} --with-true-counts", table, internal) == 0
    frame = pd.read_csv(internal)
    assert {"count_CONFIDENTIAL", "cell_key_CONFIDENTIAL", "noise_CONFIDENTIAL"} <= set(frame)
    assert not CONFIDENTIAL & set(frame.columns)
    # restore reads the internal file (true zeros known) and publishes only protected values
    restored = tmp_path / "restored.csv"
    args = ["tables", "restore", str(internal), "-o", str(restored), "--dims", "district,sex"]
    assert main([*args, "--quiet"]) == 0
    assert list(pd.read_csv(restored).columns) == ["district", "sex", "perturbed", "restored"]
    code, err = _run([*args, "--quiet", "--with-true-counts"], capsys)
    assert code == 2 and "internal" in err


def test_writer_check_refuses_confidential_columns():
    frame = pd.DataFrame({"x": ["a"], "perturbed": [3], "cell_key": [0.2]})
    with pytest.raises(ConfidentialColumnError, match="cell_key"):
        check_release(frame)
    check_release(frame, allow_confidential=True)
    marked = pd.DataFrame({"x": ["a"], "secret_CONFIDENTIAL": [1]})
    with pytest.raises(ConfidentialColumnError, match="secret_CONFIDENTIAL"):
        check_release(marked)


def test_safe_refuses_record_keys_in_protected_microdata(tmp_path, keyed_file, capsys):
    out = tmp_path / "safe.csv"
    args = ["tables", "safe", str(keyed_file), "-o", str(out), "--tables", "district,sex"]
    code, err = _run([*args, "--seed", "1", "--quiet"], capsys)
    assert code == 2 and "record_key" in err
    assert not out.exists()
    micro = pd.read_csv(keyed_file).drop(columns="record_key")
    plain = tmp_path / "plain.csv"
    micro.to_csv(plain, index=False)
    args[2] = str(plain)
    code, err = _run([*args, "--diagnostics", str(tmp_path / "diag.csv"), "--quiet"], capsys)
    assert code == 2 and "--diagnostics" in err
    diag = tmp_path / "diag_internal.csv"
    assert main([*args, "--diagnostics", str(diag), "--quiet"]) == 0
    assert "changed" in pd.read_csv(diag).columns
    # phase 2's round limit reaches safe_perturb: a negative one is refused naming it
    code, err = _run([*args, "--max-rounds", "-1", "--quiet"], capsys)
    assert code == 2 and "max_rounds" in err
    assert main([*args, "--seed", "1", "--max-rounds", "0", "--quiet"]) == 0


def test_design_ptable_refuses_impossible_sizes_up_front(tmp_path, capsys):
    """Issue 11: --D 1000000 gave an internal MemoryError (14.6 TiB)."""
    out = tmp_path / "p.csv"
    code, err = _run(["tables", "design-ptable", "-o", str(out), "--D", "1000000"], capsys)
    assert code == 2
    assert "TiB" in err and "D=1000000" in err and "internal error" not in err
    code, err = _run(["tables", "design-ptable", "-o", str(out), "--js", "100000000"], capsys)
    assert code == 2 and "internal error" not in err


def test_negative_weights_named_with_row_and_value(tmp_path, census, capsys):
    """Issue 11: tabulate --weights w accepted negative weights."""
    weights = np.ones(len(census))
    weights[[4, 9]] = [-3.0, -0.5]
    micro = tmp_path / "m.csv"
    census.assign(w=weights).to_csv(micro, index=False)
    out = tmp_path / "t.csv"
    args = ["tables", "tabulate", str(micro), "-o", str(out), "--dims", "sex", "--weights", "w"]
    code, err = _run(args, capsys)
    assert code == 2
    assert "'w'" in err and "row 5" in err and "-3" in err and "np." not in err
    assert not out.exists()


def test_weighted_table_perturbs_the_count_and_scales_the_total(tmp_path, keyed_file):
    """Issue 24: +-3 on weighted totals of millions protects nothing; the count is perturbed
    with the cell key and the weighted total scaled by the cell's mean weight."""
    table = tmp_path / "table.csv"
    args = ["tables", "tabulate", str(keyed_file), "-o", str(table), "--dims", "district,sex"]
    assert main([*args, "--weights", "w", "--record-key", "record_key"]) == 0
    truth = pd.read_csv(table)
    assert truth["count"].iloc[-1] == 600
    internal = tmp_path / "w_internal.csv"
    assert sdckit("tables perturb {} -o {} --with-true-counts", table, internal) == 0
    frame = pd.read_csv(internal)
    count, weighted = frame["count_CONFIDENTIAL"], frame["weighted_count_CONFIDENTIAL"]
    assert (frame["perturbed"] - count).abs().max() <= 3
    expected = np.where(count > 0, weighted / count.where(count > 0, 1), 0) * frame["perturbed"]
    np.testing.assert_allclose(frame["perturbed_weighted"], expected)
    assert not frame["perturbed"].isin([1, 2]).any()
    published = tmp_path / "w.csv"
    assert sdckit("tables perturb {} -o {} --quiet", table, published) == 0
    assert list(pd.read_csv(published).columns) == [
        "district",
        "sex",
        "perturbed",
        "perturbed_weighted",
    ]


def test_perturbing_weighted_totals_as_counts_is_refused(keyed):
    table = tabulate(keyed, ["sex"], weights="income", record_key="record_key")
    with pytest.raises(ParameterError, match="weighted"):
        cell_key_perturb(table, design_ptable(3, 2.01), count="weighted_count")


def test_pstay_one_refused_and_no_negative_zero(tmp_path, capsys):
    """Issue 24: --pstay 1.0 was accepted and the summary printed 'range [0, -0]'."""
    out = tmp_path / "p.csv"
    code, err = _run(["tables", "design-ptable", "-o", str(out), "--pstay", "1.0"], capsys)
    assert code == 2 and "pstay" in err and "-0" not in err
    code, err = _run(["tables", "design-ptable", "-o", str(out), "--pstay", "0.95"], capsys)
    assert code == 0
    assert "-0]" not in err and "-0," not in err and "-0 " not in err


def test_cli_tauargus_ptable_perturbs_as_the_tidy_one(tmp_path, keyed) -> None:
    table = tmp_path / "table.csv"
    tabulate(keyed, ["district", "sex"], record_key="record_key").to_csv(table, index=False)
    outputs = []
    for layout, name in (("tidy", "p.csv"), ("tauargus", "p.txt")):
        ptable = tmp_path / name
        assert sdckit(f"tables design-ptable -o {{}} --format {layout} --quiet", ptable) == 0
        out = tmp_path / f"perturbed_{layout}.csv"
        assert sdckit("tables perturb {} -o {} --ptable {} --quiet", table, out, ptable) == 0
        outputs.append(pd.read_csv(out))
    assert (tmp_path / "p.txt").read_text().startswith('"i";"j";"p";"v";"p_ij_ub"\n')
    pd.testing.assert_frame_equal(outputs[0], outputs[1])
