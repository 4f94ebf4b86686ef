"""The social-network privacy-functionality game (Domingo-Ferrer (2011), §5).

* :func:`privacy_scores`: the privacy risk score PR(j) = sum_i sum_k
  β_ik V(i, j, k) of Liu & Terzi (2009), as §5 writes it.
* :func:`privacy_functionality`: PRF(j), what j sees of the others within
  ℓ links (I(j, j', k) = 1 when j' is exactly k links from j in a networkx
  graph) over 1 + PR(j).
* :func:`prf2`: its dichotomous form PRF_2 (Expression 3), each attribute
  either public or secret.
* :func:`disclosure_game`: the N-player game whose utilities are PRF_2; for
  two users and one attribute of sensitivity 1 it is Example 2's matrix.
* :func:`repeated_disclosure`: tit-for-tat and reputation protocols as
  repeated games. The paper only names these protocols (and refers to
  Domingo-Ferrer (2010b)); the strategies here are the standard ones of
  repeated games (Axelrod's tit-for-tat: disclose first, then do what the
  other did last round; a reputation rule: disclose to a neighbour whose
  share of past disclosures reaches a threshold). The ε of the
  ε-correlated equilibrium they reach is measured on the stage game
  (:func:`~sdckit.coprivacy.correlated_regret` of the empirical distribution
  of actions) and in the repeated game (the best per-round gain of a user who
  switches to hiding always, or from the last round on).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from sdckit._results import FrozenResult
from sdckit._validation import RandomState, check_fraction, check_int, check_random_state
from sdckit.coprivacy.games import Game, correlated_regret
from sdckit.errors import ParameterError

__all__ = [
    "RepeatedPlay",
    "disclosure_game",
    "prf2",
    "privacy_functionality",
    "privacy_scores",
    "repeated_disclosure",
]

#: Largest number of pure profiles :func:`disclosure_game` builds.
MAX_PROFILES = 20_000_000


def _finite(array: Any, name: str, ndim: int) -> np.ndarray:
    out = np.asarray(array, dtype=float)
    if out.ndim != ndim:
        raise ParameterError(f"{name} must have {ndim} dimension(s), got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ParameterError(f"{name} must be finite")
    if np.any(out < 0):
        raise ParameterError(f"{name} must be >= 0 (sensitivities and visibilities)")
    return out


def privacy_scores(visibility: Any, sensitivity: Any) -> np.ndarray:
    """The privacy risk score PR(j) of every user (Domingo-Ferrer (2011), §5; Liu & Terzi 2009).

    Parameters
    ----------
    visibility : array-like
        V, shape (users, attributes, ℓ): V[j, i, k-1] is the visibility of
        user j's attribute i to users at most k links away (0 hidden, 1 seen).
    sensitivity : array-like
        β, shape (attributes, ℓ): the sensitivity of attribute i to users k
        links away.

    Returns
    -------
    numpy.ndarray
        PR(j) per user.
    """
    v = _finite(visibility, "visibility", 3)
    beta = _finite(sensitivity, "sensitivity", 2)
    if v.shape[1:] != beta.shape:
        raise ParameterError(
            f"visibility has {v.shape[1]} attribute(s) x {v.shape[2]} distance(s), "
            f"sensitivity {beta.shape[0]} x {beta.shape[1]}: they must agree"
        )
    return np.einsum("jik,ik->j", v, beta)


def privacy_functionality(graph: nx.Graph, visibility: Any, sensitivity: Any) -> np.ndarray:
    """PRF(j): what user j sees of the others over 1 + PR(j) (Domingo-Ferrer (2011), §5).

    PRF(j) = sum over j' != j, attributes i and k = 1..ℓ of
    β_ik V(i, j', k) I(j, j', k), divided by 1 + PR(j), where I(j, j', k) is 1
    when j and j' are k links apart in the graph.

    Parameters
    ----------
    graph : networkx.Graph
        The social network; users are its nodes in ``graph.nodes`` order.
    visibility : array-like
        V, shape (users, attributes, ℓ), users in node order.
    sensitivity : array-like
        β, shape (attributes, ℓ).

    Returns
    -------
    numpy.ndarray
        PRF(j) per user, in node order.
    """
    v = _finite(visibility, "visibility", 3)
    pr = privacy_scores(v, sensitivity)
    beta = np.asarray(sensitivity, dtype=float)
    nodes = list(graph.nodes)
    if len(nodes) != v.shape[0]:
        raise ParameterError(f"visibility has {v.shape[0]} user(s), the graph {len(nodes)} node(s)")
    ell = v.shape[2]
    position = {node: n for n, node in enumerate(nodes)}
    # What user j' shows to users exactly k links away, per k: sum_i beta_ik V(i, j', k).
    shown = np.einsum("jik,ik->jk", v, beta)
    seen = np.zeros(len(nodes))
    for node, lengths in nx.all_pairs_shortest_path_length(graph, cutoff=ell):
        j = position[node]
        for other, k in lengths.items():
            if other != node and k >= 1:
                seen[j] += shown[position[other], k - 1]
    return seen / (1.0 + pr)


def prf2(disclosed: Any, sensitivity: Any) -> np.ndarray:
    """PRF_2(j), the dichotomous privacy-functionality score (Domingo-Ferrer (2011), Expression 3).

    PRF_2(j) = sum over j' != j and attributes i of β_i V(i, j'), divided by
    1 + sum_i β_i V(i, j): what the others publish over one plus what j
    publishes.

    Parameters
    ----------
    disclosed : array-like
        V, shape (..., users, attributes): 1 where a user publishes an
        attribute, 0 where she keeps it secret (leading axes: many
        profiles at once).
    sensitivity : array-like
        β per attribute.

    Returns
    -------
    numpy.ndarray
        PRF_2 per user, shape (..., users).
    """
    v = np.asarray(disclosed, dtype=float)
    beta = np.asarray(sensitivity, dtype=float).ravel()
    if v.ndim < 2 or v.shape[-1] != beta.size:
        raise ParameterError(
            f"disclosed must be (users, attributes) with {beta.size} attribute(s), "
            f"got shape {v.shape}"
        )
    if not np.all(np.isfinite(beta)) or np.any(beta < 0):
        raise ParameterError("sensitivity must hold finite numbers >= 0")
    own = v @ beta
    return (own.sum(axis=-1, keepdims=True) - own) / (1.0 + own)


def disclosure_game(n_users: int, sensitivity: Sequence[float] = (1.0,)) -> Game:
    """The N-player disclosure game with utilities PRF_2 (Domingo-Ferrer (2011), §5, Example 2).

    Each user chooses which attributes to publish (``P``) or hide (``H``);
    her utility is PRF_2 (Expression 3). With two users and one attribute of
    sensitivity 1 this is Example 2's matrix; for N > 2 it is the Pollution
    Game, in which hiding everything is a dominant strategy and the network
    collapses.

    Parameters
    ----------
    n_users : int
        N, at least 2.
    sensitivity : sequence of float
        β per attribute (default one attribute of sensitivity 1).

    Returns
    -------
    Game
        Players ``user1`` ...; strategies are strings of ``H``/``P``, one
        letter per attribute.
    """
    n_users = check_int(n_users, "n_users", minimum=2)
    beta = np.asarray(sensitivity, dtype=float).ravel()
    if beta.size == 0:
        raise ParameterError("sensitivity needs at least one attribute")
    choices = np.array(list(itertools.product((0.0, 1.0), repeat=beta.size)))
    m = len(choices)
    if m**n_users > MAX_PROFILES:
        raise ParameterError(
            f"{n_users} users with {beta.size} attribute(s) give {m}^{n_users} profiles, "
            f"more than {MAX_PROFILES:,}"
        )
    shown = choices @ beta  # what each strategy publishes, weighted
    total = np.zeros((m,) * n_users)
    for i in range(n_users):
        total = total + shown.reshape((1,) * i + (m,) + (1,) * (n_users - i - 1))
    payoffs = np.empty((n_users, *total.shape))
    for i in range(n_users):
        own = shown.reshape((1,) * i + (m,) + (1,) * (n_users - i - 1))
        payoffs[i] = (total - own) / (1.0 + own)
    names = tuple("".join("P" if c else "H" for c in row) for row in choices)
    return Game(
        payoffs,
        players=tuple(f"user{i + 1}" for i in range(n_users)),
        strategies=(names,) * n_users,
    )


@dataclass(frozen=True)
class RepeatedPlay(FrozenResult):
    """A repeated disclosure game played on a graph's edges by a protocol.

    Attributes
    ----------
    protocol : str
        ``"tit_for_tat"`` or ``"reputation"``.
    disclosure_rate : numpy.ndarray
        Per round, the share of (user, neighbour) pairs in which the user
        published her attribute to the neighbour.
    mean_payoff : float
        Average stage utility (PRF_2 of the pair) per user, edge and round.
    joint : numpy.ndarray
        The empirical distribution over the stage game's profiles (H/P of
        the two ends of an edge), 2 x 2, both orientations counted.
    stage_epsilon : float
        ε of ``joint`` as a correlated equilibrium of the stage game
        (:func:`~sdckit.coprivacy.correlated_regret`).
    repeated_epsilon : float
        The largest average gain per round a single user obtains by leaving
        the protocol (always hiding, or hiding from the last round on),
        against the others following it; 0 when no deviation pays.
    deviation_gains : mapping of str to float
        That gain per deviation tried.
    params : mapping
        The parameters of the run.
    """

    protocol: str
    disclosure_rate: np.ndarray
    mean_payoff: float
    joint: np.ndarray
    stage_epsilon: float
    repeated_epsilon: float
    deviation_gains: Mapping[str, float]
    params: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """Disclosure, payoff and the two ε, as text for a person."""
        gains = ", ".join(f"{k} {v:+.4f}" for k, v in self.deviation_gains.items())
        return (
            f"{self.protocol} over {len(self.disclosure_rate)} rounds: "
            f"{self.disclosure_rate.mean():.1%} of pairs disclose, mean utility "
            f"{self.mean_payoff:.3f} per pair and round (all hiding: 0, all publishing: "
            f"{self.params['sensitivity'] / (1 + self.params['sensitivity']):.3f})\n"
            f"  stage-game ε of the play: {self.stage_epsilon:.4f}; repeated-game ε "
            f"(best gain per round from leaving the protocol): {self.repeated_epsilon:.4f}\n"
            f"  gains per round by deviation: {gains}"
        )


PROTOCOLS = ("tit_for_tat", "reputation")


def _play(
    edges: np.ndarray,
    n_users: int,
    rounds: int,
    protocol: str,
    beta: float,
    noise: float,
    threshold: float,
    rng: np.random.Generator,
    deviant: int | None = None,
    deviation: str = "",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play; return per-round disclosure rates, per-user total payoff, and the 2 x 2 joint counts."""
    # Both orientations of each edge: row r is (user a discloses to b?).
    a = np.concatenate([edges[:, 0], edges[:, 1]])
    b = np.concatenate([edges[:, 1], edges[:, 0]])
    half = len(edges)
    partner = np.concatenate([np.arange(half, 2 * half), np.arange(half)])
    action = np.ones(len(a), dtype=bool)  # round 1: everyone discloses
    previous = action
    given = np.zeros(n_users)
    asked = np.zeros(n_users)
    payoff = np.zeros(n_users)
    rates = np.empty(rounds)
    joint = np.zeros((2, 2))
    for t in range(rounds):
        if t > 0:
            if protocol == "tit_for_tat":
                action = previous[partner]
            else:
                reputation = np.divide(given, asked, out=np.ones(n_users), where=asked > 0)
                action = reputation[b] >= threshold
        flips = rng.random(len(a)) < noise
        action = action ^ flips
        if deviant is not None and (deviation == "always_hide" or t == rounds - 1):
            action = np.where(a == deviant, False, action)
        previous = action
        mine = action.astype(float) * beta
        theirs = mine[partner]
        np.add.at(payoff, a, theirs / (1.0 + mine))
        np.add.at(given, a, action)
        np.add.at(asked, a, 1.0)
        rates[t] = action.mean()
        # Joint counts: (a's action, b's action), H = 0, P = 1.
        np.add.at(joint, (action.astype(int), action[partner].astype(int)), 1.0)
    return rates, payoff, joint


