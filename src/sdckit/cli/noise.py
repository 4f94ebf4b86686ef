"""``sdckit noise additive|multiplicative``: noise keeping means and covariances (Oganian 2011)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from sdckit.cli._common import (
    DiagnosticsOption,
    IdOption,
    InputFile,
    MaskedOutput,
    NaValuesOption,
    QuietOption,
    SeedOption,
    WeightColumnOption,
    check_not_passthrough,
    check_outputs,
    column_roles,
    err_console,
    mask_and_write,
    parse_assignments,
    parse_list,
    parse_range,
    read_input,
    refuse_suspect_columns,
    refuse_text_in_numbers,
    renamed_option,
    with_option_groups,
)
from sdckit.errors import ParameterError
from sdckit.microdata.noise import additive_noise, multiplicative_noise

noise_app = typer.Typer(
    help="Noise that keeps means and covariances (Oganian 2011): additive or multiplicative.",
    no_args_is_help=True,
)

_VARIANCE_FACTOR = typer.Option(
    "--variance-factor",
    help="Oganian's k > 0: noise variance as a multiple of the data's (all zones).",
)
_K = typer.Option("--k", hidden=True, help="Deprecated: --variance-factor.")
_ZONE_VARIANCE_FACTOR = typer.Option(
    "--zone-variance-factor",
    help="k of one zone, ZONE=K (repeatable; overrides --variance-factor).",
)
_ZONE_K = typer.Option("--zone-k", hidden=True, help="Deprecated: --zone-variance-factor.")
_COLUMNS = typer.Option("--columns", help="Comma-separated numeric columns (default: all numeric).")
_ZONES = typer.Option("--zones", help="Column whose values define the masking zones.")
_THRESHOLDS = typer.Option(
    "--zone-thresholds",
    help="Zones by value, e.g. 15 or 5,15: zone i = largest value in (t_{i-1}, t_i].",
)
_STRUCTURAL = typer.Option(
    "--structural-zero",
    help="VAR=INDICATOR: VAR stays 0 where the INDICATOR column is true (repeatable).",
)
_WEIGHTS = typer.Option(
    "--sample-weights", help="Survey-weight column: weighted moments are preserved."
)
_COVARIANCE = typer.Option(
    "--covariance",
    help="Sigma the noise follows: sample, or shrinkage (Ledoit-Wolf; positive definite even "
    "for collinear columns, correlations shrink toward 0).",
)


@dataclass(frozen=True)
class _Level:
    """How much noise, on which columns: the first options of both commands."""

    variance_factor: Annotated[float, _VARIANCE_FACTOR] = 0.15
    zone_variance_factor: Annotated[list[str] | None, _ZONE_VARIANCE_FACTOR] = None
    k: Annotated[float | None, _K] = None
    zone_k: Annotated[list[str] | None, _ZONE_K] = None
    columns: Annotated[str | None, _COLUMNS] = None


@dataclass(frozen=True)
class _Run:
    """Zones, weights, the seed, the inputs' roles and the outputs: the last options of both."""

    zones: Annotated[str | None, _ZONES] = None
    zone_thresholds: Annotated[str | None, _THRESHOLDS] = None
    structural_zero: Annotated[list[str] | None, _STRUCTURAL] = None
    sample_weights: Annotated[str | None, _WEIGHTS] = None
    covariance: Annotated[str, _COVARIANCE] = "sample"
    seed: SeedOption = None
    diagnostics: DiagnosticsOption = None
    ids: IdOption = None
    weight_column: WeightColumnOption = None
    na_values: NaValuesOption = None
    quiet: QuietOption = False


