"""Linked tables protected together by cell suppression: a shared cell is hidden in all or none.

Tables of one microdata file share cells: the ``region = north`` total of a
region x sex table is the ``region = north`` total of a region x age table.
Protected one by one, a cell hidden in one table (often a margin the
hypercube of a primary cell runs through) can be published in the other,
and the first table's primary cell is then recomputed from it — the crash
and leak reports of linked-table suppression in tau-ARGUS and sdcTable that
Hundepool et al. (2012), §4.4.6 ("linked tables"), discuss. Here the tables
are protected together, as tau-ARGUS's hypercube does for linked tables
(Giessing & Repsilber (2002), §4; de Wolf & Giessing (2009), §3):

1. every table is protected with the suppressions of the shared cells in the
   others carried over (hidden already, so they cost nothing), and a shared
   cell hidden in any table must itself not be recomputable in each table
   that holds it (it is protected there, as a primary cell with no level:
   at least some doubt);
2. step 1 is repeated until a round changes nothing (a fixed point: hidden
   cells only ever grow, so it ends);
3. every table is audited on its own, and the set jointly: the attacker's
   LP over the distinct cells of all the tables with every table's
   relations at once (Fischetti & Salazar-González (2001), §2). A primary
   cell the tables together still expose is protected by the optimal model
   of :func:`sdckit.tables.suppress` on the joint relations (cells already
   hidden cost nothing) or, when that model is too large or finds no pattern
   within ``time_limit``, by one deviation LP per cell on the joint relations
   (:func:`sdckit.tables.suppression.deviation_pattern`: protection proved
   by construction; before session 11 such a cell stayed exposed), and
   steps 1-3 run again.

Hiding more cells only widens an attacker's intervals, so what an audit
passed stays passed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import sdckit.tables.suppression as single
from sdckit._highs import NoTableInTime
from sdckit._results import FrozenResult
from sdckit.errors import DataError, InfeasibleError
from sdckit.tables.audit import AuditResult, audit_suppression, judge_intervals
from sdckit.tables.linked import LinkedCells, link_tables
from sdckit.tables.rules_primary import PrimaryRule
from sdckit.tables.suppression import Protection
from sdckit.tables.tabulate import Hierarchy

__all__ = ["LinkedSuppressionResult", "audit_linked", "suppress_linked"]


@dataclass(frozen=True)
class LinkedSuppressionResult(FrozenResult):
    """Result of :func:`suppress_linked`.

    Attributes
    ----------
    tables : tuple of DataFrame
        One release per input table, in the order given: the dimensions,
        ``published`` (missing where suppressed) and ``suppressed``. A cell
        common to several tables is suppressed in all of them or in none.
    internals : tuple of DataFrame
        The input tables with ``status``, ``published`` and ``suppressed``.
        Never release them.
    audits : tuple of AuditResult
        Each table audited on its own (empty without ``audit``).
    joint_audit : AuditResult or None
        The set audited jointly: one row per suppressed distinct cell, the
        attacker's interval from all the tables' relations together.
    params : mapping
    stats : mapping
        ``tables``, ``cells`` (distinct), ``shared_cells``, ``primary``,
        ``secondary``, ``shared_suppressed`` (shared cells hidden),
        ``suppressed_value``, ``rounds`` (protection rounds until the fixed
        point, over every repair), ``repaired`` (primary cells the joint
        audit exposed and the joint optimal model, or deviation LPs, then
        protected),
        ``exposed`` (cells the joint audit finds too narrow at the end),
        ``exposed_per_table``, ``no_hypercube``, ``seconds``.
    """

    tables: tuple[pd.DataFrame, ...]
    internals: tuple[pd.DataFrame, ...]
    audits: tuple[AuditResult, ...]
    joint_audit: AuditResult | None
    params: Mapping[str, Any] = field(default_factory=dict)
    stats: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """Whether every table and the set are protected, and the size of the pattern."""
        s = self.stats
        passed = not (s["exposed"] or any(s["exposed_per_table"]))
        head = (
            "not audited"
            if self.joint_audit is None
            else "every suppressed cell passed the audit of each table and of the set jointly"
            if passed
            else f"{s['exposed']} suppressed cells are NOT protected when the tables are read "
            f"together (per table: {list(s['exposed_per_table'])}; see .joint_audit)"
        )
        repaired = (
            f", {s['repaired']} primary cells exposed by the set protected jointly"
            if s["repaired"]
            else ""
        )
        return (
            f"{head}: {s['tables']} linked tables, {s['cells']} distinct cells "
            f"({s['shared_cells']} in more than one table); {s['primary']} primary and "
            f"{s['secondary']} secondary cells suppressed ({self.params['method']}), "
            f"{s['shared_suppressed']} shared cells suppressed in every table that holds them; "
            f"fixed point after {s['rounds']} rounds{repaired}; {s['seconds']:.2f} s"
        )


#: How each table is protected in a round.
METHODS = ("hypercube", "optimal")


def _protect_each(
    link: LinkedCells,
    problem: Protection,
    hidden: np.ndarray,
    *,
    method: str,
    time_limit: float | None,
) -> tuple[int, set[int]]:
    """Protect every table with the shared cells' suppressions carried over, to a fixed point.

    ``hidden`` (per distinct cell) grows in place. Returns the number of
    rounds and the distinct cells no hypercube protected.
    """
    shared = link.shared
    rounds = 0
    unprotected: set[int] = set()
    while True:
        rounds += 1
        before = hidden.copy()
        for structure, ids in zip(link.structures, link.cell_ids, strict=True):
            start = hidden[ids]
            own = Protection(
                problem.values[ids],
                problem.primary[ids] | (start & shared[ids]),
                problem.upper[ids],
                problem.lower[ids],
                problem.weights[ids],
            )
            if method == "hypercube":
                found, missed = single.hypercube_pattern(structure, own, start=start)
                unprotected.update(int(c) for c in ids[missed])
            else:
                relations, _ = structure.relations()
                pattern = single.optimal_pattern(
                    relations,
                    own.values,
                    own.primary,
                    own.upper,
                    own.lower,
                    np.where(start, 0.0, own.weights),
                    time_limit=time_limit,
                )
                if pattern is None:
                    raise InfeasibleError("no suppression pattern protects a linked table")
                found = pattern | start
            hidden[ids] |= found
        if (hidden == before).all():
            return rounds, unprotected


def _joint_verdict(
    link: LinkedCells, problem: Protection, hidden: np.ndarray
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The attacker's intervals from every table's relations at once, and the verdict."""
    seen = np.where(hidden, np.nan, problem.values)
    return judge_intervals(
        link.relations,
        problem.values,
        seen,
        hidden,
        problem.primary | (problem.upper > 0) | (problem.lower > 0),
        (problem.lower, problem.upper),
        labels=link.labels().assign(cell=np.arange(link.n)),
        intervals="settle",
    )


