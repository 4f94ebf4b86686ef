"""False positives against true positives: benign queries and attacks, server by server.

A server's rules are judged by two shares: the attacks they block and the
honest queries they refuse. :func:`benign_corpus` draws the queries an
honest analyst runs, from the public metadata alone: cross-tabulations of
one or two variables (a continuous one by its cutpoint bins), half of them
with the mean of a continuous variable, and OLS regressions of a continuous
response on one to four other variables (a continuous predictor sometimes
through an approved transformation its declared domain admits), each on a
realistic universe — everyone, a broad population (at least half of a
categorical variable's levels) or a range of at least a third of a
continuous variable's bins. No query aims at a unit: none narrows a
universe to a rare level, which is what an intruder's universes do.

:func:`compare_servers` runs, against each server, the regression attacks
of Bleninger, Drechsler & Ronning (2011) (:func:`~sdckit.attacks.attack`),
the differencing and padding battery of Lucero et al. (2011)
(:func:`~sdckit.attacks.server_attack`, the same targets for every server)
and the benign corpus, and reports side by side the share of attacks
blocked and the share of benign queries refused. Each server receives the
strongest form of each attack its interface accepts: sdckit's server the
translation into its formula and universe languages; a
:class:`~sdckit.attacks.peers.PeerServer` the intruder's own regressors
(an artificial outlier, a strategic dummy), which a trusted research
environment or DataSHIELD's assign functions let her build.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import check_int, check_random_state
from sdckit.attacks.differencing import find_cell_targets, server_attack
from sdckit.attacks.peers import PeerServer
from sdckit.attacks.targets import (
    Answer,
    PublicMetadata,
    Refused,
    RegressionQuery,
    Target,
    attack,
    quote_level,
)
from sdckit.errors import ParameterError

__all__ = [
    "BenignQuery",
    "ServerComparison",
    "benign_corpus",
    "compare_servers",
    "run_corpus",
]


@dataclass(frozen=True)
class BenignQuery:
    """One honest request: ``analysis`` ("crosstab" or "regression") and its body."""

    analysis: str
    body: Mapping[str, Any]

    def text(self) -> str:
        """The request as one readable line.

        Returns
        -------
        str
        """
        b = self.body
        if self.analysis == "regression":
            return f"regression {b['formula']} on {b['universe']}"
        what = b["rows"] + (f" x {b['cols']}" if b.get("cols") else "")
        mean = f" with the mean of {b['mean_of']}" if b.get("mean_of") else ""
        return f"crosstab {what}{mean} on {b['universe']}"


def _levels(name: str, levels: Sequence[Any]) -> str:
    """A condition selecting ``levels`` of a categorical variable, as an analyst types it."""
    shown = [quote_level(str(level)) for level in levels]
    return f"{name} = {shown[0]}" if len(shown) == 1 else f"{name} in {{{', '.join(shown)}}}"


def _bins(metadata: PublicMetadata, name: str, rng: np.random.Generator, *, least: int) -> str:
    """A range of at least ``least`` contiguous cutpoint bins of a continuous variable."""
    bins = metadata.n_bins(name)
    width = int(rng.integers(min(least, bins), bins + 1))
    start = int(rng.integers(0, bins - width + 1))
    return f"{name} in bins {', '.join(str(b) for b in range(start, start + width))}"


def _stress_universe(metadata: PublicMetadata, rng: np.random.Generator) -> str:
    names = list(metadata.variables)
    draw = rng.random()
    if draw < 0.4:
        return "ALL"
    name = names[int(rng.integers(len(names)))]
    if metadata.is_categorical(name):
        levels = list(metadata.variables[name]["levels"])
        k = int(rng.integers((len(levels) + 1) // 2, len(levels) + 1))
        chosen = rng.choice(len(levels), k, replace=False)
        return f"{name} in {{{', '.join(quote_level(str(levels[i])) for i in sorted(chosen))}}}"
    return _bins(metadata, name, rng, least=-(-metadata.n_bins(name) // 3))


def _category(metadata: PublicMetadata, rng: np.random.Generator, kind: str) -> str:
    """One categorical condition of a realistic universe (``kind`` as in :data:`REALISTIC`)."""
    categorical = [v for v in metadata.variables if metadata.is_categorical(v)]
    groups = [(v, list(members)) for v in categorical
              for members in (metadata.variables[v].get("groups") or {}).values()]  # fmt: skip
    if kind == "group" and groups:
        name, members = groups[int(rng.integers(len(groups)))]
        return _levels(name, members)
    name = categorical[int(rng.integers(len(categorical)))]
    levels = list(metadata.variables[name]["levels"])
    if kind == "every level":
        return _levels(name, levels)
    k = 1 if kind != "few levels" else int(rng.integers(2, min(3, len(levels)) + 1))
    return _levels(name, [levels[i] for i in sorted(rng.choice(len(levels), k, replace=False))])


#: The kinds of universe of the realistic corpus and their shares (docs/attacks.md says why).
REALISTIC = {
    "everyone": 0.40,
    "one level": 0.20,
    "few levels": 0.05,
    "group": 0.10,
    "every level": 0.05,
    "bins": 0.10,
    "level and bins": 0.10,
}


def _realistic_universe(metadata: PublicMetadata, rng: np.random.Generator) -> str:
    kinds = list(REALISTIC)
    kind = kinds[int(rng.choice(len(kinds), p=list(REALISTIC.values())))]
    continuous = [v for v in metadata.variables if not metadata.is_categorical(v)]
    categorical = [v for v in metadata.variables if metadata.is_categorical(v)]
    if kind == "everyone" or (kind != "bins" and not categorical):
        return "ALL"
    if kind in ("bins", "level and bins"):
        ranged = _bins(metadata, continuous[int(rng.integers(len(continuous)))], rng, least=1)
        if kind == "bins":
            return ranged
        return f"{_category(metadata, rng, 'one level')} AND {ranged}"
    return _category(metadata, rng, kind)


def _predictor(metadata: PublicMetadata, name: str, rng: np.random.Generator) -> str:
    if metadata.is_categorical(name) or rng.random() >= 0.3:
        return name
    domain = metadata.variables[name].get("domain")
    allowed = ["square"] + (["sqrt"] if domain in ("positive", "non-negative") else [])
    allowed += ["log"] if domain == "positive" else []
    return f"{allowed[int(rng.integers(len(allowed)))]}({name})"


def benign_corpus(
    metadata: PublicMetadata | Mapping[str, Any],
    *,
    n: int = 1000,
    universes: str = "stress",
    random_state: Any = None,
) -> tuple[BenignQuery, ...]:
    """Draw ``n`` honest queries from the public metadata (module docstring).

    Parameters
    ----------
    metadata : PublicMetadata or mapping
        The server's public metadata (``{"variables": ...}``).
    n : int, default 1000
        Queries drawn: half tables, half regressions.
    universes : {"stress", "realistic"}, default "stress"
        ``"stress"``: everyone (40%), a random subset of at least half of a
        categorical variable's levels, or a range of at least a third of a
        continuous variable's bins. ``"realistic"``: the universes analysts
        write (:data:`REALISTIC`): everyone, one or a few levels, a declared
        group, every level (complete cases), a range of bins, or a level
        and a range of bins.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    tuple of BenignQuery
    """
    meta = metadata if isinstance(metadata, PublicMetadata) else PublicMetadata(metadata)
    n = check_int(n, "n", minimum=1)
    draw_universe = {"stress": _stress_universe, "realistic": _realistic_universe}.get(universes)
    if draw_universe is None:
        raise ParameterError(f"universes must be 'stress' or 'realistic', got {universes!r}")
    rng = check_random_state(random_state)
    names = list(meta.variables)
    continuous = [v for v in names if not meta.is_categorical(v)]
    if len(names) < 2 or not continuous:
        raise ParameterError(
            "benign_corpus needs at least two variables, one of them continuous, in the metadata"
        )
    out = []
    for i in range(n):
        universe = draw_universe(meta, rng)
        if i % 2 == 0:
            axes = [str(v) for v in rng.choice(names, 1 + int(rng.random() < 0.5), replace=False)]
            body: dict[str, Any] = {"universe": universe, "rows": axes[0]}
            if len(axes) > 1:
                body["cols"] = axes[1]
            means = [v for v in continuous if v not in axes]
            if means and rng.random() < 0.5:
                body["mean_of"] = str(means[int(rng.integers(len(means)))])
            out.append(BenignQuery("crosstab", body))
        else:
            response = str(continuous[int(rng.integers(len(continuous)))])
            others = [v for v in names if v != response]
            k = int(rng.integers(1, min(4, len(others)) + 1))
            chosen = [str(v) for v in rng.choice(others, k, replace=False)]
            terms = " + ".join(_predictor(meta, v, rng) for v in chosen)
            body = {"universe": universe, "formula": f"{response} ~ {terms}"}
            out.append(BenignQuery("regression", body))
    return tuple(out)


def run_corpus(
    target: Any,
    corpus: Sequence[BenignQuery],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Send every query of the corpus through ``target.ask`` and record what came back.

    Parameters
    ----------
    target : LibraryServer, ServiceTarget or PeerServer
        Anything with ``ask(analysis, body)``.
    corpus : sequence of BenignQuery
    progress : callable, optional
        Called as ``progress(done, total)`` every 50 queries and at the end.

    Returns
    -------
    DataFrame
        One row per query: ``analysis``, ``query`` (one line), ``answered``,
        ``refused_by`` (rules, comma-separated), ``reason`` (the first
        reason the server gave) and ``adjusted_by`` (the rules of an answer
        that changed the query to answer it — a category absorbed, a rare
        category left out of the universe, an aliased term dropped — each
        once, comma-separated).
    """
    ask = getattr(target, "ask", None)
    if not callable(ask):
        raise ParameterError(
            f"target must have an ask(analysis, body) method, got {type(target).__name__}"
        )
    rows = []
    for i, query in enumerate(corpus):
        answer = ask(query.analysis, dict(query.body))
        refusals = answer.get("refusals", []) if answer.get("status") != "ok" else []
        rows.append(
            {
                "analysis": query.analysis,
                "query": query.text(),
                "answered": answer.get("status") == "ok",
                "refused_by": ", ".join(dict.fromkeys(str(r.get("rule")) for r in refusals)),
                "reason": str(refusals[0].get("reason", "")) if refusals else "",
                "adjusted_by": ", ".join(
                    dict.fromkeys(
                        str(v.get("rule"))
                        for v in answer.get("verdicts", [])
                        if answer.get("status") == "ok"
                        if v.get("adjustments")
                    )
                ),
            }
        )
        if progress is not None and ((i + 1) % 50 == 0 or i + 1 == len(corpus)):
            progress(i + 1, len(corpus))
    return pd.DataFrame(rows)


