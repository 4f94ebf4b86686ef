"""``sdckit swaprate``: estimate an undisclosed swap rate from released data (Kifer 2015)."""

from __future__ import annotations

from pathlib import Path

import typer

from sdckit.cli._common import (
    console,
    err_console,
    parse_list,
    parse_range,
    progress_bar,
    read_input,
)
from sdckit.errors import ParameterError
from sdckit.swaprate import (
    consensus_swap_count,
    estimate_swap_count,
    imbalance_check,
    reswap_linearity,
)
from sdckit.swaprate.gsc import NOT_IDENTIFIED_CONSEQUENCE


def _not_identified(reason: str) -> str:
    return (
        f"The swap count cannot be estimated from these attributes: {reason}. The alpha "
        f"printed above is not an estimate of it. {NOT_IDENTIFIED_CONSEQUENCE}"
    )


def _verdict_gsc(alpha_rate: float, se_rate: float, imbalance_large: bool) -> str:
    if imbalance_large:
        return (
            "Do not trust this estimate: the model fits the data poorly (large imbalance), so "
            "alpha is probably biased. Re-run with --left and --right (Consensus)."
        )
    if alpha_rate <= 2 * se_rate:
        return (
            "No clear evidence of swapping: the estimate is within two standard errors of zero "
            f"(about {100 * alpha_rate:.2f}% of records moved each way, SE {100 * se_rate:.2f}%)."
        )
    return (
        f"About {100 * alpha_rate:.2f}% of the records (SE {100 * se_rate:.2f}%) appear to have "
        "had their swap attribute moved from group 0 to group 1, and as many the other way; "
        "the model shows no sign of misspecification."
    )


def estimate_command(
    data_path: Path = typer.Argument(
        ..., metavar="DATA", help="Released microdata (.csv/.parquet)."
    ),
    swap_attribute: str = typer.Option(
        ..., "--swap-attribute", "-s", help="The column that was swapped."
    ),
    attributes: str | None = typer.Option(
        None, "--attributes", help="Comma-separated attributes for Algorithm 1 (default: all)."
    ),
    left: str | None = typer.Option(
        None, "--left", help="Comma-separated left attributes rL (Consensus)."
    ),
    right: str | None = typer.Option(
        None, "--right", help="Comma-separated right attributes rR (Consensus)."
    ),
    model: str = typer.Option("naive-bayes", "--model", help="naive-bayes or gaussian."),
    positive: str | None = typer.Option(
        None,
        "--positive",
        help="Comma-separated values of the swap attribute forming group 1 (needed when it "
        "takes more than two values).",
    ),
    drop_missing: bool = typer.Option(
        False, "--drop-missing", help="Drop records with a missing value in the columns used."
    ),
    reswap: str | None = typer.Option(
        None,
        "--reswap",
        help="Re-swap linearity diagnostic at these extra rates, e.g. 0,0.025,0.05,0.1.",
    ),
    threshold: float = typer.Option(
        0.01, "--imbalance-threshold", help="Imbalance above which the model is judged poor."
    ),
    permutations: int = typer.Option(
        199,
        "--permutations",
        help="Permutations of the swap attribute for the identifiability (association) test.",
    ),
    level: float = typer.Option(
        0.05, "--identification-level", help="Significance level of the identifiability tests."
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Random seed for --reswap and the permutations (default 0 for these)."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
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

    identification = {
        "permutations": permutations,
        "identification_level": level,
        "random_state": 0 if seed is None else seed,
    }
    with progress_bar("Algorithm 1", quiet=quiet) as callback:
        if left_cols is not None:
            result = consensus_swap_count(
                data,
                swap_attribute,
                left_cols,
                right_cols,
                model=model,
                positive=groups,
                progress=callback,
                **identification,
            )
            halves = [("left", result.left), ("right", result.right)]
        else:
            result = estimate_swap_count(
                data,
                swap_attribute,
                attr_cols,
                model=model,
                positive=groups,
                progress=callback,
                **identification,
            )
            halves = [("model", result)]
        linearity = None
        if reswap is not None:
            linearity = reswap_linearity(
                data,
                swap_attribute,
                left=left_cols,
                right=right_cols,
                attributes=attr_cols,
                extra_rates=parse_range(reswap, "--reswap"),
                model=model,
                positive=groups,
                random_state=seed,
            )
    console.print(result.summary(), highlight=False)
    checks = {name: imbalance_check(fit, threshold) for name, fit in halves}
    for name, check in checks.items():
        console.print(f"  imbalance check ({name}): {check.summary()}", highlight=False)
    if linearity is not None:
        console.print(linearity.summary(), highlight=False)

    n = result.n
    if not result.identified:
        reason = (
            result.identification_reason if left_cols is not None else result.identifiability.reason
        )
        verdict = _not_identified(reason)
    elif left_cols is not None:
        verdict = (
            f"Consensus estimate: about {100 * result.alpha / n:.2f}% of the records moved from "
            f"group 0 to group 1 (and as many back), i.e. a swap rate rho of about {result.rho:.4f}."
        )
        if any(c.large for c in checks.values()):
            verdict += (
                " The Algorithm 1 halves are misspecified (large imbalance), which is the case "
                "Consensus is designed for; its own assumption is that the left and right "
                "predictions are uncorrelated"
                + (" - check it with --reswap." if linearity is None else ".")
            )
    else:
        verdict = _verdict_gsc(result.alpha / n, result.standard_error / n, checks["model"].large)
    if linearity is not None and linearity.nonlinear:
        verdict += (
            " The re-swap diagnostic is NONLINEAR: the estimate does not track extra swaps, so "
            "treat it as unreliable and try another split of the attributes."
        )
    console.print(f"verdict: {verdict}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``sdckit swaprate`` to the command line."""
    group = typer.Typer(
        help="Estimate an undisclosed data swap rate (Kifer 2015).", no_args_is_help=True
    )
    group.command("estimate")(estimate_command)
    app.add_typer(group, name="swaprate")
