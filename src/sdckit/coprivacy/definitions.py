"""Coprivacy (Definition 1), δ-coprivacy (Definition 2) and their extensions as checks.

Domingo-Ferrer (2011), §3. In the request-forwarding game of Definition 1,
peer P^1 sends a request either to the system player P^0 (who always
processes it: strategy s_0^1) or to a peer P^k, k = 2..N (s_k^1); a peer
asked processes the request (s_1^k) or rejects it (s_2^k). The game is
*coprivate* when, for some k > 1, (s_k^1, s_1^k) is a pure Nash
equilibrium: P^1's best option is to ask P^k and P^k's best option is to
help. The game is given by what each outcome is worth to the players
(:class:`ForwardingGame`):

* to P^1: submitting herself, being helped by P^j, being rejected by P^j;
* to P^j, when asked: processing, rejecting (a peer who is not asked does
  nothing, and gets 0 whatever her strategy).

Assumptions where the paper leaves the model open (documented in
``docs/coprivacy.md``):

* The equilibrium is one of the whole normal-form game (every peer's
  strategy is part of the profile). A peer who is not asked is indifferent
  between her two strategies, so in an equilibrium where P^1 asks P^k the
  other peers may be "rejecters": P^1 prefers P^k to P^j when being helped by
  P^k is worth at least the *worse* of P^j's two answers. :meth:`ForwardingGame.to_game`
  builds the normal form and the tests check the closed form against
  :func:`~sdckit.coprivacy.pure_nash` on it.
* *General* coprivacy replaces privacy utilities by utilities combining
  privacy with functionality (:func:`general_forwarding_game`: a weighted sum).
* *Mixed* coprivacy is checked on the two-player game between P^1 (submit
  herself or ask P^k) and P^k (process or reject). Since every finite game has
  a mixed equilibrium, the paper notes it is only informative under
  "boundary conditions that define a subset of feasible mixed strategies":
  here, lower bounds on the probability that P^1 asks P^k and that P^k helps,
  met by some mixed equilibrium.
* *Correlated* coprivacy: a correlated (or ε-correlated) equilibrium of that
  two-player game putting at least ``min_help`` probability on (ask P^k, P^k
  helps); the largest such probability is a linear programme
  (:func:`~sdckit.coprivacy.correlated_equilibrium`).
* δ-coprivacy (Definition 2): the probability that a game drawn from a
  distribution (of players' prior leakage, of utilities) is coprivate,
  estimated by Monte Carlo with a Wilson confidence interval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from sdckit._results import FrozenResult
from sdckit._validation import RandomState, check_fraction, check_int, check_random_state
from sdckit.coprivacy.games import Game, correlated_equilibrium
from sdckit.errors import ParameterError

__all__ = [
    "CoprivacyVerdict",
    "DeltaCoprivacy",
    "ForwardingGame",
    "delta_coprivacy",
    "general_forwarding_game",
    "is_coprivate",
    "is_correlated_coprivate",
    "is_mixed_coprivate",
]

#: Largest number of peers for which :meth:`ForwardingGame.to_game` builds the normal form.
MAX_NORMAL_FORM_PEERS = 14


def _vector(values: Any, name: str, count: int | None) -> np.ndarray:
    array = np.array(values, dtype=float).ravel()
    if count is not None and array.size != count:
        raise ParameterError(f"{name} has {array.size} value(s), expected one per peer ({count})")
    if array.size == 0:
        raise ParameterError(f"{name} needs one value per peer P^2..P^N, got none")
    bad = np.flatnonzero(~np.isfinite(array))
    if len(bad):
        raise ParameterError(
            f"{name} must be finite: the value for peer {bad[0] + 1} is {array[bad[0]].item()}"
        )
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class ForwardingGame(FrozenResult):
    """The request-forwarding game of Definition 1 (Domingo-Ferrer (2011), §3), by outcome.

    Attributes
    ----------
    direct : float
        P^1's utility when she submits the request to P^0 herself.
    helped : numpy.ndarray
        Per peer P^j (j = 2..N), P^1's utility when P^j processes her request.
    rejected : numpy.ndarray
        Per peer, P^1's utility when P^j rejects it.
    process : numpy.ndarray
        Per peer, P^j's utility when asked and processing.
    reject : numpy.ndarray
        Per peer, P^j's utility when asked and rejecting.
    peers : tuple of str
        The peers' names (default ``P2`` ... ``PN``).
    """

    direct: float
    helped: np.ndarray
    rejected: np.ndarray
    process: np.ndarray
    reject: np.ndarray
    peers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not np.isfinite(self.direct):
            raise ParameterError(f"direct must be finite, got {self.direct}")
        object.__setattr__(self, "direct", float(self.direct))
        helped = _vector(self.helped, "helped", None)
        for name in ("helped", "rejected", "process", "reject"):
            object.__setattr__(self, name, _vector(getattr(self, name), name, helped.size))
        peers = tuple(self.peers) or tuple(f"P{j + 2}" for j in range(helped.size))
        if len(peers) != helped.size:
            raise ParameterError(f"peers has {len(peers)} name(s), expected {helped.size}")
        object.__setattr__(self, "peers", peers)

    @property
    def n_peers(self) -> int:
        """Number of peers P^2..P^N who may be asked."""
        return len(self.peers)

    def to_game(self) -> Game:
        """The whole game in normal form: P^1 and every peer.

        Returns
        -------
        Game
            Players ``P1`` and the peers; P^1's strategies ``P0`` (submit
            herself) and one per peer; each peer's ``process`` and ``reject``.
        """
        if self.n_peers > MAX_NORMAL_FORM_PEERS:
            raise ParameterError(
                f"the normal form of {self.n_peers} peers has {self.n_peers + 1} x "
                f"2^{self.n_peers} profiles; use is_coprivate (closed form) instead"
            )
        m = self.n_peers
        shape = (m + 1, *([2] * m))
        payoffs = np.zeros((m + 1, *shape))
        choice = np.arange(m + 1).reshape((m + 1,) + (1,) * m)
        payoffs[0] = np.broadcast_to(np.where(choice == 0, self.direct, 0.0), shape)
        for j in range(m):
            answer = np.arange(2).reshape((1,) * (j + 1) + (2,) + (1,) * (m - j - 1))
            asked = choice == j + 1
            to_requester = np.where(answer == 0, self.helped[j], self.rejected[j])
            to_peer = np.where(answer == 0, self.process[j], self.reject[j])
            payoffs[0] = np.where(asked, to_requester, payoffs[0])
            payoffs[j + 1] = np.broadcast_to(np.where(asked, to_peer, 0.0), shape)
        return Game(
            payoffs,
            players=("P1", *self.peers),
            strategies=(("P0", *self.peers), *((("process", "reject"),) * m)),
        )

    def pair(self, k: int) -> Game:
        """The two-player game between P^1 (submit herself or ask peer k) and peer k.

        Parameters
        ----------
        k : int
            The peer's position among the peers (0 for P^2).

        Returns
        -------
        Game
            P^1's strategies ``P0`` and the peer's name; the peer's
            ``process`` and ``reject``.
        """
        a = [[self.direct, self.direct], [self.helped[k], self.rejected[k]]]
        b = [[0.0, 0.0], [self.process[k], self.reject[k]]]
        return Game(
            np.array([a, b]),
            players=("P1", self.peers[k]),
            strategies=(("P0", self.peers[k]), ("process", "reject")),
        )

    def summary(self) -> str:
        """The game's outcomes per peer, as text for a person."""
        lines = [f"request-forwarding game: P1 and {self.n_peers} peer(s); direct {self.direct:g}"]
        for j, name in enumerate(self.peers[:10]):
            lines.append(
                f"  {name}: P1 helped {self.helped[j]:g}, rejected {self.rejected[j]:g}; "
                f"{name} processes {self.process[j]:g}, rejects {self.reject[j]:g}"
            )
        return "\n".join(lines)


