"""``sweep``: run a masking method over a grid of tuning parameters and collect utility and risk.

Matloff & Tendick (2015), "Selection of Tuning Parameters": the
data steward tunes the method by checking, for each candidate setting, the
analyses the data are meant for and the records at risk. Perry, Matloff & Tendick
(2022), Section 8.3, does exactly this for RWN on the
bodyfat data with k = 5, q = 1 and eps from 0 to 1.2. Collected per setting,
the figures trace the risk-utility (R-U) map of Duncan et al.: a point per
setting, risk on one axis, utility loss on the other.

Any masking method that follows :mod:`sdckit.microdata.base` (a registered
name, or a function returning a MaskResult) can be swept.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit._pairs import resolve_schema
from sdckit._results import FrozenResult
from sdckit._validation import RandomState, check_dataframe, check_int, check_random_state
from sdckit.assess.assessment import Assessment, assess
from sdckit.errors import ParameterError
from sdckit.microdata.base import Masker, mask
from sdckit.schema import Schema

__all__ = ["SweepResult", "expand_grid", "sweep"]

#: Figures where larger means more risk, used to pick the safest setting.
RISK_FIGURES = ("linkage_rate", "interval_disclosure")


def expand_grid(grid: Mapping[str, Iterable[Any]] | Sequence[Mapping[str, Any]]) -> list[dict]:
    """``{"eps": [0.1, 0.2], "k": [5]}`` -> every combination; a list of dicts is kept as is.

    Parameters
    ----------
    grid : mapping or sequence of mappings
        ``{parameter: [values, ...]}`` (a single value counts as one), or an
        explicit list of settings.

    Returns
    -------
    list of dict
        One dict of parameters per setting.
    """
    if isinstance(grid, Mapping):
        if not grid:
            raise ParameterError("grid is empty: give {parameter: [values, ...]}")
        names = list(grid)
        values = []
        for name in names:
            vals = grid[name]
            if isinstance(vals, (str, bytes)) or not isinstance(vals, Iterable):
                vals = [vals]
            vals = list(vals)
            if not vals:
                raise ParameterError(f"grid: parameter {name!r} has no values")
            values.append(vals)
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]
    settings = [dict(s) for s in grid]
    if not settings:
        raise ParameterError("grid is empty: give at least one setting")
    for i, s in enumerate(settings):
        if not isinstance(s, dict):
            raise ParameterError(f"grid: setting {i} is not a mapping of parameters")
    return settings


def _label(setting: Mapping[str, Any]) -> str:
    def fmt(v: Any) -> str:
        return f"{v:g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{k}={fmt(v)}" for k, v in setting.items())


@dataclass(frozen=True)
class SweepResult(FrozenResult):
    """Utility and risk figures of a masking method over a parameter grid.

    Attributes
    ----------
    method : str
    parameters : list of str
        The parameters that vary over the grid.
    table : DataFrame
        One row per setting and replication: ``setting`` (a label),
        ``replication``, the parameter values, then every figure of
        :meth:`Assessment.headline`.
    fixed : mapping
        Parameters held fixed for every run.
    baseline : dict
        Figures of the original data itself (e.g. ``pc1_share_original``),
        the blue lines of Perry, Matloff & Tendick's (2022) figures.
    assessments : tuple of Assessment
        The assessment of each setting's first replication (for figures).
    """

    method: str
    parameters: list[str]
    table: pd.DataFrame
    fixed: Mapping[str, Any] = field(default_factory=dict)
    baseline: dict[str, float] = field(default_factory=dict)
    assessments: tuple[Assessment, ...] = ()

    @property
    def figures(self) -> list[str]:
        """Names of the figures collected."""
        skip = {"setting", "replication", *self.parameters}
        return [c for c in self.table.columns if c not in skip]

    def by_setting(self) -> pd.DataFrame:
        """Mean of every figure over the replications, one row per setting (grid order)."""
        grouped = self.table.groupby("setting", sort=False)
        means = grouped[self.figures].mean()
        params = grouped[self.parameters].first()
        out = pd.concat([params, means], axis=1)
        out.insert(len(self.parameters), "replications", grouped.size())
        return out

    def recommend(self, *, max_correlation_difference: float = 0.05) -> dict[str, Any] | None:
        """The lowest-risk setting whose mean |correlation difference| stays within a bound.

        Among the settings whose mean absolute correlation difference is at
        most ``max_correlation_difference``, the one with the lowest record-
        linkage rate (ties: lowest interval disclosure). None when no setting
        meets the bound (or no correlation could be measured).
        """
        table = self.by_setting()
        if "corr_mean_abs_diff" not in table:
            return None
        ok = table[table["corr_mean_abs_diff"] <= max_correlation_difference]
        if ok.empty:
            return None
        order = [c for c in RISK_FIGURES if c in ok]
        best = ok.sort_values(order, kind="stable").iloc[0]
        return {
            "setting": best.name,
            **{p: best[p] for p in self.parameters},
            "linkage_rate": float(best["linkage_rate"]),
            "corr_mean_abs_diff": float(best["corr_mean_abs_diff"]),
        }

    def summary(self) -> str:
        table = self.by_setting()
        short = {
            "corr_mean_abs_diff": "corr diff",
            "pc1_share_masked": "PC1 share",
            "cooks_max_masked": "max Cook",
            "mahalanobis_max_masked": "max Mahal",
            "linkage_rate": "linkage",
            "interval_disclosure": "interval",
        }
        shown = [c for c in short if c in table]
        width = max([len(str(v)) for v in table.index] + [7]) + 2
        fixed = ", ".join(f"{k}={v!r}" for k, v in self.fixed.items())
        lines = [
            f"sweep of {self.method} over {', '.join(self.parameters)} "
            f"({len(table)} settings{'; fixed ' + fixed if fixed else ''})",
            f"{'setting':<{width}}" + "".join(f"{short[c]:>11}" for c in shown),
        ]
        for label, row in table.iterrows():
            lines.append(f"{label:<{width}}" + "".join(f"{row[c]:>11.4g}" for c in shown))
        base = {k: v for k, v in self.baseline.items() if not math.isnan(v)}
        if base:
            lines.append("original data: " + ", ".join(f"{k} {v:.4g}" for k, v in base.items()))
        lines.append(self.recommendation())
        return "\n".join(lines)

    def recommendation(self, *, max_correlation_difference: float = 0.05) -> str:
        """The recommended setting in a sentence (the same in the terminal and the report).

        Parameters
        ----------
        max_correlation_difference : float, default 0.05
            The bound passed to :meth:`recommend`.

        Returns
        -------
        str
            The setting :meth:`recommend` picks and why; when it picks none, why not
            and the smallest mean correlation difference any setting reached.
        """
        bound = max_correlation_difference
        rec = self.recommend(max_correlation_difference=bound)
        table = self.by_setting()
        if rec is None and "corr_mean_abs_diff" not in table:
            return (
                "No recommended setting: the correlations could not be compared (fewer than "
                "two numeric variables), so utility has no common measure here."
            )
        if rec is None:
            diffs = table["corr_mean_abs_diff"].dropna()
            closest = (
                f" (the smallest is {diffs.min():.3g}, at {diffs.idxmin()})"
                if not diffs.empty
                else ""
            )
            return (
                f"No setting keeps the mean absolute correlation difference within {bound:g}"
                f"{closest}; consider smaller neighbourhoods, a lower modification "
                "probability, or a looser bound."
            )
        return (
            f"Recommended setting: {rec['setting']}. It has the lowest record-linkage "
            f"re-identification rate ({rec['linkage_rate']:.1%}) among the settings whose "
            f"correlations move by at most {bound:g} on average ({rec['corr_mean_abs_diff']:.3f})."
        )


_BASELINE = (
    "pc1_share_original",
    "cooks_max_original",
    "mahalanobis_max_original",
    "r2_original",
    "dcr_median_original",
    "multi_information_original",
)


def sweep(
    method: str | Masker,
    grid: Mapping[str, Iterable[Any]] | Sequence[Mapping[str, Any]],
    data: pd.DataFrame,
    *,
    n_replications: int = 1,
    fixed: Mapping[str, Any] | None = None,
    columns: Iterable[str] | None = None,
    response: str | None = None,
    predictors: Iterable[str] | None = None,
    keys: Iterable[str] | None = None,
    sensitive: str | None = None,
    linkage_columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    scale: str | None = "minmax",
    n_jobs: int | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> SweepResult:
    """Mask ``data`` with ``method`` under every setting of ``grid``, and assess each release.

    Parameters
    ----------
    method : str or callable
        A registered masking method (e.g. ``"rwn"``) or a function following
        the masking interface of :mod:`sdckit.microdata.base`.
    grid : mapping or sequence of mappings
        ``{"eps": [0, 0.1, ...], "k": [5]}`` (every combination), or an
        explicit list of settings.
    data : DataFrame
        The original microdata (never modified).
    n_replications : int, default 1
        Masked releases per setting (each with its own seed); figures are
        averaged by :meth:`SweepResult.by_setting`.
    fixed : mapping, optional
        Parameters passed to every run (e.g. ``{"q": 1.0}``); a grid
        parameter may not also be fixed. ``random_state`` is set per run.
    columns, response, predictors, keys, sensitive, linkage_columns, schema, scale
        Passed to :func:`sdckit.assess.assess`.
    n_jobs : int, optional
        Parallel jobs of each assessment's neighbour searches (see
        :func:`sdckit.neighbors.resolve_n_jobs`).
    random_state : None, int or Generator
        Seeds every run: same seed, same sweep.
    progress : callable, optional
        ``progress(done, total)`` after each run.

    Returns
    -------
    SweepResult
        Every run's figures; :meth:`SweepResult.by_setting` averages them.
    """
    check_dataframe(data, min_rows=2)
    settings = expand_grid(grid)
    n_replications = check_int(n_replications, "n_replications", minimum=1)
    fixed = dict(fixed or {})
    if "random_state" in fixed:
        raise ParameterError("fixed: random_state is set per run from the sweep's random_state")
    names = list(dict.fromkeys(k for s in settings for k in s))
    clash = [k for k in names if k in fixed]
    if clash:
        raise ParameterError(f"parameter(s) {clash} are both in the grid and fixed")
    if "random_state" in names:
        raise ParameterError("grid: random_state cannot be a grid parameter; use n_replications")
    unknown = [k for k in [*names, *fixed] if not _accepts(method, k)]
    if unknown:
        raise ParameterError(
            f"the masking method {_method_label(method)!r} takes no parameter(s) {unknown}; "
            f"its parameters are {_parameter_names(method)}"
        )
    rng = check_random_state(random_state)
    schema = resolve_schema(data, schema)
    method_name = method if isinstance(method, str) else getattr(method, "__name__", "masker")
    if "schema" not in fixed and _accepts(method, "schema"):
        fixed["schema"] = schema

    rows: list[dict[str, Any]] = []
    firsts: list[Assessment] = []
    baseline: dict[str, float] = {}
    total = len(settings) * n_replications
    done = 0
    for setting in settings:
        label = _label(setting)
        for rep in range(n_replications):
            seed = int(rng.integers(0, 2**31 - 1))
            result = mask(method, data, **fixed, **setting, random_state=seed)
            assessment = assess(
                data,
                result,
                columns=columns,
                response=response,
                predictors=predictors,
                keys=keys,
                sensitive=sensitive,
                linkage_columns=linkage_columns,
                schema=schema,
                scale=scale,
                n_jobs=n_jobs,
            )
            figures = assessment.headline()
            if not baseline:
                baseline = {k: figures[k] for k in _BASELINE if k in figures}
            rows.append({"setting": label, "replication": rep, **_plain(setting, names), **figures})
            if rep == 0:
                firsts.append(assessment)
            done += 1
            if progress is not None:
                progress(done, total)
    table = pd.DataFrame(rows)
    return SweepResult(
        method=method_name,
        parameters=names,
        table=table,
        fixed={k: v for k, v in fixed.items() if k != "schema"},
        baseline=baseline,
        assessments=tuple(firsts),
    )


def _plain(setting: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """Parameter values for the table: numbers stay numbers, anything else becomes text."""
    out = {}
    for name in names:
        value = setting.get(name, np.nan)
        out[name] = value if isinstance(value, numbers.Number) or value is None else str(value)
    return out


def _accepts(method: str | Masker, parameter: str) -> bool:
    import inspect

    from sdckit.microdata.base import get_masker

    func = get_masker(method) if isinstance(method, str) else method
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return False
    return (
        parameter in sig.parameters
        or parameter in getattr(func, "renamed_parameters", {})  # an old spelling, still accepted
        or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    )


def _method_label(method: str | Masker) -> str:
    return method if isinstance(method, str) else getattr(method, "__name__", "masker")


def _parameter_names(method: str | Masker) -> list[str]:
    """The keyword parameters a masking method accepts (for error messages)."""
    import inspect

    from sdckit.microdata.base import get_masker

    func = get_masker(method) if isinstance(method, str) else method
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    skip = {"data", "random_state", "progress"}
    return [
        name
        for name, p in sig.parameters.items()
        if name not in skip and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
