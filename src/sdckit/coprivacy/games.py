"""Finite normal-form games: pure, mixed and correlated equilibria, dominance, Pareto set.

Domingo-Ferrer (2011), §2 recalls the notions coprivacy is built on: a game
of N players, each choosing a strategy s_i from a finite set S_i; a utility
u_i(s) per player and strategy profile s; a *dominant strategy solution*
(Expression 1) and a *Nash equilibrium* (Nash 1951). §3 adds mixed and
correlated equilibria (and ε-correlated ones, in which no player gains more
than ε by deviating). This module computes all of them for a game given as
a payoff array or as utility functions:

* pure Nash equilibria by best-response checks vectorised over the whole
  payoff array (one maximum per player along her own axis);
* dominant strategies (Expression 1) and Pareto-optimal profiles;
* mixed equilibria of two-player games with ``nashpy`` (support
  enumeration); of more players with ``pygambit`` when it is installed
  (:func:`mixed_equilibria` says which solver it used);
* correlated and ε-correlated equilibria as a linear programme solved by
  HiGHS (``scipy.optimize.linprog``), by default the one maximising the sum
  of utilities (Nisan, Roughgarden, Tardos & Vazirani (2007), §2.7).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from sdckit._results import FrozenResult
from sdckit._validation import check_positive
from sdckit.errors import InfeasibleError, ParameterError

__all__ = [
    "CorrelatedEquilibrium",
    "DominantStrategies",
    "Game",
    "MixedEquilibria",
    "correlated_equilibrium",
    "correlated_regret",
    "dominant_strategies",
    "mixed_equilibria",
    "pareto_set",
    "pure_nash",
]

Profile = tuple[int, ...]

#: Payoffs closer than this count as equal (ties are weak best responses).
TOLERANCE = 1e-9


_GAME_AND_TOLERANCE = """game : Game
        The game.
    tolerance : float
        Payoffs within this of each other count as equal."""

F = TypeVar("F", bound=Callable[..., Any])


def _shared_parameters(func: F) -> F:
    """Fill the ``{game_and_tolerance}`` parameters written once for several functions."""
    func.__doc__ = (func.__doc__ or "").replace("{game_and_tolerance}", _GAME_AND_TOLERANCE)
    return func


def _names(given: Sequence[str] | None, count: int, prefix: str, what: str) -> tuple[str, ...]:
    if given is None:
        return tuple(f"{prefix}{i + 1}" for i in range(count))
    names = tuple(str(n) for n in given)
    if len(names) != count:
        raise ParameterError(f"{what} has {len(names)} name(s) {list(names)}, expected {count}")
    if len(set(names)) != len(names):
        raise ParameterError(f"{what} repeats a name: {list(names)}")
    return names


@dataclass(frozen=True)
class Game(FrozenResult):
    """A finite game in normal form (Domingo-Ferrer (2011), §2).

    Build one from a payoff array with ``Game(payoffs, ...)`` or from utility
    functions with :meth:`Game.from_utilities`.

    Attributes
    ----------
    payoffs : numpy.ndarray
        Shape ``(N, |S_1|, ..., |S_N|)``: ``payoffs[i][s]`` is u_i(s), the
        utility of player i under the strategy profile s (a tuple of strategy
        positions). Copied and made read-only at construction.
    players : tuple of str
        The players' names (default ``P1``, ``P2``, ...).
    strategies : tuple of tuple of str
        Each player's strategy names (default ``s1``, ``s2``, ...).
    """

    payoffs: np.ndarray
    players: tuple[str, ...] = ()
    strategies: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        try:
            array = np.array(self.payoffs, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError(
                "payoffs must be a numeric array of shape (players, |S_1|, ..., |S_N|)"
            ) from None
        if array.ndim < 2:
            raise ParameterError(
                f"payoffs must have shape (players, |S_1|, ..., |S_N|), got shape {array.shape}"
            )
        n = array.ndim - 1
        if array.shape[0] != n:
            raise ParameterError(
                f"payoffs of shape {array.shape} describe {n} strategy dimension(s) but "
                f"{array.shape[0]} player(s): the first axis must have one entry per player, "
                f"shape (players, |S_1|, ..., |S_N|) = ({n}, ...)"
            )
        if any(size < 1 for size in array.shape[1:]):
            raise ParameterError(f"every player needs a strategy; payoffs shape {array.shape}")
        players = _names(self.players or None, n, "P", "players")
        given = self.strategies or (None,) * n
        if len(given) != n:
            raise ParameterError(
                f"strategies gives {len(given)} strategy list(s) for {n} player(s)"
            )
        strategies = tuple(
            _names(s, array.shape[i + 1], "s", f"strategies of player {players[i]}")
            for i, s in enumerate(given)
        )
        bad = np.argwhere(~np.isfinite(array))
        if len(bad):
            first = tuple(int(v) for v in bad[0])
            profile = ", ".join(strategies[i][s] for i, s in enumerate(first[1:]))
            raise ParameterError(
                f"payoffs must be finite: u of player {players[first[0]]} at profile ({profile}) "
                f"is {array[first].item()} ({len(bad)} non-finite payoff(s))"
            )
        array.setflags(write=False)
        object.__setattr__(self, "payoffs", array)
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "strategies", strategies)

    @classmethod
    def from_utilities(
        cls,
        utilities: Sequence[Callable[[tuple[str, ...]], float]],
        strategies: Sequence[Sequence[str]],
        *,
        players: Sequence[str] | None = None,
    ) -> Game:
        """Build a game from one utility function per player.

        Parameters
        ----------
        utilities : sequence of callable
            ``utilities[i](profile)`` is u_i of a profile given as a tuple of
            strategy names, one per player.
        strategies : sequence of sequence of str
            Each player's strategy names.
        players : sequence of str, optional
            The players' names.

        Returns
        -------
        Game
            The game with its payoff array filled by calling every function
            on every profile.
        """
        if len(utilities) != len(strategies):
            raise ParameterError(
                f"utilities gives {len(utilities)} function(s) for {len(strategies)} player(s)"
            )
        shape = tuple(len(s) for s in strategies)
        payoffs = np.empty((len(strategies), *shape))
        for profile in itertools.product(*(range(k) for k in shape)):
            named = tuple(strategies[i][s] for i, s in enumerate(profile))
            for i, utility in enumerate(utilities):
                payoffs[(i, *profile)] = utility(named)
        return cls(payoffs, players=tuple(players or ()), strategies=tuple(map(tuple, strategies)))

    @property
    def n_players(self) -> int:
        """Number of players N."""
        return len(self.players)

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of strategies of each player."""
        return tuple(self.payoffs.shape[1:])

    @property
    def n_profiles(self) -> int:
        """Number of pure strategy profiles."""
        return math.prod(self.shape)

    def profile_names(self, profile: Sequence[int]) -> tuple[str, ...]:
        """The strategy names of a profile given by positions (the inverse of ``profile_index``).

        Parameters
        ----------
        profile : sequence of int
            Strategy positions, player by player.

        Returns
        -------
        tuple of str
            Strategy names, player by player.
        """
        return tuple(self.strategies[i][s] for i, s in enumerate(profile))

    def profile_index(self, profile: Sequence[str]) -> Profile:
        """The positions of a profile given by strategy names.

        Parameters
        ----------
        profile : sequence of str
            One strategy name per player.

        Returns
        -------
        tuple of int
            One strategy position per player.
        """
        if len(profile) != self.n_players:
            raise ParameterError(
                f"a profile names one strategy per player ({self.n_players}), got {list(profile)}"
            )
        out = []
        for i, name in enumerate(profile):
            if name not in self.strategies[i]:
                raise ParameterError(
                    f"player {self.players[i]} has no strategy {name!r}; "
                    f"hers are {list(self.strategies[i])}"
                )
            out.append(self.strategies[i].index(name))
        return tuple(out)

    def utility(self, profile: Sequence[int]) -> tuple[float, ...]:
        """u_1(s), ..., u_N(s): every player's utility at the profile s of positions.

        Parameters
        ----------
        profile : sequence of int
            The profile s.

        Returns
        -------
        tuple of float
            One utility per player.
        """
        return tuple(float(self.payoffs[(i, *profile)]) for i in range(self.n_players))

    def summary(self) -> str:
        """The game's players, strategies and size, as text for a person."""
        lines = [f"game of {self.n_players} players, {self.n_profiles:,} pure profiles"]
        for name, strategies in zip(self.players, self.strategies, strict=True):
            shown = ", ".join(strategies[:8]) + (", ..." if len(strategies) > 8 else "")
            lines.append(f"  {name}: {shown}")
        return "\n".join(lines)