def _joint_result(
    link: LinkedCells, report: pd.DataFrame, verdict: dict[str, Any], value: str
) -> AuditResult:
    params = {"dims": list(link.labels().columns), "value": value, "intervals": "settle"}
    return AuditResult(report.drop(columns="cell"), params, {"cells": link.n, **verdict})


def _linked_problem(link: LinkedCells, value: str | None, cost: str) -> tuple[str, Protection]:
    """The value column and every distinct cell's value, primary status and levels."""
    if value is None:
        value = "true_sum" if all("true_sum" in f.columns for f in link.frames) else "count"
    values = link.values(value, whole=False, hint="linked tables must come from the same microdata")
    # a cell primary in one table is primary in all, at the largest level any asks
    primary = np.zeros(link.n, dtype=bool)
    upper = np.zeros(link.n)
    lower = np.zeros(link.n)
    for frame, here in zip(link.frames, link.row_ids, strict=True):
        if "primary" in frame.columns:
            flagged, up, low = single.primary_levels(frame)
            primary[here] |= flagged
            np.maximum.at(upper, here, up)
            np.maximum.at(lower, here, low)
    lower = np.minimum(lower, values)
    weights = values + 1.0 if cost == "value" else np.ones(link.n)
    return value, Protection(values, primary, upper, lower, weights)


