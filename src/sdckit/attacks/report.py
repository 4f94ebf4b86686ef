"""An HTML report of regression attacks, in the style of ``sdckit assess`` (same page and tables)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from sdckit._report import PageFigure, Report, blank_figure, png, render_page, table_html
from sdckit.attacks.regression import RECOVERY_TOLERANCE, RegressionAttackResult
from sdckit.errors import ParameterError

__all__ = ["attack_report", "battery_report"]

_COLUMNS = {
    "quantile": "quantile",
    "attack": "attack",
    "indicators": "indicators",
    "N": "N",
    "identified": "prop. uniquely identified",
    "delta_all": "Δ all records",
    "delta_identified": "Δ uniquely identified",
    "recovered": f"predicted within {RECOVERY_TOLERANCE:.0%}",
    "identified_recovered": f"identified and recovered within {RECOVERY_TOLERANCE:.0%}",
    "answered": "answered",
    "targets": "targets",
    "min_units": "fewest units in an answer",
}


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    out["quantile"] = ["all" if q == 0 else f"{q:g}" for q in out["quantile"]]
    return out.rename(columns=_COLUMNS)


def _curves(result: RegressionAttackResult, number: int) -> PageFigure:
    fig = blank_figure(10, 3.6, wspace=0.3)
    table = result.table
    labels = ["all" if q == 0 else f"{q:g}" for q in sorted(table["quantile"].unique())]
    for i, column in enumerate(("identified", "identified_recovered")):
        ax = fig.add_subplot(1, 2, i + 1)
        for (attack, indicators), rows in table.groupby(["attack", "indicators"], sort=False):
            rows = rows.sort_values("quantile")
            ax.plot(
                np.arange(len(rows)),
                rows[column].to_numpy(),
                marker="o",
                label=f"{attack}: {indicators}",
            )
        ax.set_xticks(np.arange(len(labels)), labels)
        ax.set_xlabel("subset (records at or above the size quantile)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(
            "share uniquely identified"
            if column == "identified"
            else f"share identified and recovered within {RECOVERY_TOLERANCE:.0%}"
        )
        if i == 1:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return PageFigure(
        name=f"attack_curves_{number}",
        title=f"Regression attacks on the {result.target}",
        caption="Bleninger, Drechsler & Ronning (2011), Tables 1-3: the larger the records, "
        "the more of them the background identifies and the attack recovers.",
        png=png(fig),
    )


def attack_report(
    results: Sequence[RegressionAttackResult],
    *,
    path: str | os.PathLike | None = None,
    title: str | None = None,
) -> Report:
    """Render regression-attack results as one self-contained HTML page.

    Parameters
    ----------
    results : sequence of RegressionAttackResult
        One per target attacked (naive server, sdckit's server, a release...).
    path : path, optional
        Write the page there (atomically).
    title : str, optional
        The page's title.

    Returns
    -------
    sdckit.assess.report.Report
        The page, its figure names, and where it was written.
    """
    results = list(results)
    if not results or not all(isinstance(r, RegressionAttackResult) for r in results):
        raise ParameterError("attack_report needs one or more RegressionAttackResult")
    tables = []
    figures = []
    notes = []
    for number, r in enumerate(results, start=1):
        notes.append(r.summary().splitlines()[0])
        tables.append(
            {
                "title": f"Attacks on the {r.target}",
                "html": table_html(_shown(r.table), index=False),
            }
        )
        figures.append(_curves(r, number))
    params = results[0].params
    meta = (
        f"Sensitive variable {params['sensitive']}; the intruder knows "
        f"{', '.join(params['background'])}"
        + (
            f" (the first within {params['approx']:g}, {params['approx_mode']})"
            if params.get("approx") is not None
            else ""
        )
        + f"; artificial outliers with ε = {params['epsilon']:g}. Δ is the mean absolute "
        "relative error of the recovered value (eq. 5)."
    )
    return render_page(
        title or "sdckit regression attack report", meta, notes, tables, figures, path
    )


def battery_report(
    sections: Sequence[tuple[str, pd.DataFrame]],
    *,
    notes: Sequence[str],
    meta: str,
    path: str | os.PathLike | None = None,
    title: str = "sdckit attack report",
) -> Report:
    """Render the tables of an attack battery (server, release, table) as one HTML page.

    The page of :func:`attack_report` and ``sdckit assess``, without figures:
    the verdicts first, then one table per attack family.

    Parameters
    ----------
    sections : sequence of (str, DataFrame)
        Each table and its heading.
    notes : sequence of str
        The verdicts, one line each (the first line of each result's summary).
    meta : str
        What was attacked and what the intruder knows.
    path : path, optional
        Write the page there (atomically).
    title : str, default "sdckit attack report"

    Returns
    -------
    sdckit.assess.report.Report
    """
    if not sections:
        raise ParameterError("battery_report needs one or more tables")
    tables = [
        {"title": heading, "html": table_html(table, index=False)} for heading, table in sections
    ]
    return render_page(title, meta, list(notes), tables, [], path)