def _check_game(game: object) -> Game:
    if not isinstance(game, Game):
        raise ParameterError(f"game must be a sdckit.coprivacy.Game, got {type(game).__name__}")
    return game


def _best_response_mask(game: Game, player: int, tolerance: float) -> np.ndarray:
    """Where player's strategy is a best response to the others' (same shape as the profiles)."""
    own = game.payoffs[player]
    return own >= own.max(axis=player, keepdims=True) - tolerance


def pure_nash(
    game: Game, *, strict: bool = False, tolerance: float = TOLERANCE
) -> list[tuple[str, ...]]:
    """Pure-strategy Nash equilibria (Domingo-Ferrer (2011), §2).

    A profile s is an equilibrium when no player i gains by changing s_i
    alone: u_i(s_i, s_-i) >= u_i(s'_i, s_-i). The check is vectorised: per
    player, one maximum along her own axis of the payoff array and one
    comparison, so the work is a few passes over the array.

    Parameters
    ----------
    game : Game
        The game.
    strict : bool, default False
        Require every deviation to lose (u_i(s) > u_i(s'_i, s_-i)): a
        *strict* equilibrium. The default is the paper's weak inequality.
    tolerance : float
        Payoffs within this of each other count as equal.

    Returns
    -------
    list of tuple of str
        The equilibria, as strategy names per player, in array order.
    """
    game = _check_game(game)
    tolerance = check_positive(tolerance, "tolerance", allow_zero=True)
    mask = np.ones(game.shape, dtype=bool)
    for i in range(game.n_players):
        own = game.payoffs[i]
        if strict:
            top = own.max(axis=i, keepdims=True)
            second = np.sort(own, axis=i).take([-2], axis=i) if own.shape[i] > 1 else top - np.inf
            mask &= (own >= top - tolerance) & (second < top - tolerance)
        else:
            mask &= _best_response_mask(game, i, tolerance)
    return [game.profile_names(tuple(int(v) for v in p)) for p in np.argwhere(mask)]


