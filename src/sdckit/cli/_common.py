"""Helpers shared by the command groups: reading inputs, writing outputs, progress, option parsing."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import typing
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pandas as pd
import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from sdckit.errors import DataError, ParameterError
from sdckit.io import check_output_path, read_table, write_table

console = Console()
err_console = Console(stderr=True)

__all__ = [
    "MaskingRunOptions",
    "PassThroughOptions",
    "check_known",
    "check_not_passthrough",
    "check_outputs",
    "column_roles",
    "console",
    "err_console",
    "id_option",
    "keys_option",
    "mask_and_write",
    "masking_schema",
    "na_values_option",
    "parse_assignments",
    "parse_list",
    "parse_range",
    "progress_bar",
    "progress_display",
    "read_input",
    "refuse_suspect_columns",
    "refuse_text_in_numbers",
    "scale_choice",
    "weight_column_option",
    "with_option_groups",
    "write_mask_result",
    "write_output",
]


#: Files larger than this show a status line while they are read.
_LARGE_INPUT_BYTES = 16 * 1024 * 1024


def na_values_option() -> typer.models.OptionInfo:
    """The ``--na-values`` option every command reading microdata offers."""
    return typer.Option(
        "--na-values",
        help="Comma-separated words read as missing in a CSV file, in every column, besides the "
        "empty field. Default: only an empty field is missing in a text column (NA, null, N/A "
        "are values there); NA, NaN, null... are missing in a numeric column.",
    )


def id_option() -> typer.models.OptionInfo:
    """The ``--id`` option: identifier columns that pass through."""
    return typer.Option(
        "--id",
        help="Comma-separated identifier columns (record, person or household numbers): passed "
        "through unchanged, never masked, never used in distances or risk measures.",
    )


def keys_option() -> typer.models.OptionInfo:
    """The ``--keys`` option: the categorical key variables (quasi-identifiers)."""
    return typer.Option(
        "--keys", help="Comma-separated categorical key variables (quasi-identifiers)."
    )


def weight_column_option() -> typer.models.OptionInfo:
    """The ``--weight-column`` option: survey weights that pass through."""
    return typer.Option(
        "--weight-column",
        help="Survey-weight column(s), comma-separated: passed through unchanged, never masked, "
        "never used in distances.",
    )


def column_roles(
    data: pd.DataFrame,
    *,
    ids: str | None = None,
    weights: str | None = None,
    exclude: str | None = None,
) -> dict[str, str]:
    """``{column: "id" | "weight" | "ignore"}`` from ``--id``, ``--weight-column``, ``--exclude``.

    Every named column must exist, and no column may have two roles.
    """
    roles: dict[str, str] = {}
    for option, value, role in (
        ("--id", ids, "id"),
        ("--weight-column", weights, "weight"),
        ("--exclude", exclude, "ignore"),
    ):
        names = parse_list(value) or []
        unknown = [c for c in names if c not in data.columns]
        if unknown:
            raise ParameterError(
                f"{option}: unknown column(s) {unknown}; the file has {list(data.columns)}"
            )
        for name in names:
            if name in roles and roles[name] != role:
                raise ParameterError(f"column {name!r} is given two roles ({roles[name]}, {role})")
            roles[name] = role
    return roles


def check_known(data: pd.DataFrame, columns: list[str] | None, option: str) -> None:
    """Refuse column names ``option`` gives that the file does not have."""
    unknown = [c for c in columns or [] if c not in data.columns]
    if unknown:
        raise ParameterError(
            f"{option}: unknown column(s) {unknown}; the file has {list(data.columns)}"
        )


def check_not_passthrough(
    data: pd.DataFrame, columns: list[str] | None, roles: dict[str, str], option: str
) -> None:
    """Refuse a column ``option`` (e.g. ``--columns``) names that is unknown, an id, a weight or excluded."""
    check_known(data, columns, option)
    clash = [c for c in columns or [] if c in roles]
    if clash:
        described = ", ".join(f"{c!r} ({roles[c]})" for c in clash)
        raise ParameterError(
            f"{option} names column(s) declared to pass through unchanged: {described}; "
            "remove them from one of the two options"
        )


def refuse_suspect_columns(data: pd.DataFrame, columns: list[str], *, hint: str) -> None:
    """Refuse to mask, untold, columns that look like identifiers or codes (see :mod:`sdckit._roles`).

    ``hint`` says how to tell the command what they are (its own options).
    """
    from sdckit._roles import suspect_columns

    found = suspect_columns(data, columns)
    if not found:
        return
    listed = "; ".join(f"{s.name!r} ({s.reason})" for s in found)
    raise ParameterError(
        f"not masking without being told: column(s) that look like identifiers or codes would "
        f"be masked: {listed}. {hint}"
    )


def refuse_text_in_numbers(data: pd.DataFrame, columns: list[str], *, hint: str = "") -> None:
    """Refuse columns of numbers holding a few words, naming the first (1-based row, value)."""
    from sdckit._roles import text_in_numbers

    found = text_in_numbers(data, columns)
    if not found:
        return
    first = found[0]
    others = f" (also in {[f.name for f in found[1:]]})" if len(found) > 1 else ""
    raise DataError(
        f"column {first.name!r} holds numbers and text: {first.value!r} in data row "
        f"{first.position + 1} (line {first.position + 2} of the file) is not a number "
        f"({first.count} such value(s)){others}. Fix the file, name the words that mean "
        f"missing with --na-values{hint}"
    )


def read_input(path: Path, *, na_values: str | None = None, quiet: bool = False) -> pd.DataFrame:
    """Read a CSV or Parquet input file (a status line while a large file is read)."""
    words = None if na_values is None else [v.strip() for v in na_values.split(",")]
    try:
        large = Path(path).stat().st_size > _LARGE_INPUT_BYTES
    except OSError:
        large = False  # read_table says what is wrong with the path
    if large and not quiet:
        with err_console.status(f"reading {path} ..."):
            data = read_table(path, na_values=words)
        err_console.print(f"read {len(data)} rows x {data.shape[1]} columns from {path}")
        return data
    return read_table(path, na_values=words)


def write_output(data: pd.DataFrame, path: Path) -> None:
    """Write a CSV or Parquet output atomically and say where it went."""
    write_table(data, path)
    err_console.print(f"wrote {len(data)} rows x {data.shape[1]} columns to {path}")


class _DoneOfTotalColumn(ProgressColumn):
    """``done/total`` once the total is known; nothing before (never ``0/None``)."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            return Text("")
        return Text(f"{int(task.completed)}/{int(task.total)}")


