"""The aggregation of each group into one released user (Algorithm 5).

Erola et al. (2011, §3.3): the centroid of a group z of users takes from each
member u_i a share of her queries proportional to her number of queries:

* her contribution Contrib_i = |Q_i| / sum_{j in z} |Q_j| (eq. 2);
* her quota Quota_i = |Q_i| / |z| (eq. 3; the paper writes k for the size of
  the group; a group that took in left-over users has more than k members,
  and its size is used, so the centroid keeps the average number of queries);
* her distinct queries are taken in decreasing order of repetitions (ties:
  the query she asked first comes first), and while her quota is not
  reached, the next query q with r repetitions is added Contrib_i x r times:
  the whole part of that product surely, and one more copy with the
  probability of its fractional part ("3 x 0.4 = 1.2 gives one query, and a
  second with probability 0.2"); then q is deleted from her list.

A query is only added while the member's quota is not reached, and it adds
no more copies than the quota has room for (rounded up), so no member gives
more than ceil(Quota_i) queries. Members with fewer queries than the group's
average give fewer than their quota, as the algorithm implies (the sum of
Contrib_i x r over all her queries is |Q_i|^2 / sum |Q_j|).

Only query strings are released: times, ranks and clicks are dropped (a
query time or a clicked address is a quasi-identifier the aggregation does
not protect). The released queries of a centroid are shuffled, so their
order does not reveal which member each came from, and centroids get fresh
ids in random order (no original user id appears in the release).
"""

from __future__ import annotations

import math

import numpy as np

from sdckit.errors import ParameterError
from sdckit.querylog.reading import QueryLog

__all__ = ["aggregate_groups", "released_ids"]


def aggregate_groups(
    log: QueryLog, labels: np.ndarray, *, rng: np.random.Generator, lines: bool = False
) -> tuple[np.ndarray, ...]:
    """Algorithm 5 of Erola et al. (2011) for every group at once.

    The members' lists are built block by block of users from the log's
    per-user counts (:attr:`QueryLog.pairs`), so the work memory is that of
    one block; the random draws are the same as in one pass.

    Parameters
    ----------
    log : QueryLog
        The original log.
    labels : numpy.ndarray
        The group number (0..g-1) of each user of ``log``.
    rng : numpy.random.Generator
        The random source of the fractional copies.
    lines : bool
        Also return, for each released query, the original line it was
        taken from: a query released c times from a member who asked it r
        times takes c of her r lines at random (without replacement), drawn
        from a generator spawned from ``rng``, so the queries released are the
        same with or without this.

    Returns
    -------
    group_of_line : numpy.ndarray
        The group (released user) of each released query.
    query_of_line : numpy.ndarray
        The code of each released query (an index into ``log.queries``).
    source_line : numpy.ndarray
        Only with ``lines=True``: the original line (0-based) of each.
    """
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (log.n_users,) or labels.min() < 0:
        raise ParameterError("labels must give a group number >= 0 for every user of the log")
    pairs = log.pairs
    user_total = np.bincount(log.line_users, minlength=log.n_users).astype(np.float64)
    n_groups = int(labels.max()) + 1
    group_total = np.bincount(labels, weights=user_total, minlength=n_groups)
    group_size = np.bincount(labels, minlength=n_groups).astype(np.float64)
    contribution = user_total / group_total[labels]  # eq. 2
    quota = user_total / group_size[labels]  # eq. 3
    line_rng = rng.spawn(1)[0] if lines else None
    out_group: list[np.ndarray] = []
    out_query: list[np.ndarray] = []
    out_line: list[np.ndarray] = []
    for first, end, block_lines in log.user_line_blocks():
        lo, hi = int(pairs.indptr[first]), int(pairs.indptr[end])
        pair_user = np.repeat(np.arange(first, end), np.diff(pairs.indptr[first : end + 1]))
        repetitions = pairs.counts[lo:hi].astype(np.int64)
        # Each member's list sorted by repetitions, most repeated first
        # (ties: the query she asked first).
        order = np.lexsort((pairs.first_line[lo:hi], -repetitions, pair_user))
        share = contribution[pair_user[order]] * repetitions[order]
        whole = np.floor(share)
        copies = whole + (rng.random(len(share)) < share - whole)
        # Copies given before each query of the same member (the running total).
        running = np.cumsum(copies) - copies
        sorted_user = pair_user[order]
        user_start = np.searchsorted(sorted_user, np.arange(first, end))
        before = running - running[user_start[sorted_user - first]]
        room = np.ceil(quota[sorted_user] - before - 1e-9)
        taken_sorted = np.where(
            before < quota[sorted_user] - 1e-9, np.minimum(copies, room), 0
        ).astype(np.int64)
        out_group.append(np.repeat(labels[sorted_user], taken_sorted))
        out_query.append(np.repeat(pairs.query[lo:hi][order], taken_sorted))
        if line_rng is not None:
            out_line.append(
                _pick_lines(log, first, block_lines, repetitions, order, taken_sorted, line_rng)
            )
    group_of_line = np.concatenate(out_group)
    query_of_line = np.concatenate(out_query)
    # Shuffle, then order by group: each centroid's queries in random order.
    shuffle = rng.permutation(len(group_of_line))
    by_group = np.argsort(group_of_line[shuffle], kind="stable")
    final = shuffle[by_group]
    if line_rng is None:
        return group_of_line[final], query_of_line[final]
    return group_of_line[final], query_of_line[final], np.concatenate(out_line)[final]


def _pick_lines(
    log: QueryLog,
    first: int,
    block_lines: np.ndarray,
    repetitions: np.ndarray,
    order: np.ndarray,
    taken_sorted: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """For each pair (in ``order``), ``taken`` of its lines at random, without replacement.

    The block's lines sorted by (user, query) fall in the pairs' natural
    order (users, then query codes, ascending), each pair's lines shuffled.
    """
    n_queries = max(len(log.queries), 1)
    keys = (log.line_users[block_lines].astype(np.int64) - first) * n_queries
    keys += log.line_queries[block_lines]
    by_pair = block_lines[np.lexsort((rng.random(len(keys)), keys))]
    start = np.cumsum(repetitions) - repetitions  # each pair's first position
    offsets = np.arange(int(taken_sorted.sum())) - np.repeat(
        np.cumsum(taken_sorted) - taken_sorted, taken_sorted
    )
    return by_pair[np.repeat(start[order], taken_sorted) + offsets]


def released_ids(
    n_groups: int, original_ids: np.ndarray, *, rng: np.random.Generator
) -> np.ndarray:
    """Fresh ids for the released users, none equal to an original user id.

    Parameters
    ----------
    n_groups : int
        Number of released users.
    original_ids : numpy.ndarray
        The original user ids (text).
    rng : numpy.random.Generator
        The random source: ids are handed out in random order, so an id does
        not tell in which order its group was formed.

    Returns
    -------
    numpy.ndarray
        ``ids[g]`` is the released id of group g.
    """
    width = max(1, math.ceil(math.log10(n_groups + 1)))
    taken = {str(v) for v in original_ids}
    prefix = "R"
    while True:
        candidates = np.array(
            [f"{prefix}{i:0{width}d}" for i in range(1, n_groups + 1)], dtype=object
        )
        if not taken.intersection(candidates):
            break
        prefix += "R"
    return candidates[rng.permutation(n_groups)]
