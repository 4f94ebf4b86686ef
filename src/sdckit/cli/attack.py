"""``sdckit attack``: the intruder's lab on the command line.

``regression`` (Bleninger, Drechsler & Ronning 2011), ``server``
(differencing and padding, Lucero et al. 2011), ``release`` (a masked file)
and ``table`` (a protected table, Giessing & Höhne 2011, §5).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from sdckit.attacks import (
    LibraryServer,
    MaskedRelease,
    NaiveServer,
    Target,
    attack,
    interval_attack,
    linkage_attack,
    prediction_attack,
    server_attack,
    shared_cells,
)
from sdckit.attacks.regression import DEFAULT_QUANTILES
from sdckit.attacks.report import attack_report, battery_report
from sdckit.cli._common import (
    HtmlReportOption,
    QuietOption,
    check_outputs,
    err_console,
    parse_list,
    parse_range,
    progress_bar,
    read_input,
    with_option_groups,
    write_output,
)
from sdckit.errors import ParameterError, SchemaError

attack_app = typer.Typer(
    help="Attack a release as an intruder would, and report what is learned.",
    no_args_is_help=True,
)


def _library_target(
    data: pd.DataFrame, columns: list[str], metadata: Path | None, config: Path | None
) -> LibraryServer:
    from sdckit.server import AnalysisServer, Metadata, generate_secret

    if metadata is not None:
        meta = Metadata.from_yaml(metadata)
    else:
        categorical = [c for c in columns if not pd.api.types.is_numeric_dtype(data[c].dtype)]
        meta = Metadata.infer(data[columns], beta=40, categorical=categorical)
    server = AnalysisServer(
        data, meta, None if config is None else config, secret=generate_secret()
    )
    return LibraryServer(server)


@dataclass(frozen=True)
class ServerAccess:
    """``--token``, ``--metadata``, ``--config``: how the attacks reach the server they attack."""

    token: Annotated[str | None, typer.Option("--token", help="API token of a service URL.")] = None
    metadata: Annotated[
        Path | None,
        typer.Option(
            "--metadata", help="Metadata YAML for the library target (default: inferred, beta 40)."
        ),
    ] = None
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Rules config YAML for the library target (default rules)."),
    ] = None

    def target(self, where: str, data: pd.DataFrame, columns: list[str]) -> Target:
        """sdckit's ``AnalysisServer`` on ``data[columns]`` (``where`` = library), or the service at a URL.

        Parameters
        ----------
        where : str
            ``library``, or the service's ``http://`` or ``https://`` URL.
        data : DataFrame
            The data the library target serves.
        columns : list of str
            Its variables, when the metadata is inferred.

        Returns
        -------
        Target
            What the attack queries.
        """
        if where == "library":
            return _library_target(data, columns, self.metadata, self.config)
        if not where.startswith(("http://", "https://")):
            raise ParameterError(f"URL must be http://..., https://... or library, got {where!r}")
        if not self.token:
            raise ParameterError("--token is needed to attack a service URL")
        from sdckit.attacks.client import ServiceTarget

        return ServiceTarget(where, self.token)


@dataclass(frozen=True)
class AttackOutputs:
    """``-o``, ``--table``, ``--quiet``: what an attack on a server writes besides its summary."""

    output: HtmlReportOption = None
    table: Annotated[
        Path | None, typer.Option("--table", help="The attack table as CSV or Parquet.")
    ] = None
    quiet: QuietOption = False

    def read(self, path: Path) -> pd.DataFrame:
        """The data of the file at ``path``, read once the outputs are checked (nothing done yet)."""
        check_outputs(self.table, inputs=[path], reports=[self.output])
        return read_input(path, quiet=self.quiet)


@attack_app.command("regression")
@with_option_groups
def regression_command(
    data_path: Path = typer.Argument(
        ..., metavar="DATA", help="The confidential file (CSV or Parquet)."
    ),
    sensitive: str = typer.Option(..., "--sensitive", help="The numeric variable to recover."),
    background: str = typer.Option(
        ...,
        "--background",
        help="Comma-separated variables the intruder knows, the size variable first.",
    ),
    approx: float | None = typer.Option(
        None,
        "--approx",
        help="Approximate knowledge of the size variable: relative tolerance δ (0.025 = ±2.5%), "
        "or the additive γ with --approx-mode additive.",
    ),
    approx_mode: str = typer.Option(
        "multiplicative", "--approx-mode", help="multiplicative (±δ·x) or additive (±γ)."
    ),
    epsilon: float = typer.Option(1e-4, "--epsilon", help="ε of the artificial outlier (eq. 1)."),
    target: str = typer.Option(
        "naive",
        "--target",
        help="naive (unrestricted OLS), library (sdckit's AnalysisServer on DATA) or the URL of "
        "a running service (with --token).",
    ),
    access: ServerAccess = ServerAccess(),
    quantiles: str = typer.Option(
        ",".join(f"{q:g}" for q in DEFAULT_QUANTILES),
        "--quantiles",
        help="Size quantiles defining the subsets; 0 is all records.",
    ),
    extra: str | None = typer.Option(
        None, "--extra", help="Comma-separated numeric background variables added as regressors."
    ),
    max_targets: int = typer.Option(
        200, "--max-targets", help="Targets per subset for a server (library or URL)."
    ),
    seed: int = typer.Option(0, "--seed", help="Draws the targets of a server attack."),
    outputs: AttackOutputs = AttackOutputs(),
) -> None:
    """Artificial outliers and strategic dummies with every record as the target (Tables 1-3)."""
    data = outputs.read(data_path)
    columns = parse_list(background) or []
    if not columns:
        raise ParameterError("--background must name at least one column")
    for c in [sensitive, *columns]:
        if c not in data.columns:
            option = "--sensitive" if c == sensitive else "--background"
            raise SchemaError(f"{option}: column {c!r} is not in {data_path}")
    if not pd.api.types.is_numeric_dtype(data[sensitive].dtype):
        raise SchemaError(
            f"--sensitive: column {sensitive!r} is not numeric; a regression attack recovers a number"
        )
    qs = parse_range(quantiles, "--quantiles")
    extras = parse_list(extra)
    chosen: Target
    if target == "naive":
        chosen = NaiveServer(data)
    elif target == "library" or target.startswith(("http://", "https://")):
        chosen = access.target(target, data, [sensitive, *columns])
    else:
        raise ParameterError(f"--target must be naive, library or a URL, got {target!r}")
    with progress_bar("attacking", quiet=outputs.quiet) as progress:
        result = attack(
            data,
            target=chosen,
            sensitive=sensitive,
            background=columns,
            approx=approx,
            approx_mode=approx_mode,
            epsilon=epsilon,
            quantiles=qs,
            extra=extras,
            max_targets=max_targets,
            random_state=seed,
            progress=progress,
        )
    _publish(result.summary(), result.table, outputs.table)
    if outputs.output is not None:
        err_console.print(
            f"wrote the report to {attack_report([result], path=outputs.output).path}"
        )


def _publish(summary: str, frame: pd.DataFrame, path: Path | None) -> None:
    """Print the attack's summary (its verdict first) and write its table when asked."""
    typer.echo(summary)
    if path is not None:
        write_output(frame, path)


