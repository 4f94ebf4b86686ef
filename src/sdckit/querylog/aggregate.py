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
    log: QueryLog, labels: np.ndarray, *, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 5 of Erola et al. (2011) for every group at once.

    Parameters
    ----------
    log : QueryLog
        The original log.
    labels : numpy.ndarray
        The group number (0..g-1) of each user of ``log``.
    rng : numpy.random.Generator
        The random source of the fractional copies.

    Returns
    -------
    group_of_line : numpy.ndarray
        The group (released user) of each released query.
    query_of_line : numpy.ndarray
        The code of each released query (an index into ``log.queries``).
    """
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (log.n_users,) or labels.min() < 0:
        raise ParameterError("labels must give a group number >= 0 for every user of the log")
    n_queries = len(log.queries)
    keys = log.line_users.astype(np.int64) * n_queries + log.line_queries
    pair_keys, first_line, repetitions = np.unique(keys, return_index=True, return_counts=True)
    pair_user = pair_keys // n_queries
    pair_query = pair_keys % n_queries
    user_total = np.bincount(log.line_users, minlength=log.n_users).astype(np.float64)
    n_groups = int(labels.max()) + 1
    group_total = np.bincount(labels, weights=user_total, minlength=n_groups)
    group_size = np.bincount(labels, minlength=n_groups).astype(np.float64)
    contribution = user_total / group_total[labels]  # eq. 2
    quota = user_total / group_size[labels]  # eq. 3
    # Each member's list sorted by repetitions, most repeated first.
    order = np.lexsort((first_line, -repetitions, pair_user))
    pair_user, pair_query, repetitions = pair_user[order], pair_query[order], repetitions[order]
    share = contribution[pair_user] * repetitions
    whole = np.floor(share)
    copies = whole + (rng.random(len(share)) < share - whole)
    # Copies given before each query of the same member (the running total).
    running = np.cumsum(copies) - copies
    user_start = np.searchsorted(pair_user, np.arange(log.n_users))
    before = running - running[user_start[pair_user]]
    room = np.ceil(quota[pair_user] - before - 1e-9)
    taken = np.where(before < quota[pair_user] - 1e-9, np.minimum(copies, room), 0).astype(np.int64)
    group_of_line = np.repeat(labels[pair_user], taken)
    query_of_line = np.repeat(pair_query, taken)
    # Shuffle, then order by group: each centroid's queries in random order.
    shuffle = rng.permutation(len(group_of_line))
    group_of_line, query_of_line = group_of_line[shuffle], query_of_line[shuffle]
    by_group = np.argsort(group_of_line, kind="stable")
    return group_of_line[by_group], query_of_line[by_group]


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
