"""Record linkage on a masked release: nearest record and one-to-one optimal assignment.

The intruder holds the original values of some variables for every record
and the whole masked file. The nearest-record intruder of
:func:`sdckit.assess.record_linkage` links each original record to its
closest masked record, on its own. A stronger intruder uses the fact that
the masked file holds each record exactly once: she links the two files
one to one, choosing the assignment that minimises the total distance
(the linear assignment problem, solved by the Hungarian algorithm's
successor in :func:`scipy.optimize.linear_sum_assignment`), as sdcMicro's
record linkage does (Templ, Kowarik & Meindl 2015). Distances are Euclidean
in sdckit's design (numeric columns scaled with constants computed on both
files together, categoricals as dummies) or Gower's (each numeric column's
absolute difference divided by its range over both files, each categorical
0 when equal and 1 otherwise, averaged over the columns).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from sdckit._pairs import check_pair, joint_design, resolve_schema
from sdckit._results import FrozenResult
from sdckit._validation import RandomState, check_int, check_random_state
from sdckit.assess.risk import record_linkage
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.schema import Kind, Schema

__all__ = ["LinkageAttackResult", "linkage_attack"]

DISTANCES = ("euclidean", "gower")


@dataclass(frozen=True)
class LinkageAttackResult(FrozenResult):
    """Re-identification rates of the nearest-record and the one-to-one linkage intruders.

    Attributes
    ----------
    columns : list of str
        The variables the intruder knows.
    distance : {"euclidean", "gower"}
    nearest_rate : float
        Share of records whose nearest masked record is their own (a tie
        among m records counts 1/m).
    assignment_rate : float
        Share of records the optimal one-to-one assignment links to their own
        masked record.
    assigned : Series
        Per original record, the position (0-based) of the masked record
        the assignment links it to.
    """

    columns: list[str]
    distance: str
    nearest_rate: float
    assignment_rate: float
    assigned: pd.Series

    def summary(self) -> str:
        """One line per intruder."""
        n = len(self.assigned)
        return (
            f"record linkage on {', '.join(self.columns)} ({self.distance} distance, {n} records):\n"
            f"  nearest record:         {self.nearest_rate:.4f} re-identified\n"
            f"  one-to-one assignment:  {self.assignment_rate:.4f} re-identified"
        )


def _gower(
    original: pd.DataFrame, masked: pd.DataFrame, columns: list[str], schema: Schema
) -> np.ndarray:
    n = len(original)
    total = np.zeros((n, len(masked)))
    for c in columns:
        if schema[c].kind is Kind.CATEGORICAL:
            a = original[c].astype(object).to_numpy()
            b = masked[c].astype(object).to_numpy()
            total += a[:, None] != b[None, :]
        else:
            a = pd.to_numeric(original[c]).to_numpy(dtype=float)
            b = pd.to_numeric(masked[c]).to_numpy(dtype=float)
            both = np.concatenate([a, b])
            spread = float(np.nanmax(both) - np.nanmin(both))
            part = np.abs(a[:, None] - b[None, :])
            total += part / spread if spread > 0 else np.zeros_like(part)
    return total / len(columns)


def linkage_attack(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    distance: str = "euclidean",
    scale: str | None = "standard",
    max_records: int = 6000,
    random_state: RandomState = None,
) -> LinkageAttackResult:
    """Link a masked file back to the original, record by record and one to one.

    Parameters
    ----------
    original : DataFrame
        The original file; the intruder knows ``columns`` of every record.
    masked : DataFrame
        The release, the same records in the same order.
    columns : iterable of str, optional
        The variables the intruder knows (default every maskable column).
    schema : Schema, optional
        Column kinds; inferred when omitted.
    distance : {"euclidean", "gower"}, default "euclidean"
    scale : {"standard", "minmax", None}, default "standard"
        Scaling of the Euclidean design (constants from both files together).
    max_records : int, default 6000
        The assignment needs the full n x n distance matrix (8 n² bytes);
        larger files are refused rather than exhausting memory.
    random_state : None, int or numpy.random.Generator
        The masked records are put in a random order before the assignment:
        an intruder does not know the release's row order, and equal
        distances (a microaggregation group's identical records) would
        otherwise be resolved in the original order, crediting her with
        links she cannot make.

    Returns
    -------
    LinkageAttackResult
        Both rates; the nearest-record rate with the Euclidean distance is
        :func:`sdckit.assess.record_linkage`'s.
    """
    original, masked = check_pair(original, masked)
    if distance not in DISTANCES:
        raise ParameterError(f"distance must be one of {list(DISTANCES)}, got {distance!r}")
    max_records = check_int(max_records, "max_records", minimum=2)
    if len(original) > max_records:
        raise ParameterError(
            f"the one-to-one linkage needs an n x n matrix; {len(original)} records exceed "
            f"max_records={max_records} (raise it if memory allows {8 * len(original) ** 2 / 1e9:.1f} GB)"
        )
    schema = resolve_schema(original, schema)
    if columns is None:
        cols = [c for c in schema.maskable() if c in masked.columns]
    else:
        cols = list(columns)
        for c in cols:
            if c not in original.columns:
                raise SchemaError(f"columns: column {c!r} is not in the original file")
            if c not in masked.columns:
                raise SchemaError(f"columns: column {c!r} is not in the masked file")
    if not cols:
        raise SchemaError("no columns to link on")
    if original[cols].isna().any().any() or masked[cols].isna().any().any():
        raise DataError("record linkage: the linkage columns have missing values; drop them first")
    if distance == "euclidean":
        x0, x1 = joint_design(original, masked, cols, schema, scale=scale)
        matrix = cdist(x0, x1)
        nearest_rate = record_linkage(
            original, masked, columns=cols, schema=schema, scale=scale
        ).rate
    else:
        matrix = _gower(original, masked, cols, schema)
        smallest = matrix.min(axis=1, keepdims=True)
        tol = 1e-12 * (1.0 + smallest)
        ties = np.count_nonzero(matrix <= smallest + tol, axis=1)
        own = np.diagonal(matrix)
        nearest_rate = float(np.where(own <= smallest[:, 0] + tol[:, 0], 1.0 / ties, 0.0).mean())
    shuffle = check_random_state(random_state).permutation(len(masked))
    rows, assigned = linear_sum_assignment(matrix[:, shuffle])
    order = np.empty(len(rows), dtype=np.int64)
    order[rows] = shuffle[assigned]
    return LinkageAttackResult(
        columns=cols,
        distance=distance,
        nearest_rate=float(nearest_rate),
        assignment_rate=float(np.mean(order == np.arange(len(order)))),
        assigned=pd.Series(order, index=original.index, name="assigned"),
    )