def _report(
    output: Path | None, sections: list[tuple[str, pd.DataFrame]], notes: list[str], meta: str
) -> None:
    """Write the battery's HTML report when ``-o`` was given."""
    if output is not None:
        report = battery_report(sections, notes=notes, meta=meta, path=output)
        err_console.print(f"wrote the report to {report.path}")


SensitiveOption = Annotated[
    str, typer.Option("--sensitive", help="The numeric variable whose values the attacks seek.")
]


@attack_app.command("server")
@with_option_groups
def server_command(
    url: Annotated[
        str,
        typer.Argument(
            metavar="URL",
            help="The running service (http://host:port), or 'library' for sdckit's "
            "AnalysisServer on --data.",
        ),
    ],
    data_path: Annotated[
        Path,
        typer.Option(
            "--data",
            help="What the intruder knows of the population (CSV or Parquet): which units are "
            "alone in a cell, and the truth the answers are scored against.",
        ),
    ],
    sensitive: SensitiveOption,
    access: ServerAccess = ServerAccess(),
    max_targets: Annotated[
        int, typer.Option("--max-targets", help="Units alone in their cells to attack.")
    ] = 6,
    padding_pairs: Annotated[
        int, typer.Option("--padding-pairs", help="Padded pairs of universes per target.")
    ] = 40,
    seed: Annotated[int, typer.Option("--seed", help="Draws the padding.")] = 0,
    outputs: AttackOutputs = AttackOutputs(),
) -> None:
    """Differencing, padding and repeated queries against an analysis server (Lucero et al. 2011)."""
    data = outputs.read(data_path)
    if sensitive not in data.columns:
        raise SchemaError(f"--sensitive: column {sensitive!r} is not in {data_path}")
    target = access.target(url, data, list(data.columns))
    with progress_bar("attacking", quiet=outputs.quiet) as progress:
        result = server_attack(
            data,
            target=target,
            sensitive=sensitive,
            max_targets=max_targets,
            padding_pairs=padding_pairs,
            random_state=seed,
            progress=progress,
        )
    _publish(result.summary(), result.table, outputs.table)
    sections = [
        ("Differencing and padding", result.table),
        (
            "Padding: share of targets learned, and the oracle's share, after k pairs",
            result.padding_curve,
        ),
    ]
    # The targets' cells are not named: that a cell holds one unit is itself confidential.
    meta = (
        f"Attacked: the {result.target}; sensitive variable {sensitive}; "
        f"{len(result.targets)} units alone in their cells (cells not named: a count of 1 "
        f"is itself confidential)."
    )
    _report(outputs.output, sections, [result.summary().splitlines()[0]], meta)