def audit_linked(
    tables: Sequence[pd.DataFrame],
    *,
    value: str | None = None,
    dims: Sequence[Sequence[str]] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    total_label: str = "Total",
) -> AuditResult:
    """Audit linked tables jointly: the attacker reads every published table at once.

    A cell common to several tables is hidden only if every table that holds
    it suppresses it (published in one, the attacker knows it); the interval
    of each hidden cell is computed from all the tables' relations together
    (Fischetti & Salazar-González (2001), §2, on the stacked relations), so a
    set of tables each protected on its own can be found to expose a cell.

    Parameters
    ----------
    tables : sequence of DataFrame
        Two or more suppressed tables of one microdata file with their true
        values, a boolean ``suppressed`` column and, for the protection
        required, ``primary`` / ``upper_protection`` / ``lower_protection``
        (the ``internal`` tables of :func:`sdckit.tables.suppress` or
        :func:`suppress_linked`; without levels only exact disclosure is
        checked). Never modified.
    value : str, optional
        Column of true values: default ``true_sum`` when every table has it,
        else ``count``.
    dims, hierarchies, total_label
        As in :func:`suppress_linked`.

    Returns
    -------
    AuditResult
        One row per hidden distinct cell (and per published cell that needs
        protection), every dimension of the set as a column (the total label
        where a cell's table lacks it).
    """
    link = link_tables(tables, dims=dims, hierarchies=hierarchies, total_label=total_label)
    value, problem = _linked_problem(link, value, "value")
    shown = np.zeros(link.n, dtype=bool)
    for number, (frame, here) in enumerate(zip(link.frames, link.row_ids, strict=True), 1):
        if "suppressed" not in frame.columns:
            raise DataError(f"table {number} has no 'suppressed' column")
        shown[here[~frame["suppressed"].fillna(False).astype(bool).to_numpy()]] = True
    report, verdict = _joint_verdict(link, problem, ~shown)
    return _joint_result(link, report, verdict, value)