@dataclass(frozen=True)
class DominantStrategies(FrozenResult):
    """Each player's dominant strategies and the dominant strategy solution (Expression 1).

    Attributes
    ----------
    weak : mapping of str to tuple of str
        Per player, the strategies at least as good as any other against
        every profile of the others (Domingo-Ferrer (2011), Expression 1).
    strict : mapping of str to str or None
        Per player, the strategy strictly better than every other against
        every profile of the others, if one exists.
    solution : tuple of str or None
        A dominant strategy solution (one weakly dominant strategy per
        player; the first in order when a player has several), or None.
    unique_equilibrium : bool
        Whether ``solution`` is strictly dominant, hence the unique Nash
        equilibrium.
    """

    weak: Mapping[str, tuple[str, ...]]
    strict: Mapping[str, str | None]
    solution: tuple[str, ...] | None
    unique_equilibrium: bool

    def summary(self) -> str:
        """Dominant strategies per player and the solution, as text for a person."""
        lines = []
        for player, weak in self.weak.items():
            strict = self.strict[player]
            shown = ", ".join(weak) if weak else "none"
            lines.append(
                f"  {player}: dominant {shown}" + (f" (strictly: {strict})" if strict else "")
            )
        if self.solution is None:
            head = "no dominant strategy solution"
        else:
            kind = "strictly" if self.unique_equilibrium else "weakly"
            head = f"dominant strategy solution ({', '.join(self.solution)}), {kind} dominant"
        return "\n".join([head, *lines])