def progress_display(*columns: ProgressColumn) -> Progress:
    """A transient rich progress display on stderr: the task's label, a bar, then ``columns``."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        *columns,
        console=err_console,
        transient=True,
    )


@contextmanager
def progress_bar(
    description: str, *, quiet: bool = False
) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr; yields a ``callback(done, total)`` (None when quiet).

    The callback also takes a ``description``: a new one starts the bar anew
    under that name (one bar for successive stages, e.g. an index build, then the search).
    """
    if quiet:
        yield None
        return
    with progress_display(_DoneOfTotalColumn(), TimeElapsedColumn(), TimeRemainingColumn()) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int, description: str | None = None) -> None:
            if description is not None:
                bar.update(task, description=description)
            bar.update(task, completed=done, total=total)

        yield update


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (symbolic links, ``./`` and hard links resolved)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_outputs(
    *paths: Path | None,
    inputs: Iterable[Path | None] = (),
    reports: Iterable[Path | None] = (),
) -> None:
    """Refuse unusable output paths before any work is done (None entries are skipped).

    ``paths`` are data files (CSV or Parquet: the extension must say which);
    ``reports`` are other outputs (an HTML report), whose extension is free.
    An output must have an existing directory and not be a directory, must not
    be one of the command's ``inputs`` (sdckit never overwrites its input) and
    must not be the same file as another output of the same command (the
    second write would replace the first).
    """
    outputs = [Path(p) for p in paths if p is not None]
    for path in outputs:
        check_output_path(path)
    other = [Path(p) for p in reports if p is not None]
    for path in other:
        directory = path.parent if str(path.parent) else Path(".")
        if not directory.is_dir():
            raise DataError(f"output directory {str(directory)!r} does not exist")
        if path.is_dir():
            raise DataError(f"output {str(path)!r} is a directory; give a file name")
    outputs += other
    sources = [Path(p) for p in inputs if p is not None]
    for path in outputs:
        for source in sources:
            if _same_file(path, source):
                raise ParameterError(
                    f"the output {str(path)!r} is the input file {str(source)!r}: sdckit never "
                    "overwrites its input; write to another file"
                )
    for i, path in enumerate(outputs):
        for later in outputs[i + 1 :]:
            if _same_file(path, later):
                raise ParameterError(
                    f"two outputs of this command are the same file ({str(path)!r} and "
                    f"{str(later)!r}): the second would replace the first; give each its own name"
                )


