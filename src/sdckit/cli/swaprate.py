"""``sdckit swaprate``: estimate an undisclosed swap rate from released data (Kifer 2015)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.cli._common import (
    NoProgressOption,
    console,
    err_console,
    parse_list,
    parse_range,
    progress_bar,
    read_input,
)
from sdckit.errors import ParameterError
from sdckit.swaprate import (
    ConsensusEstimate,
    SwapCountEstimate,
    consensus_swap_count,
    estimate_swap_count,
    imbalance_check,
)
from sdckit.swaprate.calibration import DEFAULT_CALIBRATION_RATES

#: The calibration rates as the --reswap option shows them.
_DEFAULT_RESWAP = ",".join(f"{rate:g}" for rate in DEFAULT_CALIBRATION_RATES)


def estimate_command(
    data_path: Annotated[
        Path, typer.Argument(metavar="DATA", help="Released microdata (.csv/.parquet).")
    ],
    swap_attribute: Annotated[
        str, typer.Option("--swap-attribute", "-s", help="The column that was swapped.")
    ],
    attributes: Annotated[
        str | None,
        typer.Option(
            "--attributes", help="Comma-separated attributes for Algorithm 1 (default: all)."
        ),
    ] = None,
    left: Annotated[
        str | None, typer.Option("--left", help="Comma-separated left attributes rL (Consensus).")
    ] = None,
    right: Annotated[
        str | None, typer.Option("--right", help="Comma-separated right attributes rR (Consensus).")
    ] = None,
    model: Annotated[str, typer.Option("--model", help="naive-bayes or gaussian.")] = "naive-bayes",
    positive: Annotated[
        str | None,
        typer.Option(
            "--positive",
            help="Comma-separated values of the swap attribute forming group 1 (needed when it "
            "takes more than two values).",
        ),
    ] = None,
    drop_missing: Annotated[
        bool,
        typer.Option(
            "--drop-missing", help="Drop records with a missing value in the columns used."
        ),
    ] = False,
    reswap: Annotated[
        str,
        typer.Option(
            "--reswap",
            help="Extra swap rates of the re-swap calibration, which runs by default (a 0 is "
            "ignored: the released data are always the first point).",
        ),
    ] = _DEFAULT_RESWAP,
    no_reswap: Annotated[
        bool,
        typer.Option(
            "--no-reswap",
            help="Skip the re-swap calibration (faster; the verdict then cannot be no_evidence).",
        ),
    ] = False,
    threshold: Annotated[
        float,
        typer.Option(
            "--imbalance-threshold", help="Imbalance above which the model is judged poor."
        ),
    ] = 0.01,
    permutations: Annotated[
        int,
        typer.Option(
            "--permutations",
            help="Permutations of the swap attribute for the identifiability (association) test.",
        ),
    ] = 199,
    level: Annotated[
        float,
        typer.Option(
            "--identification-level", help="Significance level of the identifiability tests."
        ),
    ] = 0.05,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Random seed of the calibration's re-swaps and the permutations (default 0).",
        ),
    ] = None,
    quiet: NoProgressOption = False,
) -> None:
    """Estimate the group swap count alpha and the swap rate rho, with diagnostics and a verdict."""
    data = read_input(data_path)
    if (left is None) != (right is None):
        raise ParameterError("give both --left and --right (Consensus), or neither")
    if left is not None and attributes is not None:
        raise ParameterError(
            "give --attributes (Algorithm 1) or --left/--right (Consensus), not both"
        )
    if model not in ("naive-bayes", "gaussian"):
        raise ParameterError(f"--model must be naive-bayes or gaussian, got {model!r}")
    left_cols, right_cols = parse_list(left), parse_list(right)
    attr_cols = parse_list(attributes)
    groups = parse_list(positive)
    if groups is not None and swap_attribute in data.columns:
        # Values typed on the command line are text; match them to the column's values.
        lookup = {str(v): v for v in data[swap_attribute].dropna().unique()}
        unknown = [g for g in groups if g not in lookup]
        if unknown:
            raise ParameterError(
                f"--positive: value(s) {unknown} do not occur in {swap_attribute!r}"
            )
        groups = [lookup[g] for g in groups]
    if drop_missing:
        used = [swap_attribute, *(left_cols or []), *(right_cols or []), *(attr_cols or [])]
        if attr_cols is None and left_cols is None:
            used = list(data.columns)
        missing = [c for c in used if c not in data.columns]
        if missing:
            raise ParameterError(f"unknown column(s) {missing}")
        before = len(data)
        data = data.dropna(subset=used)
        err_console.print(f"dropped {before - len(data)} records with missing values")

    rates = [r for r in parse_range(reswap, "--reswap") if r != 0]
    if not no_reswap and not rates:
        raise ParameterError("--reswap needs at least one extra rate above 0, e.g. 0.05,0.1")
    # The options both estimators share, as the command line gives them.
    shared: dict[str, Any] = {
        "model": model,
        "positive": groups,
        "permutations": permutations,
        "identification_level": level,
        "random_state": 0 if seed is None else seed,
        "calibrate": not no_reswap,
        "calibration_rates": rates or DEFAULT_CALIBRATION_RATES,
    }
    result: SwapCountEstimate | ConsensusEstimate
    with progress_bar("Algorithm 1", quiet=quiet) as callback:
        if left_cols is not None and right_cols is not None:
            result = consensus_swap_count(
                data, swap_attribute, left_cols, right_cols, progress=callback, **shared
            )
            halves = [("left", result.left), ("right", result.right)]
        else:
            result = estimate_swap_count(
                data,
                swap_attribute,
                attr_cols,
                progress=callback,
                imbalance_threshold=threshold,
                **shared,
            )
            halves = [("model", result)]
    # The library's summary opens with the verdict line (code, then the sentence built
    # from it); it is printed on one line whatever the terminal width, so that the first
    # line of the output is the whole verdict (`head -1` gives it to a script).
    verdict_line, _, details = result.summary().partition("\n")
    console.print(verdict_line, highlight=False, soft_wrap=True)
    console.print(details, highlight=False)
    for name, fit in halves:
        check = imbalance_check(fit, threshold, consensus_half=left_cols is not None)
        console.print(f"  imbalance check ({name}): {check.summary()}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``sdckit swaprate`` to the command line."""
    group = typer.Typer(
        help="Estimate an undisclosed data swap rate (Kifer 2015).", no_args_is_help=True
    )
    group.command("estimate")(estimate_command)
    app.add_typer(group, name="swaprate")
