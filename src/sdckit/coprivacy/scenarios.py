"""The paper's last two scenarios as games: vehicular networks (§6) and fingerprinted multicast (§7).

Domingo-Ferrer (2011) only sketches these scenarios, in words; the games
below are the smallest that carry his claims, and every assumption is named.
Each is checked with the package's machinery (:func:`~sdckit.coprivacy.pure_nash`,
:func:`~sdckit.coprivacy.mixed_equilibria`, :func:`~sdckit.coprivacy.is_coprivate`
on Definition 1's forwarding game, :func:`~sdckit.coprivacy.general_forwarding_game`).

**Vehicular networks (§6).** Vehicles near an event may announce it (or
endorse another's announcement); an announcement is credited only when at
least ``threshold`` vehicles endorse it (a-priori security, Raya et al.
2006), signed with a threshold signature that keeps the endorsers anonymous
among themselves (Daza et al. 2009). Assumed utilities: a credited
announcement is worth ``functionality`` to every vehicle of the game (safer,
faster roads); an endorser of a credited announcement loses
``privacy_cost / m`` where m is the number of endorsers (her chance of being
the one a tracker singles out: the paper's "the more cars originate an
announcement, the more private the originators stay"); an announcement that
is not credited is not published and costs nothing. Definition 1's
forwarding game: P^1 saw the event, ``threshold - 2`` other vehicles already
endorse it, and P^1 asks peer P^k for the last endorsement (P^0: announce
without it).

**Fingerprinted multicast and digital oblivion (§7).** A forwarder passes
content to a receiver, either with an anonymous, asymmetric fingerprint that
embeds the receiver's identity and the content's expiration date
(``fingerprint``, cost ``fingerprint_cost``) or ``plain``. A receiver may
stay ``honest`` or ``leak`` (redistribute, or use past the expiration date:
gain ``leak_gain``). A leak is detected with probability ``detection`` and
traced to the last fingerprint: the receiver's if the forwarder
fingerprinted (she loses her anonymity and pays ``receiver_penalty``),
else the forwarder's (``forwarder_penalty``: the paper's point that honest
receivers stay anonymous only if fingerprinting is done). A protocol may
audit forwarders: with probability ``audit`` a plain copy is found and costs
``audit_penalty``. Definition 1's forwarding game: P^1 is the content's
source (whose oblivion is at stake), P^0 the source unicasting every copy
herself (cost ``unicast_cost``), peer P^k a forwarder asked to fingerprint
(process) or forwarding plain (reject); the receiver downstream plays her
best response (she leaks plain content; she leaks fingerprinted content only
if ``leak_gain > detection * receiver_penalty``), and a leak costs the
source ``oblivion_loss``. Digital oblivion is this game with "leak" read as
"use past the expiration date", as the paper reduces it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sdckit._results import FrozenResult
from sdckit._validation import check_int, check_positive
from sdckit.coprivacy.definitions import (
    CoprivacyVerdict,
    ForwardingGame,
    general_forwarding_game,
    is_coprivate,
)
from sdckit.coprivacy.games import Game, MixedEquilibria, mixed_equilibria, pure_nash
from sdckit.errors import ParameterError

__all__ = [
    "ScenarioCheck",
    "check_multicast",
    "check_vehicular",
    "multicast_forwarding_games",
    "multicast_game",
    "vehicular_forwarding_games",
    "vehicular_game",
]

#: Largest number of vehicles of the normal-form game (2^N profiles).
MAX_VEHICLES = 20


def _nonnegative(value: Any, name: str) -> float:
    return float(check_positive(value, name, allow_zero=True))


def _probability(value: Any, name: str) -> float:
    number = _nonnegative(value, name)
    if number > 1:
        raise ParameterError(f"{name} must be a probability in [0, 1], got {value!r}")
    return number


def _identical_peers(n_peers: int, direct: float, *outcomes: float) -> ForwardingGame:
    """A forwarding game whose ``n_peers`` peers are alike: helped, rejected, process, reject."""
    helped, rejected, process, reject = (np.full(n_peers, v) for v in outcomes)
    return ForwardingGame(direct, helped, rejected, process, reject)


def vehicular_game(
    n_vehicles: int, *, threshold: int, functionality: float, privacy_cost: float
) -> Game:
    """The N-vehicle announcement game of §6 (module notes give the utilities).

    Parameters
    ----------
    n_vehicles : int
        Vehicles near the event, 1..20 (the normal form has 2^N profiles).
    threshold : int
        Endorsements an announcement needs to be credited, 1..N.
    functionality : float
        What a credited announcement is worth to each vehicle (>= 0).
    privacy_cost : float
        What an endorser loses if singled out; she loses it divided by the
        number of endorsers (>= 0).

    Returns
    -------
    Game
        Players ``V1`` ... ``VN``, each with strategies ``announce`` and ``silent``.
    """
    n = check_int(n_vehicles, "n_vehicles", minimum=1)
    if n > MAX_VEHICLES:
        raise ParameterError(f"n_vehicles must be at most {MAX_VEHICLES}, got {n}")
    t = check_int(threshold, "threshold", minimum=1)
    if t > n:
        raise ParameterError(f"threshold {t} is larger than the number of vehicles ({n})")
    f = _nonnegative(functionality, "functionality")
    c = _nonnegative(privacy_cost, "privacy_cost")
    announce = np.indices((2,) * n) == 0  # strategy 0 is "announce"
    endorsers = announce.sum(axis=0)
    credited = endorsers >= t
    share = np.where(credited, c / np.maximum(endorsers, 1), 0.0)
    payoffs = np.where(credited, f, 0.0) - np.where(announce, share, 0.0)
    return Game(
        payoffs,
        players=tuple(f"V{i + 1}" for i in range(n)),
        strategies=(("announce", "silent"),) * n,
    )


def vehicular_forwarding_games(
    *, threshold: int, functionality: float, privacy_cost: float, n_peers: int = 1
) -> tuple[ForwardingGame, ForwardingGame]:
    """Definition 1 for §6: P^1 asks a peer for the last endorsement she needs.

    ``max(threshold - 2, 0)`` other vehicles already endorse; P^0 is
    announcing without the peer (credited only if ``threshold`` is 1); when
    the peer rejects, P^1 is left as if she had announced alone.

    Parameters
    ----------
    threshold : int
        Endorsements needed, at least 1.
    functionality, privacy_cost : float
        As in :func:`vehicular_game`.
    n_peers : int
        Identical peers P^2..P^{n+1} who may be asked.

    Returns
    -------
    privacy : ForwardingGame
        The privacy utilities alone (Definition 1).
    general : ForwardingGame
        Privacy plus functionality (general coprivacy, §3 and §6).
    """
    t = check_int(threshold, "threshold", minimum=1)
    m = check_int(n_peers, "n_peers", minimum=1)
    f = _nonnegative(functionality, "functionality")
    c = _nonnegative(privacy_cost, "privacy_cost")
    committed = max(t - 2, 0)
    alone = committed + 1 >= t  # credited without the peer (t = 1)
    together = committed + 2
    alone_privacy = -c / (committed + 1) if alone else 0.0

    # A rejected P^1 is left as if she had announced alone (rejected = direct).
    privacy = _identical_peers(m, alone_privacy, -c / together, alone_privacy, -c / together, 0.0)
    worth = f if alone else 0.0
    # A peer who rejects still enjoys an alert credited without her.
    functional = _identical_peers(m, worth, f, worth, f, worth)
    return privacy, general_forwarding_game(privacy, functional)


def multicast_game(
    *,
    fingerprint_cost: float,
    detection: float,
    forwarder_penalty: float,
    receiver_penalty: float,
    leak_gain: float,
    audit: float = 0.0,
    audit_penalty: float = 0.0,
) -> Game:
    """The forwarder-receiver stage game of §7 (module notes give the utilities).

    Parameters
    ----------
    fingerprint_cost : float
        The forwarder's cost of embedding an anonymous fingerprint (>= 0).
    detection : float
        Probability that a leak is found and traced, in [0, 1].
    forwarder_penalty : float
        What the forwarder loses when a leak is traced to her (identified
        and punished) because she forwarded plain content.
    receiver_penalty : float
        What the receiver loses when her leak is traced to her fingerprint.
    leak_gain : float
        What the receiver gains by leaking (> 0).
    audit : float
        Probability that a plain copy is found by an audit, in [0, 1].
    audit_penalty : float
        What the forwarder loses then.

    Returns
    -------
    Game
        Players ``forwarder`` (``fingerprint``, ``plain``) and ``receiver``
        (``honest``, ``leak``).
    """
    e = _nonnegative(fingerprint_cost, "fingerprint_cost")
    d = _probability(detection, "detection")
    pf = _nonnegative(forwarder_penalty, "forwarder_penalty")
    pr = _nonnegative(receiver_penalty, "receiver_penalty")
    g = _nonnegative(leak_gain, "leak_gain")
    if g == 0:
        raise ParameterError("leak_gain must be above 0 (else nobody has a reason to leak)")
    a = _probability(audit, "audit")
    q = _nonnegative(audit_penalty, "audit_penalty")
    forwarder = [[-e, -e], [-a * q, -a * q - d * pf]]
    receiver = [[0.0, g - d * pr], [0.0, g]]
    return Game(
        np.array([forwarder, receiver]),
        players=("forwarder", "receiver"),
        strategies=(("fingerprint", "plain"), ("honest", "leak")),
    )


def multicast_forwarding_games(
    *, unicast_cost: float, oblivion_loss: float, n_peers: int = 1, **stage: float
) -> tuple[ForwardingGame, ForwardingGame]:
    """Definition 1 for §7: the source asks a forwarder to fingerprint (module notes).

    Parameters
    ----------
    unicast_cost : float
        The source's cost of fingerprinting and sending every copy herself.
    oblivion_loss : float
        What a leak (or use past the expiration date) costs the source.
    n_peers : int
        Identical forwarders who may be asked.
    **stage : float
        The parameters of :func:`multicast_game` (``fingerprint_cost``,
        ``detection``, ``forwarder_penalty``, ``receiver_penalty``,
        ``leak_gain`` and optionally ``audit``, ``audit_penalty``).

    Returns
    -------
    privacy : ForwardingGame
        Privacy utilities alone: the source's oblivion, the forwarder's
        anonymity (lost with ``forwarder_penalty`` when traced).
    general : ForwardingGame
        Plus the costs (unicast, fingerprinting, audit).
    """
    game = multicast_game(**stage)  # checks the parameters
    m = check_int(n_peers, "n_peers", minimum=1)
    loss = _nonnegative(oblivion_loss, "oblivion_loss")
    unicast = _nonnegative(unicast_cost, "unicast_cost")
    d = float(stage["detection"])
    leaks_if_marked = float(stage["leak_gain"]) > d * float(stage["receiver_penalty"])
    marked = -loss if leaks_if_marked else 0.0
    fingerprint, plain_audited = game.payoffs[0, 0, 0], game.payoffs[0, 1, 0]
    # direct, helped, rejected (source); process, reject (forwarder)
    privacy = _identical_peers(
        m, marked, marked, -loss, 0.0, -d * float(stage["forwarder_penalty"])
    )
    costs = _identical_peers(m, -unicast, 0.0, 0.0, fingerprint, plain_audited)
    return privacy, general_forwarding_game(privacy, costs)


@dataclass(frozen=True)
class ScenarioCheck(FrozenResult):
    """A scenario's game, its equilibria and its coprivacy verdicts.

    Attributes
    ----------
    scenario : {"vehicular", "multicast"}
        Which of the paper's scenarios (§6 or §7) was checked, with ``game``
        its normal-form game (a :class:`~sdckit.coprivacy.Game`).
    game : Game
        The normal-form game of the scenario.
    equilibria : list of tuple of str
        Its pure Nash equilibria.
    mixed : MixedEquilibria or None
        Its mixed equilibria (the two-player multicast game).
    privacy_verdict, general_verdict : CoprivacyVerdict
        Definition 1 on the forwarding game with privacy utilities alone, and
        general coprivacy with functionality (or costs) added.
    findings : tuple of str
        What the check says about the paper's claims, one sentence each.
    params : mapping
        The parameters.
    """

    scenario: str
    game: Game
    equilibria: list[tuple[str, ...]]
    mixed: MixedEquilibria | None
    privacy_verdict: CoprivacyVerdict
    general_verdict: CoprivacyVerdict
    findings: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The verdicts first, then the equilibria and findings.

        Returns
        -------
        str
            Several lines for a person.
        """
        lines = [
            f"{self.scenario}: general coprivacy "
            f"{'holds' if self.general_verdict.coprivate else 'does not hold'}; with privacy "
            f"utilities alone (Definition 1) it "
            f"{'holds' if self.privacy_verdict.coprivate else 'does not hold'}",
            f"  parameters: {', '.join(f'{k} {v:g}' for k, v in self.params.items())}",
        ]
        shown = self.equilibria[:8]
        more = f" (and {len(self.equilibria) - 8} more)" if len(self.equilibria) > 8 else ""
        lines.append(
            f"  pure Nash equilibria of the {self.game.n_players}-player game: "
            + ("; ".join("(" + ", ".join(p) + ")" for p in shown) or "none")
            + more
        )
        if self.mixed is not None:
            for mix in self.mixed.equilibria[:3]:
                lines.append(
                    "  mixed equilibrium: "
                    + "; ".join(
                        ", ".join(f"{s} {p:.3f}" for s, p in zip(names, probs, strict=True))
                        for names, probs in zip(self.game.strategies, mix, strict=True)
                    )
                )
        lines.extend(f"  - {text}" for text in self.findings)
        return "\n".join(lines)