def write_mask_result(result, output: Path, diagnostics: Path | None, *, quiet: bool) -> None:
    """Write a masking result's data (and optionally its per-record diagnostics); print its summary."""
    write_output(result.data, output)
    if diagnostics is not None:
        write_output(result.diagnostics.reset_index(), diagnostics)
    if not quiet:
        err_console.print(result.summary(), highlight=False)


def mask_and_write(
    label: str,
    masker: Callable[..., Any],
    data: pd.DataFrame,
    output: Path,
    diagnostics: Path | None,
    /,
    *,
    quiet: bool,
    **params: Any,
) -> Any:
    """Run a ``masker`` on ``data`` under a progress bar, write and summarise its result.

    ``params`` go to the masker as they are (the positional-only parameters
    leave every name free for them); the progress callback is added.
    Returns the result (the noise commands print its warnings).
    """
    with progress_bar(label, quiet=quiet) as callback:
        result = masker(data, progress=callback, **params)
    write_mask_result(result, output, diagnostics, quiet=quiet)
    return result


def masking_schema(
    data: pd.DataFrame,
    columns: list[str] | None,
    roles: dict[str, str],
    *,
    kinds: Iterable[Any],
    what: str,
) -> Any:
    """The schema of a masking command's input, refusing what it must not mask untold.

    The ``--columns`` named must be known and not pass through; text in a
    numeric column is refused; with no ``--columns``, the maskable columns of
    ``kinds`` that look like identifiers or codes are refused, the message
    ending "... or --columns to name the columns to {what}".
    """
    from sdckit.schema import Schema

    check_not_passthrough(data, columns, roles, "--columns")
    refuse_text_in_numbers(
        data, columns or [c for c in data.columns if c not in roles], hint=", or leave it out"
    )
    schema = Schema.infer(data, roles=roles)
    if columns is None:
        wanted = tuple(kinds)
        refuse_suspect_columns(
            data,
            [c for c in schema.maskable() if schema[c].kind in wanted],
            hint="Say what they are: --id or --weight-column to pass them through, or "
            f"--columns to name the columns to {what}",
        )
    return schema


def parse_list(value: str | None) -> list[str] | None:
    """``"a,b , c"`` -> ``["a", "b", "c"]``; None stays None."""
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    return items or None


def parse_assignments(values: list[str] | None, option: str) -> dict[str, float]:
    """``["age=0.5", "sex=0.1"]`` -> ``{"age": 0.5, "sex": 0.1}``."""
    out: dict[str, float] = {}
    for item in values or []:
        name, sep, number = item.rpartition("=")
        if not sep or not name:
            raise ParameterError(f"{option} expects COLUMN=NUMBER, got {item!r}")
        try:
            out[name] = float(number)
        except ValueError:
            raise ParameterError(f"{option}: {number!r} in {item!r} is not a number") from None
    return out


