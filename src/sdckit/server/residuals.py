"""Synthetic residual plots for OLS models (Reiter 2003, as used by the MAS).

Lucero et al. (2011), Section 3.2.1. Real residuals plus fitted
values give back the response, so the server never releases them. Instead,
for every predictor x_p (and for the fitted values):

1. synthetic predictor values x^s: for a continuous x_p, inverse-cdf draws
   from a Gaussian kernel density estimate, ``min(5000, n)`` of them; for a
   categorical x_p, a bootstrap sample of its categories (n of them);
2. synthetic standardized residuals ``t^s_k = b_k + v_k + n_k`` where
   * b_k is a smooth curve of the real standardized residuals t on x_p
     (LOWESS with a wide span, so that it cannot follow single units - the
     paper's GAM "must not be overfit"), evaluated at x^s_k; 0 for a
     categorical x_p;
   * v_k = t_j - b_j for the real unit j whose x is nearest to x^s_k (ties
     broken at random); for a categorical x_p, t_j of a random unit of the
     same category;
   * n_k ~ N(0, sigma) with sigma constant, from a random stream seeded by
     the server secret and the response variable (and the panel), so the
     same response always gets the same noise and averaging many similar
     models gains nothing;
3. values truncated to [-4, 4] to protect outliers.

Categorical predictors are shown as side-by-side boxplots (summaries only);
categories sparser than the minimum category size are left out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.special
from statsmodels.nonparametric.smoothers_lowess import lowess

from sdckit._results import FrozenResult
from sdckit.server.config import ServerConfig
from sdckit.server.rules import Verdict

__all__ = [
    "BoxSummary",
    "ResidualPanel",
    "ResidualPlotResult",
    "kde_inverse_cdf_sample",
    "synthetic_residual_panels",
]

_KDE_BINS = 512
_CDF_GRID = 512


def kde_inverse_cdf_sample(x: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``size`` values from a Gaussian kernel density estimate of ``x`` by inverse cdf.

    The data are first binned on a fine grid (a weighted KDE, so the cost
    does not grow with n times the grid), Silverman's bandwidth is used, and
    the cdf is inverted by linear interpolation on a grid.

    Parameters
    ----------
    x : ndarray
        The real values.
    size : int
        How many values to draw.
    rng : numpy.random.Generator
        The random stream.

    Returns
    -------
    ndarray
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    sd = float(np.std(x, ddof=1)) if n > 1 else 0.0
    iqr = float(np.subtract(*np.percentile(x, [75, 25])))
    spread = min(sd, iqr / 1.34) if iqr > 0 else sd
    if spread <= 0:
        spread = max(abs(float(np.mean(x))), 1.0) * 1e-3
    h = 0.9 * spread * n ** (-0.2)
    counts, edges = np.histogram(x, bins=_KDE_BINS)
    centres = 0.5 * (edges[:-1] + edges[1:])
    weights = counts / counts.sum()
    grid = np.linspace(x.min() - 4 * h, x.max() + 4 * h, _CDF_GRID)
    cdf = (scipy.special.ndtr((grid[:, None] - centres[None, :]) / h) * weights[None, :]).sum(1)
    cdf = (cdf - cdf[0]) / (cdf[-1] - cdf[0])
    # Make the cdf strictly increasing for interpolation.
    cdf = np.maximum.accumulate(cdf + np.arange(_CDF_GRID) * 1e-12)
    u = rng.random(size)
    return np.interp(u, cdf, grid)


@dataclass(frozen=True)
class BoxSummary:
    """Boxplot summary of the synthetic residuals of one category."""

    category: str
    lower_whisker: float
    q1: float
    median: float
    q3: float
    upper_whisker: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ResidualPanel:
    """One plot: synthetic standardized residuals against a predictor or the fitted values.

    ``kind`` is "scatter" (``x``, ``residuals`` and the smoother ``smooth_x``,
    ``smooth_y``) or "box" (``boxes``, one per category shown).
    """

    predictor: str
    kind: str
    x: tuple[float, ...] = ()
    residuals: tuple[float, ...] = ()
    smooth_x: tuple[float, ...] = ()
    smooth_y: tuple[float, ...] = ()
    boxes: tuple[BoxSummary, ...] = ()
    suppressed_categories: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"predictor": self.predictor, "kind": self.kind}
        if self.kind == "scatter":
            out.update(
                x=list(self.x),
                residuals=list(self.residuals),
                smooth_x=list(self.smooth_x),
                smooth_y=list(self.smooth_y),
            )
        else:
            out["boxes"] = [b.to_dict() for b in self.boxes]
            out["suppressed_categories"] = list(self.suppressed_categories)
        return out


@dataclass(frozen=True)
class PlotResult(FrozenResult):
    """A released diagnostic plot: the panels' data (no real unit among them) and a PNG.

    Subclasses name the analysis and the plot (``analysis``, ``title``).
    """

    universe: str
    formula: str
    panels: tuple[Any, ...]
    png: bytes = field(repr=False)
    verdicts: tuple[Verdict, ...] = ()
    refused: bool = field(default=False, init=False)

    analysis: ClassVar[str] = "plot"
    title: ClassVar[str] = "Plots"

    def to_dict(self, *, include_png: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": "ok",
            "analysis": self.analysis,
            "universe": self.universe,
            "formula": self.formula,
            "panels": [p.to_dict() for p in self.panels],
            "verdicts": [v.to_dict() for v in self.verdicts],
        }
        if include_png:
            out["png_base64"] = base64.b64encode(self.png).decode("ascii")
        return out

    def summary(self) -> str:
        names = ", ".join(p.predictor for p in self.panels)
        return f"{self.title} of {self.formula} on universe {self.universe}: {names}"


@dataclass(frozen=True)
class ResidualPlotResult(PlotResult):
    """Synthetic residual plots of an OLS model: the panels' data and a rendered PNG."""

    analysis: ClassVar[str] = "residual_plot"
    title: ClassVar[str] = "Synthetic residual plots"