def general_forwarding_game(
    privacy: ForwardingGame, functionality: ForwardingGame, *, weight: float = 1.0
) -> ForwardingGame:
    """General coprivacy: utilities combining privacy and functionality (Domingo-Ferrer (2011), §3).

    Each outcome's utility is ``privacy + weight * functionality``.

    Parameters
    ----------
    privacy : ForwardingGame
        The privacy utilities of each outcome.
    functionality : ForwardingGame
        The functionality (or security) utilities of the same outcomes.
    weight : float
        How much one unit of functionality is worth in units of privacy.

    Returns
    -------
    ForwardingGame
        The game with combined utilities.
    """
    if privacy.n_peers != functionality.n_peers:
        raise ParameterError(
            f"privacy has {privacy.n_peers} peers, functionality {functionality.n_peers}"
        )
    if not np.isfinite(weight):
        raise ParameterError(f"weight must be finite, got {weight}")
    return ForwardingGame(
        direct=privacy.direct + weight * functionality.direct,
        helped=privacy.helped + weight * functionality.helped,
        rejected=privacy.rejected + weight * functionality.rejected,
        process=privacy.process + weight * functionality.process,
        reject=privacy.reject + weight * functionality.reject,
        peers=privacy.peers,
    )


@dataclass(frozen=True)
class CoprivacyVerdict(FrozenResult):
    """Whether a forwarding game is coprivate, and the equilibrium that makes it so.

    Attributes
    ----------
    coprivate : bool
        The verdict.
    kind : str
        ``"pure"`` (Definition 1), ``"mixed"`` or ``"correlated"``.
    helpers : tuple of str
        The peers P^k for which the condition holds.
    equilibrium : tuple of str or None
        For a pure verdict, a whole equilibrium profile (P^1's choice, then
        each peer's strategy) with P^1 asking the first helper; None otherwise.
    strength : mapping of str to float
        Per peer, the figure the verdict rests on: for ``pure``, P^1's margin
        for asking the peer (helped minus her best alternative; >= 0 when the
        peer is a helper); for ``mixed``, 1 or 0; for ``correlated``, the
        largest probability of (ask, help) in an equilibrium.
    params : mapping
        The parameters of the check.
    """

    coprivate: bool
    kind: str
    helpers: tuple[str, ...]
    equilibrium: tuple[str, ...] | None
    strength: Mapping[str, float]
    params: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The verdict in one line and the equilibrium, as text for a person."""
        name = {"pure": "coprivate", "mixed": "mixedly coprivate"}.get(
            self.kind, f"{self.kind}ly coprivate"
        )
        if not self.coprivate:
            return f"not {name}: no peer P^k makes (ask P^k, P^k helps) an equilibrium"
        head = f"{name}: {', '.join(self.helpers)} help(s) P1 in equilibrium"
        if self.equilibrium is not None:
            head += f"\n  equilibrium: ({', '.join(self.equilibrium)})"
        return head


def _check_forwarding(game: object) -> ForwardingGame:
    if not isinstance(game, ForwardingGame):
        raise ParameterError(
            f"game must be a sdckit.coprivacy.ForwardingGame, got {type(game).__name__}"
        )
    return game


def is_coprivate(game: ForwardingGame) -> CoprivacyVerdict:
    """Definition 1 of Domingo-Ferrer (2011): is (ask P^k, P^k helps) a pure Nash equilibrium?

    For peer k the profile is an equilibrium when (i) P^k, asked, gains
    nothing by rejecting (process >= reject), and (ii) P^1 gains nothing by
    submitting herself or by asking another peer j, who is not asked and so
    may answer either way in the profile: helped_k >= direct and
    helped_k >= min(helped_j, rejected_j) for every j != k.

    Parameters
    ----------
    game : ForwardingGame
        The game, by outcome.

    Returns
    -------
    CoprivacyVerdict
        The verdict, the helpers and one whole equilibrium profile.
    """
    game = _check_forwarding(game)
    worst = np.minimum(game.helped, game.rejected)
    helpers = []
    margins = {}
    for k, name in enumerate(game.peers):
        others = np.delete(worst, k)
        alternative = max(game.direct, float(others.max()) if others.size else -np.inf)
        margins[name] = float(game.helped[k] - alternative)
        if game.process[k] >= game.reject[k] and margins[name] >= 0:
            helpers.append(k)
    equilibrium = None
    if helpers:
        k = helpers[0]
        answers = [
            "process"
            if j == k or game.helped[j] <= game.rejected[j]
            else "reject"  # the answer worse for P^1, so she has no reason to switch
            for j in range(game.n_peers)
        ]
        equilibrium = (game.peers[k], *answers)
    return CoprivacyVerdict(
        coprivate=bool(helpers),
        kind="pure",
        helpers=tuple(game.peers[k] for k in helpers),
        equilibrium=equilibrium,
        strength=margins,
    )


def _peer_verdict(
    kind: str, strength: dict[str, float], threshold: float, params: dict[str, Any]
) -> CoprivacyVerdict:
    """The verdict of a check that scores each peer: helpers score at least ``threshold``."""
    helpers = tuple(n for n, v in strength.items() if v >= threshold - 1e-9)
    return CoprivacyVerdict(bool(helpers), kind, helpers, None, strength, params)


def is_mixed_coprivate(
    game: ForwardingGame, *, min_request: float = 0.0, min_help: float = 0.0
) -> CoprivacyVerdict:
    """Mixed coprivacy (Domingo-Ferrer (2011), §3) under boundary conditions.

    For each peer k, the two-player game between P^1 (submit herself or ask
    P^k) and P^k (process or reject) is checked for a mixed Nash equilibrium
    in which P^1 asks with probability at least ``min_request`` and P^k
    processes with probability at least ``min_help``. With both bounds 0
    every game is mixedly coprivate (Nash 1951), as the paper notes. The
    equilibria of a 2 x 2 game are found exactly from the best-response
    correspondences (both players' utilities are linear in the probabilities).

    Parameters
    ----------
    game : ForwardingGame
        The game, by outcome.
    min_request : float
        Lower bound on P(P^1 asks P^k), in [0, 1].
    min_help : float
        Lower bound on P(P^k processes), in [0, 1].

    Returns
    -------
    CoprivacyVerdict
        ``kind="mixed"``; ``strength`` is 1 for the peers that qualify.
    """
    game = _check_forwarding(game)
    a = check_fraction(min_request, "min_request")
    b = check_fraction(min_help, "min_help")
    strength = {}
    for k, name in enumerate(game.peers):
        strength[name] = float(_mixed_feasible(game, k, a, b))
    return _peer_verdict("mixed", strength, 1.0, {"min_request": a, "min_help": b})


def _mixed_feasible(game: ForwardingGame, k: int, a: float, b: float) -> bool:
    """Whether some equilibrium (q = P(ask), r = P(process)) has q >= a and r >= b."""
    h, rej, d = game.helped[k], game.rejected[k], game.direct
    gain = game.process[k] - game.reject[k]

    def ask_value(r: float) -> float:  # P^1's utility of asking minus submitting herself
        return r * h + (1 - r) * rej - d

    # P^1 asks with positive probability: P^k's best response is fixed by the sign of gain.
    if gain > 0:
        candidates = [1.0]
    elif gain < 0:
        candidates = [0.0]
    else:
        candidates = [b, 1.0]
    for r in candidates:
        # q = 1 (or any q in (0, 1] when indifferent) is a best response iff asking is not worse.
        if r >= b and ask_value(r) >= 0:
            return True
    # P^1 never asks (q = 0 allowed only when a = 0): P^k is indifferent, any r.
    return a == 0 and min(ask_value(b), ask_value(1.0)) <= 0


def is_correlated_coprivate(
    game: ForwardingGame, *, epsilon: float = 0.0, min_help: float = 0.5
) -> CoprivacyVerdict:
    """Correlated (ε-correlated) coprivacy (Domingo-Ferrer (2011), §3) by linear programming.

    For each peer k, the largest probability of (P^1 asks P^k, P^k processes)
    in a correlated equilibrium (ε = 0) or ε-correlated equilibrium of the
    two-player game between them; coprivate when it reaches ``min_help``.

    Parameters
    ----------
    game : ForwardingGame
        The game, by outcome.
    epsilon : float
        The incentive to deviate allowed.
    min_help : float
        The probability of (ask, help) required, in (0, 1].

    Returns
    -------
    CoprivacyVerdict
        ``kind="correlated"``; ``strength`` holds each peer's largest probability.
    """
    game = _check_forwarding(game)
    min_help = check_fraction(min_help, "min_help", open_low=True)
    target = np.zeros((2, 2))
    target[1, 0] = 1.0
    strength = {}
    for k, name in enumerate(game.peers):
        found = correlated_equilibrium(game.pair(k), epsilon=epsilon, objective=target)
        strength[name] = float(found.distribution[1, 0])
    return _peer_verdict(
        "correlated", strength, min_help, {"epsilon": epsilon, "min_help": min_help}
    )


@dataclass(frozen=True)
class DeltaCoprivacy(FrozenResult):
    """δ-coprivacy (Definition 2) estimated by Monte Carlo.

    Attributes
    ----------
    probability : float
        The share of drawn games that were coprivate: the estimate of the
        largest δ for which the game is δ-coprivate.
    low, high : float
        The Wilson confidence interval of that probability.
    confidence : float
        The interval's level.
    n_draws : int
        Games drawn.
    n_coprivate : int
        Of which coprivate.
    params : mapping
        The parameters of the estimate.
    """

    probability: float
    low: float
    high: float
    confidence: float
    n_draws: int
    n_coprivate: int
    params: Mapping[str, Any] = field(default_factory=dict)

    def at_least(self, delta: float) -> str:
        """Whether the game is δ-coprivate for this δ, given the interval.

        Parameters
        ----------
        delta : float
            The δ of Definition 2, in [0, 1].

        Returns
        -------
        str
            ``"yes"`` (the interval lies at or above δ), ``"no"`` (below) or
            ``"undecided"`` (it straddles δ: draw more games).
        """
        delta = check_fraction(delta, "delta")
        if self.low >= delta:
            return "yes"
        if self.high < delta:
            return "no"
        return "undecided"

    def summary(self) -> str:
        """The estimate and its interval, as text for a person."""
        return (
            f"coprivate in {self.n_coprivate:,} of {self.n_draws:,} drawn games: "
            f"δ = {self.probability:.3f} ({self.confidence:.0%} interval {self.low:.3f} to "
            f"{self.high:.3f})"
        )


def delta_coprivacy(
    draw: Callable[[np.random.Generator], ForwardingGame],
    *,
    n_draws: int = 1000,
    check: Callable[[ForwardingGame], CoprivacyVerdict] = is_coprivate,
    confidence: float = 0.95,
    random_state: RandomState = None,
) -> DeltaCoprivacy:
    """δ-coprivacy (Definition 2 of Domingo-Ferrer (2011)) by Monte Carlo.

    The probability that the game is coprivate, over a distribution of games
    (e.g. of the players' prior leakage, which the definition allows to
    differ), is estimated as the share of ``n_draws`` drawn games the check
    accepts, with a Wilson interval.

    Parameters
    ----------
    draw : callable
        ``draw(rng)`` returns one :class:`ForwardingGame`.
    n_draws : int
        How many games to draw.
    check : callable
        The verdict: :func:`is_coprivate` (Definition 2), or
        :func:`is_mixed_coprivate` / :func:`is_correlated_coprivate` with
        their parameters bound (``functools.partial``) for mixed or
        correlated δ-coprivacy; on general games, general δ-coprivacy.
    confidence : float
        The interval's level, in (0, 1).
    random_state : None, int or numpy.random.Generator
        The seed of the draws.

    Returns
    -------
    DeltaCoprivacy
        The estimate, its interval and the counts.
    """
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    confidence = check_fraction(confidence, "confidence", open_low=True)
    if confidence >= 1:
        raise ParameterError(f"confidence must be below 1, got {confidence}")
    rng = check_random_state(random_state)
    hits = sum(bool(check(draw(rng)).coprivate) for _ in range(n_draws))
    low, high = proportion_confint(hits, n_draws, alpha=1 - confidence, method="wilson")
    return DeltaCoprivacy(
        probability=hits / n_draws,
        low=float(low),
        high=float(high),
        confidence=confidence,
        n_draws=n_draws,
        n_coprivate=hits,
        params={
            "n_draws": n_draws,
            "confidence": confidence,
            "check": getattr(check, "__name__", repr(check)),
        },
    )