def repeated_disclosure(
    graph: nx.Graph,
    *,
    protocol: str = "tit_for_tat",
    rounds: int = 100,
    sensitivity: float = 1.0,
    noise: float = 0.0,
    threshold: float = 0.5,
    deviants: int = 5,
    random_state: RandomState = None,
) -> RepeatedPlay:
    """Tit-for-tat or reputation as a repeated disclosure game (Domingo-Ferrer (2011), §5).

    On every edge (j, j') of the graph, each round, j publishes her attribute
    to j' or hides it, and gets the pair's PRF_2 (Example 2's stage game with
    sensitivity β). The paper names the two protocols only; these are the
    standard repeated-game strategies: tit-for-tat (publish in round 1, then
    do what the neighbour did to you last round) and reputation (publish to
    a neighbour whose share of past publications, over all her edges, is at
    least ``threshold``). With probability ``noise`` an action is flipped
    (a user overriding her assistant, as the paper allows).

    Parameters
    ----------
    graph : networkx.Graph
        Who plays with whom; at least one edge.
    protocol : {"tit_for_tat", "reputation"}
        The protocol every user follows.
    rounds : int
        Number of rounds, at least 2.
    sensitivity : float
        β of the attribute.
    noise : float
        Probability that an action is flipped, in [0, 1].
    threshold : float
        The reputation a neighbour needs (reputation protocol), in [0, 1].
    deviants : int
        How many users (the highest-degree ones) are tried as deviants for
        the repeated-game ε.
    random_state : None, int or numpy.random.Generator
        The seed of the noise.

    Returns
    -------
    RepeatedPlay
        Disclosure over time, the payoff and the two measured ε.
    """
    if protocol not in PROTOCOLS:
        raise ParameterError(f"protocol must be one of {list(PROTOCOLS)}, got {protocol!r}")
    rounds = check_int(rounds, "rounds", minimum=2)
    noise = check_fraction(noise, "noise")
    threshold = check_fraction(threshold, "threshold")
    deviants = check_int(deviants, "deviants", minimum=0)
    if not np.isfinite(sensitivity) or sensitivity <= 0:
        raise ParameterError(f"sensitivity must be a finite number > 0, got {sensitivity!r}")
    nodes = list(graph.nodes)
    position = {node: n for n, node in enumerate(nodes)}
    edges = np.array([(position[u], position[v]) for u, v in graph.edges if u != v], dtype=int)
    if len(edges) == 0:
        raise ParameterError("graph needs at least one edge between two users")
    rng = check_random_state(random_state)
    seed = int(rng.integers(2**63 - 1))
    args = (edges, len(nodes), rounds, protocol, float(sensitivity), noise, threshold)
    rates, payoff, joint = _play(*args, np.random.default_rng(seed))
    degree = np.bincount(edges.ravel(), minlength=len(nodes))
    gains: dict[str, float] = {}
    for deviation in ("always_hide", "hide_last_round"):
        best = -np.inf
        for user in np.argsort(-degree, kind="stable")[:deviants]:
            _, deviated, _ = _play(
                *args, np.random.default_rng(seed), deviant=int(user), deviation=deviation
            )
            per_round = (deviated[user] - payoff[user]) / (rounds * degree[user])
            best = max(best, float(per_round))
        gains[deviation] = best if np.isfinite(best) else 0.0
    stage = disclosure_game(2, [sensitivity])  # Example 2 with this β
    distribution = joint / joint.sum()
    return RepeatedPlay(
        protocol=protocol,
        disclosure_rate=rates,
        mean_payoff=float(payoff.sum() / (rounds * 2 * len(edges))),
        joint=distribution,
        stage_epsilon=correlated_regret(stage, distribution),
        repeated_epsilon=max(0.0, *gains.values()),
        deviation_gains=gains,
        params={
            "protocol": protocol,
            "rounds": rounds,
            "sensitivity": float(sensitivity),
            "noise": noise,
            "threshold": threshold,
            "deviants": deviants,
            "seed": seed,
        },
    )
