"""Risk and utility of a project's state, on the fast paths of :mod:`sdckit.assess`.

Risk is the key-combination group-by of :func:`sdckit.assess.key_risk` (one
pass over the key columns, whatever the number of records), a blank key
value matching any value as in the methods that blank keys
(:data:`sdckit._keys.SUPPRESSED_MISSING`, one rule for both); with a
household column, the household risk of :func:`sdckit.assess.individual_risk`;
SUDA (:func:`sdckit.assess.suda`) when the steward asks for it. Utility is the
per-column change table every masking method already produces
(:func:`sdckit.microdata.base.column_changes`) and, for numeric columns, the
moment and correlation comparisons of :func:`sdckit.assess.compare_moments`
and :func:`sdckit.assess.compare_correlations`. No neighbour search runs on
each step; the full assessment (:func:`sdckit.assess.assess`) is the export's
HTML report.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit._docs import shared_doc
from sdckit._keys import SUPPRESSED_MISSING
from sdckit.assess import compare_correlations, compare_moments, individual_risk, key_risk, suda
from sdckit.errors import SDCError
from sdckit.microdata.base import changed_share, column_changes
from sdckit.schema import Kind, Schema
from sdckit.studio.recipe import state_schema

if TYPE_CHECKING:
    from sdckit.studio.project import Project

__all__ = ["key_figures", "state_metrics", "suda_figures"]

#: The measures of the risk section, as ``errors`` names them.
RISK_MEASURES = ("key_risk", "household_risk", "suda")


def plain_number(value: Any) -> Any:
    """A figure as JSON holds it: numpy scalars as Python numbers, NaN and infinities as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _changed_columns(
    data: pd.DataFrame,
    parent: pd.DataFrame | None,
    columns: list[str],
    known: Mapping[str, float] | None = None,
) -> list[str]:
    """The columns whose values differ from the parent state's (all without a parent).

    ``known`` gives the changed share of the columns the method masked, from
    its own ``column_changes`` against the same parent. A method leaves the
    other columns as they were: ``Series.equals`` (one pass in C, pyarrow's
    for text) settles those; :func:`changed_share` is asked only when the
    values are not identical (3 and 3.0 are the same value to it, not to
    ``equals``).
    """
    if parent is None:
        return list(columns)
    known = known or {}

    def changed(c: str) -> bool:
        if c not in parent.columns:
            return True
        if c in known:
            return bool(known[c] > 0)
        return not parent[c].equals(data[c]) and changed_share(parent[c], data[c]) > 0

    return [c for c in columns if changed(c)]


_STATE_DOC = {
    "state_keys": """
data : DataFrame
    A state of the project.
keys : list of str
    The key columns.
schema : Schema
    The state's schema.
""",
}


