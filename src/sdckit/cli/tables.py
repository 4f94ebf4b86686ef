"""``sdckit tables``: tabulate, design perturbation tables, perturb, restore additivity, SAFE, info loss."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from sdckit.cli._cluster import (
    ClusterOptions,
    MicrodataOrParquetDir,
    check_output_directory,
    distributed_lib,
    is_partitioned,
    on_cluster,
    seed_or_random,
)
from sdckit.cli._common import (
    InputFile,
    QuietOption,
    SeedOption,
    check_outputs,
    console,
    err_console,
    parse_list,
    progress_bar,
    read_input,
    with_option_groups,
    write_output,
)
from sdckit.errors import DataError, ParameterError
from sdckit.io import read_table
from sdckit.tables import (
    add_record_keys,
    audit_suppression,
    cell_key_perturb,
    design_ptable,
    information_loss,
    primary_suppression,
    restore_additivity,
    restore_linked,
    safe_perturb,
    suppress,
    suppress_linked,
    tabulate,
)
from sdckit.tables.formats import (
    read_codelist_hierarchy,
    read_hrc,
    read_ptable,
    to_sdmx_csv,
    write_ptable,
)
from sdckit.tables.release import (
    CONFIDENTIAL_COLUMNS,
    check_internal_path,
    check_release,
    from_internal_names,
    internal_frame,
)
from sdckit.tables.suppression import DEFAULT_TIME_LIMIT
from sdckit.tables.tabulate import TableStructure

tables_app = typer.Typer(
    help="Protected frequency tables: cell key perturbation, additivity (CTA), SAFE (Giessing & Höhne 2011).",
    no_args_is_help=True,
)


def _dims(value: str | None, option: str = "--dims") -> list[str]:
    dims = parse_list(value)
    if not dims:
        raise ParameterError(f"{option} must name at least one column (comma-separated)")
    return dims


def parse_hierarchies(path: Path | None) -> dict | None:
    """``--hierarchies``: a YAML/JSON map of every dimension, or ``DIM=FILE[,DIM=FILE]`` with
    tau-ARGUS ``.hrc`` files or parent-child code-list CSVs."""
    if path is None:
        return None
    text = str(path)
    if "=" in text:
        spec = {}
        for item in text.split(","):
            dim, sep, name = item.partition("=")
            if not sep or not dim.strip() or not name.strip():
                raise ParameterError(f"--hierarchies expects DIM=FILE[,DIM=FILE], got {item!r}")
            file = Path(name.strip())
            suffix = file.suffix.lower()
            if suffix == ".hrc":
                spec[dim.strip()] = read_hrc(file)
            elif suffix in (".csv", ".txt"):
                spec[dim.strip()] = read_codelist_hierarchy(file, dimension=dim.strip())
            else:
                raise ParameterError(
                    f"--hierarchies {dim.strip()}={name.strip()}: give a .hrc (tau-ARGUS) or a "
                    ".csv code list (parent,child)"
                )
        return spec
    if not path.exists():
        raise DataError(f"hierarchy file {str(path)!r} does not exist")
    try:
        spec = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise DataError(f"could not read hierarchy file {str(path)!r}: {exc}") from exc
    if not isinstance(spec, dict):
        raise DataError(
            f"hierarchy file {str(path)!r} must map each dimension to {{parent: [children]}}"
        )
    return spec


_HIERARCHY_HELP = (
    "YAML/JSON file {dim: {parent: [children, ...]}}, or DIM=FILE[,DIM=FILE] with tau-ARGUS "
    ".hrc files or parent,child code-list CSVs."
)
_Hierarchies = Annotated[Path | None, typer.Option("--hierarchies", help=_HIERARCHY_HELP)]
_Dims = Annotated[str, typer.Option("--dims", help="Comma-separated classifying variables.")]
# The options of restore and restore-linked (--time-limit: of suppress too).
_PerturbedValue = Annotated[str, typer.Option("--value", help="Column of perturbed counts.")]
_MaxDeviation = Annotated[int, typer.Option("--max-deviation", help="Largest change per cell.")]
_TimeLimit = Annotated[float | None, typer.Option("--time-limit", help="Seconds per HiGHS run.")]
_SDMX_HELP = "Write SDMX-CSV for this dataflow (AGENCY:ID(VERSION)) instead of the tidy table."
_TRUE_COUNTS_HELP = (
    "Also write the true counts, cell keys and noise (columns named *_CONFIDENTIAL) for the "
    "producer's own use; the output name must then contain 'internal' or 'confidential'."
)


@dataclass(frozen=True)
class PtableDesign:
    """``--D`` and ``--V``: the perturbation table designed when no ``--ptable`` file is given."""

    D: Annotated[int, typer.Option("--D", help="Without --ptable: design one with this D.")] = 3
    V: Annotated[float, typer.Option("--V", help="Without --ptable: design one with this V.")] = (
        2.01
    )

    def ptable(self, path: Path | None) -> Any:
        """The perturbation table of ``--ptable``, else the one these options design."""
        return read_ptable(path) if path is not None else design_ptable(self.D, self.V)


@dataclass(frozen=True)
class _Published:
    """What a protected table's output holds: the release (tidy or SDMX), or the internal table."""

    with_true_counts: Annotated[
        bool, typer.Option("--with-true-counts", help=_TRUE_COUNTS_HELP)
    ] = False
    sdmx: Annotated[str | None, typer.Option("--sdmx", help=_SDMX_HELP)] = None

    def write(
        self,
        result: Any,
        output: Path,
        what: str,
        *,
        dims: list[str] | None,
        value: str = "perturbed",
        quiet: bool,
    ) -> None:
        """Write a protected table's ``result`` as these options say; print its summary."""
        internal, table, with_true_counts = result.internal, result.table, self.with_true_counts
        _write_protected(
            internal, table, output, with_true_counts, what, sdmx=self.sdmx, dims=dims, value=value
        )
        if not quiet:
            err_console.print(result.summary(), highlight=False)