@_shared_parameters
def dominant_strategies(game: Game, *, tolerance: float = TOLERANCE) -> DominantStrategies:
    """Dominant strategies of each player (Domingo-Ferrer (2011), Expression 1).

    Parameters
    ----------
    {game_and_tolerance}

    Returns
    -------
    DominantStrategies
        Weakly and strictly dominant strategies and the dominant strategy
        solution, if any.
    """
    game = _check_game(game)
    tolerance = check_positive(tolerance, "tolerance", allow_zero=True)
    weak: dict[str, tuple[str, ...]] = {}
    strict: dict[str, str | None] = {}
    for i, player in enumerate(game.players):
        own = np.moveaxis(game.payoffs[i], i, 0).reshape(game.shape[i], -1)
        best = own.max(axis=0)
        weakly = np.all(own >= best - tolerance, axis=1)
        weak[player] = tuple(game.strategies[i][s] for s in np.flatnonzero(weakly))
        strict[player] = None
        for s in np.flatnonzero(weakly):
            others = np.delete(own, s, axis=0)
            if others.size == 0 or np.all(own[s] > others.max(axis=0) + tolerance):
                strict[player] = game.strategies[i][s]
    solution = None
    if all(weak.values()):
        solution = tuple(weak[p][0] for p in game.players)
    unique = all(strict[p] is not None for p in game.players)
    return DominantStrategies(
        weak=weak, strict=strict, solution=solution, unique_equilibrium=unique
    )