def parse_range(value: str, option: str) -> list[float]:
    """``"0.1:1.2:0.1"`` -> [0.1, 0.2, ..., 1.2]; ``"1,2,5"`` -> [1, 2, 5]; ``"3"`` -> [3]."""
    try:
        if ":" in value:
            parts = [float(p) for p in value.split(":")]
            if len(parts) != 3 or parts[2] <= 0 or parts[1] < parts[0]:
                raise ValueError
            start, stop, step = parts
            count = int(np.floor((stop - start) / step + 1e-9)) + 1
            return [round(start + i * step, 12) for i in range(count)]
        return [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise ParameterError(
            f"{option} expects START:STOP:STEP (STEP > 0) or a comma list, got {value!r}"
        ) from None


def renamed_option(new: Any, old: Any, *, default: Any, new_flag: str, old_flag: str) -> Any:
    """The value of an option renamed for issue 14: the new flag's, or the hidden old flag's.

    The old flag still works for one release, with a note on stderr naming the
    new one; giving both with different values is an error.
    """
    if old is None:
        return new
    if new != default and new != old:
        raise ParameterError(f"give {new_flag} or its deprecated spelling {old_flag}, not both")
    err_console.print(
        f"note: {old_flag} is deprecated and will be removed in the next release; use {new_flag}",
        highlight=False,
    )
    return old


def with_option_groups(command: Callable[..., Any]) -> Callable[..., Any]:
    """Let a command take a group of options it shares with others as one dataclass parameter.

    A parameter annotated with a dataclass (``cluster: ClusterOptions = ClusterOptions()``)
    stands for the dataclass's fields, each an ``Annotated`` typer option with its default:
    the command line shows the fields, in order, where the parameter stands, and the
    command receives the dataclass built from them. The options are declared once and
    every command sharing them says so in one line. Apply below ``app.command(...)``;
    the annotations are resolved when the module is imported, so the aliases they name
    must be defined above the command.

    Parameters
    ----------
    command : callable
        The command function.

    Returns
    -------
    callable
        A function typer reads as having the groups' fields for parameters.
    """
    hints = typing.get_type_hints(command, include_extras=True)
    shown: list[inspect.Parameter] = []
    groups: dict[str, tuple[Callable[..., Any], list[str]]] = {}
    for param in inspect.signature(command).parameters.values():
        hint = hints.get(param.name, param.annotation)
        if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
            shown.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hint))
            continue
        fields = dataclasses.fields(hint)
        groups[param.name] = (hint, [field.name for field in fields])
        field_hints = typing.get_type_hints(hint, include_extras=True)
        for field in fields:
            default = inspect.Parameter.empty
            if field.default is not dataclasses.MISSING:
                default = field.default
            shown.append(
                inspect.Parameter(
                    field.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=default,
                    annotation=field_hints[field.name],
                )
            )
    names = [param.name for param in shown]
    clashes = sorted({name for name in names if names.count(name) > 1})
    if clashes:
        raise TypeError(f"{command.__name__}: option group(s) repeat parameter(s) {clashes}")

    @functools.wraps(command)
    def run(**values: Any) -> Any:
        for name, (group, fields) in groups.items():
            values[name] = group(**{field: values.pop(field) for field in fields})
        return command(**values)

    # typer reads the parameters from __signature__ and their types from __annotations__.
    run.__signature__ = inspect.Signature(shown)  # type: ignore[attr-defined]  # a function's documented hook, unknown to mypy
    run.__annotations__ = {param.name: param.annotation for param in shown}
    return run


# The options most commands share, declared once (help texts as the commands always had).
InputFile = Annotated[Path, typer.Argument(help="Microdata file (.csv or .parquet).")]
SeedOption = Annotated[
    int | None, typer.Option("--seed", help="Random seed (same seed, same output).")
]
QuietOption = Annotated[bool, typer.Option("--quiet", help="No progress bar or summary.")]
#: ``--quiet`` of a command whose summary is its answer, printed even when quiet.
NoProgressOption = Annotated[bool, typer.Option("--quiet", help="No progress bar.")]
IdOption = Annotated[str | None, id_option()]
WeightColumnOption = Annotated[str | None, weight_column_option()]
NaValuesOption = Annotated[str | None, na_values_option()]
MaskedOutput = Annotated[
    Path, typer.Option("--output", "-o", help="Masked output file (.csv or .parquet).")
]
#: ``-o`` of a command whose HTML report is optional (it prints its findings anyway).
HtmlReportOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="Also write an HTML report there.")
]
DiagnosticsOption = Annotated[
    Path | None,
    typer.Option("--diagnostics", help="Also write the per-record diagnostics (.csv or .parquet)."),
]

