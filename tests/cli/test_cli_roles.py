"""Column roles from the command line (--id, --weight-column) and the refusal to mask,
untold, columns that look like identifiers or codes."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from cli_words import masked_file, sdckit
from sdckit._roles import suspect_columns
from sdckit.cli.main import main
from shared_data import SHARED_DATA


@pytest.fixture
def households(tmp_path):
    """A survey file as a CSV carries it: household ids, codes, weights and amounts."""
    rng = np.random.default_rng(8)
    n = 300
    hid = np.repeat(np.arange(1, 101), 3)
    data = pd.DataFrame(
        {
            "hid": hid,
            "sex": rng.choice([1, 2], n),
            "region": rng.choice([1, 2, 3, 9], n),
            "age": rng.integers(0, 90, n),
            "income": rng.gamma(2.0, 800.0, n).round(2),
            "expend": rng.gamma(2.0, 500.0, n).round(0).astype(int) + np.arange(n) * 1000,
            "weight": np.repeat(rng.choice([12.5, 25.0, 50.0], 100), 3),
        }
    )
    path = tmp_path / "hh.csv"
    data.to_csv(path, index=False)
    return path, data


def test_suspect_columns_rules(households):
    _, data = households
    found = {s.name: s.kind for s in suspect_columns(data)}
    assert found == {
        "hid": "identifier",
        "sex": "code",
        "region": "code",
        "weight": "code",
    }
    # Whole-number amounts (not dense) and ages are not suspicious.
    assert "expend" not in found and "age" not in found
    record_numbers = pd.DataFrame({"case": np.arange(1001, 1301), "x": np.linspace(0, 1, 300)})
    assert [s.name for s in suspect_columns(record_numbers)] == ["case"]
    text_ids = pd.DataFrame({"person": [f"P{i:04d}" for i in range(50)]})
    assert [s.kind for s in suspect_columns(text_ids)] == ["identifier"]


@pytest.mark.parametrize(
    "command",
    [["rwn"], ["rankswap"], ["microaggregate", "--k", "3"]],
    ids=["rwn", "rankswap", "microaggregate"],
)
def test_maskers_refuse_to_mask_ids_and_codes_untold(households, tmp_path, command, capsys):
    path, _ = households
    out = tmp_path / "out.csv"
    code = main([command[0], str(path), "-o", str(out), *command[1:], "--quiet"])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    for column in ("hid", "sex", "region", "weight"):
        assert f"'{column}'" in err
    assert "--id" in err and "--columns" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("line", "kept", "income_changed"),
    [
        (
            "rwn {} -o {} --id hid --weight-column weight --categorical sex,region --seed 4 --quiet",
            ["hid", "weight"],
            0.5,  # RWN changes most incomes
        ),
        (
            "microaggregate {} -o {} --k 3 --id hid --weight-column weight "
            "--columns age,income,expend --quiet",
            ["hid", "sex", "region", "weight"],  # the household id is never averaged
            0.0,  # some income changed
        ),
    ],
    ids=["rwn", "microaggregate"],
)
def test_maskers_with_roles_declared_pass_ids_and_weights_through(
    households, tmp_path, line, kept, income_changed
):
    path, data = households
    masked = masked_file(line, path, tmp_path / "out.csv")
    for column in kept:
        assert (masked[column] == data[column]).all(), column
    assert (masked["income"] != data["income"]).mean() > income_changed


def test_microaggregate_weight_column_weights_the_means(households, tmp_path):
    path, _ = households
    weighted, plain = tmp_path / "w.csv", tmp_path / "p.csv"
    base = ["--k", "3", "--columns", "income,expend", "--quiet"]
    assert main(["microaggregate", str(path), "-o", str(plain), *base]) == 0
    assert (
        main(["microaggregate", str(path), "-o", str(weighted), *base, "--weight-column", "weight"])
        == 0
    )
    assert not pd.read_csv(plain)["income"].equals(pd.read_csv(weighted)["income"])


def test_id_in_columns_is_refused(households, tmp_path, capsys):
    path, _ = households
    code = sdckit("rankswap {} -o {} --id hid --columns hid,income", path, tmp_path / "o.csv")
    assert code == 2
    assert "'hid' (id)" in capsys.readouterr().err
    code = main(["rwn", str(path), "-o", str(tmp_path / "o.csv"), "--id", "nosuch"])
    assert code == 2
    assert "--id: unknown column(s) ['nosuch']" in capsys.readouterr().err


def test_swap_refuses_to_swap_an_id(households, tmp_path, capsys):
    path, _ = households
    code = sdckit("swap {} -o {} -s hid --rate 0.1 --id hid", path, tmp_path / "o.csv")
    assert code == 2
    assert "'hid' (id)" in capsys.readouterr().err


def _linkage(text: str) -> float:
    match = re.search(r"record linkage on (\d+) variable\(s\): ([0-9.]+) of records", text)
    assert match, text
    return int(match.group(1)), float(match.group(2))


def test_assess_leaves_ids_and_weights_out_of_linkage(households, tmp_path, capsys):
    path, _ = households
    masked = tmp_path / "m.csv"
    assert (
        sdckit(
            "rwn {} -o {} --id hid --weight-column weight --categorical sex,region --seed 2 --quiet",
            path,
            masked,
        )
        == 0
    )
    capsys.readouterr()
    report = str(tmp_path / "r.html")
    assert main(["assess", str(path), str(masked), "-o", report]) == 0
    n_all, rate_all = _linkage(" ".join(capsys.readouterr().err.split()))
    code = main(
        [
            "assess",
            str(path),
            str(masked),
            "-o",
            report,
            "--id",
            "hid",
            "--weight-column",
            "weight",
            "--categorical",
            "sex,region",
        ]
    )
    assert code == 0
    n_told, rate_told = _linkage(" ".join(capsys.readouterr().err.split()))
    assert (n_all, n_told) == (7, 5)
    # The unmasked household id and weight make linkage look far easier than it is.
    assert rate_all > rate_told
    code = main(["assess", str(path), str(masked), "-o", report, "--exclude", "income,expend"])
    assert code == 0
    assert _linkage(" ".join(capsys.readouterr().err.split()))[0] == 5


def test_sweep_refuses_untold_and_accepts_roles(households, tmp_path, capsys):
    path, _ = households
    html = tmp_path / "s.html"
    args = ["sweep", "rwn", str(path), "--k", "3,5", "-o", str(html), "--quiet"]
    assert main(args) == 2
    assert "'hid'" in capsys.readouterr().err and not html.exists()
    roles = ["--id", "hid", "--weight-column", "weight", "--categorical", "sex,region"]
    assert main([*args, *roles, "--seed", "1"]) == 0
    assert html.exists()


def test_testdata_microaggregate_as_in_the_walkthrough(tmp_path, capsys):
    path = SHARED_DATA / "testdata.csv"
    if not path.exists():
        pytest.skip(f"shared dataset {path} is not present")
    out = tmp_path / "x.csv"
    assert main(["microaggregate", str(path), "-o", str(out), "--k", "3"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    for column in ("ori_hid", "sampling_weight", "household_weights", "sex", "urbrur"):
        assert f"'{column}'" in err
    assert not out.exists()
    code = sdckit(
        "microaggregate {} -o {} --k 3 --id ori_hid --weight-column sampling_weight,household_weights --sample-weights household_weights --columns age,expend,income,savings --quiet",
        path,
        out,
    )
    assert code == 0
    original, masked = pd.read_csv(path), pd.read_csv(out)
    assert (masked["ori_hid"] == original["ori_hid"]).all()
    assert (masked["household_weights"] == original["household_weights"]).all()


def test_noise_commands_take_roles_and_refuse_codes_untold(tmp_path):
    import pandas as pd

    from sdckit.cli.main import main

    rng = __import__("numpy").random.default_rng(0)
    frame = pd.DataFrame(
        {
            "person_id": range(1, 201),
            "region": rng.integers(1, 4, 200),
            "w": rng.uniform(1, 5, 200),
            "income": rng.lognormal(10, 1, 200),
            "assets": rng.lognormal(11, 1, 200),
        }
    )
    src = tmp_path / "in.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    for scheme in ("additive", "multiplicative"):
        out.unlink(missing_ok=True)
        assert main(["noise", scheme, str(src), "-o", str(out), "--seed", "1", "--quiet"]) == 2
        assert not out.exists()
        code = main(
            [
                "noise", scheme, str(src), "-o", str(out), "--seed", "1", "--quiet",
                "--id", "person_id", "--weight-column", "w", "--columns", "income,assets",
            ]
        )  # fmt: skip
        assert code == 0
        masked = pd.read_csv(out)
        for kept in ("person_id", "region", "w"):
            assert masked[kept].equals(frame[kept]), (scheme, kept)
        assert not masked["income"].equals(frame["income"])
        assert main(["noise", scheme, str(src), "-o", str(src), "--columns", "income"]) == 2