def check_vehicular(
    *,
    n_vehicles: int = 6,
    threshold: int = 3,
    functionality: float = 1.0,
    privacy_cost: float = 2.0,
) -> ScenarioCheck:
    """Check §6's claims on the announcement game and its forwarding game.

    Parameters
    ----------
    n_vehicles, threshold, functionality, privacy_cost : int or float
        As in :func:`vehicular_game` (the first two are whole numbers).

    Returns
    -------
    ScenarioCheck
        Equilibria, verdicts and findings.
    """
    params: dict[str, Any] = {
        "n_vehicles": n_vehicles,
        "threshold": threshold,
        "functionality": functionality,
        "privacy_cost": privacy_cost,
    }
    game = vehicular_game(
        n_vehicles, threshold=threshold, functionality=functionality, privacy_cost=privacy_cost
    )
    privacy, general = vehicular_forwarding_games(
        threshold=threshold, functionality=functionality, privacy_cost=privacy_cost
    )
    equilibria = pure_nash(game)
    sizes = sorted({p.count("announce") for p in equilibria})
    credited = [n for n in sizes if n >= threshold]
    endorsers = max(threshold, 2)
    findings = [
        (
            f"equilibria that credit the alert have exactly {threshold} endorser(s), never "
            "more: once it is credited a further endorser would only pay to raise the others' "
            "privacy, so 'the more announcers, the more privacy' does not by itself bring them"
            if credited
            else f"no equilibrium credits the alert: functionality {functionality:g} < "
            f"privacy_cost / {threshold} = {privacy_cost / threshold:g}"
        ),
        f"equilibria with {', '.join(str(n) for n in sizes if n < threshold) or 'no'} "
        "announcer(s) credit nothing (nobody can make the alert credited alone): the "
        "protocol must coordinate, as a correlated equilibrium does",
        f"the last endorser helps if and only if functionality >= privacy_cost / {endorsers} "
        f"(here {functionality:g} vs {privacy_cost / endorsers:g}: she "
        f"{'does' if functionality >= privacy_cost / endorsers else 'does not'})"
        + (
            "; with threshold 1 she never does: the alert is credited without her, so "
            "endorsing only costs her privacy"
            if threshold == 1
            else ""
        ),
        "with privacy utilities alone no vehicle endorses (it only costs privacy): the "
        "coprivacy of vehicular networks is general coprivacy, as the paper says",
    ]
    return _checked("vehicular", game, equilibria, None, (privacy, general), findings, params)


