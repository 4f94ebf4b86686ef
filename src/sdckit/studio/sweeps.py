"""The R-U map of a method over a parameter grid, on a project's current state.

:func:`sdckit.assess.sweep` masks the state under every setting and assesses
each release against the state; the studio records the seed each setting
was masked with, so a point chosen on the map becomes a step that
reproduces exactly the release that was assessed (``POST /api/apply`` with
the point's ``params``, ``seed`` and ``parent``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.assess import expand_grid, sweep
from sdckit.errors import ParameterError
from sdckit.microdata.base import MaskResult, get_masker
from sdckit.schema import Kind, Schema
from sdckit.studio.metrics import plain_number
from sdckit.studio.project import Project
from sdckit.studio.recipe import check_params

__all__ = ["run_sweep"]

#: Settings a studio sweep may hold (each is a masking run and a full assessment).
MAX_SETTINGS = 25


def run_sweep(
    project: Project,
    method: str,
    grid: Mapping[str, Sequence[Any]],
    *,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Sweep ``method`` over ``grid`` on the current state (:func:`sdckit.assess.sweep`).

    Parameters
    ----------
    project : Project
        Its current state is masked; its key columns are the sweep's keys.
    method : str
        A registered masking method.
    grid : mapping
        ``{parameter: [values]}``, every combination (at most 25 settings).
    params : mapping, optional
        Parameters held fixed.
    seed : int, default 0
        Seeds the sweep.
    progress : callable, optional
        ``progress(done, total)`` after each setting.

    Returns
    -------
    dict
        ``{"method", "parent", "parameters", "risk_figures", "utility_figures",
        "points": [{"setting", "params", "seed", "figures"}]}``; a point's
        ``params`` and ``seed`` applied to ``parent`` give the release assessed.
    """
    fixed = check_params(method, params or {})
    if not grid:
        raise ParameterError("grid: give at least one parameter and its values")
    for name, values in grid.items():
        if name in fixed:
            raise ParameterError(f"{name}: in the grid and held fixed")
        if not isinstance(values, (list, tuple)) or not values:
            raise ParameterError(f"{name}: give a list of values")
        for value in values:
            check_params(method, {**fixed, name: value})
    n_settings = int(np.prod([len(v) for v in grid.values()]))
    if n_settings > MAX_SETTINGS:
        raise ParameterError(f"grid: {n_settings} settings; at most {MAX_SETTINGS}")
    parent = project.current
    data = project.state(parent)
    kinds, roles = project.schema_overrides()
    present = {str(c) for c in data.columns}
    schema = Schema.infer(
        data,
        kinds={c: k for c, k in kinds.items() if c in present},
        roles={c: r for c, r in roles.items() if c in present},
    )
    keys = [c for c in project.columns_with("key") if schema[c].kind is not Kind.NUMERIC]
    masker = get_masker(method)
    seeds: list[int] = []

    def recording(frame: pd.DataFrame, **kwargs: Any) -> MaskResult:
        seeds.append(int(kwargs["random_state"]))
        return masker(frame, **kwargs)

    recording.__name__ = method
    # The assessment looks at what the method changes (and the keys), not the whole file.
    named = fixed.get("columns")
    assessed = list(dict.fromkeys([*named, *keys])) if isinstance(named, list) else None
    found = sweep(
        recording,
        dict(grid),
        data,
        fixed=fixed,
        columns=assessed,
        keys=keys or None,
        schema=schema,
        random_state=seed,
        progress=progress,
    )
    first = found.assessments[0] if found.assessments else None
    risk = [k for m in (first.risk.measures.values() if first else []) for k in m.headline()]
    utility = [k for m in (first.utility.measures.values() if first else []) for k in m.headline()]
    points = []
    settings = expand_grid(dict(grid))
    for (_, row), setting, run_seed in zip(found.table.iterrows(), settings, seeds, strict=True):
        points.append(
            {
                "setting": str(row["setting"]),
                "params": {**fixed, **setting},
                "seed": run_seed,
                "figures": {k: plain_number(row[k]) for k in found.figures},
            }
        )
    return {
        "method": method,
        "parent": parent,
        "parameters": found.parameters,
        "risk_figures": risk,
        "utility_figures": utility,
        "points": points,
    }