def _check_protected_outputs(
    output: Path, with_true_counts: bool, *inputs: Path | None, option: str = "--output"
) -> None:
    """Before any work: the output path is usable, is not an input, and says 'internal' if it must."""
    check_outputs(output, inputs=inputs)
    if with_true_counts:
        check_internal_path(output, option)


def _check_linked_outputs(
    outputs: list[Path], with_true_counts: bool, *inputs: Path | None
) -> None:
    """``--output`` of linked tables: each usable (see above), none given twice."""
    for number, output in enumerate(outputs):
        _check_protected_outputs(output, with_true_counts, *inputs)
        if output in outputs[:number]:
            raise ParameterError(f"--output {output} is given twice")


_LinkedOutputs = Annotated[
    list[Path], typer.Option("--output", "-o", help="One output per table, in the same order.")
]
_LinkedDims = Annotated[
    list[str],
    typer.Option("--dims", help="Comma-separated classifying variables, once per table, in order."),
]


def _write_protected(
    internal,
    published,
    output: Path,
    with_true_counts: bool,
    what: str,
    *,
    sdmx: str | None = None,
    dims: list[str] | None = None,
    value: str = "perturbed",
) -> None:
    """The one writer of protected tables: refuses confidential columns unless asked for."""
    if sdmx is not None:
        if with_true_counts:
            raise ParameterError("--sdmx writes a release; it cannot hold --with-true-counts")
        structure = published.attrs.get("structure")
        dims = list(structure.dims) if structure is not None else dims
        if not dims:
            raise ParameterError("--sdmx needs --dims to know the dimension columns")
        published = to_sdmx_csv(published, dims, dataflow=sdmx, value=value)
    frame = internal_frame(internal) if with_true_counts else published
    check_release(frame, allow_confidential=with_true_counts, what=what)
    write_output(frame, output)
    if with_true_counts:
        err_console.print(
            f"{output} holds the TRUE counts (columns *_CONFIDENTIAL): internal use only, "
            "never publish it"
        )