@attack_app.command("release")
def release_command(
    original_path: Annotated[
        Path, typer.Argument(metavar="ORIGINAL", help="The original file (CSV or Parquet).")
    ],
    masked_path: Annotated[
        Path,
        typer.Argument(metavar="MASKED", help="The released file, same rows in the same order."),
    ],
    sensitive: SensitiveOption,
    keys: Annotated[
        str,
        typer.Option(
            "--keys",
            help="Comma-separated variables the intruder knows of every record, the size "
            "variable (numeric) first.",
        ),
    ],
    distance: Annotated[
        str, typer.Option("--distance", help="Linkage distance: euclidean or gower.")
    ] = "euclidean",
    seed: Annotated[
        int, typer.Option("--seed", help="Shuffles the release for linkage; seeds the forests.")
    ] = 0,
    output: HtmlReportOption = None,
    quiet: QuietOption = False,
) -> None:
    """Record linkage, prediction from the keys and the regression attacks on a masked file."""
    check_outputs(inputs=[original_path, masked_path], reports=[output])
    original = read_input(original_path, quiet=quiet)
    masked = read_input(masked_path, quiet=quiet)
    columns = parse_list(keys) or []
    if not columns:
        raise ParameterError("--keys must name at least one column")
    for c in [sensitive, *columns]:
        for frame, path in ((original, original_path), (masked, masked_path)):
            if c not in frame.columns:
                option = "--sensitive" if c == sensitive else "--keys"
                raise SchemaError(f"{option}: column {c!r} is not in {path}")
    if len(original) != len(masked):
        raise SchemaError(
            f"MASKED has {len(masked)} rows and ORIGINAL {len(original)}: a release keeps the rows"
        )
    if not pd.api.types.is_numeric_dtype(original[sensitive].dtype):
        raise SchemaError(f"--sensitive: column {sensitive!r} is not numeric")
    linkage = linkage_attack(
        original, masked, columns=columns, distance=distance, random_state=seed
    )
    with progress_bar("attacking", quiet=quiet) as progress:
        regression = attack(
            original,
            target=MaskedRelease(masked),
            sensitive=sensitive,
            background=columns,
            progress=progress,
        )
    linked = pd.DataFrame(
        {
            "intruder": ["nearest record", "one-to-one assignment"],
            "distance": [linkage.distance] * 2,
            "records linked": [linkage.nearest_rate, linkage.assignment_rate],
        }
    )
    predicted = prediction_attack(
        original, masked, sensitive=sensitive, keys=columns, random_state=seed
    )
    typer.echo(linkage.summary())
    typer.echo(predicted.summary())
    typer.echo(regression.summary())
    sections = [
        ("Record linkage", linked),
        ("Prediction of the sensitive value from the keys", predicted.table),
        ("Regression attacks on the release", regression.table),
    ]
    notes = [
        linkage.summary().splitlines()[0],
        predicted.summary().splitlines()[0],
        regression.summary().splitlines()[0],
    ]
    meta = (
        f"Original {original_path.name}, release {masked_path.name}; the intruder knows "
        f"{', '.join(columns)}; sensitive variable {sensitive}."
    )
    _report(output, sections, notes, meta)