def check_multicast(
    *,
    fingerprint_cost: float = 1.0,
    detection: float = 0.5,
    forwarder_penalty: float = 10.0,
    receiver_penalty: float = 10.0,
    leak_gain: float = 2.0,
    unicast_cost: float = 5.0,
    oblivion_loss: float = 10.0,
    audit: float = 0.0,
    audit_penalty: float = 0.0,
) -> ScenarioCheck:
    """Check §7's claims: who fingerprints, who leaks, and Definition 1's verdict.

    The forwarder-receiver stage game gets its pure and mixed equilibria; the
    source's forwarding game (privacy alone, then with the costs) its
    coprivacy verdicts.

    Parameters
    ----------
    fingerprint_cost, detection, forwarder_penalty, receiver_penalty, leak_gain : float
        As in :func:`multicast_game`.
    unicast_cost, oblivion_loss : float
        As in :func:`multicast_forwarding_games`.
    audit, audit_penalty : float
        As in :func:`multicast_game`.

    Returns
    -------
    ScenarioCheck
        Equilibria (pure and mixed), verdicts and findings.
    """
    stage: dict[str, Any] = {
        "fingerprint_cost": fingerprint_cost,
        "detection": detection,
        "forwarder_penalty": forwarder_penalty,
        "receiver_penalty": receiver_penalty,
        "leak_gain": leak_gain,
        "audit": audit,
        "audit_penalty": audit_penalty,
    }
    game = multicast_game(**stage)
    privacy, general = multicast_forwarding_games(
        **stage, unicast_cost=unicast_cost, oblivion_loss=oblivion_loss
    )
    equilibria = pure_nash(game)
    cooperative = ("fingerprint", "honest") in equilibria
    deterred = leak_gain <= detection * receiver_penalty
    findings = [
        f"(fingerprint, honest) is {'' if cooperative else 'not '}a pure equilibrium of the "
        "stage game: it needs a deterred receiver (leak_gain <= detection x receiver_penalty: "
        f"{'yes' if deterred else 'no'}) and a forwarder who pays no more to fingerprint than "
        f"an audit costs her (fingerprint_cost <= audit x audit_penalty: "
        f"{'yes' if fingerprint_cost <= audit * audit_penalty else 'no'}); facing an honest "
        "receiver, fingerprinting protects nobody's privacy, so without an audit the "
        "forwarder only fingerprints at random (mixed equilibrium)",
        "in Definition 1's forwarding game, where the receiver leaks whatever is not "
        "fingerprinted, the forwarder helps the source's oblivion to keep her own anonymity "
        "exactly when fingerprint_cost <= audit x audit_penalty + detection x "
        f"forwarder_penalty ({fingerprint_cost:g} vs "
        f"{audit * audit_penalty + detection * forwarder_penalty:g}): the coprivacy the paper "
        "asserts holds under that condition, not unconditionally",
    ]
    params = {**stage, "unicast_cost": unicast_cost, "oblivion_loss": oblivion_loss}
    mixed = mixed_equilibria(game)
    return _checked("multicast", game, equilibria, mixed, (privacy, general), findings, params)


def _checked(
    scenario: str,
    game: Game,
    equilibria: list[tuple[str, ...]],
    mixed: MixedEquilibria | None,
    forwarding: tuple[ForwardingGame, ForwardingGame],
    findings: list[str],
    params: dict[str, Any],
) -> ScenarioCheck:
    """The check of a scenario, with both coprivacy verdicts."""
    return ScenarioCheck(
        scenario=scenario,
        game=game,
        equilibria=equilibria,
        mixed=mixed,
        privacy_verdict=is_coprivate(forwarding[0]),
        general_verdict=is_coprivate(forwarding[1]),
        findings=tuple(findings),
        params=params,
    )
