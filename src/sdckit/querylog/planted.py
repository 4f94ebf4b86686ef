"""The planted-query attack on a protected search log (Götz et al. 2012).

Götz, Machanavajjhala, Wang, Xiao & Gehrke (2012) show that k-anonymity of a
search log falls to an *active* attacker who adds fake users ("sybils") to
the log before it is protected. Against user-level k-anonymity by semantic
microaggregation (Erola et al. 2011; :func:`sdckit.querylog.protect`) the
attack reads:

1. the attacker knows some of the target's queries (here: the first
   ``known_share`` of her distinct queries, in the order she asked them);
2. she adds ``k - 1`` sybils, each asking exactly those known queries as
   often as the target did, so that their taxonomy profiles equal the known
   part of the target's and the partition puts them with her;
3. in the release she finds the aggregated user whose queries are most
   often her planted ones; every other query of that user was contributed by
   the one member who is not a sybil: the target.

Against ZEALOUS (:func:`sdckit.querylog.zealous`) the attacker plants, for
each query she wants to test, enough sybils asking it that it passes the
thresholds, and reads the target's contribution off the noisy count; the
Laplace noise bounds her success by ``e^(1/lambda) / (1 + e^(1/lambda))``
for each query (differential privacy), whatever she plants.

The functions below run the attack on a real log with a chosen target, so
the truth is known, and report what the attacker learns.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import check_random_state
from sdckit.errors import ParameterError
from sdckit.querylog.protect import protect
from sdckit.querylog.reading import QueryLog, read_log
from sdckit.querylog.zealous import kept_items, zealous, zealous_parameters

__all__ = ["PlantedAttack", "planted_query_attack"]

_SYBIL = "sybil-"


def _sybil_prefix(log: QueryLog) -> str:
    """A prefix for the fake users that no real user id starts with."""
    prefix = _SYBIL
    while any(str(u).startswith(prefix) for u in log.user_ids):
        prefix = "x" + prefix
    return prefix


@dataclass(frozen=True)
class PlantedAttack(FrozenResult):
    """What a planted-query attacker learned about one target.

    Attributes
    ----------
    target : str
        The target's user id.
    method : str
        ``"microaggregation"`` or ``"zealous"``.
    n_sybils : int
        Fake users added to the log.
    n_known, n_hidden : int
        Distinct queries of the target the attacker knew, and the others.
    n_claimed : int
        Queries the attacker claims the target asked (microaggregation), or
        queries tested (ZEALOUS: hidden queries plus as many decoys).
    n_correct : int
        Claims that are true.
    precision : float
        Share of the claims that are true (ZEALOUS: accuracy of the guesses).
    recall : float
        Share of the target's hidden queries the attacker learned.
    baseline : float
        What a guess without the release achieves (0.5 for ZEALOUS's
        balanced test; the share of the log's other users' queries the
        target asked, for microaggregation).
    bound : float or None
        ZEALOUS: the largest accuracy its noise allows for one query.
    grouped_with_sybils : bool or None
        Microaggregation: the target's released user held her and only sybils.
    params : mapping
        k or epsilon/delta, and the known share.
    """

    target: str
    method: str
    n_sybils: int
    n_known: int
    n_hidden: int
    n_claimed: int
    n_correct: int
    precision: float
    recall: float
    baseline: float
    bound: float | None = None
    grouped_with_sybils: bool | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The attacker's gain first, then the set-up."""
        if self.method == "zealous":
            head = (
                f"ZEALOUS: guessing whether user {self.target} asked each of {self.n_claimed} "
                f"queries with {self.n_sybils:,} sybils planted, the attacker is right in "
                f"{self.precision:.1%} (a coin: 50%; the noise allows at most {self.bound:.1%})"
            )
        else:
            head = (
                f"semantic microaggregation (k = {self.params['k']}): {self.n_sybils} sybils "
                f"revealed {self.n_correct} of user {self.target}'s {self.n_hidden} hidden "
                f"queries ({self.recall:.0%}); {self.precision:.0%} of the "
                f"{self.n_claimed} queries claimed are hers"
            )
        return (
            f"{head}\n  the attacker knew {self.n_known} of her distinct queries "
            f"(Götz et al. 2012, planted-query attack)"
        )


