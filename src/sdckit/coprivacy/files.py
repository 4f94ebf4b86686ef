"""Games written in a small YAML format (the ``sdckit coprivacy game`` command reads them).

A normal-form game::

    players: [user1, user2]
    strategies:
      user1: [H, P]
      user2: [H, P]
    payoffs:                 # one line per profile: strategies, then utilities
      - [H, H, 0, 0]
      - [H, P, 1, 0]
      - [P, H, 0, 1]
      - [P, P, 0.5, 0.5]

Every profile must be listed once. A request-forwarding game of Definition 1
(Domingo-Ferrer (2011), §3), by outcome, for the coprivacy verdict::

    forwarding:
      direct: 0.2            # P1's utility when she submits herself
      peers:
        P2: {helped: 1.0, rejected: 0.2, process: 0.3, reject: 0.0}
        P3: {helped: 0.5, rejected: 0.2, process: -0.1, reject: 0.0}

A file may hold either or both. See ``docs/coprivacy.md``.
"""

from __future__ import annotations

import itertools
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from sdckit.coprivacy.definitions import ForwardingGame
from sdckit.coprivacy.games import Game
from sdckit.errors import DataError, ParameterError

__all__ = ["read_game"]

_OUTCOMES = ("helped", "rejected", "process", "reject")


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParameterError(f"{where}: {value!r} is not a number")
    if not math.isfinite(value):
        raise ParameterError(f"{where}: payoffs must be finite, got {value}")
    return float(value)


def _normal_form(spec: dict[str, Any], name: str) -> Game:
    players = spec.get("players")
    if not isinstance(players, list) or not players:
        raise ParameterError(f"{name}: 'players' must be a list of names")
    players = [str(p) for p in players]
    strategies_spec = spec.get("strategies")
    if not isinstance(strategies_spec, dict):
        raise ParameterError(f"{name}: 'strategies' must map each player to her strategies")
    unknown = [str(p) for p in strategies_spec if str(p) not in players]
    if unknown:
        raise ParameterError(
            f"{name}: strategies are given for unknown player(s) {unknown}; players are {players}"
        )
    missing = [p for p in players if p not in map(str, strategies_spec)]
    if missing:
        raise ParameterError(f"{name}: no strategies for player(s) {missing}")
    strategies = [[str(s) for s in strategies_spec[p]] for p in players]
    shape = tuple(len(s) for s in strategies)
    payoffs = np.full((len(players), *shape), np.nan)
    lines = spec.get("payoffs")
    if not isinstance(lines, list):
        raise ParameterError(f"{name}: 'payoffs' must be a list of [strategies..., utilities...]")
    n = len(players)
    for row, line in enumerate(lines, start=1):
        where = f"{name}: payoffs line {row}"
        if not isinstance(line, list) or len(line) != 2 * n:
            raise ParameterError(
                f"{where} must list {n} strategies then {n} utilities, got {line!r}"
            )
        index = []
        for player, options, value in zip(players, strategies, line[:n], strict=True):
            if str(value) not in options:
                raise ParameterError(
                    f"{where}: player {player} has no strategy {str(value)!r}; hers are {options}"
                )
            index.append(options.index(str(value)))
        if not np.isnan(payoffs[(0, *index)]):
            raise ParameterError(f"{where}: profile {line[:n]} is listed twice")
        for i, value in enumerate(line[n:]):
            payoffs[(i, *index)] = _number(value, f"{where}, utility of {players[i]}")
    absent = [
        [strategies[i][s] for i, s in enumerate(p)]
        for p in itertools.product(*(range(k) for k in shape))
        if np.isnan(payoffs[(0, *p)])
    ]
    if absent:
        raise ParameterError(f"{name}: {len(absent)} profile(s) have no payoffs, e.g. {absent[0]}")
    return Game(payoffs, players=tuple(players), strategies=tuple(map(tuple, strategies)))


def _forwarding(spec: Any, name: str) -> ForwardingGame:
    if (
        not isinstance(spec, dict)
        or "direct" not in spec
        or not isinstance(spec.get("peers"), dict)
    ):
        raise ParameterError(f"{name}: 'forwarding' needs 'direct' and a 'peers' mapping")
    peers = spec["peers"]
    values: dict[str, list[float]] = {k: [] for k in _OUTCOMES}
    for peer, outcomes in peers.items():
        if not isinstance(outcomes, dict):
            raise ParameterError(
                f"{name}: forwarding peer {peer} must map {list(_OUTCOMES)} to numbers"
            )
        extra = [k for k in outcomes if k not in _OUTCOMES]
        if extra:
            raise ParameterError(
                f"{name}: forwarding peer {peer}: unknown outcome(s) {extra}; use {list(_OUTCOMES)}"
            )
        for key in _OUTCOMES:
            if key not in outcomes:
                raise ParameterError(f"{name}: forwarding peer {peer} has no {key!r}")
            values[key].append(_number(outcomes[key], f"{name}: forwarding peer {peer}, {key}"))
    return ForwardingGame(
        direct=_number(spec["direct"], f"{name}: forwarding direct"),
        helped=np.array(values["helped"]),
        rejected=np.array(values["rejected"]),
        process=np.array(values["process"]),
        reject=np.array(values["reject"]),
        peers=tuple(str(p) for p in peers),
    )


def read_game(path: str | os.PathLike[str]) -> tuple[Game | None, ForwardingGame | None]:
    """Read a game from a YAML file (format in this module's docstring and ``docs/coprivacy.md``).

    Parameters
    ----------
    path : path
        The YAML file.

    Returns
    -------
    game : Game or None
        The normal-form game, if the file has ``players``.
    forwarding : ForwardingGame or None
        The request-forwarding game, if the file has ``forwarding``.
    """
    name = str(path)
    try:
        spec = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"cannot read the game file {name!r}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise DataError(f"{name} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(spec, dict) or not ({"players", "forwarding"} & set(spec)):
        raise ParameterError(
            f"{name}: a game file needs 'players' (a normal-form game) or 'forwarding'"
        )
    game = _normal_form(spec, name) if "players" in spec else None
    forwarding = _forwarding(spec["forwarding"], name) if "forwarding" in spec else None
    return game, forwarding