@_shared_parameters
def pareto_set(game: Game, *, tolerance: float = TOLERANCE) -> list[tuple[str, ...]]:
    """Pareto-optimal pure profiles: no other profile is at least as good for all, better for one.

    Parameters
    ----------
    {game_and_tolerance}

    Returns
    -------
    list of tuple of str
        The Pareto-optimal profiles, in array order. Profiles with equal
        utility vectors are all kept.
    """
    game = _check_game(game)
    tolerance = check_positive(tolerance, "tolerance", allow_zero=True)
    points = game.payoffs.reshape(game.n_players, -1).T
    # Distinct utility vectors first: profiles sharing one stand or fall together.
    unique, inverse = np.unique(points, axis=0, return_inverse=True)
    keep = np.ones(len(unique), dtype=bool)
    block = max(1, 2_000_000 // max(1, len(unique) * game.n_players))
    for start in range(0, len(unique), block):
        chunk = unique[start : start + block]
        at_least = np.all(unique[None, :, :] >= chunk[:, None, :] - tolerance, axis=2)
        better = np.any(unique[None, :, :] > chunk[:, None, :] + tolerance, axis=2)
        keep[start : start + block] = ~np.any(at_least & better, axis=1)
    optimal = keep[inverse.ravel()]
    return [
        game.profile_names(tuple(int(v) for v in np.unravel_index(p, game.shape)))
        for p in np.flatnonzero(optimal)
    ]


@dataclass(frozen=True)
class MixedEquilibria(FrozenResult):
    """Mixed-strategy Nash equilibria of a game.

    Attributes
    ----------
    equilibria : tuple of tuple of numpy.ndarray
        Each equilibrium as one probability vector per player.
    payoffs : tuple of tuple of float
        Each equilibrium's expected utility per player.
    solver : str
        Which solver found them (``nashpy support enumeration`` for two
        players; ``pygambit ...`` for more).
    complete : bool
        Whether the solver enumerates every equilibrium of a non-degenerate
        game (support enumeration does; the N-player solvers find some).
    degenerate : bool
        Whether the game is degenerate (a best-response tie): then the
        equilibria may form continua and only their extreme points are listed.
    players : tuple of str
        The players' names.
    strategies : tuple of tuple of str
        Each player's strategy names.
    """

    equilibria: tuple[tuple[np.ndarray, ...], ...]
    payoffs: tuple[tuple[float, ...], ...]
    solver: str
    complete: bool
    degenerate: bool
    players: tuple[str, ...]
    strategies: tuple[tuple[str, ...], ...]

    def summary(self) -> str:
        """The equilibria, one line each, as text for a person."""
        lines = [
            f"{len(self.equilibria)} mixed equilibri{'um' if len(self.equilibria) == 1 else 'a'} ({self.solver})"
        ]
        if self.degenerate:
            lines.append("  the game is degenerate: equilibria may form continua")
        for eq, pay in zip(self.equilibria, self.payoffs, strict=True):
            parts = []
            for name, strategies, probs in zip(self.players, self.strategies, eq, strict=True):
                mix = ", ".join(f"{s} {p:.4g}" for s, p in zip(strategies, probs, strict=True))
                parts.append(f"{name}: {mix}")
            lines.append("  " + "; ".join(parts) + " -> " + ", ".join(f"{v:.4g}" for v in pay))
        return "\n".join(lines)


def _expected(game: Game, mix: Sequence[np.ndarray]) -> tuple[float, ...]:
    values = []
    for i in range(game.n_players):
        value: Any = game.payoffs[i]
        for probs in reversed(mix):
            value = value @ probs
        values.append(float(value))
    return tuple(values)


def _is_degenerate(game: Game, tolerance: float) -> bool:
    if game.n_players != 2:
        return False
    a, b = game.payoffs
    # Nondegenerate 2-player games: no pure strategy has two pure best responses.
    return bool(
        np.any((a >= a.max(axis=0) - tolerance).sum(axis=0) > 1)
        or np.any((b >= b.max(axis=1, keepdims=True) - tolerance).sum(axis=1) > 1)
    )


def mixed_equilibria(game: Game, *, tolerance: float = TOLERANCE) -> MixedEquilibria:
    """Mixed-strategy Nash equilibria (Nash 1951; Domingo-Ferrer (2011), §3).

    Two players: every equilibrium of a non-degenerate game by ``nashpy``'s
    support enumeration. More players: ``pygambit``'s simplicial subdivision
    (one equilibrium) when pygambit is installed; else a ParameterError says
    so.

    Parameters
    ----------
    game : Game
        The game.
    tolerance : float
        Probabilities and payoffs within this count as equal (duplicates
        are merged).

    Returns
    -------
    MixedEquilibria
        The equilibria, their expected utilities and the solver used.
    """
    game = _check_game(game)
    tolerance = check_positive(tolerance, "tolerance", allow_zero=True)
    degenerate = _is_degenerate(game, tolerance)
    found: list[tuple[np.ndarray, ...]] = []
    if game.n_players == 1:
        best = game.payoffs[0] >= game.payoffs[0].max() - tolerance
        found = [(best / best.sum(),)]
        solver, complete = "best response of a single player", True
    elif game.n_players == 2:
        import nashpy

        with warnings.catch_warnings():
            # nashpy warns on degenerate games; the result says so instead.
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            solved = nashpy.Game(game.payoffs[0], game.payoffs[1])
            found = [
                tuple(np.asarray(v, dtype=float) for v in eq) for eq in solved.support_enumeration()
            ]
        solver, complete = "nashpy support enumeration", not degenerate
    else:
        found, solver = _gambit_equilibria(game)
        complete = False
    unique: list[tuple[np.ndarray, ...]] = []
    for eq in found:
        cleaned = tuple(np.where(np.abs(v) < tolerance, 0.0, v) for v in eq)
        cleaned = tuple(v / v.sum() for v in cleaned)
        if not any(
            all(
                np.allclose(a, b, atol=max(tolerance, 1e-7))
                for a, b in zip(eq2, cleaned, strict=True)
            )
            for eq2 in unique
        ):
            unique.append(cleaned)
    return MixedEquilibria(
        equilibria=tuple(unique),
        payoffs=tuple(_expected(game, eq) for eq in unique),
        solver=solver,
        complete=complete,
        degenerate=degenerate,
        players=game.players,
        strategies=game.strategies,
    )


def _gambit_equilibria(game: Game) -> tuple[list[tuple[np.ndarray, ...]], str]:
    try:
        import pygambit
    except ImportError:
        raise ParameterError(
            f"mixed equilibria of a {game.n_players}-player game need pygambit "
            "(pip install pygambit); two-player games use nashpy"
        ) from None
    from fractions import Fraction

    tables = [
        np.vectorize(lambda v: Fraction(v).limit_denominator(10**9))(game.payoffs[i]).astype(object)
        for i in range(game.n_players)
    ]
    gbt = pygambit.Game.from_arrays(*tables)
    result = pygambit.nash.simpdiv_solve(gbt.mixed_strategy_profile(rational=True))
    out = []
    for profile in result.equilibria:
        mix = []
        for player in gbt.players:
            mix.append(np.array([float(profile[s]) for s in player.strategies]))
        out.append(tuple(mix))
    return out, "pygambit simplicial subdivision (one equilibrium)"


@dataclass(frozen=True)
class CorrelatedEquilibrium(FrozenResult):
    """A correlated (or ε-correlated) equilibrium found by linear programming.

    Attributes
    ----------
    distribution : numpy.ndarray
        Probability of each pure profile, shaped like the game's strategies.
    payoffs : tuple of float
        Each player's expected utility under the distribution.
    welfare : float
        The sum of the expected utilities.
    epsilon : float
        The ε allowed: no player gains more than ε in expectation by
        replacing a recommended strategy with another.
    regret : float
        The largest such gain the distribution actually leaves
        (:func:`correlated_regret`; at most ``epsilon`` up to the solver's
        tolerance).
    objective : str
        What the programme maximised.
    players : tuple of str
        The players' names.
    strategies : tuple of tuple of str
        Each player's strategy names.
    """

    distribution: np.ndarray
    payoffs: tuple[float, ...]
    welfare: float
    epsilon: float
    regret: float
    objective: str
    players: tuple[str, ...]
    strategies: tuple[tuple[str, ...], ...]
    params: Mapping[str, Any] = field(default_factory=dict)

    def support(self, *, minimum: float = 1e-9) -> list[tuple[tuple[str, ...], float]]:
        """The profiles with positive probability.

        Parameters
        ----------
        minimum : float
            Smallest probability listed.

        Returns
        -------
        list of (profile, probability)
            In array order.
        """
        out = []
        for p in np.argwhere(self.distribution > minimum):
            names = tuple(self.strategies[i][s] for i, s in enumerate(p))
            out.append((names, float(self.distribution[tuple(p)])))
        return out

    def summary(self) -> str:
        """The distribution's support, the payoffs and the regret, as text for a person."""
        kind = "correlated" if self.epsilon == 0 else f"{self.epsilon:g}-correlated"
        lines = [
            f"{kind} equilibrium maximising {self.objective}: welfare {self.welfare:.4g}, "
            f"payoffs ({', '.join(f'{v:.4g}' for v in self.payoffs)}), "
            f"largest gain from deviating {self.regret:.3g}"
        ]
        for profile, prob in self.support():
            lines.append(f"  ({', '.join(profile)}): {prob:.4g}")
        return "\n".join(lines)


def _deviation_gains(game: Game) -> tuple[sp.csr_matrix, list[tuple[str, str, str]]]:
    """Rows: (player i, recommended a, deviation b) -> sum_s p(s) [u_i(b, s_-i) - u_i(a, s_-i)] over s_i = a."""
    n_profiles = game.n_profiles
    index = np.arange(n_profiles).reshape(game.shape)
    rows, cols, vals = [], [], []
    labels: list[tuple[str, str, str]] = []
    row = 0
    for i, player in enumerate(game.players):
        own = game.payoffs[i]
        for a in range(game.shape[i]):
            at_a = np.take(own, a, axis=i).ravel()
            columns = np.take(index, a, axis=i).ravel()
            for b in range(game.shape[i]):
                if a == b:
                    continue
                gain = np.take(own, b, axis=i).ravel() - at_a
                rows.append(np.full(len(columns), row))
                cols.append(columns)
                vals.append(gain)
                labels.append((player, game.strategies[i][a], game.strategies[i][b]))
                row += 1
    if row == 0:
        return sp.csr_matrix((0, n_profiles)), labels
    matrix = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(row, n_profiles),
    )
    return matrix, labels


