"""``sdckit querylog protect`` and ``evaluate``: the release, the report, bad input."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from cli_words import sdckit
from sdckit.cli.main import main

LOG = pd.DataFrame(
    {
        "AnonID": [1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6],
        "Query": [
            "soccer scores",
            "soccer",
            "tennis",
            "football",
            "tennis shoes",
            "guitar chords",
            "piano",
            "guitar",
            "painting",
            "python snake",
            "weather",
            "python tutorial",
        ],
        "QueryTime": ["2006-03-01 10:00:00"] * 12,
    }
)
TAXONOMY = "term,category_path\nsoccer,Sports/Soccer\nfootball,Sports/Soccer\ntennis,Sports/Tennis\nguitar,Arts/Music\npiano,Arts/Music\npainting,Arts/Painting\npython,Computers/Programming\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "log.csv"
    LOG.to_csv(log, index=False)
    taxonomy = tmp_path / "taxonomy.csv"
    taxonomy.write_text(TAXONOMY, encoding="utf-8")
    return log, taxonomy


def test_protect_then_evaluate(files, tmp_path, capsys) -> None:
    log, taxonomy = files
    digest = hashlib.sha256(log.read_bytes()).hexdigest()
    out, key = tmp_path / "protected.csv", tmp_path / "key_confidential.csv"
    # the key links original users to released ones: a name that looks like a release is refused
    args = ["querylog", "protect", str(log), "-o", str(out), "--k", "2", "--quiet"]
    assert main([*args, "--taxonomy", str(taxonomy), "--key", str(tmp_path / "key.csv")]) == 2
    assert "must contain 'internal' or 'confidential'" in capsys.readouterr().err
    assert not out.exists()
    code = sdckit(
        "querylog protect {} -o {} --k 2 --taxonomy {} --key {} --seed 3 --quiet",
        log,
        out,
        taxonomy,
        key,
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.startswith("3 released users, each standing for at least 2")
    released = pd.read_csv(out, dtype=str)
    assert list(released.columns) == ["AnonID", "Query"]
    assert not set(released["AnonID"]).intersection(LOG["AnonID"].astype(str))
    assert hashlib.sha256(log.read_bytes()).hexdigest() == digest
    code = sdckit(
        "querylog evaluate {} {} --key {} --taxonomy {} --quiet --seed 1", log, out, key, taxonomy
    )
    assert code == 0
    report = capsys.readouterr().out
    assert report.startswith("privacy check passed: each of the 3 released users")
    assert "linkage attack" in report


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("missing column", "no column 'AnonID'"),
        ("empty log", "holds no query"),
        ("k too large", "larger than the number of users"),
        ("bad taxonomy", "cannot read the taxonomy table"),
    ],
)
def test_bad_input_one_line_exit_2_no_output(files, tmp_path, capsys, change, message) -> None:
    log, taxonomy = files
    args = ["--k", "2", "--taxonomy", str(taxonomy)]
    if change == "missing column":
        LOG.rename(columns={"AnonID": "user"}).to_csv(log, index=False)
    elif change == "empty log":
        log.write_text("AnonID,Query,QueryTime\n", encoding="utf-8")
    elif change == "k too large":
        args = ["--k", "9", "--taxonomy", str(taxonomy)]
    else:
        args = ["--k", "2", "--taxonomy", str(tmp_path / "absent.csv")]
    out = tmp_path / "protected.csv"
    code = main(["querylog", "protect", str(log), "-o", str(out), "--quiet", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert not list(tmp_path.glob(".protected.csv.*"))


def test_protect_by_zealous_releases_frequencies_only(tmp_path, capsys) -> None:
    log = tmp_path / "crowd.csv"
    rows = [(f"u{i}", "weather") for i in range(300)] + [("u0", "my own address")]
    pd.DataFrame(rows, columns=["AnonID", "Query"]).to_csv(log, index=False)
    out = tmp_path / "frequencies.csv"
    assert sdckit("querylog protect {} -o {} --method zealous --seed 1", log, out) == 0
    release = pd.read_csv(out)
    assert list(release.columns) == ["Query", "count"]
    assert release["Query"].tolist() == ["weather"]
    assert "differentially private" in capsys.readouterr().out
    key = tmp_path / "key_confidential.csv"
    assert sdckit("querylog protect {} -o {} --method zealous --key {}", log, out, key) == 2
    assert "--key goes with --method microaggregation" in capsys.readouterr().err


def test_attack_names_a_missing_target(files, capsys) -> None:
    log, taxonomy = files
    assert sdckit("querylog attack {} --target 99 --taxonomy {}", log, taxonomy) == 2
    assert "target user '99' is not in the log" in capsys.readouterr().err
