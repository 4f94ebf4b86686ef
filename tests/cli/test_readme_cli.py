"""The README's command-line section, run top to bottom on sdcMicro's testdata.

Checks that every line succeeds, that no command changes a file it reads, and
that no published output holds a confidential column (a masker's output has
exactly the input's columns, identifiers and weights unchanged; a protected
table holds no true counts or cell keys).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest
import typer

from sdckit.cli.main import app, main
from shared_data import SHARED_DATA, work_beside_shared_csv

README = Path(__file__).resolve().parents[2] / "README.md"
MASKERS = {"rwn", "swap", "rankswap", "microaggregate", "noise"}
OUTPUT_OPTIONS = {"-o", "--output", "--diagnostics", "--table"}
#: Columns a protected table may never publish: the true counts and the keys behind the noise.
TABLE_SECRETS = {"count", "cell_key", "record_key"}


def readme_commands() -> list[list[str]]:
    """The ``sdckit`` lines of the README's command-line block, continuation lines joined."""
    text = README.read_text(encoding="utf-8")
    start = text.index("From the command line")
    block = re.search(r"```sh\n(.*?)```", text[start:], re.S).group(1)
    joined = block.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "sdckit":
            commands.append(words[1:])
    return commands


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _outputs(args: list[str]) -> set[str]:
    return {args[i + 1] for i, a in enumerate(args[:-1]) if a in OUTPUT_OPTIONS}


def _option(args: list[str], name: str) -> list[str]:
    return [v for i, a in enumerate(args[:-1]) if a == name for v in args[i + 1].split(",")]


def _perturb_keeps_true_counts_apart() -> bool:
    command = typer.main.get_command(app).commands["tables"].commands["perturb"]
    return any("--with-true-counts" in p.opts for p in command.params)


def _check_categoricals_masked(original, masked, columns, args) -> None:
    """Each declared categorical column changed in a share consistent with q.

    A uniform draw from a neighbourhood changes a cell with probability about
    q * (1 - sum_v p_v^2) when neighbours' values are unrelated to the
    record's; neighbours share values more often than that, but a column
    changed in under a tenth of it is practically unmasked.
    """
    q = float(_option(args, "--q")[0]) if "--q" in args else 1.0
    assert columns, "the README declares categorical columns for RWN"
    for column in columns:
        shares = original[column].value_counts(normalize=True).to_numpy()
        expected = q * (1.0 - float((shares**2).sum()))
        changed = float((masked[column] != original[column]).mean())
        assert changed >= 0.1 * expected, (column, changed, expected)
        assert changed <= q + 1e-9, (column, changed)


def test_readme_has_a_runnable_command_block():
    commands = readme_commands()
    assert len(commands) >= 10
    assert all(c and not c[0].startswith("-") for c in commands)
    assert any(c[0] == "rwn" and "--id" in c for c in commands)


@pytest.mark.slow
def test_readme_command_line_section_top_to_bottom(tmp_path, monkeypatch, capsys):
    work_beside_shared_csv("testdata.csv", tmp_path, monkeypatch)
    original = pd.read_csv("testdata.csv")
    table_checks: list[str] = []
    for args in readme_commands():
        if args[0] == "serve":
            continue  # a server runs until stopped; tests/server covers it
        outputs = _outputs(args)
        before = {p.name: _digest(p) for p in tmp_path.iterdir() if p.is_file()}
        code = main(args)
        captured = capsys.readouterr()
        assert code == 0, (args, captured.err)
        assert "internal error" not in captured.err
        for name, digest in before.items():
            if name not in outputs:
                assert _digest(tmp_path / name) == digest, f"sdckit {args[0]} changed {name}"
        if args[0] in MASKERS:
            out = pd.read_csv(args[args.index("-o") + 1])
            assert list(out.columns) == list(original.columns), args
            for column in _option(args, "--id") + _option(args, "--weight-column"):
                assert (out[column] == original[column]).all(), (args, column)
            if args[0] == "rwn":
                _check_categoricals_masked(original, out, _option(args, "--categorical"), args)
        if args[:2] == ["tables", "perturb"]:
            table_checks.append(args[args.index("-o") + 1])
    assert _digest(tmp_path / "testdata.csv") == _digest(SHARED_DATA / "testdata.csv")
    assert table_checks, "the README perturbs a table"
    if not _perturb_keeps_true_counts_apart():
        pytest.xfail("`tables perturb` still writes the true counts beside the perturbed ones")
    for name in table_checks:
        published = set(pd.read_csv(name).columns)
        assert not published & TABLE_SECRETS, (name, published & TABLE_SECRETS)