@shared_doc(_STATE_DOC)
def key_figures(
    data: pd.DataFrame,
    keys: list[str],
    *,
    schema: Schema,
    sensitive: str | None = None,
    weight: str | None = None,
    household: str | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The risk panel's figures of one state: key counts and, with households, household risk.

    A blank key value matches any value (:data:`sdckit._keys.SUPPRESSED_MISSING`,
    the convention of local suppression and k-anonymity; Hundepool et al.
    (2012), §3.4.2), so a state those methods made k-anonymous is shown
    k-anonymous. With a household column, the individual risk of Benedetti &
    Franconi (1998) and the household risk 1 - prod (1 - r_i) over each
    household's members (Hundepool et al. (2012), §3.3.6) of
    :func:`sdckit.assess.individual_risk` are added.

    Parameters
    ----------
    {{state_keys}}
    sensitive : str, optional
        The sensitive column for l-diversity.
    weight : str, optional
        The sampling weights.
    household : str, optional
        The household identifiers.

    Returns
    -------
    tuple of dict
        ``(figures, errors)``: ``{name: number}`` and ``{measure: message}``
        for a measure that could not be computed.
    """
    risk: dict[str, Any] = {}
    errors: dict[str, str] = {}
    counted: dict[str, Any] = {"schema": schema, "weight": weight, "missing": SUPPRESSED_MISSING}
    try:
        found = key_risk(data, keys, sensitive=sensitive, **counted)
        risk["key_combinations"] = found.n_combinations
        risk["sample_uniques"] = found.sample_uniques
        risk["k_anonymity"] = found.k_anonymity
        for k, count in found.violations.items():
            risk[f"records_below_k{k}"] = count
        risk["expected_reidentifications"] = found.expected_reidentifications
        if found.l_diversity is not None:
            risk["l_diversity"] = found.l_diversity
    except SDCError as exc:
        errors["key_risk"] = str(exc)
    if household is not None:
        try:
            individual = individual_risk(data, keys, household=household, **counted)
            risk["global_risk"] = individual.global_risk
            risk["household_risk"] = individual.household_global_risk
            risk["household_expected_reidentifications"] = (
                individual.household_expected_reidentifications
            )
        except SDCError as exc:
            errors["household_risk"] = str(exc)
    return {k: plain_number(v) for k, v in risk.items()}, errors


@shared_doc(_STATE_DOC)
def suda_figures(
    data: pd.DataFrame,
    keys: list[str],
    *,
    schema: Schema,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """SUDA figures of one state (Elliot, Manning & Ford 2002), asked for from the panel.

    :func:`sdckit.assess.suda` over every key (M = p); a missing key value is
    a value of its own there (see its module), unlike the key counts.

    Parameters
    ----------
    {{state_keys}}
    progress : callable, optional
        ``progress(done, total)`` over the subsets of keys counted.

    Returns
    -------
    dict
        ``suda_special_uniques`` (records with a minimal sample unique of at
        most two keys), ``suda_records_at_risk`` (records with any), the
        highest score and the file's DIS probability.
    """
    found = suda(data, keys, schema=schema, progress=progress)
    return {
        "suda_special_uniques": found.special_uniques,
        "suda_records_at_risk": int((found.scores > 0).sum()),
        "suda_score_max": plain_number(float(found.scores.max())),
        "dis_suda": plain_number(found.dis),
    }


def state_metrics(
    project: Project,
    data: pd.DataFrame,
    *,
    parent: pd.DataFrame | None = None,
    parent_metrics: Mapping[str, Any] | None = None,
    known_columns: Mapping[str, Mapping[str, Any]] | None = None,
    step_changes: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """Risk of ``data`` and its utility against the project's original.

    Given the parent state and its figures, only what a step changed is
    recomputed: the key risk when a key, sensitive, weight or household column changed,
    the moments and correlations when a numeric column did, and the
    per-column figures of the changed columns; the rest is the parent's,
    which are the same numbers. Moments and correlations are given once a
    numeric column differs from the original (against itself there is
    nothing to compare).

    Parameters
    ----------
    project : Project
        Gives the original, the kinds and the roles.
    data : DataFrame
        A state of the project.
    parent : DataFrame, optional
        The state the step was applied to.
    parent_metrics : mapping, optional
        Its figures (from this function, under the same roles).
    known_columns : mapping, optional
        The ``"columns"`` figures of this same ``data`` computed before,
        under other roles (they depend on the values only): reused.
    step_changes : DataFrame, optional
        The ``column_changes`` of the method that made ``data`` from
        ``parent`` (:attr:`sdckit.microdata.MaskResult.column_changes`): which
        of its masked columns changed is read there, not compared again.

    Returns
    -------
    dict
        ``{"risk": {name: number}, "utility": {name: number},
        "columns": {column: {changed_share, mean_ratio, variance_ratio}},
        "errors": {measure: message}}``.
    """
    if parent is None or parent_metrics is None:
        parent, parent_metrics = None, {}
    kinds, roles = project.schema_overrides()
    schema = state_schema(data, kinds, roles)
    keys = project.columns_with("key")
    sensitive = project.columns_with("sensitive")
    weight = project.columns_with("weight")
    published = [c for c in data.columns if project.roles.get(str(c)) not in ("id", "drop")]
    step_shares = None
    if parent is not None and step_changes is not None and "changed_share" in step_changes:
        step_shares = {str(c): float(v) for c, v in step_changes["changed_share"].items()}
    changed = set(_changed_columns(data, parent, [str(c) for c in data.columns], step_shares))
    old_errors = dict(parent_metrics.get("errors", {}))
    risk: dict[str, Any] = {}
    utility: dict[str, Any] = {}
    errors: dict[str, str] = {}
    household = project.columns_with("household")
    if keys and not changed & {*keys, *sensitive[:1], *weight[:1], *household[:1]}:
        risk = dict(parent_metrics.get("risk", {}))
        errors.update({k: v for k, v in old_errors.items() if k in RISK_MEASURES})
    elif keys:
        risk, risk_errors = key_figures(
            data,
            keys,
            schema=schema,
            sensitive=sensitive[0] if sensitive else None,
            weight=weight[0] if weight else None,
            household=household[0] if household else None,
        )
        errors.update(risk_errors)
    same_data = dict(known_columns or {})  # figures of these very values
    known = {**parent_metrics.get("columns", {}), **same_data}
    redo = [c for c in published if c not in same_data and (c in changed or c not in known)]
    columns: dict[str, dict[str, Any]] = {}
    if data is project.original:
        # The original against itself: no cell changed, and a text column has no mean to
        # compare (column_changes says NaN); only the numbers' ratios need their pass.
        for c in [c for c in redo if not pd.api.types.is_numeric_dtype(data[c].dtype)]:
            columns[str(c)] = {"changed_share": 0.0, "mean_ratio": None, "variance_ratio": None}
        redo = [c for c in redo if str(c) not in columns]
    with warnings.catch_warnings():
        # A recoded numeric column holds labels: its mean is undefined, and said so by NaN.
        warnings.simplefilter("ignore", RuntimeWarning)
        table = column_changes(
            project.original,
            data,
            redo,
            selection_share=None,  # the panel shows no expected share: not computed
            categorical=[c for c in redo if not pd.api.types.is_numeric_dtype(data[c].dtype)],
        )
    for col, row in table.iterrows():
        columns[str(col)] = {
            key: plain_number(row[key]) for key in ("changed_share", "mean_ratio", "variance_ratio")
        }
    columns = {
        str(c): columns[str(c)] if str(c) in columns else dict(known[str(c)]) for c in published
    }
    shares = [v["changed_share"] for v in columns.values()]
    utility["cells_changed_share"] = float(np.mean(shares)) if shares else 0.0
    numeric = [
        c
        for c in published
        if schema[c].kind is Kind.NUMERIC
        and project.roles.get(str(c)) not in ("weight", "pass")
        and pd.api.types.is_numeric_dtype(project.original[c].dtype)
        and pd.api.types.is_numeric_dtype(data[c].dtype)
    ]
    # Moments and correlations compare the numbers with the original's: while no numeric
    # column differs from the original (the original itself, a step on the keys only) there
    # is nothing to compare, and the two passes over every number are not made.
    moved = any(columns[str(c)]["changed_share"] for c in numeric)
    if moved and parent is not None and not changed & set(numeric):
        kept = {
            k: v for k, v in parent_metrics.get("utility", {}).items() if k != "cells_changed_share"
        }
        utility.update(kept)
        errors.update({k: v for k, v in old_errors.items() if k in ("moments", "correlations")})
    elif moved and len(numeric) >= 2:
        for name, measure in (("moments", compare_moments), ("correlations", compare_correlations)):
            try:
                result = measure(project.original, data, columns=numeric, schema=schema)
                utility.update({k: plain_number(v) for k, v in result.headline().items()})
            except SDCError as exc:
                errors[name] = str(exc)
    return {
        "risk": {k: plain_number(v) for k, v in risk.items()},
        "utility": utility,
        "columns": columns,
        "errors": errors,
    }
