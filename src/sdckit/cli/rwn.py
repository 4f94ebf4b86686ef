"""``sdckit rwn``: mask a microdata file by Randomization Within Neighborhoods."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from sdckit.cli._common import (
    InputFile,
    NaValuesOption,
    PassThroughOptions,
    QuietOption,
    SeedOption,
    check_not_passthrough,
    check_outputs,
    parse_assignments,
    parse_list,
    progress_bar,
    read_input,
    refuse_suspect_columns,
    refuse_text_in_numbers,
    with_option_groups,
    write_mask_result,
)
from sdckit.errors import ParameterError
from sdckit.microdata.rwn import rwn
from sdckit.neighbors import NeighborBackend, make_strategy
from sdckit.neighbors.backends import EXACT_ALGORITHMS, check_backend_name
from sdckit.schema import Schema


def _is_temporal(series: pd.Series) -> bool:
    dtype = series.dtype
    return pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype)


@with_option_groups
def rwn_command(
    input: InputFile,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Masked output file (.csv or .parquet).")
    ],
    k: Annotated[
        int,
        typer.Option("--k", help="Nearest other records in every neighbourhood (0 = radius only)."),
    ] = 5,
    eps: Annotated[
        float | None, typer.Option("--eps", help="Neighbourhood radius in the scaled space.")
    ] = None,
    q: Annotated[float, typer.Option("--q", help="Probability that each cell is modified.")] = 1.0,
    modprop: Annotated[
        float | None,
        typer.Option("--modprop", help="Share of whole records modified (Matloff & Tendick 2015)."),
    ] = None,
    weight: Annotated[
        list[str] | None,
        typer.Option("--weight", help="Variable weight for distances, COL=W (repeatable)."),
    ] = None,
    scale: Annotated[str, typer.Option("--scale", help="minmax, standard or none.")] = "minmax",
    metric: Annotated[
        str, typer.Option("--metric", help="euclidean, manhattan or chebyshev.")
    ] = "euclidean",
    columns: Annotated[
        str | None,
        typer.Option("--columns", help="Comma-separated columns to mask (default: all)."),
    ] = None,
    exclude: Annotated[
        str | None,
        typer.Option("--exclude", help="Comma-separated columns passed through unchanged."),
    ] = None,
    pass_through: PassThroughOptions = PassThroughOptions(),
    categorical: Annotated[
        str | None,
        typer.Option(
            "--categorical",
            help="Comma-separated columns of codes to treat as categories (one-hot in distances), "
            "e.g. numeric region or occupation codes.",
        ),
    ] = None,
    balance_steps: Annotated[
        bool,
        typer.Option(
            "--balance-steps/--no-balance-steps",
            help="Shrink the distance weight of categories and coarse codes so that they are "
            "really masked (default); --no-balance-steps uses plain 0/1 dummies (docs/rwn.md).",
        ),
    ] = True,
    keep_isolated: Annotated[
        bool,
        typer.Option(
            "--keep-isolated", help="Keep original values where a neighbourhood is empty."
        ),
    ] = False,
    impute: Annotated[
        bool,
        typer.Option(
            "--impute", help="Compute distances on an imputed copy when values are missing."
        ),
    ] = False,
    neighbors: Annotated[
        str,
        typer.Option(
            "--neighbors",
            help="Neighbour search: exact (or kd_tree, ball_tree, brute), hnsw or ivf (faiss "
            "approximate indexes), sample "
            "(Method 1: neighbours from a random sample of --sample-size records) or pairs "
            "(Method 2: among a random sample of n*m/2 pairs); docs/rwn.md, 'Large files'.",
        ),
    ] = "exact",
    sample_size: Annotated[
        int | None,
        typer.Option(
            "--sample-size",
            help="m for --neighbors sample (default 10000; 400 with --fresh-sample) or pairs "
            "(default 64).",
        ),
    ] = None,
    fresh_sample: Annotated[
        bool,
        typer.Option(
            "--fresh-sample",
            help="With --neighbors sample: every record draws its own random sample of "
            "--sample-size records (Perry, Matloff & Tendick 2022, Section 11.1).",
        ),
    ] = False,
    recall_sample: Annotated[
        int | None,
        typer.Option(
            "--recall-sample",
            help="Records on which a non-exact search is checked against exact search "
            "(default 1000; 0 skips the check).",
        ),
    ] = None,
    seed: SeedOption = None,
    diagnostics: Annotated[
        Path | None, typer.Option("--diagnostics", help="Also write per-record diagnostics here.")
    ] = None,
    na_values: NaValuesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Mask microdata by Randomization Within Neighborhoods (Perry, Matloff & Tendick 2022)."""
    if scale not in ("minmax", "standard", "none"):
        raise ParameterError(f"--scale must be minmax, standard or none, got {scale!r}")
    # Fail before the work, not after it, on an output that cannot be written.
    check_outputs(output, diagnostics, inputs=[input])
    data = read_input(input, na_values=na_values, quiet=quiet)
    cols = parse_list(columns)
    roles = pass_through.roles(data, exclude=exclude)
    check_not_passthrough(
        data, cols, {c: r for c, r in roles.items() if r != "ignore"}, "--columns"
    )
    declared = parse_list(categorical) or []
    unknown = [c for c in declared if c not in data.columns]
    if unknown:
        raise ParameterError(f"--categorical: unknown column(s) {unknown}")
    told = cols is not None
    if cols is None:
        # Dates and durations pass through (as the library does by default).
        cols = [c for c in data.columns if c not in roles and not _is_temporal(data[c])]
    else:
        cols = [c for c in cols if c not in roles]
    outside = [c for c in declared if c not in cols]
    if outside:
        raise ParameterError(
            f"--categorical: column(s) {outside} are not masked (excluded or outside --columns)"
        )
    refuse_text_in_numbers(
        data,
        [c for c in cols if c not in declared],
        hint=", or declare the column categorical with --categorical",
    )
    if not told:
        refuse_suspect_columns(
            data,
            [c for c in cols if c not in declared],
            hint="Say what they are: --id or --weight-column to pass them through, "
            "--categorical for codes, --exclude to leave a column alone, or --columns to "
            "name the columns to mask.",
        )
    if not cols:
        raise ParameterError("no columns to mask: every column is an id, a weight or excluded")
    schema = Schema.infer(data[cols], kinds=dict.fromkeys(declared, "categorical"))
    with progress_bar("RWN", quiet=quiet) as callback:
        search = _neighbor_search(neighbors, metric, sample_size, fresh_sample, seed, callback)
        result = rwn(
            data,
            k=k,
            eps=eps,
            q=q,
            modprop=modprop,
            weights=parse_assignments(weight, "--weight") or None,
            scale=None if scale == "none" else scale,
            metric=metric,
            balance_steps=balance_steps,
            columns=cols,
            schema=schema,
            empty="keep" if keep_isolated else "missing",
            missing="impute" if impute else "error",
            neighbors=search,
            recall_sample=recall_sample,
            random_state=seed,
            progress=None if callback is None else _stage(callback, "RWN"),
        )
    write_mask_result(result, output, diagnostics, quiet=quiet)


