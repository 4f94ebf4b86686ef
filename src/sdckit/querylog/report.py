"""A self-contained HTML page of a search-log evaluation.

One figure (SRP by level for the semantic partition, a random partition and
the worst case 1/k, as in Erola et al. 2011, Figure 3) embedded as a PNG, and
the tables of :class:`~sdckit.querylog.LogEvaluation`: the privacy check, SRP
by level, the linkage attack, the top queries and the level-1 categories
before and after. The page needs no network and no other file.
"""

from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sdckit._docs import shared_doc
from sdckit.io import atomic_write
from sdckit.querylog.evaluate import LogEvaluation

__all__ = ["evaluation_html", "write_evaluation_html"]

#: The ``{{evaluation}}`` marker of the report functions' Parameters
#: (:func:`sdckit._docs.shared_doc`).
_evaluation_doc = shared_doc(
    {
        "evaluation": """
        evaluation : LogEvaluation
            From :func:`sdckit.querylog.evaluate`.
        """
    }
)


def _srp_png(evaluation: LogEvaluation) -> str:
    levels = list(range(1, len(evaluation.srp) + 1))
    fig = Figure(figsize=(6.0, 3.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(levels, evaluation.srp, marker="o", color="#1f5fa8", label="semantic partition")
    ax.plot(levels, evaluation.srp_random, marker="s", color="#d0562c", label="random partition")
    ax.axhline(
        evaluation.srp_worst,
        color="grey",
        linestyle="--",
        label=f"1/k = {evaluation.srp_worst:.3f}",
    )
    ax.set_xticks(levels)
    ax.set_xlabel("level l")
    ax.set_ylabel("SRP (eq. 4)")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right", fontsize="small")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for row in frame.itertuples(index=False):
        cells = []
        for value in row:
            text = f"{value:.3f}" if isinstance(value, float) else str(value)
            cells.append(f"<td>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


@_evaluation_doc
def evaluation_html(evaluation: LogEvaluation, *, title: str = "Protected search log") -> str:
    """Render an evaluation as one HTML page.

    Parameters
    ----------
    {{evaluation}}
    title : str
        The page title.

    Returns
    -------
    str
        The page.
    """
    srp = pd.DataFrame(
        {
            "level": list(range(1, len(evaluation.srp) + 1)),
            "queries classified": [f"{s:.1%}" for s in evaluation.classified_share],
            "SRP semantic": list(evaluation.srp),
            "SRP random": list(evaluation.srp_random),
            "1/k": [evaluation.srp_worst] * len(evaluation.srp),
        }
    )
    link = evaluation.linkage
    attack = pd.DataFrame(
        {
            "release": ["protected"],
            "re-identification, mean": [link.reidentification_mean],
            "re-identification, max": [link.reidentification_max],
            "linked to own released user": [f"{link.group_link_rate:.1%}"],
            "1/k": [link.bound],
        }
    )
    if evaluation.linkage_pseudonymized is not None:
        pseudo = evaluation.linkage_pseudonymized
        attack.loc[1] = [
            "ids replaced by numbers",
            pseudo.reidentification_mean,
            pseudo.reidentification_max,
            f"{pseudo.group_link_rate:.1%}",
            link.bound,
        ]
    categories = evaluation.categories.copy()
    categories["original"] = [f"{v:.1%}" for v in categories["original"]]
    categories["released"] = [f"{v:.1%}" for v in categories["released"]]
    first = evaluation.summary().splitlines()[0]
    params = ", ".join(f"{k}: {v}" for k, v in evaluation.params.items())
    sections = [
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="verdict">{html.escape(first)}</p>',
        f"<p>{html.escape(params)}</p>",
        "<h2>Semantic remain percentage by level (Erola et al. 2011, eq. 4)</h2>",
        f'<figure data-figure="srp"><img alt="SRP by level" src="data:image/png;base64,'
        f'{_srp_png(evaluation)}"></figure>',
        _table(srp),
        "<h2>Linkage attack</h2>",
        "<p>Each original user is linked to the released user sharing most of her queries; "
        "she is re-identified if that is her group and she is picked among its members.</p>",
        _table(attack),
        "<h2>Most frequent queries, original and released</h2>",
        _table(evaluation.top_queries),
        "<h2>Level-1 categories, share of classified terms</h2>",
        _table(categories),
    ]
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:2em auto;}"
        "table{border-collapse:collapse;margin:1em 0;}"
        "td,th{border:1px solid #ccc;padding:0.2em 0.6em;text-align:right;}"
        ".verdict{font-weight:bold;}"
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
        f"{html.escape(title)}</title><style>{style}</style></head><body>"
        + "\n".join(sections)
        + "</body></html>\n"
    )


@_evaluation_doc
def write_evaluation_html(
    evaluation: LogEvaluation, path: str | os.PathLike[str], *, title: str = "Protected search log"
) -> Path:
    """Write :func:`evaluation_html` to a file, atomically.

    Parameters
    ----------
    {{evaluation}}
    path : path
        The HTML file.
    title : str
        The page title.

    Returns
    -------
    Path
        Where the page was written.
    """
    page = evaluation_html(evaluation, title=title)

    def write(tmp: Path) -> None:
        tmp.write_text(page, encoding="utf-8")

    return atomic_write(path, write)