class _FitOnly:
    """A peer seen by the regression attacks through ``fit`` only (the intruder's own regressors)."""

    def __init__(self, server: PeerServer, name: str) -> None:
        self.server = server
        self.name = name

    def fit(self, query: RegressionQuery) -> Answer | Refused:
        return self.server.fit(query)


@dataclass(frozen=True)
class ServerComparison(FrozenResult):
    """Attacks blocked and benign queries refused, server by server.

    Attributes
    ----------
    table : DataFrame
        One row per server: ``attacks`` (rows of the two batteries run),
        ``attacks_learned`` (those that recovered a target's value within 1%
        with the target isolated, or released a count of 1 or 2),
        ``attacks_blocked`` (share), ``worst_attack`` and ``worst_share``
        (the attack that learned most, and its share of targets),
        ``benign`` (queries), ``benign_refused`` (share) and
        ``refused_by`` (the rules behind the refusals, most frequent first).
    attacks : DataFrame
        Every attack row of every server: ``server``, ``battery``,
        ``attack`` (with the subset and background for regression rows),
        ``answered`` and ``learned`` (share of targets whose value leaked).
    benign : DataFrame
        Every benign query of every server, as :func:`run_corpus` gives it.
    """

    table: pd.DataFrame
    attacks: pd.DataFrame
    benign: pd.DataFrame

    def summary(self) -> str:
        """One line per server (the verdict), then the table.

        Returns
        -------
        str
        """
        lines = []
        for r in self.table.itertuples():
            lines.append(
                f"{r.server}: blocked {r.attacks_blocked:.0%} of {r.attacks} attacks"
                + (f" (worst: {r.worst_attack}, {r.worst_share:.0%} of its targets)"
                   if r.attacks_learned else "")
                + f"; refused {r.benign_refused:.1%} of {r.benign} benign queries."
            )  # fmt: skip
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            return "\n".join([*lines, "", self.table.to_string(index=False)])


