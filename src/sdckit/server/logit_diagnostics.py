"""Diagnostics of a logistic regression on the remote server: binned residual plots.

Lucero et al. (2011, end of Section 3.2.1) point to Reiter & Kohnen (2005)
for diagnostics of logistic regression on a remote server: the raw
residuals y - p of a logit are useless to plot one by one (y is 0 or 1) and
would disclose every unit's outcome. The standard diagnostic is the binned
residual plot (Gelman & Hill 2007, Section 5.6): units grouped by fitted
probability (or by a predictor), the mean residual of each group plotted
with its +-2 standard-error band; a pattern outside the band shows a missed
non-linearity or interaction, and points inside it a model that fits.

No plotted point is a unit: every point averages at least ``min_bin``
units (default: the Universe Gamma* threshold), groups of a predictor are
its *public* cutpoint bins (merged with their neighbours until large
enough) or its categories, and the x position of a fitted-value group is
its mean fitted probability. Each group's mean residual carries a keyed
noise (a cell key of the group's units, as for counts: same group, same
noise), with a standard deviation of half the group's standard error, so a
pair of answers differing by one unit does not show that unit's outcome
(it moves a mean by at most 1/``min_bin``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.special

from sdckit.server.metadata import Metadata
from sdckit.server.perturbation import Perturbation
from sdckit.server.residuals import PlotResult, figure_png, panel_axes

__all__ = ["BinnedResidualPanel", "LogitDiagnosticsResult", "binned_residual_panels"]


@dataclass(frozen=True)
class BinnedResidualPanel:
    """One binned residual plot: a group per point, mean residual and +-2 SE band."""

    predictor: str
    labels: tuple[str, ...]
    x: tuple[float, ...]
    mean_residual: tuple[float, ...]
    band: tuple[float, ...]
    suppressed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "predictor": self.predictor,
            "labels": list(self.labels),
            "x": list(self.x),
            "mean_residual": list(self.mean_residual),
            "band": list(self.band),
            "suppressed": list(self.suppressed),
        }


@dataclass(frozen=True)
class LogitDiagnosticsResult(PlotResult):
    """Binned residual plots of a logistic regression: the panels' data and a PNG."""

    analysis: ClassVar[str] = "logit_diagnostics"
    title: ClassVar[str] = "Binned residual plots"


def _merge_small(
    groups: list[np.ndarray], labels: list[str], min_bin: int
) -> tuple[list[np.ndarray], list[str]]:
    """Merge consecutive groups until each holds at least ``min_bin`` units."""
    merged: list[np.ndarray] = []
    merged_labels: list[str] = []
    current: np.ndarray | None = None
    first: str | None = None
    for members, label in zip(groups, labels, strict=True):
        if members.size == 0:
            continue
        current = members if current is None else np.concatenate([current, members])
        first = label if first is None else first
        if current.size >= min_bin:
            merged.append(current)
            merged_labels.append(first if first == label else f"{first} .. {label}")
            current, first = None, None
    if current is not None:
        if merged:
            merged[-1] = np.concatenate([merged[-1], current])
            head = merged_labels[-1].split(" .. ")[0]
            merged_labels[-1] = f"{head} .. {labels[-1]}"
        elif current.size >= min_bin and first is not None:
            merged, merged_labels = [current], [first]
    return merged, merged_labels


def _panel(
    name: str,
    groups: list[np.ndarray],
    labels: list[str],
    x_of: Any,
    residual: np.ndarray,
    variance: np.ndarray,
    rows: np.ndarray,
    perturb: Perturbation | None,
    suppressed: tuple[str, ...] = (),
) -> BinnedResidualPanel:
    means, bands, xs = [], [], []
    if perturb is not None and groups:
        cells = np.concatenate([np.full(g.size, i) for i, g in enumerate(groups)])
        members = np.concatenate(groups)
        u = perturb._cell_uniforms(rows[members], cells, len(groups))
        z = scipy.special.ndtri(np.clip(u, 1e-12, 1 - 1e-12))
    else:
        z = np.zeros(len(groups))
    for i, members in enumerate(groups):
        se = float(np.sqrt(variance[members].sum()) / members.size)
        means.append(float(residual[members].mean() + 0.5 * se * z[i]))
        bands.append(2.0 * se)
        xs.append(float(x_of(i, members)))
    return BinnedResidualPanel(
        name, tuple(labels), tuple(xs), tuple(means), tuple(bands), suppressed
    )


