"""User-level k-anonymity of a search log by semantic microaggregation.

Erola, Castellà-Roca, Navarro-Arribas & Torra (2011), "Semantic
microaggregation for the anonymization of query logs using the Open
Directory Project": classify every query's terms in a taxonomy (Algorithm 1),
measure the users' common categories (Algorithm 2, eq. 1), group the most
similar users k by k (Algorithms 3-4) and release one aggregated user per
group (Algorithm 5, eqs. 2-3). Every released user stands for at least k
original users.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import check_random_state
from sdckit.errors import ParameterError
from sdckit.querylog.aggregate import aggregate_groups, released_ids
from sdckit.querylog.details import TIME_GRANULARITIES, released_clicks, released_times
from sdckit.querylog.partition import check_k, partition_blocks, semantic_partition
from sdckit.querylog.reading import QueryLog, read_log
from sdckit.querylog.similarity import Classification, QueryClassifier, classification_matrices
from sdckit.querylog.taxonomy import Taxonomy, load_taxonomy

__all__ = ["ProtectedLog", "protect"]


@dataclass(frozen=True)
class ProtectedLog(FrozenResult):
    """A search log protected by semantic microaggregation.

    Attributes
    ----------
    data : pandas.DataFrame
        The release: one row per released query, columns named as the
        original user and query columns; users are fresh ids (``R01``...).
    membership : pandas.DataFrame
        Confidential: which released user each original user went into
        (columns ``original_user``, ``released_user``). Keep it with the
        original log; never publish it.
    log : QueryLog
        The original log as read.
    classification : Classification
        Its classification matrices.
    labels : numpy.ndarray
        The group number of each original user.
    params : mapping
        The parameters used (k, taxonomy, levels, levels used, ...).
    stats : mapping
        Counts: users, groups, smallest and largest group, queries in and out;
        with times or clicks kept, how many were released and withheld.
    """

    data: pd.DataFrame
    membership: pd.DataFrame
    log: QueryLog
    classification: Classification
    labels: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """What was released and what it promises: several lines, the guarantee first."""
        s, p = self.stats, self.params
        lines = [
            f"{s['n_released_users']:,} released users, each standing for at least "
            f"{s['smallest_group']} of the {s['n_users']:,} original users "
            f"(k = {p['k']}; largest group {s['largest_group']})",
            f"  {s['n_released_queries']:,} queries released of {s['n_queries']:,}; "
            + _details_line(p, s),
            f"  taxonomy {p['taxonomy']}, levels 1..{p['levels']} "
            f"(similarity over levels {list(p['levels_used'])}), "
            f"{p['categories_per_term']} categor{'y' if p['categories_per_term'] == 1 else 'ies'}"
            " per term",
            f"  {self.classification.classified_share[0]:.1%} of queries classified at level 1; "
            f"{s['n_blocks']} block(s) of users",
        ]
        if self.log.bad_lines:
            lines.append(f"  {len(self.log.bad_lines):,} bad lines of the log skipped")
        return "\n".join(lines)


def _details_line(params: Any, stats: Any) -> str:
    """What the release says of times and clicks."""
    parts = []
    if params.get("times") is None:
        parts.append("times dropped")
    else:
        shown = ", ".join(
            f"{stats['times'][g]:,} to the {g}" for g in TIME_GRANULARITIES if g in stats["times"]
        )
        parts.append(
            f"times kept where at least k members of the group searched in the period "
            f"({shown}; {stats['times']['withheld']:,} withheld)"
        )
    if params.get("clicks"):
        parts.append(
            f"clicked hosts kept if at least {params['min_click_users']} users clicked them "
            f"({stats['clicks']['released']:,} kept, {stats['clicks']['withheld']:,} withheld)"
        )
    else:
        parts.append("clicks dropped")
    return "; ".join(parts) + "; ranks dropped"


def levels_in_use(classification: Classification, min_level_share: float) -> tuple[int, ...]:
    """The levels whose share of classified terms reaches ``min_level_share``.

    Erola et al. (2011, §4.2.1) use a level only when at least 50% of the
    terms are classified that deep. Their live ODP classified nearly every
    term; an offline taxonomy leaves many terms unclassified, so the share is
    taken among classified terms (otherwise no level would ever be used).
    Level 1 is always used.

    Parameters
    ----------
    classification : Classification
        The log's classification.
    min_level_share : float
        The share in [0, 1].

    Returns
    -------
    tuple of int
        The 1-based levels used by the similarity.
    """
    if not 0.0 <= float(min_level_share) <= 1.0:
        raise ParameterError(f"min_level_share must be between 0 and 1, got {min_level_share!r}")
    used = [1] + [
        level
        for level, share in enumerate(classification.term_level_share, start=1)
        if level > 1 and share >= min_level_share
    ]
    return tuple(used)


def protect(
    data: str | os.PathLike[str] | pd.DataFrame | QueryLog,
    *,
    k: int = 5,
    taxonomy: str | os.PathLike[str] | Taxonomy = "odp239",
    levels: int = 2,
    categories_per_term: int = 1,
    min_level_share: float = 0.5,
    block_size: int | None = 2000,
    user_column: str = "AnonID",
    query_column: str = "Query",
    times: str | None = None,
    clicks: bool = False,
    min_click_users: int | None = None,
    time_column: str = "QueryTime",
    click_column: str = "ClickURL",
    random_state: int | np.random.Generator | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> ProtectedLog:
    """Protect a search log by semantic microaggregation (Erola et al. 2011).

    Parameters
    ----------
    data : path, pandas.DataFrame or QueryLog
        The log (see :func:`sdckit.querylog.read_log`).
    k : int
        Every released user stands for at least k original users.
    taxonomy : str, path or Taxonomy
        ``"odp239"``, a term -> category-path CSV, or a taxonomy object.
    levels : int
        The depth L: categories at levels 1..L are compared.
    categories_per_term : int
        How many of a term's ranked categories count (the paper: 1 or 5).
    min_level_share : float
        A level l > 1 enters the similarity only when at least this share of
        the classified terms is classified that deep (the paper: 0.5).
    block_size : int or None
        Users are cut into blocks of similar category profiles
        (:func:`sdckit.querylog.partition.user_blocks`) and the paper's
        algorithm runs inside blocks of at most this many users; None runs
        it exactly on the whole log (memory grows as users squared).
    user_column, query_column : str
        The log's user and query columns.
    times : {"hour", "day", "month"}, optional
        Keep query times, coarsened to this granularity and further (up to
        the month) until at least k members of the group searched in the
        period, else withheld (:mod:`sdckit.querylog.details` says why).
        Default: times are dropped.
    clicks : bool
        Keep the host of each released query's click when at least
        ``min_click_users`` users of the log clicked that host. Default:
        clicks are dropped.
    min_click_users : int, optional
        Distinct users who must have clicked a host for it to be released
        (default k).
    time_column, click_column : str
        The log's time and clicked-address columns (read only when kept).
    random_state : None, int or numpy.random.Generator
        Seed of the aggregation's random copies and of the released ids; the
        same seed gives the same release (the same queries with or without
        times and clicks).
    progress : callable, optional
        ``progress(stage, done, total)``.

    Returns
    -------
    ProtectedLog
        The release, the confidential membership table, and diagnostics.
    """
    rng = check_random_state(random_state)
    tax = load_taxonomy(taxonomy)

    def stage(name: str) -> Callable[[int, int], None] | None:
        if progress is None:
            return None
        return lambda done, total: progress(name, done, total)

    if times is not None and times not in TIME_GRANULARITIES:
        raise ParameterError(
            f"times must be one of {', '.join(TIME_GRANULARITIES)} or None, got {times!r}"
        )
    if isinstance(data, QueryLog):
        log = data
    else:
        log = read_log(
            data,
            user_column=user_column,
            query_column=query_column,
            time_column=time_column if times is not None else None,
            click_column=click_column if clicks else None,
            progress=stage("reading"),
        )
    check_k(k, log.n_users)
    click_users = k if min_click_users is None else min_click_users
    if block_size is not None and (
        not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 2 * k
    ):
        raise ParameterError(
            f"block_size must be None or an integer of at least 2k = {2 * k}, got {block_size!r}"
        )
    classifier = QueryClassifier(tax, levels=levels, categories_per_term=categories_per_term)
    classification = classification_matrices(
        log, classifier=classifier, progress=stage("classifying")
    )
    used = levels_in_use(classification, min_level_share)
    blocks = partition_blocks(classification.matrices, k=k, block_size=block_size, levels=used)
    labels = semantic_partition(
        classification.matrices,
        k=k,
        block_size=block_size,
        levels=used,
        progress=stage("grouping"),
        blocks=blocks,
    )
    keep_lines = times is not None or clicks
    group_of_line, query_of_line, *source = aggregate_groups(log, labels, rng=rng, lines=keep_lines)
    n_groups = int(labels.max()) + 1
    ids = released_ids(n_groups, log.user_ids, rng=rng)
    # Released users in id order, each one's queries in the shuffled order;
    # the order is applied to the integer codes, before any text is built.
    rank = np.empty(n_groups, dtype=np.int64)
    rank[np.argsort(ids, kind="stable")] = np.arange(n_groups)  # ids are distinct
    order = np.argsort(rank[group_of_line], kind="stable")
    del rank
    group_of_line = group_of_line[order]
    query_of_line = query_of_line[order]
    source = [lines[order] for lines in source]
    del order
    columns = {
        log.user_column: ids[group_of_line],
        log.query_column: log.queries[query_of_line],
    }
    del query_of_line
    details: dict[str, Any] = {}
    if times is not None:
        columns[time_column], details["times"] = released_times(
            log, labels, source[0], k=k, granularity=times
        )
    if clicks:
        columns[click_column], details["clicks"] = released_clicks(
            log, source[0], min_users=click_users
        )
    released = pd.DataFrame(columns)
    del columns
    membership = pd.DataFrame({"original_user": log.user_ids, "released_user": ids[labels]})
    sizes = np.bincount(labels)
    return ProtectedLog(
        data=released,
        membership=membership,
        log=log,
        classification=classification,
        labels=labels,
        params={
            "k": k,
            "taxonomy": tax.describe(),
            "levels": levels,
            "levels_used": used,
            "categories_per_term": categories_per_term,
            "min_level_share": min_level_share,
            "block_size": block_size,
            "times": times,
            "clicks": clicks,
            "min_click_users": click_users if clicks else None,
        },
        stats={
            "n_users": log.n_users,
            "n_queries": log.n_lines,
            "n_released_users": n_groups,
            "n_released_queries": len(released),
            "smallest_group": int(sizes.min()),
            "largest_group": int(sizes.max()),
            "n_blocks": len(blocks),
            **details,
        },
    )