@attack_app.command("table")
def table_command(
    protected: Annotated[
        Path,
        typer.Argument(
            metavar="PROTECTED",
            help="A published table (CSV or Parquet): dimensions and the published counts.",
        ),
    ],
    max_deviation: Annotated[
        int | None,
        typer.Option(
            "--max-deviation", help="The published maximum deviation D: bound every cell by LP."
        ),
    ] = None,
    other: Annotated[
        list[Path] | None,
        typer.Option("--other", help="Another published table sharing cells (repeatable)."),
    ] = None,
    value: Annotated[
        str, typer.Option("--value", help="The column of published counts.")
    ] = "perturbed",
    dims: Annotated[
        str | None,
        typer.Option("--dims", help="Comma-separated dimensions (default: the other columns)."),
    ] = None,
    output: HtmlReportOption = None,
    table: Annotated[
        Path | None, typer.Option("--table", help="The bounds of every cell as CSV or Parquet.")
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Interval attack with the published D, and the cells several tables share (Giessing & Höhne 2011, §5)."""
    others = list(other or [])
    check_outputs(table, inputs=[protected, *others], reports=[output])
    if max_deviation is None and not others:
        raise ParameterError(
            "give --max-deviation (the interval attack) or --other TABLE (shared cells), or both"
        )
    published = read_input(protected, quiet=quiet)
    sections: list[tuple[str, pd.DataFrame]] = []
    notes: list[str] = []
    if max_deviation is not None:
        try:
            bounds = interval_attack(
                published, max_deviation=max_deviation, dims=parse_list(dims), value=value
            )
        except ParameterError as exc:
            # The library names its parameter; the command line names the flag.
            raise ParameterError(str(exc).replace("max_deviation", "--max-deviation", 1)) from None
        _publish(bounds.summary(), bounds.table, table)
        notes.append(bounds.summary().splitlines()[0])
        sections.append((f"Bounds of every cell from ±{max_deviation}", bounds.table))
    if others:
        tables = [published, *(read_input(p, quiet=quiet) for p in others)]
        shared = shared_cells(tables, max_deviation=max_deviation, value=value)
        disagree = int((shared["values"].map(len) > 1).sum()) if len(shared) else 0
        line = (
            f"{len(shared)} cells are published in more than one of the {len(tables)} tables; "
            f"{disagree} of them with different values"
            + (
                " (the intruder averages them, or intersects their intervals)."
                if disagree
                else " (nothing to average)."
            )
        )
        typer.echo(line)
        notes.append(line)
        if len(shared):
            typer.echo(shared.to_string(index=False))
            sections.append(("Cells shared by several tables", shared))
    meta = f"Published table {protected.name}" + (
        f" and {', '.join(p.name for p in others)}" if others else ""
    )
    if max_deviation is not None:
        meta += f"; maximum deviation D = {max_deviation}"
    _report(output, sections, notes, meta)


def register(app: typer.Typer) -> None:
    """Add ``sdckit attack ...`` to the command line."""
    app.add_typer(attack_app, name="attack")