def _target_queries(log: QueryLog, target: str, known_share: float) -> tuple[list, list, dict]:
    matches = np.flatnonzero(log.user_ids == str(target))
    if len(matches) == 0:
        raise ParameterError(f"target user {target!r} is not in the log")
    lines = log.line_queries[log.line_users == matches[0]]
    distinct = list(dict.fromkeys(lines.tolist()))
    if len(distinct) < 2:
        raise ParameterError(
            f"target user {target!r} asked {len(distinct)} distinct query; the attack needs 2"
        )
    n_known = min(len(distinct) - 1, max(1, math.ceil(known_share * len(distinct))))
    repeats = dict(zip(*np.unique(lines, return_counts=True), strict=True))
    return distinct[:n_known], distinct[n_known:], repeats


def planted_query_attack(
    data: str | os.PathLike[str] | pd.DataFrame | QueryLog,
    *,
    target: str,
    method: str = "microaggregation",
    k: int = 5,
    known_share: float = 0.5,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    max_queries_per_user: int = 5,
    user_column: str = "AnonID",
    query_column: str = "Query",
    random_state: int | np.random.Generator | None = None,
    **protect_options: Any,
) -> PlantedAttack:
    """Run the planted-query attack on one target of a real log.

    Parameters
    ----------
    data : path, pandas.DataFrame or QueryLog
        The original log (the attacker's sybils are added to it).
    target : str
        The user id of the target.
    method : {"microaggregation", "zealous"}
        The protection attacked: :func:`sdckit.querylog.protect` or
        :func:`sdckit.querylog.zealous`.
    k : int
        Microaggregation's k (the attacker adds k - 1 sybils).
    known_share : float
        Share of the target's distinct queries the attacker knows, in (0, 1).
    epsilon, delta, max_queries_per_user : float, float, int
        ZEALOUS's parameters.
    user_column, query_column : str
        The log's user and query columns.
    random_state : None, int or numpy.random.Generator
        Seed of the protection and of the decoy queries.
    **protect_options
        Passed to :func:`sdckit.querylog.protect` (taxonomy, levels, ...).

    Returns
    -------
    PlantedAttack
        What the attacker claimed and how much of it is true.
    """
    if method not in ("microaggregation", "zealous"):
        raise ParameterError(f"method must be 'microaggregation' or 'zealous', got {method!r}")
    if not 0.0 < float(known_share) < 1.0:
        raise ParameterError(f"known_share must be between 0 and 1, got {known_share!r}")
    rng = check_random_state(random_state)
    log = (
        data
        if isinstance(data, QueryLog)
        else read_log(data, user_column=user_column, query_column=query_column)
    )
    known, hidden, repeats = _target_queries(log, target, known_share)
    frame = log.to_frame()
    ucol, qcol = log.user_column, log.query_column
    if method == "microaggregation":
        return _attack_microaggregation(
            log, frame, str(target), known, hidden, repeats, k, rng, protect_options
        )
    return _attack_zealous(
        log,
        frame,
        str(target),
        known,
        hidden,
        epsilon,
        delta,
        max_queries_per_user,
        rng,
        (ucol, qcol),
    )


