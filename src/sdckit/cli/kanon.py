"""``sdckit recode`` and ``sdckit kanon``: global recoding, and k-anonymity by generalisation + suppression."""

from __future__ import annotations

from typing import Annotated

import typer

from sdckit.cli._common import (
    InputFile,
    KeysOption,
    MaskedOutput,
    MissingOption,
    NaValuesOption,
    QuietOption,
    check_outputs,
    parse_assignments,
    parse_list,
    read_input,
    write_mask_result,
)
from sdckit.errors import DataError, ParameterError

HierarchyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--hierarchy",
        help="KEY=FILE: a generalisation hierarchy (CSV without header: value, level 1, ...). "
        "Repeat per key.",
    ),
]
WidthsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--widths",
        help="KEY=W1,W2,...: a hierarchy of intervals of these widths for a numeric key "
        "(e.g. age=5,10,20). Repeat per key.",
    ),
]


def key_value_pairs(values: list[str] | None, option: str) -> dict[str, str]:
    """``["age=5,10", "job=j.csv"]`` -> ``{"age": "5,10", "job": "j.csv"}``."""
    out: dict[str, str] = {}
    for item in values or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ParameterError(f"{option} expects KEY=VALUE, got {item!r}")
        out[name] = value
    return out


def _numbers(text: str, option: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ParameterError(f"{option}: {text!r} is not a comma list of numbers") from None


def _hierarchies(hierarchy: list[str] | None, widths: list[str] | None) -> dict:
    from sdckit.microdata import Hierarchy

    out = {k: Hierarchy.from_csv(v) for k, v in key_value_pairs(hierarchy, "--hierarchy").items()}
    for key, text in key_value_pairs(widths, "--widths").items():
        if key in out:
            raise ParameterError(f"--hierarchy and --widths both give a hierarchy for {key!r}")
        out[key] = Hierarchy.from_intervals(_numbers(text, "--widths"))
    return out


def _groupings(values: list[str] | None, data) -> dict:
    """``KEY=FILE`` (a CSV without header: value, group) -> ``{key: {value: group}}``.

    A value is matched by how it is written (3 and 3.0 alike); a value the
    column does not take is refused, since it is usually a typing error.
    """
    import pandas as pd

    from sdckit._validation import check_columns
    from sdckit.microdata.recode import value_text

    out = {}
    for key, path in key_value_pairs(values, "--groupings").items():
        check_columns(data, [key], "--groupings")
        try:
            table = pd.read_csv(path, header=None, dtype=str, sep=None, engine="python")
        except FileNotFoundError:
            raise DataError(f"--groupings: no such file {path!r}") from None
        if table.shape[1] != 2:
            raise DataError(f"--groupings: {path!r} must have two columns (value, group)")
        groups = dict(zip(table[0], table[1], strict=True))
        present = {value_text(v): v for v in data[key].dropna().unique()}
        unknown = [v for v in groups if v not in present]
        if unknown:
            raise DataError(
                f"--groupings: {path!r} names {unknown[0]!r}, which column {key!r} never takes"
            )
        out[key] = {present[v]: group for v, group in groups.items()}
    return out


def recode_command(
    input: InputFile,
    output: MaskedOutput,
    breaks: Annotated[
        list[str] | None,
        typer.Option("--breaks", help="KEY=B1,B2,...: cut a numeric key into [B1, B2), ..."),
    ] = None,
    groupings: Annotated[
        list[str] | None,
        typer.Option(
            "--groupings",
            help="KEY=FILE: merge categories (CSV without header: value, group; values not "
            "listed stay). Repeat per key.",
        ),
    ] = None,
    hierarchy: HierarchyOption = None,
    widths: WidthsOption = None,
    level: Annotated[
        list[str] | None,
        typer.Option("--level", help="KEY=L: recode a key with a hierarchy to level L."),
    ] = None,
    top: Annotated[
        list[str] | None, typer.Option("--top", help="COLUMN=VALUE: top coding.")
    ] = None,
    bottom: Annotated[
        list[str] | None, typer.Option("--bottom", help="COLUMN=VALUE: bottom coding.")
    ] = None,
    na_values: NaValuesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Recode key variables globally: intervals, groupings, hierarchy levels, top and bottom coding."""
    from sdckit.microdata import recode

    check_outputs(output, inputs=[input])
    data = read_input(input, na_values=na_values, quiet=quiet)
    levels = {k: int(v) for k, v in parse_assignments(level, "--level").items()}
    result = recode(
        data,
        intervals={
            k: _numbers(v, "--breaks") for k, v in key_value_pairs(breaks, "--breaks").items()
        }
        or None,
        groupings=_groupings(groupings, data) or None,
        hierarchies=_hierarchies(hierarchy, widths) or None,
        levels=levels or None,
        top=parse_assignments(top, "--top") or None,
        bottom=parse_assignments(bottom, "--bottom") or None,
    )
    write_mask_result(result, output, None, quiet=quiet)


def kanon_command(
    input: InputFile,
    keys: KeysOption,
    output: MaskedOutput,
    k: Annotated[int, typer.Option("--k", help="The k of k-anonymity.")] = 3,
    hierarchy: HierarchyOption = None,
    widths: WidthsOption = None,
    max_suppression: Annotated[
        float,
        typer.Option(
            "--max-suppression",
            help="Largest share of records the search may leave to local suppression.",
        ),
    ] = 0.05,
    combinations: Annotated[
        int | None,
        typer.Option(
            "--combinations",
            help="Make every combination of at most this many keys k-anonymous (default: "
            "all keys together).",
        ),
    ] = None,
    missing: MissingOption = "any",
    na_values: NaValuesOption = None,
    quiet: QuietOption = False,
) -> None:
    """k-anonymity: the least-loss generalisation over the hierarchies, then local suppression."""
    from sdckit.microdata import kanon

    check_outputs(output, inputs=[input])
    data = read_input(input, na_values=na_values, quiet=quiet)
    result = kanon(
        data,
        columns=parse_list(keys),
        k_anonymity=k,
        hierarchies=_hierarchies(hierarchy, widths),
        max_suppression=max_suppression,
        combinations=combinations,
        missing=missing,
    )
    write_mask_result(result, output, None, quiet=quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit recode`` and ``sdckit kanon`` to the command line."""
    app.command("recode")(recode_command)
    app.command("kanon")(kanon_command)