def _regression_rows(result: Any) -> pd.DataFrame:
    t = result.table
    label = (
        t["attack"] + ", " + t["indicators"] + ", subset " + t["quantile"].map(lambda q: f"{q:g}")
    )
    return pd.DataFrame(
        {
            "battery": "regression",
            "attack": label,
            "answered": t["answered"],
            "learned": t["identified_recovered"].fillna(0.0),
            "small_counts": (t["min_units"] <= 2).astype(int),
        }
    )


def _differencing_rows(result: Any) -> pd.DataFrame:
    t = result.table
    return pd.DataFrame(
        {
            "battery": "differencing",
            "attack": t["attack"],
            "answered": t["answered"],
            "learned": t["learned"],
            "small_counts": t["small_counts"],
        }
    )


def compare_servers(
    data: pd.DataFrame,
    servers: Sequence[Any],
    *,
    sensitive: str,
    background: Sequence[str],
    corpus: Sequence[BenignQuery],
    approx: float | None = 0.025,
    quantiles: Sequence[float] = (0.0, 0.9),
    max_targets: int = 100,
    cell_targets: int = 6,
    padding_pairs: int = 20,
    random_state: Any = None,
    progress: Callable[[str], None] | None = None,
) -> ServerComparison:
    """Run both attack batteries and the benign corpus against every server (module docstring).

    Parameters
    ----------
    data : DataFrame
        The confidential file: the intruder's background knowledge and the
        truth the attacks are scored against (the servers are not given it
        through this function).
    servers : sequence
        sdckit's servers (``LibraryServer``, ``ServiceTarget``) and
        :class:`~sdckit.attacks.peers.PeerServer` comparators, each with a
        ``name``, ``metadata`` (public) and ``ask``.
    sensitive : str
        The continuous variable the attacks seek.
    background : sequence of str
        The regression attacks' background, the size variable (continuous) first.
    corpus : sequence of BenignQuery
        The benign queries (:func:`benign_corpus`).
    approx : float or None, default 0.025
        Approximate knowledge of the size variable (±2.5%).
    quantiles : sequence of float, default (0, 0.9)
        Size subsets of the regression attacks.
    max_targets : int, default 100
        Regression-attack targets per subset.
    cell_targets : int, default 6
        Units alone in their cells attacked by the differencing battery.
    padding_pairs : int, default 20
        Padded pairs per differencing target.
    random_state : None, int or numpy.random.Generator
    progress : callable, optional
        Called with a line of text as each stage starts.

    Returns
    -------
    ServerComparison
    """
    if not servers:
        raise ParameterError("servers: give at least one server to compare")
    seed = int(check_random_state(random_state).integers(0, 2**31 - 1))
    targets = find_cell_targets(
        data,
        servers[0].metadata,
        sensitive=sensitive,
        max_targets=cell_targets,
        random_state=seed,
    )
    # The regression attacks' settings, the same for every server.
    settings: dict[str, Any] = {
        "sensitive": sensitive,
        "background": list(background),
        "approx": approx,
        "quantiles": quantiles,
        "max_targets": max_targets,
        "random_state": seed,
    }
    rows, attacks, benign = [], [], []
    for server in servers:
        name = str(server.name)
        say = progress or (lambda _text: None)
        say(f"{name}: regression attacks")
        fit_target: Target = _FitOnly(server, name) if isinstance(server, PeerServer) else server
        regression = attack(data, target=fit_target, **settings)
        say(f"{name}: differencing and padding")
        differencing = server_attack(
            data,
            target=server,
            sensitive=sensitive,
            targets=targets,
            padding_pairs=padding_pairs,
            random_state=seed,
        )
        say(f"{name}: {len(corpus)} benign queries")
        answers = run_corpus(server, corpus).assign(server=name)
        battery = pd.concat(
            [_regression_rows(regression), _differencing_rows(differencing)], ignore_index=True
        ).assign(server=name)
        leaked = battery[(battery["learned"] > 0) | (battery["small_counts"] > 0)]
        worst = battery.loc[battery["learned"].idxmax()]
        reasons = (
            answers.loc[~answers["answered"], "refused_by"].str.split(", ").explode().value_counts()
        )
        rows.append(
            {
                "server": name,
                "attacks": len(battery),
                "attacks_learned": len(leaked),
                "attacks_blocked": 1.0 - len(leaked) / len(battery),
                "worst_attack": worst["attack"] if len(leaked) else "",
                "worst_share": float(worst["learned"]) if len(leaked) else 0.0,
                "benign": len(answers),
                "benign_refused": float((~answers["answered"]).mean()),
                "refused_by": ", ".join(f"{k} ({v})" for k, v in reasons.items()),
            }
        )
        attacks.append(battery)
        benign.append(answers)
    return ServerComparison(
        table=pd.DataFrame(rows),
        attacks=pd.concat(attacks, ignore_index=True)[
            ["server", "battery", "attack", "answered", "learned", "small_counts"]
        ],
        benign=pd.concat(benign, ignore_index=True),
    )