def _panel_rng(secret: bytes, response: str, predictor: str) -> np.random.Generator:
    digest = hmac.new(
        secret, f"residual-plot\x00{response}\x00{predictor}".encode(), hashlib.sha256
    ).digest()
    return np.random.Generator(np.random.PCG64(int.from_bytes(digest, "little")))


def _smooth(x: np.ndarray, t: np.ndarray, frac: float) -> tuple[np.ndarray, np.ndarray]:
    """LOWESS curve of t on x at the distinct sorted x (wide span; one robustness pass)."""
    span = float(x.max() - x.min())
    fitted = lowess(t, x, frac=frac, it=1, delta=0.01 * span, return_sorted=True)
    xs, ys = fitted[:, 0], fitted[:, 1]
    xs, first = np.unique(xs, return_index=True)
    return xs, ys[first]


def _nearest_index(
    sorted_x: np.ndarray, targets: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Index (into sorted_x) of the nearest value to each target; ties broken at random."""
    pos = np.searchsorted(sorted_x, targets)
    left = np.clip(pos - 1, 0, sorted_x.size - 1)
    right = np.clip(pos, 0, sorted_x.size - 1)
    use_right = np.abs(sorted_x[right] - targets) < np.abs(sorted_x[left] - targets)
    tie = np.abs(sorted_x[right] - targets) == np.abs(sorted_x[left] - targets)
    use_right = np.where(tie, rng.random(targets.size) < 0.5, use_right)
    nearest_value = sorted_x[np.where(use_right, right, left)]
    low = np.searchsorted(sorted_x, nearest_value, side="left")
    high = np.searchsorted(sorted_x, nearest_value, side="right")
    return low + (rng.random(targets.size) * (high - low)).astype(np.int64)


def _scatter_panel(
    name: str, x: np.ndarray, t: np.ndarray, config: ServerConfig, rng: np.random.Generator
) -> ResidualPanel:
    size = min(config.residual_max_points, x.size)
    xs = kde_inverse_cdf_sample(x, size, rng)
    if np.ptp(x) > 0:
        curve_x, curve_y = _smooth(x, t, config.smoother_frac)
        b_syn = np.interp(xs, curve_x, curve_y)
        b_real = np.interp(x, curve_x, curve_y)
    else:
        b_syn, b_real = np.zeros(size), np.zeros(x.size)
    order = np.argsort(x, kind="stable")
    j = order[_nearest_index(x[order], xs, rng)]
    v = t[j] - b_real[j]
    noise = rng.normal(0.0, config.residual_noise_sd, size)
    ts = np.clip(b_syn + v + noise, -config.residual_clip, config.residual_clip)
    if np.ptp(xs) > 0:
        sx, sy = _smooth(xs, ts, config.smoother_frac)
        keep = np.linspace(0, sx.size - 1, min(sx.size, 100)).astype(int)
        sx, sy = sx[keep], sy[keep]
    else:
        sx, sy = np.array([]), np.array([])
    return ResidualPanel(
        name,
        "scatter",
        tuple(float(v) for v in xs),
        tuple(float(v) for v in ts),
        tuple(float(v) for v in sx),
        tuple(float(v) for v in sy),
    )


def _box_panel(
    name: str,
    codes: np.ndarray,
    levels: tuple[str, ...],
    t: np.ndarray,
    config: ServerConfig,
    rng: np.random.Generator,
) -> ResidualPanel:
    codes = codes.astype(np.int64)
    counts = np.bincount(codes, minlength=len(levels))
    shown = [i for i in range(len(levels)) if counts[i] >= config.min_category_size]
    suppressed = tuple(
        levels[i] for i in range(len(levels)) if 0 < counts[i] < config.min_category_size
    )
    xs = codes[rng.integers(0, codes.size, codes.size)]
    # v: the real t of a random unit in the same category (b = 0 for categories).
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pick = order[starts[xs] + (rng.random(xs.size) * counts[xs]).astype(np.int64)]
    noise = rng.normal(0.0, config.residual_noise_sd, xs.size)
    ts = np.clip(t[pick] + noise, -config.residual_clip, config.residual_clip)
    boxes = []
    for i in shown:
        vals = ts[xs == i]
        if vals.size == 0:
            continue
        q1, med, q3 = np.percentile(vals, [25, 50, 75])
        iqr = q3 - q1
        lo = float(vals[vals >= q1 - 1.5 * iqr].min())
        hi = float(vals[vals <= q3 + 1.5 * iqr].max())
        boxes.append(BoxSummary(levels[i], lo, float(q1), float(med), float(q3), hi))
    return ResidualPanel(name, "box", boxes=tuple(boxes), suppressed_categories=suppressed)


def synthetic_residual_panels(
    *,
    response: str,
    fitted: np.ndarray,
    standardized_residuals: np.ndarray,
    predictors: Mapping[str, np.ndarray],
    categorical: Mapping[str, tuple[str, ...]],
    secret: bytes,
    config: ServerConfig,
) -> tuple[ResidualPanel, ...]:
    """Panels for the fitted values and every main-effect predictor (see the module docstring).

    Parameters
    ----------
    response : str
        The response (seeds the noise: same response, same noise stream).
    fitted, standardized_residuals : ndarray
        Real fitted values and internally studentized residuals (server-side only).
    predictors : mapping
        Predictor name -> real values (category codes for categorical ones).
    categorical : mapping
        Categorical predictor name -> its level labels.
    secret : bytes
        Server secret for the noise seed.
    config : ServerConfig
        Noise, point count, clipping and smoother settings.

    Returns
    -------
    tuple of ResidualPanel
    """
    t = np.asarray(standardized_residuals, dtype=np.float64)
    panels = [
        _scatter_panel(
            "fitted values",
            np.asarray(fitted, dtype=np.float64),
            t,
            config,
            _panel_rng(secret, response, "fitted values"),
        )
    ]
    for name, values in predictors.items():
        rng = _panel_rng(secret, response, name)
        if name in categorical:
            panels.append(_box_panel(name, values, categorical[name], t, config, rng))
        else:
            panels.append(
                _scatter_panel(name, np.asarray(values, dtype=np.float64), t, config, rng)
            )
    return tuple(panels)


def panel_axes(n_panels: int) -> tuple[Any, list[Any]]:
    """A figure of ``n_panels`` axes, three a row (matplotlib, Agg canvas; no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ncols = min(3, n_panels)
    nrows = -(-n_panels // ncols)
    fig = Figure(figsize=(4.2 * ncols, 3.4 * nrows), dpi=90)
    FigureCanvasAgg(fig)
    return fig, [fig.add_subplot(nrows, ncols, i + 1) for i in range(n_panels)]


def figure_png(fig: Any, title: str, **margins: float) -> bytes:
    """The figure with its title as PNG bytes; fixed margins (tight_layout costs more than drawing)."""
    fig.suptitle(title, fontsize=10)
    fig.subplots_adjust(**margins)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def render_png(panels: tuple[ResidualPanel, ...], title: str, clip: float) -> bytes:
    """Render the panels as one PNG (matplotlib, Agg canvas; no global pyplot state)."""
    fig, axes = panel_axes(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        if panel.kind == "scatter":
            ax.scatter(
                np.asarray(panel.x),
                np.asarray(panel.residuals),
                s=4,
                alpha=0.35,
                color="#1f77b4",
                linewidths=0,
                rasterized=True,
            )
            if panel.smooth_x:
                ax.plot(
                    np.asarray(panel.smooth_x),
                    np.asarray(panel.smooth_y),
                    color="#d62728",
                    linewidth=1.5,
                )
        else:
            stats = [
                {
                    "label": b.category,
                    "whislo": b.lower_whisker,
                    "q1": b.q1,
                    "med": b.median,
                    "q3": b.q3,
                    "whishi": b.upper_whisker,
                    "fliers": [],
                }
                for b in panel.boxes
            ]
            if stats:
                ax.bxp(stats, showfliers=False)
                ax.tick_params(axis="x", labelrotation=30)
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_ylim(-clip - 0.2, clip + 0.2)
        ax.set_xlabel(panel.predictor)
        ax.set_ylabel("synthetic std. residual")
    return figure_png(
        fig, title, left=0.08, right=0.98, bottom=0.18, top=0.86, wspace=0.3, hspace=0.45
    )
