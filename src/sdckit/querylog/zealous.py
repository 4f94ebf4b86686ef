"""Differentially private query frequencies of a search log (ZEALOUS).

Götz, Machanavajjhala, Wang, Xiao & Gehrke (2012), "Publishing search logs —
a comparative study of privacy guarantees", propose ZEALOUS, which releases
the frequent queries of a log with their noisy user counts:

1. each user keeps at most ``m`` distinct queries of her history;
2. every query is counted by the number of users who kept it;
3. queries counted by fewer than ``tau`` users are dropped;
4. Laplace noise of scale ``lambda`` is added to every remaining count;
5. queries whose noisy count is below ``tau_prime`` are dropped;
6. the remaining queries are released with their noisy counts.

They showed that user-level k-anonymity of a search log (the guarantee of
semantic microaggregation, :func:`sdckit.querylog.protect`) falls to an
attacker who plants queries with fake users (see
:func:`sdckit.querylog.planted_query_attack`), while ZEALOUS does not.

**Parameters.** sdckit sets ``lambda`` and ``tau_prime`` from the privacy
budget by the standard analysis of a thresholded Laplace histogram under
adding or removing one user (the "stability-based histogram"): one user
changes at most ``m`` counts by 1, so ``lambda = m / epsilon`` bounds the
privacy loss on queries counted in both logs by ``epsilon``; a query that
only passes the first threshold because of her (count exactly ``tau``) is
released with probability ``exp(-(tau_prime - tau) / lambda) / 2``, and over
her at most ``m`` queries this is at most ``delta`` when ``tau_prime = tau +
lambda * ln(m / (2 delta))``. This gives (epsilon, delta)-differential
privacy, which implies the (epsilon, delta)-probabilistic differential
privacy of Götz et al.; their own parameter theorem was not
checked here (the paper's body was not available), so the derivation above is the one
sdckit relies on. A user may ask for a larger ``lambda`` or ``tau_prime``
(more noise, higher threshold), never a smaller one.

**Items.** ZEALOUS counts *items*: by default queries; with
``items="query-clicks"`` the items are (query, clicked address) pairs, the
query-click graph Götz et al. also publish (a line without a click is then no
item). The guarantee is the same, for the pairs: each user contributes at
most ``m`` distinct pairs, her most repeated ones.

Only items and counts are released: no user id, time or rank.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdckit._results import FrozenResult
from sdckit._validation import check_random_state
from sdckit.errors import ParameterError
from sdckit.querylog.reading import QueryLog, read_log

__all__ = ["ZealousRelease", "zealous", "zealous_parameters"]


def _positive(name: str, value: Any, *, upper: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"{name} must be a positive number, got {value!r}")
    if value <= 0 or (upper is not None and value >= upper):
        bound = f" and below {upper:g}" if upper is not None else ""
        raise ParameterError(f"{name} must be above 0{bound}, got {value!r}")
    return float(value)


def zealous_parameters(
    *, epsilon: float, delta: float, max_queries_per_user: int = 5, tau: int = 1
) -> tuple[float, float]:
    """The noise scale and second threshold that give (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        The privacy-loss bound, above 0.
    delta : float
        The probability allowed to exceed it, in (0, 1).
    max_queries_per_user : int
        ``m``: the distinct queries each user contributes at most.
    tau : int
        The first threshold (counts below it are dropped before the noise).

    Returns
    -------
    lam : float
        The Laplace scale ``m / epsilon``.
    tau_prime : float
        The second threshold ``tau + lam * ln(m / (2 delta))`` (at least ``tau``).
    """
    eps = _positive("epsilon", epsilon)
    dlt = _positive("delta", delta, upper=1.0)
    m = _count("max_queries_per_user", max_queries_per_user)
    t = _count("tau", tau)
    lam = m / eps
    return lam, t + max(0.0, lam * math.log(m / (2.0 * dlt)))


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"{name} must be a whole number of at least 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class ZealousRelease(FrozenResult):
    """Query frequencies of a search log released by ZEALOUS.

    Attributes
    ----------
    data : pandas.DataFrame
        The release: the query column (and, for query-click pairs, the click
        column) and ``count`` (the noisy number of users who asked it,
        rounded to a whole number), most frequent first.
    params : mapping
        epsilon, delta, m, tau, lambda and tau_prime.
    stats : mapping
        Users, distinct queries, queries kept after each threshold, and the
        share of the log's query lines whose query is released.
    """

    data: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The guarantee first, then what was released."""
        p, s = self.params, self.stats
        noun = "queries" if p["items"] == "queries" else "query-click pairs"
        lines = [
            f"{s['n_released']:,} {noun} released with noisy user counts, "
            f"({p['epsilon']:g}, {p['delta']:g})-differentially private for each user "
            f"(ZEALOUS: at most {p['m']} distinct {noun} per user, Laplace scale "
            f"{p['lambda']:.3g}, thresholds {p['tau']} and {p['tau_prime']:.1f})",
            f"  {s['n_users']:,} users, {s['n_distinct_items']:,} distinct {noun}; "
            f"{s['n_above_tau']:,} of them among a user's {p['m']} most repeated and counted "
            f"by at least {p['tau']} user(s) before the noise",
            f"  the released {noun} make up {s['line_share_released']:.1%} of the "
            f"{s['n_item_lines']:,} {'query lines' if p['items'] == 'queries' else 'lines with a click'}"
            "; no user id, time or rank is released",
        ]
        if s["n_released"] == 0:
            lines.append(
                f"  nothing released: an item needs about {p['tau_prime']:.0f} users to pass "
                "the second threshold; a larger log, a larger epsilon or a smaller "
                "max_queries_per_user releases more"
            )
        return "\n".join(lines)


def kept_items(counts_matrix: sp.csr_matrix, m: int) -> np.ndarray:
    """Each user's at most ``m`` distinct items: her most repeated first.

    The choice depends on the user's own history only (ties: the item
    first seen in the log first), as ZEALOUS requires.
    """
    counts = counts_matrix.tocoo()
    order = np.lexsort((counts.col, -counts.data, counts.row))
    rows, cols = counts.row[order], counts.col[order]
    starts = np.r_[0, np.flatnonzero(np.diff(rows)) + 1] if len(rows) else np.array([], int)
    rank = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
    return np.asarray(cols[rank < m], dtype=np.int64)


def _item_counts(
    log: QueryLog, items: str
) -> tuple[sp.csr_matrix, dict[str, np.ndarray], np.ndarray]:
    """Users x items counts, the items' labels by column, and each item line's item."""
    if items == "queries":
        return log.user_query_counts(), {log.query_column: log.queries}, log.line_queries
    if log.line_clicks is None or log.clicks is None or log.click_column is None:
        raise ParameterError("query-click pairs need the log read with its click column")
    clicked = np.flatnonzero(log.line_clicks >= 0)
    keys = log.line_queries[clicked].astype(np.int64) * len(log.clicks)
    keys += log.line_clicks[clicked]
    pair_keys, item_of_line = np.unique(keys, return_inverse=True)
    counts = sp.csr_matrix(
        (
            np.ones(len(clicked), dtype=np.int32),
            (log.line_users[clicked], item_of_line),
        ),
        shape=(log.n_users, len(pair_keys)),
    )
    counts.sum_duplicates()
    labels = {
        log.query_column: log.queries[pair_keys // len(log.clicks)],
        log.click_column: log.clicks[pair_keys % len(log.clicks)],
    }
    return counts, labels, item_of_line


def zealous(
    data: str | os.PathLike[str] | pd.DataFrame | QueryLog,
    *,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    max_queries_per_user: int = 5,
    tau: int = 1,
    noise_scale: float | None = None,
    tau_prime: float | None = None,
    items: str = "queries",
    user_column: str = "AnonID",
    query_column: str = "Query",
    click_column: str = "ClickURL",
    random_state: int | np.random.Generator | None = None,
) -> ZealousRelease:
    """Release a search log's frequent queries by ZEALOUS (Götz et al. 2012).

    Parameters
    ----------
    data : path, pandas.DataFrame or QueryLog
        The log (see :func:`sdckit.querylog.read_log`).
    epsilon, delta : float
        The differential-privacy budget for each user (module docstring).
    max_queries_per_user : int
        ``m``: distinct queries each user contributes at most (her most
        repeated ones).
    tau : int
        The first threshold: queries asked by fewer users are dropped before
        the noise.
    noise_scale, tau_prime : float, optional
        A larger Laplace scale or second threshold than the budget requires;
        smaller ones are refused, since they would break the guarantee.
    items : {"queries", "query-clicks"}
        What is counted: queries, or (query, clicked address) pairs (lines
        without a click then count for nothing).
    user_column, query_column, click_column : str
        The log's user, query and clicked-address columns (the last read
        only for query-click pairs).
    random_state : None, int or numpy.random.Generator
        Seed of the noise.

    Returns
    -------
    ZealousRelease
        The released queries and noisy counts, the parameters and counts.
    """
    lam, tp = zealous_parameters(
        epsilon=epsilon, delta=delta, max_queries_per_user=max_queries_per_user, tau=tau
    )
    if noise_scale is not None:
        if _positive("noise_scale", noise_scale) < lam:
            raise ParameterError(
                f"noise_scale {noise_scale!r} is below {lam:.4g}, the scale epsilon = "
                f"{epsilon!r} needs with at most {max_queries_per_user} queries per user"
            )
        lam = float(noise_scale)
        tp = tau + max(0.0, lam * math.log(max_queries_per_user / (2.0 * float(delta))))
    if tau_prime is not None:
        if _positive("tau_prime", tau_prime) < tp:
            raise ParameterError(
                f"tau_prime {tau_prime!r} is below {tp:.4g}, the threshold delta = {delta!r} needs"
            )
        tp = float(tau_prime)
    if items not in ("queries", "query-clicks"):
        raise ParameterError(f"items must be 'queries' or 'query-clicks', got {items!r}")
    rng = check_random_state(random_state)
    log = (
        data
        if isinstance(data, QueryLog)
        else read_log(
            data,
            user_column=user_column,
            query_column=query_column,
            click_column=click_column if items == "query-clicks" else None,
        )
    )
    if log.n_lines == 0:
        raise ParameterError("the log has no queries")
    counts, labels, item_of_line = _item_counts(log, items)
    n_items = counts.shape[1]
    users_per_item = np.bincount(kept_items(counts, max_queries_per_user), minlength=n_items)
    candidates = np.flatnonzero(users_per_item >= tau)
    noisy = users_per_item[candidates] + rng.laplace(0.0, lam, size=len(candidates))
    passed = noisy >= tp
    released_codes, released_counts = candidates[passed], noisy[passed]
    order = np.lexsort((released_codes, -released_counts))
    release = pd.DataFrame(
        {
            **{name: values[released_codes[order]] for name, values in labels.items()},
            "count": np.rint(released_counts[order]).astype(np.int64),
        }
    )
    released_mask = np.zeros(n_items, dtype=bool)
    released_mask[released_codes] = True
    return ZealousRelease(
        data=release,
        params={
            "epsilon": float(epsilon),
            "delta": float(delta),
            "m": int(max_queries_per_user),
            "tau": int(tau),
            "lambda": lam,
            "tau_prime": tp,
            "items": items,
        },
        stats={
            "n_users": log.n_users,
            "n_lines": log.n_lines,
            "n_distinct_items": n_items,
            "n_item_lines": len(item_of_line),
            "n_above_tau": len(candidates),
            "n_released": len(release),
            "line_share_released": float(released_mask[item_of_line].mean())
            if len(item_of_line)
            else 0.0,
        },
    )