def correlated_regret(game: Game, distribution: np.ndarray) -> float:
    """The ε of a distribution over profiles: the largest expected gain from one deviation.

    For each player i and pair of her strategies (a, b), the gain of playing
    b whenever a is recommended is sum over s with s_i = a of
    p(s) [u_i(b, s_-i) - u_i(a, s_-i)]; the distribution is an ε-correlated
    equilibrium (Domingo-Ferrer (2011), §3) for every ε at least the largest
    gain, and a correlated equilibrium when that is <= 0.

    Parameters
    ----------
    game : Game
        The game.
    distribution : array-like
        Probabilities of the pure profiles, shaped like the game's strategies
        (or flat); must sum to 1.

    Returns
    -------
    float
        The largest gain, at least 0.
    """
    game = _check_game(game)
    p = np.asarray(distribution, dtype=float).ravel()
    if p.size != game.n_profiles:
        raise ParameterError(
            f"distribution has {p.size} entries, the game has {game.n_profiles} profiles"
        )
    if not np.all(np.isfinite(p)) or np.any(p < -1e-12) or abs(p.sum() - 1.0) > 1e-6:
        raise ParameterError("distribution must hold probabilities >= 0 summing to 1")
    gains, _ = _deviation_gains(game)
    if gains.shape[0] == 0:
        return 0.0
    return float(max(0.0, (gains @ p).max()))