def _masked_columns(
    data: Any,
    columns: str | None,
    ids: str | None,
    weight_column: str | None,
    sample_weights: str | None,
) -> list[str]:
    """The columns to add noise to: named ones, or every numeric column without a role.

    Ids and weight columns pass through; untold, columns that look like
    identifiers or codes are refused rather than perturbed.
    """

    roles = column_roles(data, ids=ids, weights=weight_column)
    if sample_weights is not None:
        if sample_weights not in data.columns:
            raise ParameterError(f"--sample-weights: unknown column {sample_weights!r}")
        roles.setdefault(sample_weights, "weight")
    named = parse_list(columns)
    check_not_passthrough(data, named, roles, "--columns")
    if named is not None:
        refuse_text_in_numbers(data, named)
        return named
    cols = [
        c
        for c in data.columns
        if c not in roles
        and pd.api.types.is_numeric_dtype(data[c])
        and not pd.api.types.is_bool_dtype(data[c])
    ]
    refuse_suspect_columns(
        data,
        cols,
        hint="Say what they are: --id or --weight-column to pass them through, or --columns "
        "to name the columns to perturb (codes are not quantities: leave them out).",
    )
    if not cols:
        raise ParameterError("no numeric columns to perturb: name them with --columns")
    return cols


def _structural(values: list[str] | None) -> dict[str, str] | None:
    out = {}
    for item in values or []:
        var, sep, indicator = item.partition("=")
        if not sep or not var or not indicator:
            raise ParameterError(f"--structural-zero expects VAR=INDICATOR, got {item!r}")
        out[var] = indicator
    return out or None


def _noise_params(
    data: pd.DataFrame, columns: list[str], k: float, zone_k: list[str] | None, run: _Run
) -> dict[str, Any]:
    """The parameters both noise maskers take, from the options both commands share."""
    limits = parse_range(run.zone_thresholds, "--zone-thresholds") if run.zone_thresholds else None
    zones = run.zones
    params: dict[str, Any] = {
        "columns": columns,
        "variance_factor": k,
        "zones": zones,
        "zone_thresholds": limits,
        "structural_zeros": _structural(run.structural_zero),
        "sample_weights": run.sample_weights,
        "random_state": run.seed,
        "covariance": run.covariance,
    }
    if not zone_k:
        return params
    given = parse_assignments(zone_k, "--zone-variance-factor")
    if limits is not None:
        labels: list = list(range(len(limits) + 1))
    elif zones is not None:
        if zones not in data.columns:
            raise ParameterError(f"--zones: unknown column {zones!r}")
        labels = list(pd.unique(data[zones].dropna()))
    else:
        raise ParameterError("--zone-variance-factor needs --zones or --zone-thresholds")
    by_text = {str(label): label for label in labels}
    unknown = [z for z in given if z not in by_text]
    if unknown:
        raise ParameterError(
            f"--zone-variance-factor names unknown zone(s) {unknown}; zones are {list(by_text)}"
        )
    params["variance_factor"] = {label: given.get(str(label), k) for label in labels}
    return params


def _renamed(level: _Level) -> tuple[float, list[str] | None]:
    """--variance-factor and --zone-variance-factor, or their deprecated spellings --k, --zone-k."""
    factor = renamed_option(
        level.variance_factor, level.k, default=0.15, new_flag="--variance-factor", old_flag="--k"
    )
    per_zone = level.zone_variance_factor
    if level.zone_k:
        per_zone = renamed_option(
            per_zone,
            level.zone_k,
            default=per_zone or None,
            new_flag="--zone-variance-factor",
            old_flag="--zone-k",
        )
    return factor, per_zone


@noise_app.command("additive")
@with_option_groups
def additive_command(
    input: InputFile,
    output: MaskedOutput,
    level: _Level = _Level(),
    run: _Run = _Run(),
) -> None:
    """Additive correlated noise: X_m = mean + ((X - mean) + E)/sqrt(1+k), E ~ N(0, k Sigma)."""
    _mask("additive noise (zones)", additive_noise, input, output, level, run, dict)


