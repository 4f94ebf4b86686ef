"""Risk and utility of a project's state, on the fast paths of :mod:`sdckit.assess`.

Risk is the key-combination group-by of :func:`sdckit.assess.key_risk` (one
pass over the key columns, whatever the number of records); utility is the
per-column change table every masking method already produces
(:func:`sdckit.microdata.base.column_changes`) and, for numeric columns, the
moment and correlation comparisons of :func:`sdckit.assess.compare_moments`
and :func:`sdckit.assess.compare_correlations`. No neighbour search runs on
each step; the full assessment (:func:`sdckit.assess.assess`) is the export's
HTML report.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.assess import compare_correlations, compare_moments, key_risk
from sdckit.errors import SDCError
from sdckit.microdata.base import column_changes
from sdckit.schema import Kind, Schema

if TYPE_CHECKING:
    from sdckit.studio.project import Project

__all__ = ["state_metrics"]


def plain_number(value: Any) -> Any:
    """A figure as JSON holds it: numpy scalars as Python numbers, NaN and infinities as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def state_metrics(project: Project, data: pd.DataFrame) -> dict[str, Any]:
    """Risk of ``data`` and its utility against the project's original.

    Parameters
    ----------
    project : Project
        Gives the original, the kinds and the roles.
    data : DataFrame
        A state of the project.

    Returns
    -------
    dict
        ``{"risk": {name: number}, "utility": {name: number},
        "columns": {column: {changed_share, mean_ratio, variance_ratio}},
        "errors": {measure: message}}``.
    """
    kinds, roles = project.schema_overrides()
    schema = Schema.infer(data, kinds=kinds, roles=roles)
    keys = project.columns_with("key")
    sensitive = project.columns_with("sensitive")
    weight = project.columns_with("weight")
    risk: dict[str, Any] = {}
    utility: dict[str, Any] = {}
    errors: dict[str, str] = {}
    if keys:
        try:
            found = key_risk(
                data,
                keys,
                sensitive=sensitive[0] if sensitive else None,
                schema=schema,
                weight=weight[0] if weight else None,
            )
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
    published = [c for c in data.columns if project.roles.get(str(c)) not in ("id", "drop")]
    with warnings.catch_warnings():
        # A recoded numeric column holds labels: its mean is undefined, and said so by NaN.
        warnings.simplefilter("ignore", RuntimeWarning)
        table = column_changes(
            project.original,
            data,
            published,
            categorical=[c for c in published if not pd.api.types.is_numeric_dtype(data[c].dtype)],
        )
    changed = table["changed_share"].to_numpy(dtype=float)
    utility["cells_changed_share"] = float(np.mean(changed)) if len(changed) else 0.0
    numeric = [
        c
        for c in published
        if schema[c].kind is Kind.NUMERIC
        and project.roles.get(str(c)) not in ("weight", "pass")
        and pd.api.types.is_numeric_dtype(project.original[c].dtype)
        and pd.api.types.is_numeric_dtype(data[c].dtype)
    ]
    if len(numeric) >= 2:
        for name, measure in (("moments", compare_moments), ("correlations", compare_correlations)):
            try:
                result = measure(project.original, data, columns=numeric, schema=schema)
                utility.update({k: plain_number(v) for k, v in result.headline().items()})
            except SDCError as exc:
                errors[name] = str(exc)
    columns = {
        str(col): {
            key: plain_number(row[key]) for key in ("changed_share", "mean_ratio", "variance_ratio")
        }
        for col, row in table.iterrows()
    }
    return {
        "risk": {k: plain_number(v) for k, v in risk.items()},
        "utility": utility,
        "columns": columns,
        "errors": errors,
    }