def _attack_microaggregation(
    log: QueryLog,
    frame: pd.DataFrame,
    target: str,
    known: list,
    hidden: list,
    repeats: dict,
    k: int,
    rng: np.random.Generator,
    options: dict[str, Any],
) -> PlantedAttack:
    ucol, qcol = log.user_column, log.query_column
    prefix = _sybil_prefix(log)
    planted_queries = [log.queries[q] for q in known for _ in range(int(repeats[q]))]
    sybils = pd.DataFrame(
        {
            ucol: [f"{prefix}{i}" for i in range(1, k) for _ in planted_queries],
            qcol: planted_queries * (k - 1),
        }
    )
    attacked = pd.concat([frame, sybils], ignore_index=True)
    release = protect(
        attacked, k=k, user_column=ucol, query_column=qcol, random_state=rng, **options
    )
    known_text = {str(log.queries[q]) for q in known}
    released = release.data
    planted_share = released[qcol].isin(known_text).groupby(released[ucol]).mean()
    chosen = planted_share.idxmax()
    claimed = set(released.loc[released[ucol] == chosen, qcol]) - known_text
    hidden_text = {str(log.queries[q]) for q in hidden}
    correct = claimed & hidden_text
    members = release.membership
    group = members.loc[
        members["released_user"]
        == members.loc[members["original_user"] == target, "released_user"].iloc[0],
        "original_user",
    ]
    others = set(frame.loc[frame[ucol] != target, qcol])
    return PlantedAttack(
        target=target,
        method="microaggregation",
        n_sybils=k - 1,
        n_known=len(known),
        n_hidden=len(hidden),
        n_claimed=len(claimed),
        n_correct=len(correct),
        precision=len(correct) / len(claimed) if claimed else 0.0,
        recall=len(correct) / len(hidden),
        baseline=len(hidden_text & others) / len(others) if others else 0.0,
        grouped_with_sybils=bool(
            (group == target).sum() == 1
            and group.astype(str).str.startswith(prefix).sum() == len(group) - 1
        ),
        params={"k": k, "known_share": len(known) / (len(known) + len(hidden))},
    )


def _attack_zealous(
    log: QueryLog,
    frame: pd.DataFrame,
    target: str,
    known: list,
    hidden: list,
    epsilon: float,
    delta: float,
    m: int,
    rng: np.random.Generator,
    columns: tuple[str, str],
) -> PlantedAttack:
    ucol, qcol = columns
    target_code = int(np.flatnonzero(log.user_ids == target)[0])
    asked = set(log.line_queries[log.line_users == target_code].tolist())
    pool = np.setdiff1d(np.arange(len(log.queries)), np.fromiter(asked, dtype=np.int64))
    if len(pool) < len(hidden):
        raise ParameterError("the log has too few other queries to serve as decoys")
    decoys = rng.choice(pool, size=len(hidden), replace=False).tolist()
    tested = [str(log.queries[q]) for q in hidden + decoys]
    truth = np.array([True] * len(hidden) + [False] * len(decoys))
    lam, tau_prime = zealous_parameters(epsilon=epsilon, delta=delta, max_queries_per_user=m)
    # Enough sybils per tested query that it passes tau_prime with
    # overwhelming probability whatever the target did; each sybil asks at
    # most m distinct queries, once each, so every one of them is counted.
    per_query = math.ceil(tau_prime + 10 * lam)
    slots = np.repeat(np.arange(len(tested)), per_query)
    sybil_of_slot = np.tile(np.arange(per_query), len(tested)) + per_query * (slots // m)
    n_sybils = per_query * math.ceil(len(tested) / m)
    prefix = _sybil_prefix(log)
    sybils = pd.DataFrame(
        {
            ucol: [f"{prefix}{i}" for i in sybil_of_slot],
            qcol: [tested[i] for i in slots],
        }
    )
    release = zealous(
        pd.concat([frame, sybils], ignore_index=True),
        epsilon=epsilon,
        delta=delta,
        max_queries_per_user=m,
        user_column=ucol,
        query_column=qcol,
        random_state=rng,
    )
    counts = release.data.set_index(qcol)["count"]
    # The strongest attacker: she knows exactly how many honest users other
    # than the target counted each tested query (their at most m queries).
    others = read_log(frame[frame[ucol] != target], user_column=ucol, query_column=qcol)
    kept = pd.Series(
        np.bincount(kept_items(others.user_query_counts(), m), minlength=len(others.queries)),
        index=others.queries,
    )
    guesses = np.array([counts.get(q, -np.inf) - per_query - kept.get(q, 0) >= 0.5 for q in tested])
    correct = int((guesses == truth).sum())
    return PlantedAttack(
        target=target,
        method="zealous",
        n_sybils=n_sybils,
        n_known=len(known),
        n_hidden=len(hidden),
        n_claimed=len(tested),
        n_correct=correct,
        precision=correct / len(tested),
        recall=float((guesses & truth).sum() / len(hidden)),
        baseline=0.5,
        bound=math.exp(1 / lam) / (1 + math.exp(1 / lam)),
        params={"epsilon": epsilon, "delta": delta, "m": m, "lambda": lam},
    )
