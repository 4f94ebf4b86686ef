"""Query times and clicked addresses in a microaggregated release, kept only where safe.

Algorithm 5 of Erola et al. (2011) releases query strings only. A time or a
clicked address is a quasi-identifier the aggregation does not protect, so
:func:`sdckit.querylog.protect` drops them unless asked, and then keeps them
only where they cannot single out a member of the released user's group.

Think as an intruder who knows something of a target and has found her
released user (she can: the group is the anonymity set, of k or more users):

* **Times.** She knows when the target searched (she saw her at a library at
  14:00 on 3 March, or holds her browser history for a day). A released
  query whose time falls in a period when only the target, of the group's
  members, was searching is the target's query: exact times break the
  group's indistinguishability. Rule: each released query's time (the time
  of one of the member's own lines for that query, drawn at random) is
  coarsened to the granularity asked for (hour, day or month) and released
  at the finest granularity, from there up to the month, at which **at least
  k members of the group searched during that period**; otherwise no time is
  released for it. A released period therefore never narrows the members
  who may have asked the query below k. What remains visible: the periods
  when k or more of the group's members were searching.
* **Clicks.** A clicked address can name a person on its own (her own home
  page, a small club's site) and a full address may hold a session or user
  id in its path. Rule: only the host of a clicked address is kept
  (``http://www.example.org/~smith/cv.html`` -> ``www.example.org``), and
  only a host **clicked by at least ``min_click_users`` distinct users of the
  whole log** (default k); otherwise no click is released for that query. A
  released host is thus one that k or more people use. Ranks are not
  released.

Neither rule touches the planted-query attack (Götz et al. 2012): an attacker
who plants users still learns the queries of her target's released user,
with their kept times and clicks.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import numpy as np

from sdckit.errors import ParameterError
from sdckit.querylog.reading import MISSING_TIME, QueryLog

__all__ = ["TIME_GRANULARITIES", "click_hosts", "released_clicks", "released_times"]

#: Time granularities, finest first; a time not safe at one is tried at the next.
TIME_GRANULARITIES = ("hour", "day", "month")

_LABEL_UNIT = {"hour": "h", "day": "D", "month": "M"}


def _periods(minutes: np.ndarray, granularity: str) -> np.ndarray:
    """Period codes (hours, days or months since 1970) of times in minutes."""
    stamps = minutes.astype(np.int64).astype("datetime64[m]")
    return stamps.astype(f"datetime64[{_LABEL_UNIT[granularity]}]").astype(np.int64)


def _label(periods: np.ndarray, granularity: str) -> np.ndarray:
    """Text of period codes: ``2006-03-01 14:00``, ``2006-03-01`` or ``2006-03``."""
    unique, inverse = np.unique(periods, return_inverse=True)
    text = np.datetime_as_string(unique.astype(f"datetime64[{_LABEL_UNIT[granularity]}]"))
    if granularity == "hour":
        return np.array([t.replace("T", " ") + ":00" for t in text], dtype=object)[inverse]
    return text.astype(object)[inverse]


def released_times(
    log: QueryLog,
    labels: np.ndarray,
    source_line: np.ndarray,
    *,
    k: int,
    granularity: str,
) -> tuple[np.ndarray, dict[str, int]]:
    """The time released with each query: coarsened until k group members share the period.

    Parameters
    ----------
    log : QueryLog
        The original log, read with its time column (``read_log(...,
        time_column=...)``), as :func:`sdckit.querylog.protect` reads it.
    labels : numpy.ndarray
        The group of each original user.
    source_line : numpy.ndarray
        For each released query, the original line it was taken from.
    k : int
        The members of the group who must have searched in a released period.
    granularity : str
        The finest granularity released: ``"hour"``, ``"day"`` or ``"month"``.

    Returns
    -------
    times : numpy.ndarray
        Text per released query (empty where no time is released).
    counts : dict
        Released queries with a time at each granularity, ``"withheld"`` (a
        time not safe even by the month) and ``"missing"`` (no time in the log).
    """
    if granularity not in TIME_GRANULARITIES:
        raise ParameterError(
            f"times must be one of {', '.join(TIME_GRANULARITIES)}, got {granularity!r}"
        )
    if log.line_times is None:
        raise ParameterError("the log was read without a time column: give time_column")
    line_times = log.line_times
    has_time = line_times != MISSING_TIME
    users = log.line_users[has_time].astype(np.int64)
    out = np.full(len(source_line), "", dtype=object)
    pending = has_time[source_line]
    counts: dict[str, int] = {}
    if not has_time.any():
        return out, {"withheld": 0, "missing": len(source_line)}
    for level in TIME_GRANULARITIES[TIME_GRANULARITIES.index(granularity) :]:
        periods = _periods(line_times[has_time], level)
        base = int(periods.min())
        span = int(periods.max()) - base + 1
        # Distinct members active per (group, period).
        active = np.unique(users * span + (periods - base))
        group_period = labels[active // span] * span + active % span
        cells, members = np.unique(group_period, return_counts=True)
        todo = np.flatnonzero(pending)
        released = _periods(line_times[source_line[todo]], level)
        key = labels[log.line_users[source_line[todo]]] * span + (released - base)
        at = np.minimum(np.searchsorted(cells, key), len(cells) - 1)
        safe = (cells[at] == key) & (members[at] >= k)
        out[todo[safe]] = _label(released[safe], level)
        pending[todo[safe]] = False
        counts[level] = int(safe.sum())
    counts["withheld"] = int(pending.sum())
    counts["missing"] = int((~has_time[source_line]).sum())
    return out, counts


def click_hosts(clicks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The host of each distinct clicked address, coded.

    Parameters
    ----------
    clicks : numpy.ndarray
        Distinct clicked addresses (``http://www.x.org/a``, ``www.x.org``...).

    Returns
    -------
    hosts : numpy.ndarray
        The distinct hosts, lower-cased.
    host_of_click : numpy.ndarray
        For each click, the code of its host.
    """
    names = []
    for click in clicks:
        text = str(click).strip()
        parts = urlsplit(text if "//" in text else "//" + text)
        names.append((parts.hostname or text).lower())
    hosts, host_of_click = np.unique(np.array(names, dtype=object), return_inverse=True)
    return hosts, host_of_click