@tables_app.command("add-keys")
@with_option_groups
def add_keys_command(
    input: MicrodataOrParquetDir,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Microdata with a record-key column.")
    ],
    seed: SeedOption = None,
    kind: Annotated[
        str, typer.Option("--kind", help="integer ([0, 2^31-1)) or uniform ([0, 1)).")
    ] = "integer",
    column: Annotated[str, typer.Option("--column", help="Name of the key column.")] = "record_key",
    key_range: Annotated[
        int | None,
        typer.Option("--key-range", help="Integer keys 0..N-1 (256 or 4096 for the ONS p-tables)."),
    ] = None,
    cluster: ClusterOptions = ClusterOptions(),
    quiet: QuietOption = False,
) -> None:
    """Draw record keys once and store them with the microdata (Section 4).

    A directory (or glob) of Parquet files gets its keys partition by partition on Dask,
    written to the output directory (docs/distributed.md).
    """
    if not is_partitioned(input):
        cluster.refuse_for_one_file(input)
        _check_protected_outputs(output, False, input)
        keyed = add_record_keys(
            read_input(input), seed, kind=kind, column=column, key_range=key_range
        )
        write_output(keyed, output)
        return
    check_output_directory(output)
    lib = distributed_lib()
    source = lib.read_parquet(input)
    frame = lib.add_record_keys_by_partition(
        source, seed=seed_or_random(seed), kind=kind, column=column, key_range=key_range
    )
    with on_cluster(cluster, "adding record keys", quiet=quiet) as callback:
        lib.write_parquet(frame, output, inputs=source.files, progress=callback)
    err_console.print(
        f"wrote {source.n_records} records with record keys {column!r} to {output}/ "
        f"({len(source.files)} files)",
        highlight=False,
    )


@tables_app.command("tabulate")
@with_option_groups
def tabulate_command(
    input: MicrodataOrParquetDir,
    output: Annotated[Path, typer.Option("--output", "-o", help="Tidy table, one row per cell.")],
    dims: _Dims,
    weights: Annotated[
        str | None, typer.Option("--weights", help="Column of record weights.")
    ] = None,
    record_key: Annotated[
        str | None, typer.Option("--record-key", help="Record-key column: adds cell keys.")
    ] = None,
    hierarchies: _Hierarchies = None,
    no_margins: Annotated[bool, typer.Option("--no-margins", help="Leave out the totals.")] = False,
    key_modulus: Annotated[
        int | None,
        typer.Option(
            "--key-modulus",
            help="Record keys 0..N-1 summed modulo N (256 or 4096 for the ONS p-tables).",
        ),
    ] = None,
    cluster: ClusterOptions = ClusterOptions(),
    quiet: QuietOption = False,
) -> None:
    """Frequency table with all margins (and hierarchy levels), empty cells included.

    The table holds the true counts: it is the producer's input to perturb, never a release.
    A directory (or glob) of Parquet files is tabulated as map-reduce on Dask.
    """
    _check_protected_outputs(output, False, input)
    params: dict[str, Any] = {
        "hierarchies": parse_hierarchies(hierarchies),
        "weights": weights,
        "margins": not no_margins,
        "record_key": record_key,
        "key_modulus": key_modulus,
    }
    if is_partitioned(input):
        with on_cluster(cluster, "tabulating", quiet=quiet) as callback:
            table = distributed_lib().tabulate_by_partition(
                input, _dims(dims), progress=callback, **params
            )
    else:
        cluster.refuse_for_one_file(input)
        table = tabulate(read_input(input), _dims(dims), **params)
    write_output(table, output)
    err_console.print(
        "this table holds the TRUE counts: an input to `tables perturb`, not for release"
    )


@tables_app.command("design-ptable")
def design_ptable_command(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Tidy perturbation table (i, j, p, ...).")
    ],
    D: Annotated[int, typer.Option("--D", help="Maximum absolute deviation.")] = 3,
    V: Annotated[float, typer.Option("--V", help="Variance of the noise.")] = 2.01,
    js: Annotated[int, typer.Option("--js", help="Perturbed counts 1..js are forbidden.")] = 2,
    pstay: Annotated[
        float | None, typer.Option("--pstay", help="Fixed probability of no change.")
    ] = None,
    monotone: Annotated[
        bool,
        typer.Option("--monotone", help="Tails decrease away from i (paper: always, centre free)."),
    ] = False,
    objective: Annotated[
        str,
        typer.Option(
            "--objective",
            help="maxent (as R ptable), paper (Giessing & Höhne 2011, §3.1: centre, normal tails, LP) or lp.",
        ),
    ] = "maxent",
    symmetry_bound: Annotated[
        float | None,
        typer.Option(
            "--symmetry-bound", help="Bound on |p(i,i-1) - p(i,i+1)| (the paper's symmetry)."
        ),
    ] = None,
    layout: Annotated[
        str,
        typer.Option(
            "--format",
            help="tidy (i, j, p, ...: sdckit, R ptable), ons (pcv, ckey, pvalue for 256 cell keys) "
            "or tauargus (i;j;p;v;p_ij_ub text file).",
        ),
    ] = "tidy",
    quiet: QuietOption = False,
) -> None:
    """Design a zero-mean, fixed-variance transition matrix without small cells (Section 3.1)."""
    check_outputs(output)
    ptable = design_ptable(
        D,
        V,
        js=js,
        pstay=pstay,
        monotone=True if monotone else None,
        objective=objective,
        symmetry_bound=symmetry_bound,
    )
    if layout in ("ons", "tauargus"):
        write_ptable(ptable, output, format=layout)
    elif layout == "tidy":
        write_output(ptable.to_frame(), output)
    else:
        raise ParameterError(f"--format must be 'tidy', 'ons' or 'tauargus', got {layout!r}")
    if not quiet:
        err_console.print(ptable.summary(), highlight=False)


