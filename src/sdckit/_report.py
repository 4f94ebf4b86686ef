"""The HTML page every sdckit report shares: its template, figures and tables.

One page layout serves the assessment report (:func:`sdckit.assess.report`),
the attack reports (:mod:`sdckit.attacks.report`) and the coprivacy report
(:mod:`sdckit.coprivacy.report`). Figures are PNGs embedded as base64, so a
page needs no network and no other file; they are drawn with matplotlib's
object-oriented API on the Agg canvas, leaving pyplot's global state and the
user's backend alone.
"""

from __future__ import annotations

import base64
import html
import io
import os
from dataclasses import dataclass
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdckit.io import atomic_write

__all__ = [
    "PAGE_TEMPLATE",
    "PageFigure",
    "Report",
    "blank_figure",
    "png",
    "render_page",
    "table_html",
]


@dataclass(frozen=True)
class Report:
    """A rendered report.

    Attributes
    ----------
    html : str
        The whole page.
    figures : list of str
        Names of the figures embedded (each an ``<img>`` inside
        ``<figure data-figure="name">``).
    path : Path or None
        Where the page was written, if it was.
    """

    html: str
    figures: list[str]
    path: Path | None = None

    def summary(self) -> str:
        where = f" written to {self.path}" if self.path else ""
        return f"report with {len(self.figures)} figure(s) ({', '.join(self.figures)}){where}"


@dataclass(frozen=True)
class PageFigure:
    """One figure of a page: an anchor name, a heading, a caption and the PNG.

    Parameters
    ----------
    name : str
        The anchor (``id="fig-name"``) and the name in the page's figure manifest.
    title : str
        The heading above the image.
    caption : str
        The text below it.
    png : str
        The image, base64-encoded (from :func:`png`).
    """

    name: str
    title: str
    caption: str
    png: str


def png(fig: Figure) -> str:
    """Draw a figure on the Agg canvas and return the PNG, base64-encoded.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure from :func:`blank_figure`.

    Returns
    -------
    str
        The PNG (96 dpi, tight bounding box) as base64 text.
    """
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def blank_figure(
    width: float, height: float, *, wspace: float = 0.3, hspace: float = 0.6
) -> Figure:
    """An empty figure with fixed spacing between its panels.

    Parameters
    ----------
    width, height : float
        Size in inches.
    wspace, hspace : float
        Spacing between panels (see ``Figure.subplots_adjust``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    # Fixed spacing rather than a constrained layout: it halves the drawing time.
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(wspace=wspace, hspace=hspace)
    return fig


#: The page: title, meta line, recommendation, notes, tables, figures and a
#: JSON manifest of the figure names (``<script id="figure-manifest">``).
PAGE_TEMPLATE = jinja2.Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
 body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
        max-width: 1200px; padding: 0 1rem; color: #1d1d1d; line-height: 1.45; }
 h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem;
 border-bottom: 1px solid #ccc; }
 .table-wrap { max-width: 100%; overflow-x: auto; margin: 0.8rem 0; }
 table { border-collapse: collapse; font-size: 0.9rem; }
 thead th { white-space: normal; overflow-wrap: anywhere; max-width: 9rem;
 vertical-align: bottom; }
 th, td { border: 1px solid #d6d6d6; padding: 0.25rem 0.6rem; text-align: right; }
 th:first-child, td:first-child { text-align: left; }
 thead th { background: #f2f2f2; }
 figure { margin: 1.5rem 0; } figure img { max-width: 100%; height: auto; }
 figcaption { font-size: 0.88rem; color: #444; }
 .notes li { margin: 0.3rem 0; } .recommend { background: #eef6ee; padding: 0.6rem 1rem;
 border-left: 4px solid #3b8a3b; }
 .meta { color: #555; font-size: 0.9rem; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<p class="meta">{{ meta }}</p>
{% if recommendation %}<p class="recommend" id="recommendation">{{ recommendation }}</p>{% endif %}
{% if notes %}<h2>What this release keeps and gives away</h2>
<ul class="notes" id="notes">{% for n in notes %}<li>{{ n }}</li>{% endfor %}</ul>{% endif %}
{% for t in tables %}<h2>{{ t.title }}</h2>{{ t.html | safe }}{% endfor %}
{% if figures %}<h2>Figures</h2>{% endif %}
{% for f in figures %}<figure id="fig-{{ f.name }}" data-figure="{{ f.name }}">
<h3>{{ f.title }}</h3>
<img alt="{{ f.title }}" src="data:image/png;base64,{{ f.png }}">
<figcaption>{{ f.caption }}</figcaption>
</figure>
{% endfor %}
<script type="application/json" id="figure-manifest">{{ manifest | tojson }}</script>
</body>
</html>
""",
    autoescape=True,
)


def table_html(frame: pd.DataFrame, *, index: bool = True, digits: int = 4) -> str:
    """A DataFrame as an HTML table that scrolls inside the page when it is wide.

    Parameters
    ----------
    frame : DataFrame
        The table; every label and value is HTML-escaped.
    index : bool, default True
        Show the index as the first column.
    digits : int, default 4
        Significant digits of floats (NaN is shown empty, booleans as yes/no).

    Returns
    -------
    str
        The ``<div class="table-wrap"><table>...`` markup.
    """

    def fmt(v: object) -> str:
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else f"{v:.{digits}g}"
        return str(v)

    head = ([html.escape(str(frame.index.name or ""))] if index else []) + [
        html.escape(str(c)) for c in frame.columns
    ]
    rows = []
    for label, row in frame.iterrows():
        cells = ([html.escape(str(label))] if index else []) + [
            html.escape(fmt(v)) for v in row.to_numpy()
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    # A wide table (a sweep has a column per figure) scrolls inside the page
    # instead of stretching it; long headers wrap.
    return (
        '<div class="table-wrap"><table><thead><tr>'
        + "".join(f"<th>{h.replace('_', '_<wbr>')}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def render_page(
    title: str,
    meta: str,
    notes: list[str],
    tables: list[dict[str, str]],
    figures: list[PageFigure],
    path: str | os.PathLike | None,
    *,
    recommendation: str = "",
) -> Report:
    """The page of the report template, written atomically to ``path`` when one is given.

    Parameters
    ----------
    title : str
        The page's title and first heading.
    meta : str
        The line under the title (what was assessed or attacked).
    notes : list of str
        The bullet list of findings (none: no list).
    tables : list of dict
        Each ``{"title": ..., "html": ...}`` (the markup from :func:`table_html`).
    figures : list of PageFigure
        The figures, in page order.
    path : path or None
        Where to write the page.
    recommendation : str, optional
        A highlighted line above the notes.

    Returns
    -------
    Report
    """
    page = PAGE_TEMPLATE.render(
        title=title,
        meta=meta,
        recommendation=recommendation,
        notes=notes,
        tables=tables,
        figures=figures,
        manifest=[f.name for f in figures],
    )
    written = None
    if path is not None:

        def write(tmp: Path) -> None:
            Path(tmp).write_text(page, encoding="utf-8")

        written = atomic_write(path, write)
    return Report(html=page, figures=[f.name for f in figures], path=written)
