"""Coprivacy in P2P anonymous keyword search: a simulator (Domingo-Ferrer (2011), §4).

N peers issue queries over time. Each keeps Y^i, the multiset of queries the
search engine (the system player P^0) has received from her, and F^i(x), how
often she has forwarded her query x to each other peer. Privacy utilities are
Shannon entropies: of Y^i (privacy vs the engine) and of F^i(x) (privacy vs
the other peers). When P^i originates x at time t + 1:

* she submits it herself (S_ii) if H(Y^i(t+1)) >= H(Y^i(t)) with x added;
* otherwise she forwards it (S_ik) to the peer k chosen by Expression (2);
* P^k submits it (T_ki) if that strictly raises H(Y^k), else ignores it
  (T_kk); P^i then tries the next best peer, up to ``max_attempts`` peers,
  and finally submits x herself. With fewer other peers than
  ``max_attempts``, she submits it herself as soon as every other peer has
  refused it (a peer is never asked twice for one query); such queries are
  counted apart (:attr:`P2PSimulation.exhausted`), since they stop before
  ``max_attempts`` for want of peers, not by the rule.

**Expression (2) is misprinted in the paper**: it takes the argmax over j of
H(F^j(x, t+1)), the forwarding sets of *other* peers, while the text says the
query goes to the peer "vs whom the privacy loss is minimum", spreading the
submissions of a query as evenly as possible over the peers. This module
implements the intended rule: k = argmax over j != i of H(F^i(x, t+1)) with
P^j added to the peers that have received x from P^i — i.e. a peer to whom
P^i has forwarded x least often (ties broken at random, with the seed).
Every forwarding attempt counts in F^i, accepted or not: the peer asked has
learned that P^i asked x either way.

When P^k accepts, P^i's best strategy is S_ik (submitting herself lowers
her entropy vs the engine) and P^k's is T_ki (it raises hers), so
(S_ik, T_ki) is a pure Nash equilibrium between them: the situation is
coprivate (Definition 1). The simulator records, for every query, whether
it was submitted directly, forwarded and accepted (coprivate), or forwarded
and rejected by every peer tried; δ, the share of forwarding situations that
found a coprivate peer, is the empirical δ of Definition 2.

Entropies are updated incrementally: with n items of counts c, H = log2 n -
(1/n) sum c log2 c, and adding one x changes one term of the sum, so each
decision costs O(1) (plus, rarely, a scan of the peers when P^i has already
forwarded x to every one of them).

Workloads: :func:`log_workload` takes a real search log (the AOL 2006 format,
read with :func:`sdckit.querylog.read_log`) and maps queries to their exact
text or to taxonomy categories (:class:`sdckit.querylog.QueryClassifier`);
:func:`zipf_workload` draws topics from per-peer Zipf distributions.
Domingo-Ferrer & González-Nicolás (2011) report the paper's empirical
results; the paper itself makes no quantitative claim.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import RandomState, check_int, check_random_state
from sdckit.errors import DataError, ParameterError

__all__ = [
    "P2PSimulation",
    "Workload",
    "log_workload",
    "simulate_p2p",
    "zipf_workload",
]

#: Outcome codes of a query.
DIRECT, COPRIVATE, REJECTED = 0, 1, 2


@dataclass(frozen=True)
class Workload(FrozenResult):
    """Queries in time order: who originated each, and its topic.

    Attributes
    ----------
    originators : numpy.ndarray
        Per query, the originating peer (0-based, int32).
    topics : numpy.ndarray
        Per query, its topic code (the query text or category, int32).
    peer_names : tuple of str
        The peers' names (user ids of a log).
    topic_names : tuple of str
        The topics' names.
    source : str
        Where the workload came from.
    """

    originators: np.ndarray
    topics: np.ndarray
    peer_names: tuple[str, ...]
    topic_names: tuple[str, ...]
    source: str = ""

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return len(self.originators)

    @property
    def n_peers(self) -> int:
        """Number of peers."""
        return len(self.peer_names)


def zipf_workload(
    n_peers: int,
    n_queries: int,
    *,
    n_topics: int = 1000,
    exponent: float = 1.0,
    random_state: RandomState = None,
) -> Workload:
    """A synthetic workload: each peer draws topics from her own Zipf distribution.

    Peer i's r-th favourite topic has probability proportional to
    1 / r^exponent; favourites are a random permutation per peer, so peers
    differ in what they search for most. Originators are uniform.

    Parameters
    ----------
    n_peers : int
        Number of peers, at least 2.
    n_queries : int
        Number of queries.
    n_topics : int
        Number of topics.
    exponent : float
        The Zipf exponent (> 0).
    random_state : None, int or numpy.random.Generator
        The seed.

    Returns
    -------
    Workload
        Queries in time order.
    """
    n_peers = check_int(n_peers, "n_peers", minimum=2)
    n_queries = check_int(n_queries, "n_queries", minimum=1)
    n_topics = check_int(n_topics, "n_topics", minimum=1)
    if not np.isfinite(exponent) or exponent <= 0:
        raise ParameterError(f"exponent must be a finite number > 0, got {exponent!r}")
    rng = check_random_state(random_state)
    weights = 1.0 / np.arange(1, n_topics + 1) ** exponent
    cumulative = np.cumsum(weights / weights.sum())
    originators = rng.integers(0, n_peers, n_queries).astype(np.int32)
    ranks = np.minimum(np.searchsorted(cumulative, rng.random(n_queries)), n_topics - 1)
    favourites = np.argsort(rng.random((n_peers, n_topics)), axis=1).astype(np.int32)
    topics = favourites[originators, ranks]
    return Workload(
        originators=originators,
        topics=topics.astype(np.int32),
        peer_names=tuple(f"peer{i + 1}" for i in range(n_peers)),
        topic_names=tuple(f"topic{t + 1}" for t in range(n_topics)),
        source=f"Zipf({exponent:g}) over {n_topics} topics",
    )


def log_workload(
    log: str | Path | pd.DataFrame,
    *,
    topics: str = "category",
    taxonomy: Any = "odp239",
    level: int = 1,
    user_column: str = "AnonID",
    query_column: str = "Query",
    time_column: str | None = "QueryTime",
) -> Workload:
    """A workload from a real search log: its users are the peers, in time order.

    Parameters
    ----------
    log : path or pandas.DataFrame
        A search log (AOL 2006 format or any table with user and query
        columns), read through :func:`sdckit.querylog.read_log`.
    topics : {"category", "query"}
        What a query's topic is: its taxonomy category at ``level`` (the
        first classified term's first category; unclassified queries are one
        topic, ``(unclassified)``), or its exact text.
    taxonomy : str or Taxonomy
        For ``"category"``: a taxonomy :func:`sdckit.querylog.load_taxonomy`
        accepts (default ODP239).
    level : int
        The taxonomy depth of a category.
    user_column, query_column : str
        The log's user and query columns.
    time_column : str or None
        Column to order the queries by (stable); None keeps the file order.

    Returns
    -------
    Workload
        One peer per user.
    """
    from sdckit.querylog import QueryClassifier, load_taxonomy, read_log

    if topics not in ("category", "query"):
        raise ParameterError(f"topics must be 'category' or 'query', got {topics!r}")
    level = check_int(level, "level", minimum=1)
    if isinstance(log, pd.DataFrame):
        frame = log
    else:
        try:
            with open(log, encoding="utf-8") as handle:
                sep = "\t" if "\t" in handle.readline() else ","
            frame = pd.read_csv(
                log, sep=sep, dtype=str, keep_default_na=False, quoting=3 if sep == "\t" else 0
            )
        except OSError as exc:
            raise DataError(f"cannot read the search log {str(log)!r}: {exc.strerror}") from None
    if time_column is not None:
        if time_column not in frame.columns:
            raise ParameterError(
                f"time_column {time_column!r} is not a column of the log; it has "
                f"{list(frame.columns)} (give time_column=None to keep the file order)"
            )
        frame = frame.sort_values(time_column, kind="stable")
    coded = read_log(frame, user_column=user_column, query_column=query_column)
    if topics == "query":
        topic_codes = coded.line_queries
        names = tuple(str(q) for q in coded.queries)
    else:
        classifier = QueryClassifier(load_taxonomy(taxonomy), levels=level)
        matrices, _, _, _ = classifier.classify(list(coded.queries))
        matrix = matrices[level - 1].tocsr()
        index = classifier.category_index[level - 1]
        labels = ["/".join(path) for path, _ in sorted(index.items(), key=lambda kv: kv[1])]
        first = np.full(matrix.shape[0], len(labels), dtype=np.int64)
        has = np.diff(matrix.indptr) > 0
        first[has] = matrix.indices[matrix.indptr[:-1][has]]
        topic_codes = first[coded.line_queries]
        names = (*labels, "(unclassified)")
    return Workload(
        originators=coded.line_users.astype(np.int32),
        topics=np.asarray(topic_codes, dtype=np.int32),
        peer_names=tuple(str(u) for u in coded.user_ids),
        topic_names=tuple(names),
        source=str(coded.source),
    )


@dataclass(frozen=True)
class P2PSimulation(FrozenResult):
    """The outcome of a P2P anonymous keyword search simulation (Domingo-Ferrer (2011), §4).

    Attributes
    ----------
    outcomes : numpy.ndarray
        Per query: 0 submitted directly, 1 forwarded and submitted by a peer
        (a coprivate situation: (S_ik, T_ki) is a Nash equilibrium), 2
        forwarded but rejected by every peer tried, then self-submitted.
    submitters : numpy.ndarray
        Per query, the peer who submitted it to the engine.
    attempts : numpy.ndarray
        Per query, how many peers were asked (0 for a direct submission).
    exhausted : numpy.ndarray
        Per query (bool): forwarded, refused by every other peer before
        ``max_attempts`` attempts (there were fewer other peers), then
        self-submitted. A subset of outcome 2.
    per_peer : pandas.DataFrame
        One row per peer: queries originated, entropy of her queries (what
        the engine would see without the protocol) and of what it saw with
        it, shares forwarded and accepted, requests received and accepted,
        the largest share of her queries any single other peer learned, and
        the mean entropy of her forwarding sets H(F^i(x)).
    timeline : pandas.DataFrame
        At checkpoints: mean entropy vs the engine with and without the
        protocol, the cumulative shares forwarded and accepted, and δ.
    params : mapping
        The parameters of the run.
    """

    outcomes: np.ndarray
    submitters: np.ndarray
    attempts: np.ndarray
    exhausted: np.ndarray
    per_peer: pd.DataFrame
    timeline: pd.DataFrame
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def forwarded_share(self) -> float:
        """Share of queries the originator wanted to forward."""
        return float(np.mean(self.outcomes != DIRECT)) if len(self.outcomes) else 0.0

    @property
    def delta(self) -> float:
        """Share of forwarding situations in which a peer helped (the empirical δ)."""
        forwarded = self.outcomes != DIRECT
        if not forwarded.any():
            return float("nan")
        return float(np.mean(self.outcomes[forwarded] == COPRIVATE))

    def summary(self) -> str:
        """The headline figures, as text for a person."""
        peers = self.per_peer
        gain = (peers["entropy_vs_engine"] - peers["entropy_alone"]).mean()
        return "\n".join(
            [
                f"P2P anonymous keyword search: {len(self.outcomes):,} queries of "
                f"{len(peers):,} peers; {self.forwarded_share:.1%} forwarded, a peer helped in "
                f"{self.delta:.1%} of those (δ)",
                f"  entropy vs the search engine: {peers['entropy_alone'].mean():.3f} bits without "
                f"the protocol, {peers['entropy_vs_engine'].mean():.3f} with it "
                f"(mean per peer, {gain:+.3f})",
                f"  largest share of a peer's queries learned by one other peer: mean "
                f"{peers['max_share_learned_by_a_peer'].mean():.1%}, worst "
                f"{peers['max_share_learned_by_a_peer'].max():.1%}",
                f"  requests accepted: {peers['requests_accepted'].sum():,} of "
                f"{peers['requests_received'].sum():,}",
                f"  self-submitted after every other peer refused (fewer peers than "
                f"max_attempts): {self.n_exhausted:,} queries",
            ]
        )

    @property
    def n_exhausted(self) -> int:
        """Queries self-submitted because every other peer had refused them."""
        return int(self.exhausted.sum())


def _entropy(total: int, sum_clogc: float) -> float:
    return 0.0 if total == 0 else math.log2(total) - sum_clogc / total


class _ForwardSet:
    """F^i(x): how often P^i forwarded x to each peer, kept so the least-used peer is O(1).

    Peers are always chosen among the least used, so every count is ``level``
    or ``level + 1``. While many peers are at ``level`` one is drawn by
    rejection; when few are left they are listed once and popped at random.
    """

    __slots__ = ("above", "candidates", "counts", "level")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.level = 0
        self.above = 0  # peers at level + 1
        self.candidates: list[int] | None = None

    def add(self, j: int) -> None:
        c = self.counts.get(j, 0)
        self.counts[j] = c + 1
        if c == self.level:
            self.above += 1

    def least_used(
        self, i: int, n_peers: int, tried: list[int], randoms: list[int], draw: int
    ) -> tuple[int, int]:
        """A random peer j != i, not in ``tried``, with the smallest count; -1 if none."""
        others = n_peers - 1
        if self.above == others:  # everybody moved up: a new level
            self.level += 1
            self.above = 0
            self.candidates = None
        n_random = len(randoms)
        at_level = others - self.above
        if self.candidates is None and at_level * 8 >= others:
            for _ in range(64):
                j = randoms[draw % n_random] % n_peers
                draw += 1
                if j != i and self.counts.get(j, 0) == self.level and j not in tried:
                    return j, draw
        if self.candidates is None:
            level = self.level
            self.candidates = [
                j for j in range(n_peers) if j != i and self.counts.get(j, 0) == level
            ]
        pool = self.candidates
        # Drop peers that moved up since the list was made; keep the tried ones for later.
        while pool:
            k = randoms[draw % n_random] % len(pool)
            draw += 1
            j = pool[k]
            if self.counts.get(j, 0) != self.level:
                pool[k] = pool[-1]
                pool.pop()
                continue
            if j in tried:
                if all(p in tried for p in pool):
                    return -1, draw
                continue
            pool[k] = pool[-1]
            pool.pop()
            return j, draw
        if self.above == others:
            return self.least_used(i, n_peers, tried, randoms, draw)
        return -1, draw


def simulate_p2p(
    workload: Workload,
    *,
    max_attempts: int = 3,
    checkpoints: int = 100,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> P2PSimulation:
    """Simulate P2P anonymous keyword search with entropy utilities (Domingo-Ferrer (2011), §4).

    The rules are the paper's, with Expression (2) corrected as the module
    docstring explains (the query goes to the peer to whom P^i has forwarded
    it least often, which maximises H(F^i(x, t+1))).

    Parameters
    ----------
    workload : Workload
        Queries in time order (:func:`log_workload`, :func:`zipf_workload`).
    max_attempts : int
        How many peers P^i asks before submitting the query herself.
    checkpoints : int
        How many points the timeline has.
    random_state : None, int or numpy.random.Generator
        The seed of the ties in Expression (2).
    progress : callable, optional
        ``progress(done, total)`` in queries.

    Returns
    -------
    P2PSimulation
        Per-query outcomes, per-peer figures and the timeline.
    """
    if not isinstance(workload, Workload):
        raise ParameterError(f"workload must be a Workload, got {type(workload).__name__}")
    max_attempts = check_int(max_attempts, "max_attempts", minimum=1)
    checkpoints = check_int(checkpoints, "checkpoints", minimum=1)
    n_peers = workload.n_peers
    if n_peers < 2:
        raise DataError(f"a P2P search needs at least 2 peers, the workload has {n_peers}")
    rng = check_random_state(random_state)
    originators = workload.originators.tolist()
    topics = workload.topics.tolist()
    n = len(originators)
    # Random numbers drawn up front (ties of Expression (2)), reused cyclically.
    randoms = rng.integers(0, 2**31 - 1, size=max(1024, min(n * max_attempts, 4_000_000))).tolist()
    draw = 0

    clogc = [0.0, 0.0]  # c log2 c, grown on demand

    def f(c: int) -> float:
        while c >= len(clogc):
            k = len(clogc)
            clogc.append(k * math.log2(k))
        return clogc[c]

    submitted: list[dict[int, int]] = [{} for _ in range(n_peers)]  # Y^i counts
    y_total = [0] * n_peers
    y_sum = [0.0] * n_peers
    asked_alone: list[dict[int, int]] = [{} for _ in range(n_peers)]  # X^i counts
    x_total = [0] * n_peers
    x_sum = [0.0] * n_peers
    forwards: dict[tuple[int, int], _ForwardSet] = {}  # F^i(x)
    learned = np.zeros((n_peers, n_peers), dtype=np.int64)  # [i, j]: i's queries j received

    outcomes = np.zeros(n, dtype=np.int8)
    submitters = np.empty(n, dtype=np.int32)
    attempts = np.zeros(n, dtype=np.int16)
    exhausted = np.zeros(n, dtype=bool)
    received = [0] * n_peers
    accepted = [0] * n_peers
    marks = np.unique(np.linspace(0, n, checkpoints + 1).astype(int)[1:])
    timeline_rows: list[dict[str, float]] = []
    next_mark = 0
    report_every = max(1, n // 200)

    for t in range(n):
        i = originators[t]
        x = topics[t]
        alone = asked_alone[i]
        cx = alone.get(x, 0)
        alone[x] = cx + 1
        x_total[i] += 1
        x_sum[i] += f(cx + 1) - f(cx)
        mine = submitted[i]
        c = mine.get(x, 0)
        before = _entropy(y_total[i], y_sum[i])
        after = _entropy(y_total[i] + 1, y_sum[i] - f(c) + f(c + 1))
        helper = i
        if after < before:
            key = (i, x)
            state = forwards.get(key)
            if state is None:
                state = forwards[key] = _ForwardSet()
            tried: list[int] = []
            outcome = REJECTED
            for _attempt in range(max_attempts):
                # Expression (2), corrected: a peer to whom i forwarded x least often.
                j, draw = state.least_used(i, n_peers, tried, randoms, draw)
                if j < 0:  # every other peer has refused x: she submits it herself
                    exhausted[t] = True
                    break
                tried.append(j)
                state.add(j)
                learned[i, j] += 1
                received[j] += 1
                theirs = submitted[j]
                cj = theirs.get(x, 0)
                if _entropy(y_total[j] + 1, y_sum[j] - f(cj) + f(cj + 1)) > _entropy(
                    y_total[j], y_sum[j]
                ):
                    helper = j
                    accepted[j] += 1
                    outcome = COPRIVATE
                    break
            outcomes[t] = outcome
            attempts[t] = len(tried)
        target = submitted[helper]
        ch = target.get(x, 0)
        target[x] = ch + 1
        y_sum[helper] += f(ch + 1) - f(ch)
        y_total[helper] += 1
        submitters[t] = helper
        if next_mark < len(marks) and t + 1 == marks[next_mark]:
            next_mark += 1
            timeline_rows.append(
                _checkpoint(t + 1, outcomes[: t + 1], y_total, y_sum, x_total, x_sum)
            )
        if progress is not None and (t + 1) % report_every == 0:
            progress(t + 1, n)

    per_peer = _per_peer(
        workload,
        asked_alone,
        y_total,
        y_sum,
        outcomes,
        submitters,
        received,
        accepted,
        learned,
        forwards,
        f,
    )
    return P2PSimulation(
        outcomes=outcomes,
        submitters=submitters,
        attempts=attempts,
        exhausted=exhausted,
        per_peer=per_peer,
        timeline=pd.DataFrame(timeline_rows),
        params={
            "max_attempts": max_attempts,
            "n_peers": n_peers,
            "n_queries": n,
            "source": workload.source,
            "checkpoints": checkpoints,
        },
    )


def _checkpoint(
    done: int,
    outcomes: np.ndarray,
    y_total: list[int],
    y_sum: list[float],
    x_total: list[int],
    x_sum: list[float],
) -> dict[str, float]:
    active = [p for p in range(len(y_total)) if x_total[p]]
    with_protocol = [_entropy(y_total[p], y_sum[p]) for p in active]
    alone = [_entropy(x_total[p], x_sum[p]) for p in active]
    forwarded = outcomes != DIRECT
    return {
        "queries": done,
        "entropy_vs_engine": float(np.mean(with_protocol)) if active else 0.0,
        "entropy_alone": float(np.mean(alone)) if active else 0.0,
        "forwarded_share": float(forwarded.mean()),
        "delta": float((outcomes[forwarded] == COPRIVATE).mean())
        if forwarded.any()
        else float("nan"),
    }


def _per_peer(
    workload: Workload,
    asked_alone: list[dict[int, int]],
    y_total: list[int],
    y_sum: list[float],
    outcomes: np.ndarray,
    submitters: np.ndarray,
    received: list[int],
    accepted: list[int],
    learned: np.ndarray,
    forwards: dict[tuple[int, int], _ForwardSet],
    f: Callable[[int], float],
) -> pd.DataFrame:
    n_peers = workload.n_peers
    originated = np.bincount(workload.originators, minlength=n_peers)
    forwarded = np.bincount(workload.originators[outcomes != DIRECT], minlength=n_peers)
    helped = np.bincount(workload.originators[outcomes == COPRIVATE], minlength=n_peers)
    alone = [
        _entropy(sum(d.values()), sum(f(c) for c in d.values())) if d else 0.0 for d in asked_alone
    ]
    with_protocol = [_entropy(y_total[p], y_sum[p]) for p in range(n_peers)]
    sets = np.zeros(n_peers)
    n_sets = np.zeros(n_peers)
    for (i, _x), state in forwards.items():
        counts = state.counts
        total = sum(counts.values())
        sets[i] += _entropy(total, sum(f(c) for c in counts.values()))
        n_sets[i] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        frame = pd.DataFrame(
            {
                "peer": list(workload.peer_names),
                "queries": originated,
                "entropy_alone": alone,
                "entropy_vs_engine": with_protocol,
                "forwarded_share": np.where(originated > 0, forwarded / originated, np.nan),
                "helped_share": np.where(forwarded > 0, helped / forwarded, np.nan),
                "requests_received": received,
                "requests_accepted": accepted,
                "max_share_learned_by_a_peer": np.where(
                    originated > 0, learned.max(axis=1) / np.maximum(originated, 1), np.nan
                ),
                "mean_entropy_of_forwarding_sets": np.where(n_sets > 0, sets / n_sets, np.nan),
            }
        )
    return frame