@tables_app.command("perturb")
@with_option_groups
def perturb_command(
    input: Annotated[
        Path,
        typer.Argument(
            help="Table with count and cell_key columns, or microdata with record keys (a "
            "file, or a directory or glob of Parquet files)."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Table with noise and perturbed counts.")
    ],
    ptable: Annotated[
        Path | None,
        typer.Option(
            "--ptable",
            help="Perturbation table file: tidy (i, j, p; sdckit, R ptable), ONS (pcv, ckey, "
            "pvalue) or tau-ARGUS (i;j;p;v;p_ij_ub).",
        ),
    ] = None,
    design: PtableDesign = PtableDesign(),
    dims: Annotated[
        str | None, typer.Option("--dims", help="Classifying variables (microdata input).")
    ] = None,
    record_key: Annotated[
        str, typer.Option("--record-key", help="Record-key column.")
    ] = "record_key",
    threshold: Annotated[
        int | None, typer.Option("--threshold", help="Suppress perturbed counts below this.")
    ] = None,
    hierarchies: _Hierarchies = None,
    weights: Annotated[
        str | None,
        typer.Option(
            "--weights",
            help="Record weights (microdata input): the count is perturbed, the weighted total scaled.",
        ),
    ] = None,
    published: _Published = _Published(),
    cluster: ClusterOptions = ClusterOptions(),
    quiet: QuietOption = False,
) -> None:
    """Cell key perturbation: no perturbed 1s or 2s, identical cells get identical noise (Section 4).

    The output holds the dimensions and the perturbed values only. A directory (or glob) of
    Parquet files with record keys is tabulated as map-reduce on Dask.
    """
    _check_protected_outputs(output, published.with_true_counts, input, ptable)
    table = design.ptable(ptable)
    params: dict[str, Any] = {
        "record_key": record_key,
        "threshold": threshold,
        "hierarchies": parse_hierarchies(hierarchies),
        "weights": weights,
    }
    if is_partitioned(input):
        with on_cluster(cluster, "tabulating", quiet=quiet) as callback:
            result = distributed_lib().cell_key_perturb_by_partition(
                input, table, dims=_dims(dims), progress=callback, **params
            )
    else:
        cluster.refuse_for_one_file(input)
        result = cell_key_perturb(
            from_internal_names(read_input(input)), table, dims=parse_list(dims), **params
        )
    published.write(result, output, "perturbed table", dims=parse_list(dims), quiet=quiet)


@tables_app.command("restore")
@with_option_groups
def restore_command(
    input: Annotated[
        Path, typer.Argument(help="Perturbed tidy table (all cells, margins included).")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Table with a restored column.")],
    dims: _Dims,
    value: _PerturbedValue = "perturbed",
    max_deviation: _MaxDeviation = 3,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="two-stage, joint, or elementary (margins as sums of the elementary cells; "
            "for large tables; --time-limit then bounds the whole restoration).",
        ),
    ] = "two-stage",
    hierarchies: _Hierarchies = None,
    time_limit: _TimeLimit = None,
    block_cells: Annotated[
        int,
        typer.Option(
            "--block-cells",
            help="elementary: above this many movable elementary cells, with a time limit, "
            "local search on sub-tables takes all the time after the start (the whole model "
            "is not run), and a start the LP relaxation cannot give in time comes from "
            "two-way sub-tables solved in turn.",
        ),
    ] = 3000,
    threshold: Annotated[
        int | None,
        typer.Option(
            "--threshold",
            help="The table's suppression threshold: suppressed (empty) cells stay hidden.",
        ),
    ] = None,
    published: _Published = _Published(),
    quiet: QuietOption = False,
) -> None:
    """Restore additivity by controlled tabular adjustment without small cells (Section 5).

    The output holds the dimensions and the protected values only.
    """
    _check_protected_outputs(output, published.with_true_counts, input, hierarchies)
    with progress_bar("CTA (HiGHS)", quiet=quiet):
        result = restore_additivity(
            from_internal_names(read_input(input)),
            dims=_dims(dims),
            value=value,
            max_deviation=max_deviation,
            method=method,
            hierarchies=parse_hierarchies(hierarchies),
            time_limit=time_limit,
            threshold=threshold,
            block_cells=block_cells,
        )
    published.write(
        result, output, "restored table", dims=_dims(dims), value="restored", quiet=quiet
    )


