"""``sdckit assess`` and ``sdckit sweep``: utility and risk of a release, as an HTML report."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from sdckit.cli._common import (
    CategoricalCodesOption,
    IdOption,
    InputFile,
    NaValuesOption,
    QuietOption,
    SeedOption,
    WeightColumnOption,
    check_known,
    check_not_passthrough,
    check_outputs,
    column_roles,
    err_console,
    keys_option,
    parse_list,
    parse_range,
    progress_bar,
    read_input,
    refuse_suspect_columns,
    refuse_text_in_numbers,
    with_option_groups,
    write_output,
)
from sdckit.errors import ParameterError
from sdckit.microdata.base import available_maskers, get_masker
from sdckit.neighbors.backends import check_backend_name

#: Parameters whose values are whole numbers (a range like 5:50:5 gives ints),
#: unless the method's default says otherwise (the k of the noise maskers is a float).
_INTEGER_PARAMETERS = frozenset({"k", "aggregation", "group_size", "n_groups"})


def _integer_parameters(method: str) -> set[str]:
    """Parameters of ``method`` taking whole numbers: an int default, or a known name."""
    out = set()
    for name, parameter in inspect.signature(get_masker(method)).parameters.items():
        default = parameter.default
        if isinstance(default, int) and not isinstance(default, bool):
            out.add(name)
        elif name in _INTEGER_PARAMETERS and not isinstance(default, float):
            out.add(name)
    return out


def _takes(method: str, parameter: str) -> bool:
    return parameter in inspect.signature(get_masker(method)).parameters


def _parse_values(value: str, option: str) -> list:
    """Numbers as ``parse_range`` reads them; otherwise a comma list of text (column names...)."""
    try:
        return parse_range(value, option)
    except ParameterError:
        if ":" in value:
            raise
        texts = [v.strip() for v in value.split(",") if v.strip()]
        if not texts:
            raise
        return texts


# Options ``assess`` and ``sweep`` both declare (help texts as they always had).
ReportOutput = Annotated[Path, typer.Option("--output", "-o", help="HTML report to write.")]
PredictorsOption = Annotated[
    str | None,
    typer.Option("--predictors", help="Comma-separated predictors (default: all other variables)."),
]
KeysOption = Annotated[str | None, keys_option()]
SensitiveOption = Annotated[
    str | None,
    typer.Option("--sensitive", help="Sensitive variable for l-diversity (needs --keys)."),
]
ExcludeOption = Annotated[
    str | None, typer.Option("--exclude", help="Comma-separated columns left out of every measure.")
]
TitleOption = Annotated[str | None, typer.Option("--title", help="Title of the report.")]


@dataclass(frozen=True)
class _Roles:
    """What the columns are: the options ``assess`` and ``sweep`` share after their own."""

    categorical: CategoricalCodesOption = None
    exclude: ExcludeOption = None
    ids: IdOption = None
    weight_column: WeightColumnOption = None
    na_values: NaValuesOption = None


def _write_report(output: Path, title: str | None, *, quiet: bool, assessment=None, sweep=None):
    """Draw the HTML report of an assessment or a sweep, print its summary and where it went.

    With --quiet, a sweep still prints its recommendation.
    """
    from sdckit.assess import report

    with progress_bar("drawing the report", quiet=quiet) as callback:
        page = report(assessment, sweep=sweep, path=output, title=title, progress=callback)
    result = assessment if sweep is None else sweep
    if not quiet:
        err_console.print(
            result.summary(), highlight=False
        )  # a sweep's ends with the recommendation
    elif sweep is not None:
        err_console.print(sweep.recommendation(), highlight=False)
    err_console.print(f"wrote the report ({len(page.figures)} figures) to {output}")


def _roles_and_schema(
    data: pd.DataFrame,
    keys: list[str] | None,
    checked: dict[str, str | None],
    given: _Roles,
):
    """The schema of the original: roles set, declared categoricals and keys as categories.

    The options in ``checked`` (``{flag: value}``) must not name a column that passes through.
    """
    from sdckit.schema import Schema

    roles = column_roles(data, ids=given.ids, weights=given.weight_column, exclude=given.exclude)
    for option, value in checked.items():
        check_not_passthrough(data, parse_list(value), roles, option)
    declared = parse_list(given.categorical) or []
    check_known(data, declared, "--categorical")
    # Keys are categorical by nature, even when coded as numbers; but a numeric
    # key with many values (an income) is refused by the risk measures unless
    # the user declares it categorical: it would make nearly every record unique.
    from sdckit.assess.risk import max_numeric_key_levels

    limit = max_numeric_key_levels(len(data))
    coded = [
        k
        for k in keys or []
        if k in data.columns
        and not (
            pd.api.types.is_numeric_dtype(data[k].dtype)
            and not pd.api.types.is_bool_dtype(data[k].dtype)
            and data[k].nunique() > limit
        )
    ]
    kinds = dict.fromkeys([*declared, *coded], "categorical")
    refuse_text_in_numbers(
        data,
        [c for c in data.columns if c not in roles and c not in kinds],
        hint=", or declare the column categorical with --categorical",
    )
    passthrough = [k for k in keys or [] if k in roles]
    if passthrough:
        raise ParameterError(
            f"--keys names column(s) declared to pass through ({passthrough}); a key is a "
            "variable an intruder knows and must be assessed"
        )
    return Schema.infer(data, kinds=kinds, roles=roles)


@with_option_groups
def assess_command(
    original: Annotated[Path, typer.Argument(help="Original microdata file (.csv or .parquet).")],
    masked: Annotated[
        Path, typer.Argument(help="Masked release of it, same rows in the same order.")
    ],
    output: ReportOutput,
    columns: Annotated[
        str | None,
        typer.Option("--columns", help="Comma-separated variables to assess (default: all)."),
    ] = None,
    response: Annotated[
        str | None,
        typer.Option("--response", help="Response of the regression and prediction checks."),
    ] = None,
    predictors: PredictorsOption = None,
    keys: KeysOption = None,
    sensitive: SensitiveOption = None,
    linkage_columns: Annotated[
        str | None,
        typer.Option(
            "--linkage-columns", help="Variables the linkage intruder knows (default: all)."
        ),
    ] = None,
    prediction: Annotated[
        bool, typer.Option("--prediction", help="Also run the random-forest prediction check.")
    ] = False,
    replications: Annotated[
        int, typer.Option("--reps", help="Replications of the prediction check.")
    ] = 5,
    roles: _Roles = _Roles(),
    neighbors: Annotated[
        str,
        typer.Option(
            "--neighbors",
            help="Neighbour search of the distance-to-closest-record and linkage measures: "
            "exact (or kd_tree, ball_tree, brute), hnsw, ivf or sample (approximate: "
            "distances are upper bounds); docs/rwn.md, 'Large files'.",
        ),
    ] = "exact",
    seed: Annotated[
        int | None,
        typer.Option("--seed", help="Random seed for the prediction check and --neighbors sample."),
    ] = None,
    title: TitleOption = None,
    quiet: QuietOption = False,
) -> None:
    """Compare an original file with its masked release: utility, risk, and an HTML report."""
    # Imported here: statsmodels and matplotlib would slow every other command's start.
    from sdckit.assess import assess

    check_outputs(reports=[output], inputs=[original, masked])
    check_backend_name(neighbors, "--neighbors")
    data = read_input(original, na_values=roles.na_values, quiet=quiet)
    release = read_input(masked, na_values=roles.na_values, quiet=quiet)
    key_list = parse_list(keys)
    schema = _roles_and_schema(
        data,
        key_list,
        {"--columns": columns, "--linkage-columns": linkage_columns},
        roles,
    )
    with progress_bar("assessing", quiet=quiet) as callback:
        result = assess(
            data,
            release,
            columns=parse_list(columns),
            response=response,
            predictors=parse_list(predictors),
            keys=key_list,
            sensitive=sensitive,
            linkage_columns=parse_list(linkage_columns),
            schema=schema,
            prediction=prediction,
            prediction_replications=replications,
            backend=neighbors,
            random_state=seed,
            progress=callback,
        )
    _write_report(output, title, quiet=quiet, assessment=result)


@with_option_groups
def sweep_command(
    method: Annotated[str, typer.Argument(help="Registered masking method, e.g. rwn.")],
    input: InputFile,
    output: ReportOutput,
    eps: Annotated[
        str | None, typer.Option("--eps", help="eps values, START:STOP:STEP or a list.")
    ] = None,
    k: Annotated[
        str | None, typer.Option("--k", help="k values, START:STOP:STEP or a list.")
    ] = None,
    q: Annotated[
        str | None, typer.Option("--q", help="q values, START:STOP:STEP or a list.")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            help="Any other parameter, NAME=VALUES: numbers (START:STOP:STEP or a list) or text, "
            "e.g. columns=income or group_size=3,5 (repeatable).",
        ),
    ] = None,
    replications: Annotated[int, typer.Option("--reps", help="Masked releases per setting.")] = 1,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns", help="Comma-separated variables to mask and assess (default: all)."
        ),
    ] = None,
    response: Annotated[str | None, typer.Option("--response", help="Regression response.")] = None,
    predictors: PredictorsOption = None,
    keys: KeysOption = None,
    sensitive: SensitiveOption = None,
    table: Annotated[
        Path | None,
        typer.Option("--table", help="Also write the per-run figures here (.csv or .parquet)."),
    ] = None,
    roles: _Roles = _Roles(),
    seed: SeedOption = None,
    title: TitleOption = None,
    quiet: QuietOption = False,
) -> None:
    """Run a masking method over a parameter grid and report utility and risk per setting."""
    from sdckit.assess import sweep

    if method not in available_maskers():
        raise ParameterError(
            f"unknown masking method {method!r}; available: {sorted(available_maskers())}"
        )
    # Every output is checked before the sweep, which may take long.
    check_outputs(table, reports=[output], inputs=[input])
    data = read_input(input, na_values=roles.na_values, quiet=quiet)
    grid: dict[str, list] = {}
    for name, value in (("eps", eps), ("k", k), ("q", q)):
        if value is not None:
            grid[name] = parse_range(value, f"--{name}")
    for item in param or []:
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            raise ParameterError(f"--param expects NAME=VALUES, got {item!r}")
        if name in grid:
            raise ParameterError(f"parameter {name!r} is given twice")
        grid[name] = _parse_values(values, f"--param {name}")
    if not grid:
        raise ParameterError("give at least one parameter to sweep (--eps, --k, --q or --param)")
    # Names a method renamed for issue 14 (microaggregation's and noise's k, rank swap's p,
    # swap's swap_attributes) still work for one release, under their new names.
    renamed = getattr(get_masker(method), "renamed_parameters", {})
    for old in [name for name in grid if name in renamed]:
        new = renamed[old]
        if new in grid:
            raise ParameterError(f"parameter {new!r} is given twice (also as {old!r})")
        flag = f"--{old}" if old in ("eps", "k", "q") else f"--param {old}"
        err_console.print(
            f"note: {flag} is deprecated for {method} and will be removed in the next release; "
            f"use --param {new}=...",
            highlight=False,
        )
        grid[new] = grid.pop(old)
    integer = _integer_parameters(method)
    for name, grid_values in grid.items():
        if name in integer and all(isinstance(v, float) for v in grid_values):
            if any(v != int(v) for v in grid_values):
                raise ParameterError(f"--{name} takes whole numbers, got {grid_values}")
            grid[name] = [int(v) for v in grid_values]
    # A parameter given a single value is held fixed rather than swept.
    varying = {name: swept for name, swept in grid.items() if len(swept) > 1}
    if not varying:  # one setting only: still a (one-point) sweep
        first = next(iter(grid))
        varying = {first: grid[first]}
    fixed = {name: held[0] for name, held in grid.items() if name not in varying}
    key_list = parse_list(keys)
    cols = parse_list(columns)
    schema = _roles_and_schema(
        data,
        key_list,
        {"--columns": columns},
        roles,
    )
    if cols is not None:
        fixed["columns"] = cols
    elif "columns" not in grid and _takes(method, "columns"):
        declared = set(parse_list(roles.categorical) or [])
        refuse_suspect_columns(
            data,
            [c for c in schema.maskable() if c not in declared],
            hint="Say what they are: --id or --weight-column to pass them through, "
            "--categorical for codes, --exclude to leave a column out, or --columns to name "
            "the columns to mask.",
        )
    with progress_bar(f"sweeping {method}", quiet=quiet) as callback:
        result = sweep(
            method,
            varying,
            data,
            n_replications=replications,
            fixed=fixed,
            columns=cols,
            response=response,
            predictors=parse_list(predictors),
            keys=key_list,
            sensitive=sensitive,
            schema=schema,
            random_state=seed,
            progress=callback,
        )
    if table is not None:
        write_output(result.table, table)
    _write_report(output, title, quiet=quiet, sweep=result)


def register(app: typer.Typer) -> None:
    """Add ``sdckit assess`` and ``sdckit sweep`` to the command line."""
    app.command("assess")(assess_command)
    app.command("sweep")(sweep_command)