def _stage(callback: Callable[..., None], description: str) -> Callable[[int, int], None]:
    """The progress callback of one stage: the shared bar under this stage's name."""

    def update(done: int, total: int) -> None:
        callback(done, total, description)

    return update


def _neighbor_search(
    name: str,
    metric: str,
    sample_size: int | None,
    fresh: bool,
    seed: int | None,
    callback: Callable[..., None] | None,
) -> NeighborBackend:
    """The backend ``--neighbors`` names, with a progress bar for its index build."""
    algorithm = "auto"
    if check_backend_name(name, "--neighbors") in EXACT_ALGORITHMS:  # an exact search by name
        name, algorithm = "exact", name
    if sample_size is not None and sample_size < 2:
        raise ParameterError(f"--sample-size must be at least 2, got {sample_size}")
    if fresh and name != "sample":
        raise ParameterError("--fresh-sample applies to --neighbors sample only")
    if sample_size is not None and name not in ("sample", "pairs"):
        raise ParameterError(f"--sample-size applies to --neighbors sample or pairs, not {name}")
    stage = f"building the {name} index" if name in ("hnsw", "ivf") else "sampling pairs"
    return make_strategy(
        name,
        metric=metric,
        algorithm=algorithm,
        sample_size=sample_size,
        fresh_sample=fresh,
        random_state=seed,
        progress=None if callback is None else _stage(callback, stage),
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit rwn`` to the command line."""
    app.command("rwn")(rwn_command)