@tables_app.command("restore-linked")
def restore_linked_command(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="Perturbed tidy tables from the same microdata (all cells, margins included)."
        ),
    ],
    outputs: _LinkedOutputs,
    dims: _LinkedDims,
    value: _PerturbedValue = "perturbed",
    max_deviation: _MaxDeviation = 3,
    hierarchies: _Hierarchies = None,
    time_limit: _TimeLimit = None,
    quiet: QuietOption = False,
) -> None:
    """Restore several linked tables together: additive each, one value per common cell.

    The outputs hold the dimensions and the protected values only.
    """
    if len(outputs) != len(inputs) or len(dims) != len(inputs):
        raise ParameterError(
            f"give one --output and one --dims per input table: {len(inputs)} inputs, "
            f"{len(outputs)} --output, {len(dims)} --dims"
        )
    _check_linked_outputs(outputs, False, *inputs, hierarchies)
    frames = [from_internal_names(read_input(path)) for path in inputs]
    with progress_bar("CTA of linked tables (HiGHS)", quiet=quiet):
        result = restore_linked(
            frames,
            dims=[_dims(d) for d in dims],
            hierarchies=parse_hierarchies(hierarchies),
            value=value,
            max_deviation=max_deviation,
            time_limit=time_limit,
        )
    for internal, table, output, d in zip(
        result.internals, result.tables, outputs, dims, strict=True
    ):
        _write_protected(
            internal, table, output, False, "restored table", dims=_dims(d), value="restored"
        )
    if not quiet:
        err_console.print(result.summary(), highlight=False)


