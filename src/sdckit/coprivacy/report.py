"""HTML reports of the coprivacy simulations, in the style of ``sdckit assess`` (same page).

* :func:`p2p_report`: a P2P anonymous keyword search simulation
  (Domingo-Ferrer (2011), §4): entropy vs the engine over time with and
  without the protocol, forwarding and acceptance rates, δ, and the per-peer
  table.
* :func:`social_report`: repeated disclosure games (§5) under tit-for-tat and
  reputation: disclosure over time and the measured ε.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit._report import PageFigure, Report, blank_figure, png, render_page, table_html
from sdckit.coprivacy.p2p_search import P2PSimulation
from sdckit.coprivacy.social import RepeatedPlay
from sdckit.errors import ParameterError

__all__ = ["p2p_report", "social_report"]


def _share_axes(
    ax: Any, xlabel: str, *, ylabel: str | None = None, title: str | None = None
) -> None:
    """Axes of shares (0 to 1 on the y axis), labelled, with a legend of the lines."""
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    ax.legend(fontsize=8)


def p2p_report(
    simulation: P2PSimulation,
    *,
    path: str | os.PathLike[str] | None = None,
    title: str = "sdckit coprivacy: P2P anonymous keyword search",
) -> Report:
    """Render a P2P search simulation as one self-contained HTML page.

    Parameters
    ----------
    simulation : P2PSimulation
        From :func:`sdckit.coprivacy.simulate_p2p`.
    path : path, optional
        Where to save the HTML file (written atomically); None renders only.
    title : str
        Heading and window title.

    Returns
    -------
    sdckit.assess.report.Report
        The HTML text, the names of its figures and the file written.
    """
    if not isinstance(simulation, P2PSimulation):
        raise ParameterError("p2p_report needs a P2PSimulation (from simulate_p2p)")
    timeline = simulation.timeline
    fig = blank_figure(10, 3.6, wspace=0.3)
    ax = fig.add_subplot(1, 2, 1)
    ax.plot(timeline["queries"], timeline["entropy_alone"], label="without the protocol")
    ax.plot(timeline["queries"], timeline["entropy_vs_engine"], label="with the protocol")
    ax.set_xlabel("queries issued")
    ax.set_ylabel("mean H(Y^i), bits")
    ax.set_title("privacy vs the search engine")
    ax.legend(fontsize=8)
    ax = fig.add_subplot(1, 2, 2)
    ax.plot(timeline["queries"], timeline["forwarded_share"], label="share forwarded")
    ax.plot(timeline["queries"], timeline["delta"], label="δ: a peer helped")
    _share_axes(ax, "queries issued", title="forwarding and coprivacy (cumulative)")
    figures = [
        PageFigure(
            name="p2p_timeline",
            title="Entropy vs the engine, forwarding and δ over time",
            caption="Domingo-Ferrer (2011), §4: a peer forwards a query when submitting it "
            "would lower the entropy of her profile at the engine; a peer accepts when "
            "submitting it raises hers, and then (S_ik, T_ki) is a Nash equilibrium.",
            png=png(fig),
        )
    ]
    peers = simulation.per_peer.sort_values("queries", ascending=False)
    notes = simulation.summary().splitlines()
    meta = (
        f"{simulation.params['n_queries']:,} queries of {simulation.params['n_peers']:,} peers "
        f"from {simulation.params['source']}; up to {simulation.params['max_attempts']} peers "
        "asked per query. Expression (2) as intended: the peer to whom the query was "
        "forwarded least often."
    )
    tables = [
        {"title": "Per peer (most active first)", "html": table_html(peers.head(200), index=False)}
    ]
    return render_page(title, meta, notes, tables, figures, path)


def social_report(
    plays: Sequence[RepeatedPlay],
    *,
    path: str | os.PathLike[str] | None = None,
    title: str = "sdckit coprivacy: disclosure in a social network",
    notes: Sequence[str] = (),
) -> Report:
    """Render repeated disclosure games (tit-for-tat, reputation) as one HTML page.

    Parameters
    ----------
    plays : sequence of RepeatedPlay
        From :func:`sdckit.coprivacy.repeated_disclosure`, one per protocol.
    path : path, optional
        See :func:`p2p_report`.
    title : str
        Heading and window title.
    notes : sequence of str
        Lines shown first (e.g. the one-shot game's equilibrium).

    Returns
    -------
    sdckit.assess.report.Report
        As :func:`p2p_report`.
    """
    plays = list(plays)
    if not plays or not all(isinstance(p, RepeatedPlay) for p in plays):
        raise ParameterError("social_report needs one or more RepeatedPlay")
    fig = blank_figure(6.5, 3.6)
    ax = fig.add_subplot(1, 1, 1)
    for play in plays:
        rounds = np.arange(1, len(play.disclosure_rate) + 1)
        ax.plot(rounds, play.disclosure_rate, label=play.protocol.replace("_", "-"))
    _share_axes(ax, "round", ylabel="share of pairs disclosing")
    figures = [
        PageFigure(
            name="disclosure_over_time",
            title="Disclosure over time",
            caption="Domingo-Ferrer (2011), §5: without a protocol nobody discloses (the "
            "one-shot game's dominant strategy); tit-for-tat and reputation sustain disclosure.",
            png=png(fig),
        )
    ]
    table = pd.DataFrame(
        {
            "protocol": [p.protocol for p in plays],
            "rounds": [len(p.disclosure_rate) for p in plays],
            "noise": [p.params["noise"] for p in plays],
            "share disclosing": [float(p.disclosure_rate.mean()) for p in plays],
            "mean utility": [p.mean_payoff for p in plays],
            "stage-game ε": [p.stage_epsilon for p in plays],
            "repeated-game ε": [p.repeated_epsilon for p in plays],
        }
    )
    meta = (
        "Each edge plays Example 2's game every round (utility PRF_2, Expression 3). "
        "Stage-game ε: the largest gain from deviating given the empirical distribution of "
        "play; repeated-game ε: the best gain per round of one user who leaves the protocol."
    )
    lines = list(notes) + [p.summary().splitlines()[0] for p in plays]
    tables = [{"title": "Protocols", "html": table_html(table, index=False)}]
    return render_page(title, meta, lines, tables, figures, path)