def correlated_equilibrium(
    game: Game,
    *,
    epsilon: float = 0.0,
    objective: str | np.ndarray = "welfare",
) -> CorrelatedEquilibrium:
    """A correlated or ε-correlated equilibrium by linear programming (HiGHS).

    Variables: the probability p(s) of each pure profile. Constraints: for
    each player i and each pair of her strategies (a, b), playing b when a is
    recommended gains at most ε in expectation (ε = 0: a correlated
    equilibrium, Aumann 1974; ε > 0: the ε-correlated equilibria of
    Domingo-Ferrer (2011), §3). The programme maximises the sum of the
    players' expected utilities (``"welfare"``), the smallest of them
    (``"egalitarian"``), or any linear objective over profiles.

    Parameters
    ----------
    game : Game
        The game.
    epsilon : float, default 0
        The incentive to deviate allowed.
    objective : {"welfare", "egalitarian"} or array-like
        What to maximise; an array gives a value per profile (shaped like the
        strategies) whose expectation is maximised.

    Returns
    -------
    CorrelatedEquilibrium
        The distribution, payoffs, welfare and the regret actually left.
    """
    game = _check_game(game)
    epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
    n_profiles = game.n_profiles
    gains, _ = _deviation_gains(game)
    flat = game.payoffs.reshape(game.n_players, -1)
    extra = 0
    if isinstance(objective, str):
        if objective == "welfare":
            c = -flat.sum(axis=0)
        elif objective == "egalitarian":
            extra = 1  # a variable t <= every player's expected utility, maximised
            c = np.zeros(n_profiles)
        else:
            raise ParameterError(
                f"objective must be 'welfare', 'egalitarian' or an array over profiles, "
                f"got {objective!r}"
            )
        name = objective
    else:
        values = np.asarray(objective, dtype=float).ravel()
        if values.size != n_profiles or not np.all(np.isfinite(values)):
            raise ParameterError(
                f"objective must hold {n_profiles} finite values (one per profile), "
                f"got {values.size}"
            )
        c = -values
        name = "the given objective"
    a_ub: Any = gains
    b_ub = np.full(gains.shape[0], epsilon)
    if extra:
        c = np.concatenate([c, [-1.0]])
        a_ub = sp.vstack(
            [
                sp.hstack([gains, sp.csr_matrix((gains.shape[0], 1))]),
                sp.hstack([sp.csr_matrix(-flat), sp.csr_matrix(np.ones((game.n_players, 1)))]),
            ]
        ).tocsr()
        b_ub = np.concatenate([b_ub, np.zeros(game.n_players)])
    a_eq = sp.csr_matrix(np.concatenate([np.ones(n_profiles), np.zeros(extra)])[None, :])
    bounds = [(0.0, None)] * n_profiles + [(None, None)] * extra
    solved = linprog(
        c,
        A_ub=a_ub if a_ub.shape[0] else None,
        b_ub=b_ub if a_ub.shape[0] else None,
        A_eq=a_eq,
        b_eq=[1.0],
        bounds=bounds,
        method="highs",
    )
    if solved.status != 0:
        raise InfeasibleError(f"the correlated-equilibrium programme failed: {solved.message}")
    p = np.clip(solved.x[:n_profiles], 0.0, None)
    p /= p.sum()
    payoffs = tuple(float(v) for v in flat @ p)
    return CorrelatedEquilibrium(
        distribution=p.reshape(game.shape),
        payoffs=payoffs,
        welfare=float(sum(payoffs)),
        epsilon=epsilon,
        regret=correlated_regret(game, p),
        objective=name,
        players=game.players,
        strategies=game.strategies,
        params={"epsilon": epsilon, "objective": name},
    )