# The options of the distance-based maskers (rwn, microaggregate).
ScaleOption = Annotated[str, typer.Option("--scale", help="minmax, standard or none.")]
DistanceWeightOption = Annotated[
    list[str] | None,
    typer.Option("--weight", help="Variable weight in distances, COL=W (repeatable)."),
]
CategoricalCodesOption = Annotated[
    str | None,
    typer.Option(
        "--categorical",
        help="Comma-separated columns of codes to treat as categories (one-hot in distances), "
        "e.g. numeric region or occupation codes.",
    ),
]


def scale_choice(scale: str) -> str | None:
    """The ``scale`` of the library from ``--scale`` (``none`` is None), refusing other words.

    Parameters
    ----------
    scale : str
        The option's value: minmax, standard or none.

    Returns
    -------
    str or None
        ``"minmax"``, ``"standard"`` or None.
    """
    if scale not in ("minmax", "standard", "none"):
        raise ParameterError(f"--scale must be minmax, standard or none, got {scale!r}")
    return None if scale == "none" else scale


@dataclasses.dataclass(frozen=True)
class PassThroughOptions:
    """``--id`` and ``--weight-column``: the columns a masking command passes through unchanged."""

    ids: IdOption = None
    weight_column: WeightColumnOption = None

    def roles(self, data: pd.DataFrame, *, exclude: str | None = None) -> dict[str, str]:
        """The roles of :func:`column_roles`, with ``--exclude`` where a command has it."""
        return column_roles(data, ids=self.ids, weights=self.weight_column, exclude=exclude)


@dataclasses.dataclass(frozen=True)
class MaskingRunOptions:
    """``--seed``, ``--diagnostics``, ``--na-values``, ``--quiet``: a masking command's run.

    How every masking command reads its input and writes its result.
    """

    seed: SeedOption = None
    diagnostics: DiagnosticsOption = None
    na_values: NaValuesOption = None
    quiet: QuietOption = False

    def read(self, input: Path, output: Path, *others: Path | None) -> pd.DataFrame:
        """Check every output before any work is done (:func:`check_outputs`), then read the input.

        Parameters
        ----------
        input : Path
            The microdata file.
        output : Path
            The masked output file.
        *others : Path or None
            Further data files the command writes.

        Returns
        -------
        DataFrame
            The input's data.
        """
        check_outputs(output, self.diagnostics, *others, inputs=[input])
        return read_input(input, na_values=self.na_values, quiet=self.quiet)

    def write(self, result: Any, output: Path) -> None:
        """Write the masked data and the diagnostics asked for; print the summary (:func:`write_mask_result`).

        Parameters
        ----------
        result : MaskResult
            The masking method's result.
        output : Path
            The masked output file.
        """
        write_mask_result(result, output, self.diagnostics, quiet=self.quiet)


# The options of the categorical-key commands (risk, recode, kanon, pram).
KeysOption = Annotated[str, keys_option()]
MissingOption = Annotated[
    str,
    typer.Option(
        "--missing",
        help="How a missing key value counts: 'category' (a value of its own) or 'any' "
        "(it matches any value, as sdcMicro and mu-Argus count suppressed cells).",
    ),
]
SamplingWeightOption = Annotated[
    str | None,
    typer.Option("--weight", help="Sampling-weight column (population frequencies F_k)."),
]
HouseholdOption = Annotated[
    str | None,
    typer.Option("--household", help="Household identifier column (household risk)."),
]
