"""Usage mistakes are usage errors (exit 2, typer's usage message), never an internal error.

Every registered command is walked (the typer app is enumerated, so commands
added later are covered too) with an unknown option, missing arguments and
non-numeric numbers.
"""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pandas as pd
import pytest
import typer

from sdckit.cli.main import _usage_error_types, app, main
from sdckit.errors import SDCError


def _leaf_commands() -> list[tuple[list[str], object]]:
    """``(["tables", "perturb"], command)`` for every command of the app, groups walked."""
    root = typer.main.get_command(app)
    found: list[tuple[list[str], object]] = []

    def walk(command, path: list[str]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in sorted(subcommands.items()):
                walk(sub, [*path, name])
        else:
            found.append((path, command))

    walk(root, [])
    return found


COMMANDS = _leaf_commands()
IDS = [" ".join(path) for path, _ in COMMANDS]


def _required(command) -> list:
    return [p for p in command.params if p.required]


def _is_number(param) -> bool:
    """Whether a parameter takes an int or a float (typer's descriptor or click's type)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        annotation = descriptor.annotation
        options = typing.get_args(annotation) if typing.get_args(annotation) else (annotation,)
        return any(t in (int, float) for t in options)
    name = getattr(getattr(param, "type", None), "name", "")
    return "integer" in name or "float" in name


def _dummy_arguments(command, tmp_path: Path) -> list[str]:
    """Values for every required parameter (a file name that exists for paths, text otherwise)."""
    existing = tmp_path / "in.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0]}).to_csv(existing, index=False)
    args: list[str] = []
    for param in _required(command):
        value = "1" if _is_number(param) else str(existing)
        if param.param_type_name == "option":
            args += [param.opts[0], value if _is_number(param) else str(tmp_path / "out.csv")]
        else:
            args.append(value)
    return args


def _run(args: list[str], capsys) -> tuple[int, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_walk_finds_the_commands():
    assert {"rwn", "swap", "rankswap", "microaggregate", "assess", "sweep"} <= set(IDS)
    assert len(COMMANDS) >= 10


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_unknown_option_is_a_usage_error(path, command, capsys):
    code, text = _run([*path, "--no-such-option-xyz"], capsys)
    assert code == 2
    assert "internal error" not in text
    assert "--no-such-option-xyz" in text


_WITH_REQUIRED = [(p, c) for p, c in COMMANDS if _required(c)]
_WITH_NUMBERS = [
    (p, c)
    for p, c in COMMANDS
    if any(_is_number(o) and o.param_type_name == "option" for o in c.params)
]


@pytest.mark.parametrize(
    ("path", "command"), _WITH_REQUIRED, ids=[" ".join(p) for p, _ in _WITH_REQUIRED]
)
def test_missing_arguments_are_a_usage_error(path, command, capsys):
    code, text = _run(path, capsys)
    assert code == 2
    assert "internal error" not in text
    assert "Missing" in text


@pytest.mark.parametrize(
    ("path", "command"), _WITH_NUMBERS, ids=[" ".join(p) for p, _ in _WITH_NUMBERS]
)
def test_non_numeric_numbers_are_a_usage_error(path, command, tmp_path, capsys):
    numbers = [p for p in command.params if _is_number(p) and p.param_type_name == "option"]
    base = _dummy_arguments(command, tmp_path)
    for param in numbers:
        args = [a for a in base]
        if param.opts[0] in args:  # a required numeric option: replace its value
            at = args.index(param.opts[0])
            del args[at : at + 2]
        code, text = _run([*path, *args, param.opts[0], "abc"], capsys)
        assert code == 2, (param.opts[0], text)
        assert "internal error" not in text
        assert param.opts[0] in text or param.name in text


def test_bare_sdckit_prints_usage_and_exits_2(capsys):
    code, text = _run([], capsys)
    assert code == 2
    assert "Usage" in text
    assert "internal error" not in text


@pytest.mark.parametrize(
    "args",
    [
        ["rwn", "x.csv", "--nosuch"],
        ["rwn", "x.csv"],
        ["rwn", "x.csv", "-o", "y.csv", "--k", "abc"],
        ["nosuchcommand"],
    ],
    ids=["unknown-option", "missing-output", "k-abc", "unknown-command"],
)
def test_walkthrough_usage_mistakes(args, capsys):
    code, text = _run(args, capsys)
    assert code == 2
    assert "internal error" not in text
    assert "Usage" in text or "Try 'sdckit" in text


def _raised(args: list[str]) -> BaseException | None:
    """What the typer app raises for ``args`` (None when it returns)."""
    try:
        app(args=args, prog_name="sdckit", standalone_mode=False)
    except BaseException as exc:
        return exc
    return None


def test_exceptions_reaching_the_top_are_sdc_or_usage_errors(tmp_path):
    data = tmp_path / "in.csv"
    pd.DataFrame({"x": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5], "y": [2.0, 1.0, 4.0, 3.0, 6.0, 5.0]}).to_csv(
        data, index=False
    )
    out = str(tmp_path / "out.csv")
    html = str(tmp_path / "r.html")
    cases = [
        ["rwn", str(data), "--nosuch"],
        ["rwn", str(data), "-o", out, "--k", "abc"],
        ["rwn", str(data), "-o", out, "--k", "-3"],
        ["rwn", str(data), "-o", out, "--q", "7"],
        ["rwn", str(tmp_path / "missing.csv"), "-o", out],
        ["rwn", str(data), "-o", str(data)],
        ["rwn", str(data), "-o", str(tmp_path / "x.txt.gz")],
        ["rwn", str(data), "-o", out, "--columns", "nosuch"],
        ["swap", str(data), "-o", out, "-s", "nosuch", "--rate", "0.1"],
        ["swap", str(data), "-o", out, "-s", "x", "--rate", "0.9"],
        ["rankswap", str(data), "-o", out, "--p", "-1"],
        ["microaggregate", str(data), "-o", out, "--k", "0"],
        ["microaggregate", str(data), "-o", out, "--method", "nosuch"],
        ["assess", str(data), str(tmp_path / "missing.csv"), "-o", html],
        ["sweep", "rwn", str(data), "-o", html, "--param", "nosuch=1,2"],
        ["sweep", "nosuch", str(data), "-o", html, "--k", "1"],
        ["sweep", "rwn", str(data), "-o", html, "--k", "1", "--table", "/nonexistent/t.csv"],
        ["sweep", "rwn", str(data), "-o", html],
        ["nosuchcommand"],
        [],
    ]
    allowed = (SDCError, typer.Exit, *_usage_error_types())
    for args in cases:
        exc = _raised(args)
        assert exc is None or isinstance(exc, allowed), (args, repr(exc))
        assert exc is not None, args  # every case above is a mistake


def test_sweep_unknown_parameter_is_refused_by_name(tmp_path, capsys):
    data = tmp_path / "in.csv"
    pd.DataFrame({"x": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]}).to_csv(data, index=False)
    html = tmp_path / "s.html"
    code, text = _run(["sweep", "rwn", str(data), "-o", str(html), "--param", "nosuch=1,2"], capsys)
    assert code == 2
    assert "nosuch" in text and "internal error" not in text
    assert not html.exists()


def test_sweep_unwritable_table_fails_before_the_sweep(tmp_path, capsys):
    data = tmp_path / "in.csv"
    pd.DataFrame({"x": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5], "y": [1.0, 3.0, 2.0, 5.0, 4.0, 6.0]}).to_csv(
        data, index=False
    )
    html = tmp_path / "s.html"
    args = ["sweep", "rwn", str(data), "-o", str(html), "--k", "1,2"]
    code, text = _run([*args, "--table", "/nonexistent/t.csv", "--quiet"], capsys)
    assert code == 2
    assert "/nonexistent" in text
    assert not html.exists()


def _process(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sdckit", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "args", [[], ["rwn", "x.csv", "--nosuch"], ["rwn", "x.csv"], ["nosuchcommand"]]
)
def test_usage_errors_as_a_separate_process(args):
    done = _process(*args)
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr
    assert "Usage" in done.stdout + done.stderr


def test_version_as_a_separate_process():
    done = _process("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("sdckit ")