def suppress_linked(
    tables: Sequence[pd.DataFrame],
    *,
    rules: Sequence[str | PrimaryRule] | None = None,
    method: str = "hypercube",
    cost: str = "value",
    value: str | None = None,
    audit: bool = True,
    time_limit: float | None = single.DEFAULT_TIME_LIMIT,
    dims: Sequence[Sequence[str]] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    total_label: str = "Total",
) -> LinkedSuppressionResult:
    """Suppress cells in linked tables together: a shared cell is suppressed in all or none.

    Hundepool et al. (2012), §4.4.6; the procedure is in the module
    docstring (:mod:`sdckit.tables.linked_suppression`).

    Parameters
    ----------
    tables : sequence of DataFrame
        Two or more tables of one microdata file, every cell (margins
        included): the outputs of :func:`sdckit.tables.primary_suppression`,
        or count tables (``tabulate``'s output) together with ``rules``.
        Never modified.
    rules : list of str, optional
        Frequency rules to apply first to count tables (``["freq>=3"]``).
    method : {"hypercube", "optimal"}, default "hypercube"
        How each table is protected in a round (see
        :func:`sdckit.tables.suppress`).
    cost : {"value", "count"}, default "value"
        What a secondary cell costs, as in :func:`sdckit.tables.suppress`.
    value : str, optional
        The column of cell values: default ``true_sum`` when every table has
        it, else ``count``. A common cell must have one value in every table.
    audit : bool, default True
        Audit each table and the set jointly (the repair of cells the set
        exposes needs it).
    time_limit : float or None, default 60
        Seconds (wall clock) per HiGHS run of the optimal model and of each
        deviation LP; None: no limit.
    dims, hierarchies, total_label
        Each table's classifying columns, hierarchies and margin label, for
        tables without structure (read from files), as in
        :func:`sdckit.tables.linked.link_tables`.

    Returns
    -------
    LinkedSuppressionResult
        One release per table, the internal tables, the audits.

    Raises
    ------
    DataError
        A common cell has two different values, or a table lacks cells.
    ParameterError
        Fewer than two tables, an unknown method or cost.
    """
    time_limit = single.check_options(method, METHODS, cost, time_limit)
    link = link_tables(tables, dims=dims, hierarchies=hierarchies, total_label=total_label)
    frames = [
        single.flag_primary(frame, structure, rules)
        for frame, structure in zip(link.frames, link.structures, strict=True)
    ]
    link = LinkedCells(
        frames, link.structures, link.cell_ids, link.row_ids, link.identities, link.relations
    )
    value, problem = _linked_problem(link, value, cost)
    values, primary, upper, lower = problem.values, problem.primary, problem.upper, problem.lower
    weights = problem.weights

    start = time.perf_counter()
    hidden = primary.copy()
    rounds, unprotected = _protect_each(link, problem, hidden, method=method, time_limit=time_limit)
    repaired = 0
    joint = None
    if audit:
        report, verdict = _joint_verdict(link, problem, hidden)
        exposed = np.zeros(link.n, dtype=bool)
        exposed[report.loc[report["exposed"].to_numpy(), "cell"].to_numpy(np.int64)] = True
        exposed &= primary
        if exposed.any():
            pattern = None
            if 2 * int(exposed.sum()) * link.n <= single.MAX_OPTIMAL_SIZE:
                try:
                    pattern = single.optimal_pattern(
                        link.relations,
                        values,
                        exposed,
                        upper,
                        lower,
                        np.where(hidden, 0.0, weights),
                        time_limit=time_limit,
                    )
                except NoTableInTime:
                    pattern = None
            if pattern is None:
                # too large for the joint optimal model, or no pattern in time: one deviation
                # LP per exposed cell on the joint relations (protection proved by construction)
                pattern, _, _ = single.deviation_pattern(
                    link.relations,
                    Protection(values, exposed, upper, lower, weights),
                    hidden,
                    np.flatnonzero(exposed),
                    time_limit=time_limit,
                )
            repaired = int(exposed.sum())
            hidden |= pattern
            more, missed = _protect_each(
                link, problem, hidden, method=method, time_limit=time_limit
            )
            rounds += more
            unprotected |= missed
            report, verdict = _joint_verdict(link, problem, hidden)
        joint = _joint_result(link, report, verdict, value)
    seconds = time.perf_counter() - start

    internals, releases, audits = [], [], []
    for frame, structure, ids in zip(frames, link.structures, link.cell_ids, strict=True):
        internal, release = single.pattern_frames(
            frame, structure, value, primary[ids], hidden[ids]
        )
        internals.append(internal)
        releases.append(release)
        if audit:
            audits.append(
                audit_suppression(internal, structure=structure, value=value, intervals="settle")
            )
    shared = link.shared
    stats = {
        "tables": len(frames),
        "cells": link.n,
        "shared_cells": int(shared.sum()),
        "primary": int(primary.sum()),
        "secondary": int((hidden & ~primary).sum()),
        "shared_suppressed": int((hidden & shared).sum()),
        "suppressed_value": float(values[hidden].sum()),
        "rounds": rounds,
        "repaired": repaired,
        "exposed": None if joint is None else joint.stats["exposed"],
        "exposed_per_table": tuple(a.stats["exposed"] for a in audits),
        "no_hypercube": len(unprotected),
        "seconds": seconds,
    }
    params = {"method": method, "cost": cost, "value": value, "time_limit": time_limit}
    return LinkedSuppressionResult(
        tuple(releases), tuple(internals), tuple(audits), joint, params, stats
    )