def _mask(
    label: str,
    masker: Any,
    input: Path,
    output: Path,
    level: _Level,
    run: _Run,
    specific: Callable[[], dict[str, Any]],
) -> None:
    """Read, mask and write (:func:`mask_and_write`); the warnings are printed even with --quiet.

    ``specific()`` gives the masker's own parameters, once the shared ones are checked.
    """
    factor, per_zone = _renamed(level)
    check_outputs(output, run.diagnostics, inputs=[input])
    data = read_input(input, na_values=run.na_values, quiet=run.quiet)
    cols = _masked_columns(data, level.columns, run.ids, run.weight_column, run.sample_weights)
    params = _noise_params(data, cols, factor, per_zone, run) | specific()
    result = mask_and_write(label, masker, data, output, run.diagnostics, quiet=run.quiet, **params)
    if run.quiet:
        for line in result.warnings:
            err_console.print(f"WARNING: {line}", highlight=False)


def _totals(mode: str, given: list[str] | None) -> Any:
    if given:
        out = {}
        for item in given:
            total, sep, rest = item.partition("=")
            parts = [p.strip() for p in rest.split("+")]
            if not sep or not total.strip() or not all(parts):
                raise ParameterError(f"--total expects TOTAL=PART+PART[+...], got {item!r}")
            out[total.strip()] = parts
        return out
    if mode not in ("detect", "none"):
        raise ParameterError(f"--totals must be 'detect' or 'none', got {mode!r}")
    return "detect" if mode == "detect" else None


@noise_app.command("multiplicative")
@with_option_groups
def multiplicative_command(
    input: InputFile,
    output: MaskedOutput,
    level: _Level = _Level(),
    variant: Annotated[
        str, typer.Option("--variant", help="zscore (eq. 21) or plain (eqs. 5-9).")
    ] = "zscore",
    mixed_sign: Annotated[
        str,
        typer.Option(
            "--mixed-sign",
            help="Noise for columns of both signs: shift (by |min|), magnitude (follows |value|) "
            "or auto (shift when its noise covariance is valid).",
        ),
    ] = "auto",
    constraint: Annotated[
        list[str] | None,
        typer.Option(
            "--constraint",
            help="Inequality chain kept in every record, e.g. 'gross>=net>=tax' (repeatable).",
        ),
    ] = None,
    totals: Annotated[
        str,
        typer.Option(
            "--totals",
            help="detect: columns equal to a sum of others are rebuilt from the masked parts; none.",
        ),
    ] = "detect",
    total: Annotated[
        list[str] | None,
        typer.Option(
            "--total",
            help="Declared identity TOTAL=PART+PART, rebuilt from the masked parts (repeatable).",
        ),
    ] = None,
    noise_covariance: Annotated[
        str,
        typer.Option(
            "--noise-covariance",
            help="auto (repair, refused beyond --repair-tolerance), nearest (accept any repair), "
            "exact (never repair).",
        ),
    ] = "auto",
    repair_tolerance: Annotated[
        float,
        typer.Option(
            "--repair-tolerance",
            help="Largest accepted deviation of a released variance/covariance ratio after a repair.",
        ),
    ] = 0.05,
    run: _Run = _Run(),
) -> None:
    """Multiplicative noise keeping positivity, inequalities, means and covariances."""

    def specific() -> dict[str, Any]:
        chains = [[c.strip() for c in re.split(r">=|>", item)] for item in constraint or []]
        for chain, item in zip(chains, constraint or [], strict=True):
            if len(chain) < 2 or not all(chain):
                raise ParameterError(f"--constraint expects A>=B[>=C...], got {item!r}")
        return {
            "variant": variant,
            "mixed_sign": mixed_sign,
            "constraints": chains or None,
            "totals": _totals(totals, total),
            "noise_covariance": noise_covariance,
            "repair_tolerance": repair_tolerance,
        }

    label = "multiplicative noise (zones)"
    _mask(label, multiplicative_noise, input, output, level, run, specific)


def register(app: typer.Typer) -> None:
    """Add ``sdckit noise additive|multiplicative`` to the command line."""
    app.add_typer(noise_app, name="noise")