@tables_app.command("safe")
def safe_command(
    input: InputFile,
    output: Annotated[Path, typer.Option("--output", "-o", help="Protected microdata.")],
    tables: Annotated[
        str,
        typer.Option(
            "--tables", help="Controlled tables: variables comma-separated, tables by ';'."
        ),
    ],
    variables: Annotated[
        str | None,
        typer.Option(
            "--variables", help="Variables of the elementary table (default: all controlled)."
        ),
    ] = None,
    max_deviation_start: Annotated[
        int, typer.Option("--max-deviation-start", help="Initial bound.")
    ] = 1,
    bounds: Annotated[
        str | None,
        typer.Option(
            "--bounds",
            help="The two-valued bound set B: initial bounds for one-variable and for "
            "cross-classified controlled cells, e.g. '2,3' (replaces --max-deviation-start).",
        ),
    ] = None,
    cell_weights: Annotated[
        float | None,
        typer.Option(
            "--cell-weights",
            help="Per-cell weights w = floor(S * sqrt(original count)): larger cells may "
            "deviate more.",
        ),
    ] = None,
    no_optimise: Annotated[
        bool, typer.Option("--no-optimise", help="Stop at the first solution.")
    ] = False,
    max_rounds: Annotated[
        int | None,
        typer.Option(
            "--max-rounds",
            help="At most this many tightening rounds after the first solution (default: until "
            "a round fails; the summary says when the limit stopped it).",
        ),
    ] = None,
    seed: SeedOption = None,
    diagnostics: Annotated[
        Path | None,
        typer.Option(
            "--diagnostics",
            help="Also write which records changed (internal: the name must contain 'internal').",
        ),
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """SAFE-style pre-tabular protection: every table of the variables is free of 1s and 2s."""
    _check_protected_outputs(output, False, input)
    if diagnostics is not None:
        _check_protected_outputs(diagnostics, True, input, output, option="--diagnostics")
    controlled = [_dims(t, "--tables") for t in tables.split(";") if t.strip()]
    with progress_bar("SAFE", quiet=quiet) as callback:
        result = safe_perturb(
            read_input(input),
            controlled,
            variables=parse_list(variables),
            max_deviation_start=max_deviation_start,
            bounds=_int_pair(bounds, "--bounds"),
            cell_weights=cell_weights,
            optimise=not no_optimise,
            max_rounds=max_rounds,
            random_state=seed,
            progress=callback,
        )
    # protected microdata: record keys would let anyone recompute every cell key
    microdata_confidential = [c for c in CONFIDENTIAL_COLUMNS if c != "count"]
    check_release(result.data, what="protected microdata", known=microdata_confidential)
    write_output(result.data, output)
    if diagnostics is not None:
        write_output(result.diagnostics.reset_index(), diagnostics)
    if not quiet:
        err_console.print(result.summary(), highlight=False)


def _int_pair(text: str | None, option: str) -> tuple[int, int] | None:
    """'2,3' -> (2, 3); a clear error naming the option otherwise."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise typer.BadParameter(f"{option} takes two whole numbers like '2,3', got {text!r}")
    return int(parts[0]), int(parts[1])


@tables_app.command("infoloss")
def infoloss_command(
    input: Annotated[Path, typer.Argument(help="Table with the original counts.")],
    protected: Annotated[
        str, typer.Option("--protected", help="Column of protected counts, or a table file.")
    ] = "perturbed",
    dims: Annotated[
        str | None, typer.Option("--dims", help="Dims to match a protected table file.")
    ] = None,
    value: Annotated[str, typer.Option("--value", help="Column of true counts.")] = "count",
    protected_value: Annotated[
        str | None,
        typer.Option(
            "--protected-value",
            help="Column of the protected table file to compare (default: restored, else perturbed).",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the deviation distribution here.")
    ] = None,
) -> None:
    """Distribution of absolute deviations, mean deviation, false zeros and non-zeros (Sections 6-7)."""
    if output is not None:
        _check_protected_outputs(output, False, input)
    original = from_internal_names(read_input(input))
    other = protected
    if protected not in original.columns and Path(protected).suffix.lower() in (
        ".csv",
        ".parquet",
        ".pq",
        ".txt",
    ):
        other = from_internal_names(read_table(Path(protected)))
    loss = information_loss(
        original, other, dims=parse_list(dims), value=value, protected_value=protected_value
    )
    console.print(loss.summary(), highlight=False)
    if output is not None:
        write_output(loss.distribution.reset_index(), output)


_TableDims = Annotated[
    str | None,
    typer.Option("--dims", help="Comma-separated classifying variables (default: inferred)."),
]
_TrueValue = Annotated[str, typer.Option("--value", help="Column of true values in TABLE.")]


@tables_app.command("audit")
def audit_command(
    table: Annotated[
        Path, typer.Argument(help="The true table (all cells, margins included): internal.")
    ],
    published: Annotated[
        Path | None,
        typer.Argument(
            help="The release to audit: suppressed cells empty (or a suppressed column)."
        ),
    ] = None,
    dims: _TableDims = None,
    value: _TrueValue = "count",
    published_value: Annotated[
        str, typer.Option("--published-value", help="Column of published values in PUBLISHED.")
    ] = "published",
    hierarchies: _Hierarchies = None,
    protection: Annotated[
        float | None,
        typer.Option(
            "--protection",
            help="Required protection as a share of each value (0.1 = 10%); default: the "
            "upper_protection/lower_protection columns of TABLE, else exact disclosure only.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write every suppressed cell's interval here (internal file)."
        ),
    ] = None,
    rule: Annotated[
        list[str] | None,
        typer.Option(
            "--rule",
            help="Primary rules of a count TABLE (repeatable, as for suppress): the protection "
            "each cell needs; a primary cell left published is exposed.",
        ),
    ] = None,
    intervals: Annotated[
        str,
        typer.Option(
            "--intervals",
            help="exact: two LPs per suppressed cell; settle: only as far as the verdict needs "
            "(large tables; the interval column says which are exact).",
        ),
    ] = "exact",
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds (wall clock) for the audit's LPs: a cell not settled in time is "
            "reported exposed ('not settled'), never protected.",
        ),
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """The attacker's interval of every suppressed cell (LP, HiGHS); exit code 1 when a cell is exposed."""
    if output is not None:
        _check_protected_outputs(output, True, table, published, hierarchies)
    truth = from_internal_names(read_input(table))
    release = read_input(published) if published is not None else None
    if rule:
        # protection levels (and which cells must be suppressed) from the rules
        truth.attrs["structure"] = TableStructure.from_table(
            truth, _dims(dims), hierarchies=parse_hierarchies(hierarchies)
        )
        truth = primary_suppression(truth, rules=rule)
    with progress_bar("audit (HiGHS)", quiet=quiet):
        result = audit_suppression(
            truth,
            release,
            dims=_dims(dims) if dims is not None else None,
            value=value,
            published_value=published_value,
            hierarchies=parse_hierarchies(hierarchies),
            protection=protection,
            intervals=intervals,
            time_limit=time_limit,
        )
    console.print(result.summary(), highlight=False)
    if output is not None:
        write_output(result.cells, output)
    if result.stats["exposed"]:
        raise typer.Exit(1)


_SuppressInput = Annotated[
    Path,
    typer.Argument(
        help="A count table (tabulate's output), or microdata with --value/--contributor."
    ),
]
_ReleaseOutput = Annotated[
    Path, typer.Option("--output", "-o", help="The release: dims, published, suppressed.")
]
_Rules = Annotated[
    list[str],
    typer.Option(
        "--rule",
        help="Primary rule, repeatable: 'freq>=3', 'dominance n=2 k=85', 'p% p=10', 'zero'.",
    ),
]
_Method = Annotated[str, typer.Option("--method", help="hypercube, optimal or modular.")]
_MagnitudeValue = Annotated[
    str | None,
    typer.Option("--value", help="Microdata: the magnitude variable (sums are published)."),
]
_Contributor = Annotated[
    str | None, typer.Option("--contributor", help="Microdata: contributor (holding) id column.")
]

_WithStatus = Annotated[
    bool,
    typer.Option(
        "--with-status",
        help="Add each cell's status (primary, secondary, published; SDMX CONF_STATUS "
        "C/D/F): it tells which cells failed a rule, so the output name must contain "
        "'internal' or 'confidential'.",
    ),
]


@dataclass(frozen=True)
class _Suppression:
    """The options ``suppress`` and ``suppress-linked`` share."""

    hierarchies: _Hierarchies = None
    value: _MagnitudeValue = None
    contributor: _Contributor = None
    cost: Annotated[str, typer.Option("--cost", help="value or count.")] = "value"
    time_limit: Annotated[
        float | None,
        typer.Option(
            "--time-limit",
            help="Seconds per HiGHS run (default 60): the best pattern found is kept, with "
            "its gap in the summary.",
        ),
    ] = None
    with_status: _WithStatus = False
    sdmx: Annotated[str | None, typer.Option("--sdmx", help=_SDMX_HELP)] = None


#: SDMX confidentiality status (code list CL_CONF_STATUS): primary, secondary, free.
_CONF_STATUS = {"primary": "C", "secondary": "D", "published": "F"}


@tables_app.command("suppress")
@with_option_groups
def suppress_command(
    table: _SuppressInput,
    output: _ReleaseOutput,
    rule: _Rules,
    dims: _TableDims = None,
    method: _Method = "hypercube",
    how: _Suppression = _Suppression(),
    quiet: QuietOption = False,
) -> None:
    """Primary and secondary cell suppression, audited by the attacker's LP (HiGHS)."""
    hierarchies, value, contributor = how.hierarchies, how.value, how.contributor
    cost, time_limit, with_status, sdmx = how.cost, how.time_limit, how.with_status, how.sdmx
    _check_protected_outputs(output, with_status, table, hierarchies)
    data = from_internal_names(read_input(table))
    spec = parse_hierarchies(hierarchies)
    microdata = value is not None or contributor is not None or "count" not in data.columns
    options: dict[str, Any] = {
        "method": method,
        "cost": cost,
        "time_limit": DEFAULT_TIME_LIMIT if time_limit is None else time_limit,
    }
    with progress_bar(f"suppression ({method})", quiet=quiet):
        if microdata:
            flagged = primary_suppression(
                data,
                _dims(dims),
                rules=rule,
                value=value,
                contributor=contributor,
                hierarchies=spec,
            )
            result = suppress(flagged, **options)
        else:
            result = suppress(data, rules=rule, dims=_dims(dims), hierarchies=spec, **options)
    if not quiet:
        err_console.print(result.summary(), highlight=False)
    if result.stats["exposed"]:
        _refuse_exposed(int(result.stats["exposed"]), [output])
    _write_suppressed(result.table, result.internal, output, sdmx=sdmx, with_status=with_status)


def _refuse_exposed(exposed: int, outputs: list[Path]) -> None:
    """Write no release in which the audit found a primary cell exposed (exit code 1)."""
    err_console.print(
        f"error: the audit found {exposed} primary cell(s) not protected by this pattern; no "
        f"release written ({', '.join(str(o) for o in outputs)}): a release with an exposed "
        "cell discloses it. Every method completes the pattern for the cells its first audit "
        "finds exposed, so a cell is left only when a HiGHS run stopped at its time limit: "
        "raise --time-limit, or check a pattern with `sdckit tables audit`.",
        highlight=False,
    )
    raise typer.Exit(1)


def _write_suppressed(
    table: Any, internal: Any, output: Path, *, sdmx: str | None, with_status: bool
) -> None:
    """Write a suppressed table's release, tidy or SDMX-CSV, with each cell's status if asked."""
    release = table.copy()
    status = internal["status"].to_numpy()
    if sdmx is not None:
        release = to_sdmx_csv(release, list(release.columns[:-2]), dataflow=sdmx, value="published")
        if with_status:
            release["CONF_STATUS"] = [_CONF_STATUS[s] for s in status]
    elif with_status:
        release["status"] = status
    check_release(release, what="suppressed table")
    write_output(release, output)


@tables_app.command("suppress-linked")
@with_option_groups
def suppress_linked_command(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="One microdata file (with one --dims per table), or one count table per --dims."
        ),
    ],
    outputs: _LinkedOutputs,
    dims: _LinkedDims,
    rule: _Rules,
    method: Annotated[str, typer.Option("--method", help="hypercube or optimal.")] = "hypercube",
    how: _Suppression = _Suppression(),
    quiet: QuietOption = False,
) -> None:
    """Suppress linked tables together: a cell they share is suppressed in all or none.

    Each table is protected with the others' suppressions carried over until
    nothing changes; then every table and the set jointly are audited (if a
    cell is exposed, no release is written and the exit code is 1).
    """
    hierarchies, value, contributor = how.hierarchies, how.value, how.contributor
    cost, time_limit, with_status, sdmx = how.cost, how.time_limit, how.with_status, how.sdmx
    microdata = len(inputs) == 1
    if len(outputs) != len(dims) or not (microdata or len(inputs) == len(dims)):
        raise ParameterError(
            f"give one --output and one --dims per table (and one input per table, or a single "
            f"microdata file): {len(inputs)} inputs, {len(outputs)} --output, {len(dims)} --dims"
        )
    _check_linked_outputs(outputs, with_status, *inputs, hierarchies)
    spec = parse_hierarchies(hierarchies)
    frames = [from_internal_names(read_input(path)) for path in inputs]
    options: dict[str, Any] = {
        "method": method,
        "cost": cost,
        "time_limit": DEFAULT_TIME_LIMIT if time_limit is None else time_limit,
    }
    with progress_bar(f"linked suppression ({method})", quiet=quiet):
        if microdata:
            flagged = [
                primary_suppression(
                    frames[0],
                    _dims(d),
                    rules=rule,
                    value=value,
                    contributor=contributor,
                    hierarchies=spec,
                )
                for d in dims
            ]
            result = suppress_linked(flagged, **options)
        else:
            result = suppress_linked(
                frames, rules=rule, dims=[_dims(d) for d in dims], hierarchies=spec, **options
            )
    if not quiet:
        err_console.print(result.summary(), highlight=False)
    if result.stats["exposed"] or any(result.stats["exposed_per_table"]):
        _refuse_exposed(
            max(int(result.stats["exposed"]), sum(map(int, result.stats["exposed_per_table"]))),
            list(outputs),
        )
    for table, internal, output in zip(result.tables, result.internals, outputs, strict=True):
        _write_suppressed(table, internal, output, sdmx=sdmx, with_status=with_status)


def register(app: typer.Typer) -> None:
    """Add ``sdckit tables ...`` to the command line."""
    app.add_typer(tables_app, name="tables")
