"""Coprivacy: games in which helping another player's privacy helps one's own.

Domingo-Ferrer (2011) defines a protocol as *coprivate* when the best option
for a player to preserve her privacy is to help another player preserve his
(Definition 1, a Nash equilibrium), quantifies it (δ-coprivacy, Definition 2)
and extends it to general, mixed and correlated coprivacy. This package
computes equilibria of finite games (:mod:`~sdckit.coprivacy.games`), checks
the definitions (:mod:`~sdckit.coprivacy.definitions`), and builds the paper's
scenarios (P2P search, social networks, vehicular networks, fingerprinted
multicast). See ``docs/coprivacy.md``.
"""

from __future__ import annotations

# Each module's __all__ is the list of what a user calls; the package re-exports them all.
from sdckit.coprivacy import definitions, files, games, p2p_search, report, scenarios, social
from sdckit.coprivacy.definitions import *  # noqa: F403
from sdckit.coprivacy.files import *  # noqa: F403
from sdckit.coprivacy.games import *  # noqa: F403
from sdckit.coprivacy.p2p_search import *  # noqa: F403
from sdckit.coprivacy.report import *  # noqa: F403
from sdckit.coprivacy.scenarios import *  # noqa: F403
from sdckit.coprivacy.social import *  # noqa: F403

__all__ = [
    *games.__all__,
    *definitions.__all__,
    *files.__all__,
    *p2p_search.__all__,
    *report.__all__,
    *scenarios.__all__,
    *social.__all__,
]