def released_clicks(
    log: QueryLog, source_line: np.ndarray, *, min_users: int
) -> tuple[np.ndarray, dict[str, int]]:
    """The clicked host released with each query: only hosts many users clicked.

    Parameters
    ----------
    log : QueryLog
        The original log, read with a click column.
    source_line : numpy.ndarray
        For each released query, the original line it was taken from.
    min_users : int
        A host is released only if at least this many distinct users of the
        log clicked it.

    Returns
    -------
    clicks : numpy.ndarray
        Host per released query (empty where none is released).
    counts : dict
        ``"released"`` and ``"withheld"`` (released queries whose line had a
        click that is not released).
    """
    if log.line_clicks is None or log.clicks is None:
        raise ParameterError("the log was read without a click column: give click_column")
    if isinstance(min_users, bool) or not isinstance(min_users, int) or min_users < 1:
        raise ParameterError(f"min_click_users must be a whole number >= 1, got {min_users!r}")
    hosts, host_of_click = click_hosts(log.clicks)
    clicked = log.line_clicks >= 0
    host_of_line = host_of_click[log.line_clicks[clicked]].astype(np.int64)
    pairs = np.unique(log.line_users[clicked].astype(np.int64) * len(hosts) + host_of_line)
    users_per_host = np.bincount(pairs % len(hosts), minlength=len(hosts))
    out = np.full(len(source_line), "", dtype=object)
    codes = log.line_clicks[source_line]
    has_click = codes >= 0
    host = np.full(len(source_line), -1, dtype=np.int64)
    host[has_click] = host_of_click[codes[has_click]]
    safe = has_click & (users_per_host[np.maximum(host, 0)] >= min_users)
    out[safe] = hosts[host[safe]]
    return out, {
        "released": int(safe.sum()),
        "withheld": int((has_click & ~safe).sum()),
    }