def binned_residual_panels(
    y: np.ndarray,
    p: np.ndarray,
    predictors: Mapping[str, np.ndarray],
    categorical: Mapping[str, tuple[str, ...]],
    bins_of: Mapping[str, tuple[np.ndarray, tuple[str, ...]]],
    rows: np.ndarray,
    *,
    min_bin: int,
    perturb: Perturbation | None = None,
) -> tuple[BinnedResidualPanel, ...]:
    """Binned residual panels: by fitted probability, then by each main-effect predictor.

    Parameters
    ----------
    y, p : ndarray
        Outcomes (0/1) and fitted probabilities of the analysis sample.
    predictors : mapping
        Main-effect factor -> values (category codes for categorical ones).
    categorical : mapping
        Categorical factor -> level labels.
    bins_of : mapping
        Continuous factor -> (cutpoint bin code of every unit, public bin labels).
    rows : ndarray
        Row positions of the sample (keys of the groups' noise).
    min_bin : int
        Fewest units a plotted group may average.
    perturb : Perturbation, optional
        Keys the groups' noise; None: no noise.

    Returns
    -------
    tuple of BinnedResidualPanel
    """
    residual = np.asarray(y, dtype=np.float64) - np.asarray(p, dtype=np.float64)
    variance = p * (1.0 - p)
    n = residual.size
    panels = []
    n_groups = int(np.clip(np.sqrt(n) / 2, 1, min(20, max(n // min_bin, 1))))
    order = np.argsort(p, kind="stable")
    fitted_groups = [g for g in np.array_split(order, n_groups) if g.size >= min_bin]
    panels.append(
        _panel(
            "fitted probability",
            fitted_groups,
            [f"group {i + 1}" for i in range(len(fitted_groups))],
            lambda _i, members: p[members].mean(),
            residual,
            variance,
            rows,
            perturb,
        )
    )
    for name, values in predictors.items():
        if name in categorical:
            levels = categorical[name]
            codes = values.astype(np.int64)
            groups = [np.flatnonzero(codes == i) for i in range(len(levels))]
            kept = [(g, lv) for g, lv in zip(groups, levels, strict=True) if g.size >= min_bin]
            sparse = tuple(lv for g, lv in zip(groups, levels, strict=True) if 0 < g.size < min_bin)
            panels.append(
                _panel(
                    name,
                    [g for g, _ in kept],
                    [lv for _, lv in kept],
                    lambda i, _m: float(i),
                    residual,
                    variance,
                    rows,
                    perturb,
                    sparse,
                )
            )
        elif name in bins_of:
            codes, labels = bins_of[name]
            groups = [np.flatnonzero(codes == b) for b in range(len(labels))]
            merged, merged_labels = _merge_small(groups, list(labels), min_bin)
            panels.append(
                _panel(
                    name,
                    merged,
                    merged_labels,
                    lambda i, _m: float(i),
                    residual,
                    variance,
                    rows,
                    perturb,
                )
            )
    return tuple(panels)


def public_bins(
    factors: Mapping[str, str], metadata: Metadata, codes: Mapping[str, np.ndarray], rows
) -> dict[str, tuple[np.ndarray, tuple[str, ...]]]:
    """Cutpoint bin code of every unit and the public labels, per continuous main effect."""
    out = {}
    for factor, variable in factors.items():
        var = metadata.variable(variable)
        if not var.is_categorical:
            out[factor] = (codes[variable][rows], var.cutpoint_bins.public_labels)
    return out


def render_png(panels: tuple[BinnedResidualPanel, ...], title: str) -> bytes:
    """Render the panels as one PNG (matplotlib Agg; no global pyplot state)."""
    fig, axes = panel_axes(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        x = np.asarray(panel.x)
        band = np.asarray(panel.band)
        if x.size:
            ax.plot(x, band, color="grey", linewidth=0.8)
            ax.plot(x, -band, color="grey", linewidth=0.8)
            ax.scatter(x, np.asarray(panel.mean_residual), s=14, color="#1f77b4")
        if panel.predictor != "fitted probability" and x.size:
            step = max(1, -(-x.size // 10))  # at most about ten readable labels
            ax.set_xticks(x[::step], list(panel.labels)[::step], rotation=30, fontsize=7)
        ax.axhline(0.0, color="grey", linewidth=0.6, linestyle=":")
        ax.set_xlabel(panel.predictor)
        ax.set_ylabel("mean residual (binned)")
    return figure_png(
        fig, title, left=0.1, right=0.98, bottom=0.2, top=0.86, wspace=0.35, hspace=0.55
    )
