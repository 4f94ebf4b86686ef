"""A self-contained HTML report of an assessment and/or a sweep.

The figures follow Perry, Matloff & Tendick (2022): correlation
heat maps side by side (Figures 2-3), regression coefficients with
confidence intervals (Figures 4-5), Cook's and Mahalanobis distances with the
most extreme records labelled (Figures 6-7), boxplots of minimum distances
before and after (Figure 8), proportion of variance by principal component,
neighbourhood size against distance to the closest record for RWN
(Figure 1), and curves of the figures over a tuning sweep with the original
data's value as a horizontal line. Figures are PNGs embedded as base64, so
the page needs no network and no other file.

The page, its figures and tables are :mod:`sdckit._report`'s, shared with the
attack and coprivacy reports.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from sdckit._report import PageFigure, Report, blank_figure, png, render_page, table_html
from sdckit.assess.assessment import Assessment
from sdckit.assess.measures import MeasureSpec, headline_labels, registered
from sdckit.assess.risk import DistanceToClosest, ExtremeRecords, KeyRiskComparison
from sdckit.assess.sweep import SweepResult
from sdckit.assess.utility import (
    CorrelationComparison,
    MomentComparison,
    PCAComparison,
    PredictionCheck,
    RegressionComparison,
)
from sdckit.errors import ParameterError

__all__ = ["Report", "report"]

ORIGINAL_COLOR = "#1f5fa8"
MASKED_COLOR = "#d0562c"


# ---------------------------------------------------------------------------
# Figures of one assessment
# ---------------------------------------------------------------------------


def _correlation_figure(c: CorrelationComparison) -> PageFigure:
    p = len(c.original)
    size = min(4.2 + 0.12 * p, 7.0)
    fig = blank_figure(3 * size, size, wspace=0.45)
    axes = fig.subplots(1, 3)
    panels = (
        ("original", c.original, "RdBu_r", (-1, 1)),
        ("masked", c.masked, "RdBu_r", (-1, 1)),
        ("masked - original", c.difference, "PuOr_r", (-1, 1)),
    )
    for ax, (title, matrix, cmap, (lo, hi)) in zip(axes, panels, strict=True):
        image = ax.imshow(matrix.to_numpy(), cmap=cmap, vmin=lo, vmax=hi)
        ax.set_title(title)
        labels = [str(v) for v in matrix.columns]
        if p <= 30:
            ax.set_xticks(range(p), labels, rotation=90, fontsize=7)
            ax.set_yticks(range(p), labels, fontsize=7)
        else:
            ax.set_xticks([])
            ax.set_yticks([])
        fig.colorbar(image, ax=ax, shrink=0.75)
    return PageFigure(
        "correlation",
        "Correlation matrices",
        "Pearson correlations of the original and masked data, and their difference "
        "(Perry, Matloff & Tendick 2022, Figures 2-3). Same colours, same relations.",
        png(fig),
    )


def _regression_figure(g: RegressionComparison) -> PageFigure:
    terms = list(g.table.index)
    ncols = min(4, len(terms))
    nrows = math.ceil(len(terms) / ncols)
    fig = blank_figure(3.0 * ncols, 1.6 * nrows + 0.4, wspace=0.45, hspace=0.9)
    axes = np.atleast_1d(fig.subplots(nrows, ncols)).reshape(-1)
    for ax, term in zip(axes, terms, strict=False):
        for y, (fit, color, name) in enumerate(
            ((g.original, ORIGINAL_COLOR, "original"), (g.masked, MASKED_COLOR, "masked"))
        ):
            est = fit.coefficients[term]
            ax.errorbar(
                [est],
                [y],
                xerr=[[est - fit.lower[term]], [fit.upper[term] - est]],
                fmt="o",
                color=color,
                capsize=4,
                label=name,
            )
        ax.axvline(0.0, color="grey", linewidth=0.8, linestyle=":")
        ax.set_yticks([0, 1], ["original", "masked"], fontsize=8)
        ax.set_ylim(-0.7, 1.7)
        ax.set_title(f"{term} (overlap {g.table.loc[term, 'ci_overlap']:.2f})", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    for ax in axes[len(terms) :]:
        ax.set_visible(False)
    return PageFigure(
        "regression",
        f"Regression of {g.response}: coefficients with 95% confidence intervals",
        "Each panel is one coefficient, estimated on the original (blue) and masked (orange) "
        "data; the number is the confidence-interval overlap of Karr et al. (2006) "
        "(Perry, Matloff & Tendick 2022, Figures 4-5).",
        png(fig),
    )


def _extreme_figure(e: ExtremeRecords, name: str, caption: str) -> PageFigure:
    fig = blank_figure(11, 3.6, wspace=0.08)
    axes = fig.subplots(1, 2, sharey=True)
    ceiling = e.max_original
    n = len(e.original)
    for ax, series, title, color in (
        (axes[0], e.original, "original", ORIGINAL_COLOR),
        (axes[1], e.masked, "masked", MASKED_COLOR),
    ):
        x = np.arange(n)
        ax.scatter(x, series.to_numpy(), s=6 if n < 5000 else 1, color=color, rasterized=True)
        ax.axhline(ceiling, color=ORIGINAL_COLOR, linewidth=1.0)
        positions = pd.Series(x, index=series.index)
        for label in series.nlargest(min(e.top, 3)).index:
            ax.annotate(
                str(label),
                (positions[label], series[label]),
                textcoords="offset points",
                xytext=(3, 3),
                fontsize=8,
            )
        ax.set_title(title)
        ax.set_xlabel("record (row number)")
    axes[0].set_ylabel(e.measure)
    return PageFigure(
        name,
        f"{e.measure} of every record",
        caption + " The blue line is the largest value in the original data; "
        "labels are the records with the largest values.",
        png(fig),
    )


def _distance_figure(d: DistanceToClosest) -> PageFigure:
    fig = blank_figure(8, 3.8)
    ax = fig.subplots()
    series = [d.within_original, d.within_masked, d.original_to_masked]
    data = [s.dropna().to_numpy() for s in series]
    parts = ax.boxplot(
        data,
        tick_labels=["within original", "within masked", "original -> masked"],
        patch_artist=True,
    )
    for patch, color in zip(parts["boxes"], (ORIGINAL_COLOR, MASKED_COLOR, "#7a7a7a"), strict=True):
        patch.set_facecolor(color)
        patch.set_alpha(0.45)
    ax.set_ylabel(f"distance to the closest record (scale={d.scale})")
    return PageFigure(
        "distance_to_closest",
        "Distance to the closest record, before and after",
        "Boxplots of each record's distance to its closest other record in the original and in "
        "the masked data, and of each original record's distance to the closest masked record "
        "(Perry, Matloff & Tendick 2022, Figure 8). Large values within the original are isolated records.",
        png(fig),
    )


def _pca_figure(pca: PCAComparison) -> PageFigure:
    p = len(pca.variance_original)
    fig = blank_figure(max(6, 0.45 * p + 3), 3.6)
    ax = fig.subplots()
    x = np.arange(p)
    files = (
        ("original", pca.variance_original, ORIGINAL_COLOR, -0.2),
        ("masked", pca.variance_masked, MASKED_COLOR, 0.2),
    )
    for label, variance, color, shift in files:
        ax.bar(x + shift, variance.to_numpy(), 0.4, color=color, label=label)
    for label, variance, color, _ in files:
        cumulative = variance.cumsum().to_numpy()
        ax.plot(x, cumulative, color=color, marker=".", linewidth=1, label=f"cumulative, {label}")
    ax.set_xticks(x, list(pca.variance_original.index), fontsize=8)
    ax.set_ylabel("proportion of variance")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8)
    return PageFigure(
        "pca",
        "Principal components: proportion of variance by component",
        "PCA of the scaled original and masked data (Perry, Matloff & Tendick 2022, Section 8.3). A masked release "
        "that spreads the variance over more components has weakened the relations.",
        png(fig),
    )


def _covariance_figure(m: MomentComparison) -> PageFigure | None:
    if len(m.covariance_ratio) < 2:
        return None
    ratio = m.covariance_ratio.to_numpy()
    p = len(ratio)
    size = min(4.5 + 0.12 * p, 7.5)
    fig = blank_figure(size + 1, size)
    ax = fig.subplots()
    image = ax.imshow(np.clip(ratio, 0, 2), cmap="PuOr_r", vmin=0, vmax=2)
    labels = [str(v) for v in m.covariance_ratio.columns]
    if p <= 30:
        ax.set_xticks(range(p), labels, rotation=90, fontsize=7)
        ax.set_yticks(range(p), labels, fontsize=7)
    fig.colorbar(
        image, ax=ax, shrink=0.8, label="Sigma_masked / Sigma_original (clipped to [0, 2])"
    )
    return PageFigure(
        "covariance_ratio",
        "Covariance ratio",
        "Element-wise ratio of the masked to the original covariance matrix (Oganian 2011, "
        "Section 5): 1 (white) means preserved. Ratios of covariances near 0 are "
        "unstable by nature.",
        png(fig),
    )


def _neighborhood_figure(a: Assessment) -> PageFigure | None:
    d = a.diagnostics
    if d is None or not {"neighborhood_size", "distance_to_closest"} <= set(d.columns):
        return None
    fig = blank_figure(7, 4)
    ax = fig.subplots()
    n = len(d)
    ax.scatter(
        d["distance_to_closest"],
        d["neighborhood_size"],
        s=8 if n < 5000 else 3,
        color=MASKED_COLOR,
        alpha=0.6,
        rasterized=True,
    )
    eps = a.params.get("eps")
    k = a.params.get("k")
    if isinstance(eps, (int, float)):
        ax.axvline(float(eps), color="red", linewidth=1, label=f"eps = {eps:g}")
    if isinstance(k, int):
        ax.axhline(k, color="grey", linewidth=1, label=f"k = {k}")
    ax.set_xlabel("distance to the closest record")
    ax.set_ylabel("neighbourhood size")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    return PageFigure(
        "neighborhoods",
        "Neighbourhood size against distance to the closest record",
        "One point per record (Perry, Matloff & Tendick 2022, Figure 1): typical records have many neighbours within "
        "eps; isolated ones fall back on their k nearest.",
        png(fig),
    )


def _keys_figure(k: KeyRiskComparison) -> PageFigure:
    fig = blank_figure(7, 3.6)
    ax = fig.subplots()
    top = int(max(k.original.frequencies.max(), k.masked.frequencies.max()))
    bins = np.unique(np.geomspace(1, max(top, 2) + 1, 30).astype(int))
    ax.hist(
        [k.original.frequencies, k.masked.frequencies],
        bins=bins.tolist(),
        color=[ORIGINAL_COLOR, MASKED_COLOR],
        label=["original", "masked"],
    )
    ax.set_xscale("log")
    ax.set_xlabel("size of the record's key combination (f_k)")
    ax.set_ylabel("records")
    ax.legend(fontsize=8)
    return PageFigure(
        "key_frequencies",
        f"Frequencies of key combinations ({', '.join(k.original.keys)})",
        "How many records share each record's combination of key values: records at f_k = 1 "
        "are sample uniques.",
        png(fig),
    )


def _prediction_figure(p: PredictionCheck) -> PageFigure:
    fig = blank_figure(6, 3.6)
    ax = fig.subplots()
    groups = list(p.mean_errors.index)
    ax.boxplot(
        [p.errors.loc[p.errors["training"] == g, "error"] for g in groups], tick_labels=groups
    )
    ax.set_ylabel(p.error_name)
    return PageFigure(
        "prediction",
        f"Random-forest prediction of {p.response}",
        "Error on the same original holdout of forests trained on original and on masked data, "
        "over replications (Perry, Matloff & Tendick 2022, Section 8.4).",
        png(fig),
    )


def _cooks_figure(e: ExtremeRecords) -> PageFigure:
    return _extreme_figure(
        e,
        "cooks_distance",
        "Cook's distance of each record in the regression, original and masked (Perry, Matloff & Tendick 2022, "
        "Figure 6): an influential record that keeps its Cook's distance still stands out.",
    )


def _mahalanobis_figure(e: ExtremeRecords) -> PageFigure:
    return _extreme_figure(
        e,
        "mahalanobis",
        "Mahalanobis distance of each record from the centre of its file (Perry, Matloff & Tendick 2022, Figure 7).",
    )


#: The figure of each registered measure that has one (by measure name); the
#: figures appear in the order of the measures' ``figure_rank``.
_MEASURE_FIGURES: dict[str, Callable[[Any], PageFigure | None]] = {
    "correlation": _correlation_figure,
    "regression": _regression_figure,
    "cooks": _cooks_figure,
    "mahalanobis": _mahalanobis_figure,
    "distance_to_closest": _distance_figure,
    "pca": _pca_figure,
    "moments": _covariance_figure,
    "keys": _keys_figure,
    "prediction": _prediction_figure,
}

#: Where the masking's own figure (RWN neighbourhoods, from its diagnostics)
#: goes among the measures' figures.
_NEIGHBORHOOD_FIGURE_RANK = 80


def _measure_figure(spec: MeasureSpec) -> Callable[[Any], PageFigure | None]:
    """The report figure of a measure registered with its own drawing function."""

    def draw(measure: Any) -> PageFigure | None:
        assert spec.figure is not None
        drawn = spec.figure(measure)
        if drawn is None:
            return None
        return PageFigure(spec.name, drawn.title, drawn.caption, png(drawn.figure))

    return draw


def _assessment_figures(a: Assessment) -> list[PageFigure]:
    specs = {spec.name: spec for spec in registered()}
    drawers: list[tuple[int, Callable[[Any], PageFigure | None], Any]] = [
        (_NEIGHBORHOOD_FIGURE_RANK, _neighborhood_figure, a)
    ]
    for name, measure in a.measures():
        spec = specs[name]
        draw = _MEASURE_FIGURES.get(name) if spec.figure is None else _measure_figure(spec)
        if draw is not None:
            drawers.append((spec.figure_rank, draw, measure))
    drawers.sort(key=lambda item: item[0])
    figures = [draw(subject) for _, draw, subject in drawers]
    return [f for f in figures if f is not None]


# ---------------------------------------------------------------------------
# Sweep figures
# ---------------------------------------------------------------------------


def _sweep_axis(s: SweepResult, table: pd.DataFrame) -> tuple[np.ndarray, str, list[str] | None]:
    varying = [p for p in s.parameters if table[p].nunique(dropna=False) > 1]
    if len(varying) == 1 and pd.api.types.is_numeric_dtype(table[varying[0]]):
        return table[varying[0]].to_numpy(np.float64), varying[0], None
    return np.arange(len(table), dtype=np.float64), "setting", list(table.index)


def _sweep_panel_figure(
    s: SweepResult, name: str, title: str, caption: str, panels: list[tuple[str, str, str | None]]
) -> PageFigure | None:
    table = s.by_setting()
    panels = [p for p in panels if p[0] in table]
    if not panels:
        return None
    x, xlabel, ticks = _sweep_axis(s, table)
    fig = blank_figure(4.2 * len(panels), 3.6, wspace=0.35)
    axes = np.atleast_1d(fig.subplots(1, len(panels)))
    raw = s.table
    for ax, (column, label, baseline) in zip(axes, panels, strict=True):
        # Every replication as a faint point, the mean as a line.
        if len(raw) > len(table):
            rx = raw["setting"].map(dict(zip(table.index, x, strict=True))).to_numpy(np.float64)
            ax.scatter(rx, raw[column], s=8, color=MASKED_COLOR, alpha=0.3)
        ax.plot(x, table[column].to_numpy(), marker="o", color=MASKED_COLOR, label="masked")
        if baseline is not None and baseline in s.baseline:
            ax.axhline(
                s.baseline[baseline], color=ORIGINAL_COLOR, linewidth=1.2, label="original data"
            )
            ax.legend(fontsize=8)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel(xlabel)
        if ticks is not None:
            ax.set_xticks(x, ticks, rotation=60, fontsize=7, ha="right")
    return PageFigure(name, title, caption, png(fig))


def _ru_map(s: SweepResult) -> PageFigure | None:
    table = s.by_setting()
    if "corr_mean_abs_diff" not in table:
        return None
    fig = blank_figure(6.5, 4.5)
    ax = fig.subplots()
    ax.plot(table["corr_mean_abs_diff"], table["linkage_rate"], marker="o", color=MASKED_COLOR)
    for label, row in table.iterrows():
        ax.annotate(
            str(label),
            (row["corr_mean_abs_diff"], row["linkage_rate"]),
            textcoords="offset points",
            xytext=(4, 3),
            fontsize=7,
        )
    ax.set_xlabel("utility loss: mean |correlation difference|")
    ax.set_ylabel("risk: record-linkage re-identification rate")
    return PageFigure(
        "ru_map",
        "Risk-utility map",
        "One point per setting (Duncan et al.'s R-U map): down is safer, left keeps more of the "
        "relations. Good settings sit near the lower left.",
        png(fig),
    )


def _sweep_figures(s: SweepResult) -> list[PageFigure]:
    figures = [
        _sweep_panel_figure(
            s,
            "sweep_utility",
            "Utility over the sweep",
            "Mean over replications (line) and each replication (points); the blue line is the "
            "original data (Perry, Matloff & Tendick 2022, Section 8.3 and its PCA figures).",
            [
                ("corr_mean_abs_diff", "mean |correlation difference|", None),
                ("pc1_share_masked", "PC1 proportion of variance", "pc1_share_original"),
                ("r2_masked", "regression R^2", "r2_original"),
                ("ci_overlap_mean", "mean CI overlap", None),
            ],
        ),
        _sweep_panel_figure(
            s,
            "sweep_outliers",
            "Outliers over the sweep",
            "Largest Cook's and Mahalanobis distances in each masked release; the blue line is the "
            "largest in the original data (Perry, Matloff & Tendick 2022, Figures 6-7).",
            [
                ("cooks_max_masked", "max Cook's distance", "cooks_max_original"),
                ("mahalanobis_max_masked", "max Mahalanobis distance", "mahalanobis_max_original"),
            ],
        ),
        _sweep_panel_figure(
            s,
            "sweep_risk",
            "Re-identification risk over the sweep",
            "Share of records the distance-based linkage intruder re-identifies, interval "
            "disclosure, and the median distance to the closest record.",
            [
                ("linkage_rate", "record-linkage rate", None),
                ("interval_disclosure", "interval disclosure", None),
                ("dcr_median_masked", "median distance to closest (masked)", "dcr_median_original"),
            ],
        ),
        _ru_map(s),
    ]
    return [f for f in figures if f is not None]


# ---------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------


def _assessment_tables(a: Assessment) -> list[dict[str, str]]:
    head = a.headline()
    labels = headline_labels()
    summary = pd.DataFrame(
        {"value": list(head.values())},
        index=pd.Index([labels.get(k, k.replace("_", " ")) for k in head], name="measure"),
    )
    tables = [{"title": "Summary", "html": table_html(summary)}]
    if a.utility.regression is not None:
        tables.append(
            {
                "title": f"Regression of {a.utility.regression.response}",
                "html": table_html(a.utility.regression.table.rename_axis("term")),
            }
        )
    if a.utility.correlation is not None and len(a.utility.correlation.largest_differences):
        tables.append(
            {
                "title": "Largest correlation differences",
                "html": table_html(a.utility.correlation.largest_differences, index=False),
            }
        )
    rows = []
    for e in (a.risk.mahalanobis, a.risk.cooks):
        if e is not None:
            for label in e.top_original:
                rows.append(
                    {
                        "measure": e.measure,
                        "record": str(label),
                        "original": float(e.original[label]),
                        "masked": float(e.masked.get(label, np.nan)),
                        "rank after masking": int((e.masked > e.masked.get(label, np.inf)).sum())
                        + 1,
                    }
                )
    if rows:
        tables.append(
            {"title": "Most extreme records", "html": table_html(pd.DataFrame(rows), index=False)}
        )
    return tables


def report(
    assessment: Assessment | None = None,
    *,
    sweep: SweepResult | None = None,
    path: str | os.PathLike | None = None,
    title: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Render an assessment and/or a sweep as one self-contained HTML page.

    Parameters
    ----------
    assessment : Assessment, optional
        From :func:`sdckit.assess.assess`.
    sweep : SweepResult, optional
        From :func:`sdckit.assess.sweep`; adds the sweep curves, the R-U map,
        the per-setting table and a recommended setting. Without an
        ``assessment`` the figures of the sweep's first setting are shown too.
    path : path, optional
        Write the page there (atomically).
    title : str, optional
        The page's title (default "sdckit assessment report" or "sdckit sweep report").
    progress : callable, optional
        Called as ``progress(done, total)`` while the page is drawn.

    Returns
    -------
    Report
    """
    if assessment is None and sweep is None:
        raise ParameterError("report needs an assessment, a sweep, or both")
    if assessment is not None and not isinstance(assessment, Assessment):
        raise ParameterError(f"assessment must be an Assessment, got {type(assessment).__name__}")
    if sweep is not None and not isinstance(sweep, SweepResult):
        raise ParameterError(f"sweep must be a SweepResult, got {type(sweep).__name__}")
    figures: list[PageFigure] = []
    tables: list[dict[str, str]] = []
    notes: list[str] = []
    recommendation = ""
    meta_parts = []
    if sweep is not None:
        figures += _sweep_figures(sweep)
        table = sweep.by_setting()
        tables.append(
            {
                "title": "Settings of the sweep (means over replications)",
                "html": table_html(table.rename_axis("setting")),
            }
        )
        recommendation = sweep.recommendation()
        fixed = ", ".join(f"{k}={v!r}" for k, v in sweep.fixed.items())
        meta_parts.append(
            f"Sweep of {sweep.method} over {', '.join(sweep.parameters)}"
            f"{' with ' + fixed if fixed else ''}; {len(table)} settings, "
            f"{int(table['replications'].max())} replication(s) each."
        )
        if assessment is None and sweep.assessments:
            assessment = sweep.assessments[0]
            meta_parts.append(f"Detailed figures: setting {table.index[0]}, first replication.")
    if progress is not None:
        progress(1, 2)
    if assessment is not None:
        notes = assessment.notes()
        tables = _assessment_tables(assessment) + tables
        figures += _assessment_figures(assessment)
        shown = ", ".join(
            f"{k}={v!r}" for k, v in assessment.params.items() if k in ("k", "eps", "q", "modprop")
        )
        meta_parts.insert(
            0,
            f"{assessment.n_records} records, {len(assessment.columns)} variables assessed"
            + (f"; masked by {assessment.method} ({shown})" if assessment.method else "")
            + ".",
        )
    if progress is not None:
        progress(2, 2)
    return render_page(
        title or ("sdckit sweep report" if sweep is not None else "sdckit assessment report"),
        " ".join(meta_parts),
        notes,
        tables,
        figures,
        path,
        recommendation=recommendation,
    )
