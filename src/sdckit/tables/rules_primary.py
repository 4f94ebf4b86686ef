"""Primary suppression rules: which cells are sensitive, and how much protection each needs.

Hundepool et al. (2012), *Statistical Disclosure Control*, §4.2: a cell is
sensitive (primary) when

* **minimum frequency** ``freq>=n``: it has between 1 and ``n - 1``
  contributors;
* **(n,k)-dominance** ``dominance n=2 k=85``: its ``n`` largest contributions
  make up more than ``k`` percent of its total, ``x_1 + ... + x_n > k/100 X``;
* **p% rule** ``p% p=10``: the second largest contributor could estimate the
  largest to within ``p`` percent, ``X - x_1 - x_2 < p/100 x_1``;
* **zero rule** ``zero``: its total is zero although it has contributors
  (publishing 0 tells every contributor's value).

Each rule gives a *sensitivity* (positive for a sensitive cell) and the
*protection levels* the secondary suppression must guarantee: the interval
an attacker can compute for the cell must reach ``value - lower_protection``
below and ``value + upper_protection`` above (§4.3.1):

* ``freq>=n`` on a count table: upper ``n - count`` (the attacker cannot
  exclude that the cell reaches the threshold) and lower ``count`` (nor that
  it is empty); on a magnitude table ``range`` percent of the value (default
  10); ``protection=`` gives an absolute level instead;
* dominance: upper ``100/k (x_1 + ... + x_n) - X``, the same below;
* p%: upper ``p/100 x_1 - (X - x_1 - x_2)``, the same below;
* zero: upper ``protection`` (default 1 unit), lower 0.

Contributions come from the microdata; with a contributor id (an
enterprise's holding), a contributor's records in a cell are summed before
the largest contributions are ranked (holding-level aggregation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._validation import check_columns, check_dataframe
from sdckit.errors import DataError, ParameterError
from sdckit.tables.audit import non_negative
from sdckit.tables.tabulate import Hierarchy, TableStructure, label_key, tabulate

__all__ = ["PrimaryRule", "parse_rule", "primary_suppression"]

_FREQ = re.compile(r"^\s*freq(?:uency)?\s*>=\s*(?P<n>\S+)\s*(?P<rest>.*)$", re.IGNORECASE)
_NAMED = re.compile(r"^\s*(?P<kind>dominance|nk|p%|p-percent|zero)(?=\s|$)\s*(?P<rest>.*)$", re.I)
_ALLOWED = {
    "freq": {"protection", "range"},
    "dominance": {"n", "k"},
    "p%": {"p"},
    "zero": {"protection"},
}


@dataclass(frozen=True)
class PrimaryRule:
    """One primary rule, as :func:`parse_rule` reads it.

    Attributes
    ----------
    kind : {"freq", "dominance", "p%", "zero"}
    text : str
        The rule as written.
    threshold : int
        ``freq``: the minimum number of contributors.
    n : int
        ``dominance``: number of largest contributions.
    k : float
        ``dominance``: percentage of the total they may not exceed.
    p : float
        ``p%``: the precision (percent) the rule protects.
    protection : float or None
        ``freq`` and ``zero``: an absolute protection level on both sides
        (``zero``: above only), replacing the default.
    range : float
        ``freq`` on a magnitude table: protection as a percentage of the value.
    """

    kind: str
    text: str
    threshold: int = 0
    n: int = 0
    k: float = 0.0
    p: float = 0.0
    protection: float | None = None
    range: float = 10.0

    @property
    def needs_contributions(self) -> bool:
        """Whether the rule reads individual contributions (dominance, p%)."""
        return self.kind in ("dominance", "p%")


def _number(text: str, name: str, rule: str, *, integer: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ParameterError(f"rule {rule!r}: {name}={text!r} is not a number") from None
    if not np.isfinite(value) or value < 0 or (integer and not value.is_integer()):
        kind = "a whole number" if integer else "a non-negative number"
        raise ParameterError(f"rule {rule!r}: {name} must be {kind}, got {text}")
    return value


def parse_rule(text: str | PrimaryRule) -> PrimaryRule:
    """Read a primary rule written as text.

    Accepted forms: ``"freq>=3"`` (options ``protection=2`` or ``range=10``),
    ``"dominance n=2 k=85"``, ``"p% p=10"``, ``"zero"`` (option
    ``protection=1``).

    Parameters
    ----------
    text : str or PrimaryRule
        The rule (a PrimaryRule is returned as is).

    Returns
    -------
    PrimaryRule
        The parsed rule.

    Raises
    ------
    ParameterError
        The text is not one of the forms above, naming what is wrong.
    """
    if isinstance(text, PrimaryRule):
        return text
    if not isinstance(text, str):
        raise ParameterError(f"a rule must be text such as 'freq>=3', got {type(text).__name__}")
    freq = _FREQ.match(text)
    named = _NAMED.match(text)
    if freq:
        kind, rest = "freq", freq.group("rest")
        threshold = _number(freq.group("n"), "the threshold", text, integer=True)
    elif named:
        kind = named.group("kind").lower()
        kind = {"nk": "dominance", "p-percent": "p%"}.get(kind, kind)
        rest, threshold = named.group("rest"), 0.0
    else:
        raise ParameterError(
            f"rule {text!r} is not understood; write 'freq>=3', 'dominance n=2 k=85', "
            "'p% p=10' or 'zero'"
        )
    options: dict[str, str] = {}
    for item in rest.replace(",", " ").split():
        key, sep, val = item.partition("=")
        if not sep or not key or not val:
            raise ParameterError(f"rule {text!r}: {item!r} is not of the form name=value")
        key = key.strip().lower()
        if key not in _ALLOWED[kind]:
            raise ParameterError(
                f"rule {text!r}: {kind} takes {sorted(_ALLOWED[kind])}, not {key!r}"
            )
        options[key] = val
    if kind == "freq":
        if threshold < 1:
            raise ParameterError(f"rule {text!r}: the threshold must be at least 1")
        given = options.get("protection")
        return PrimaryRule(
            "freq",
            text,
            threshold=int(threshold),
            protection=None if given is None else _number(given, "protection", text),
            range=_number(options.get("range", "10"), "range", text),
        )
    if kind == "dominance":
        missing = {"n", "k"} - set(options)
        if missing:
            raise ParameterError(f"rule {text!r}: dominance needs {sorted(missing)} (n=2 k=85)")
        n = int(_number(options["n"], "n", text, integer=True))
        k = _number(options["k"], "k", text)
        if n < 1 or not 0 < k < 100:
            raise ParameterError(f"rule {text!r}: needs n >= 1 and 0 < k < 100")
        return PrimaryRule("dominance", text, n=n, k=k)
    if kind == "p%":
        if "p" not in options:
            raise ParameterError(f"rule {text!r}: the p% rule needs p (p=10)")
        p = _number(options["p"], "p", text)
        if not 0 < p <= 100:
            raise ParameterError(f"rule {text!r}: needs 0 < p <= 100")
        return PrimaryRule("p%", text, p=p)
    zero_protection = _number(options.get("protection", "1"), "protection", text)
    return PrimaryRule("zero", text, protection=zero_protection)


def _ancestors(structure: TableStructure, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR-style lists: for every leaf of ``axis``, the output categories it adds into."""
    matrix = structure.aggregation_matrix(axis).T  # leaves x output categories
    leaf, category = np.nonzero(matrix)
    starts = np.searchsorted(leaf, np.arange(matrix.shape[0] + 1))
    return starts, category


def _leaf_codes(data: pd.DataFrame, structure: TableStructure, axis: int) -> np.ndarray:
    dim = structure.dims[axis]
    lookup = {
        label_key(c): i
        for i, c in enumerate(structure.categories[axis][: structure.n_leaves[axis]])
    }
    values = data[dim].astype(object).to_numpy()
    return np.fromiter((lookup[label_key(v)] for v in values), np.int64, len(values))


def contributions(
    data: pd.DataFrame,
    structure: TableStructure,
    value: np.ndarray,
    contributor: np.ndarray,
    top: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell (margins included): contributors, total and the ``top`` largest contributions.

    Every record is sent to every cell it adds into (its leaf and each
    ancestor in every dimension); a contributor's records in a cell are summed
    first.
    """
    n = len(data)
    record = np.arange(n)
    coords: list[np.ndarray] = []
    for axis in range(len(structure.dims)):
        starts, category = _ancestors(structure, axis)
        leaf = _leaf_codes(data, structure, axis)[record]
        counts = starts[leaf + 1] - starts[leaf]
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        record = np.repeat(record, counts)
        coords = [np.repeat(c, counts) for c in coords]
        coords.append(category[np.repeat(starts[leaf], counts) + offsets])
    cell = np.ravel_multi_index(coords, structure.shape) if coords else np.zeros(0, np.int64)
    n_contrib = int(contributor.max()) + 1 if n else 1
    key, inverse = np.unique(cell * n_contrib + contributor[record], return_inverse=True)
    amount = np.bincount(inverse, weights=value[record], minlength=len(key))
    key_cell = key // n_contrib
    n_cells = structure.n_cells
    n_contributors = np.bincount(key_cell, minlength=n_cells)
    total = np.bincount(key_cell, weights=amount, minlength=n_cells)
    order = np.lexsort((-amount, key_cell))
    sorted_cell = key_cell[order]
    first = np.searchsorted(sorted_cell, sorted_cell, side="left")
    rank = np.arange(len(order)) - first
    largest = np.zeros((n_cells, max(top, 1)))
    keep = rank < top
    largest[sorted_cell[keep], rank[keep]] = amount[order][keep]
    return n_contributors, total, largest


def _rule_levels(
    rule: PrimaryRule, count: np.ndarray, total: np.ndarray, largest: np.ndarray, magnitude: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(sensitive, sensitivity, upper protection, lower protection) of one rule per cell."""
    if rule.kind == "freq":
        sensitivity = (rule.threshold - count).astype(np.float64)
        sensitive = (count > 0) & (count < rule.threshold)
        if rule.protection is not None:
            upper = np.full(len(count), rule.protection)
            lower = upper.copy()
        elif magnitude:
            upper = rule.range / 100.0 * total
            lower = upper.copy()
        else:
            upper = (rule.threshold - count).astype(np.float64)
            lower = count.astype(np.float64)
    elif rule.kind == "dominance":
        top_n = largest[:, : rule.n].sum(axis=1)
        sensitivity = top_n - rule.k / 100.0 * total
        sensitive = (count > 0) & (sensitivity > 0)
        upper = 100.0 / rule.k * top_n - total
        lower = upper.copy()
    elif rule.kind == "p%":
        x1, x2 = largest[:, 0], largest[:, 1]
        sensitivity = rule.p / 100.0 * x1 - (total - x1 - x2)
        sensitive = (count > 0) & (sensitivity > 0)
        upper = sensitivity.copy()
        lower = sensitivity.copy()
    else:  # zero
        sensitive = (count > 0) & (total == 0)
        sensitivity = np.where(sensitive, 1.0, -1.0)
        upper = np.full(len(count), float(rule.protection or 0.0))
        lower = np.zeros(len(count))
    zero = np.zeros(len(count))
    return (
        sensitive,
        sensitivity,
        np.where(sensitive, np.maximum(upper, 0), zero),
        np.where(sensitive, np.maximum(lower, 0), zero),
    )


def primary_suppression(
    data: pd.DataFrame,
    dims: Sequence[str] | str | None = None,
    *,
    rules: Sequence[str | PrimaryRule],
    value: str | None = None,
    contributor: str | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    categories: Mapping[str, Sequence[Any]] | None = None,
    total_label: str = "Total",
) -> pd.DataFrame:
    """The table of ``dims`` with each cell's primary status, sensitivity and protection levels.

    Hundepool et al. (2012), §4.2. From microdata, contributions are counted
    (and, with ``value``, summed) into every cell, margins and hierarchy
    levels included; a table already tabulated (``tabulate``'s output, with
    ``count``) takes the frequency rule only.

    Parameters
    ----------
    data : DataFrame
        Microdata, one record per row; or a tidy count table with
        ``attrs["structure"]``. Never modified.
    dims : list of str, optional
        Classifying variables (not needed for a tabulated table).
    rules : list of str or PrimaryRule
        E.g. ``["freq>=3", "dominance n=2 k=85", "p% p=10", "zero"]`` (see
        :func:`parse_rule`); a cell is primary when any rule flags it, and its
        protection levels are the largest the failing rules require.
    value : str, optional
        Magnitude variable (non-negative): the table holds its sums, and
        dominance, p% and zero rules read its contributions. Without it the
        table holds counts and only ``freq`` applies.
    contributor : str, optional
        Contributor (holding) id: records of one contributor in a cell are
        one contribution, and the frequency rule counts contributors.
    hierarchies : mapping, optional
        ``{dim: {parent: [children]}}`` as in :func:`sdckit.tables.tabulate`.
    categories : mapping, optional
        ``{dim: [leaf categories]}`` as in :func:`sdckit.tables.tabulate`.
    total_label : str, default "Total"
        Label of the margins.

    Returns
    -------
    DataFrame
        One row per cell: the dimensions, ``count`` (contributors), with
        ``value`` also ``true_sum``; ``primary`` (bool), ``rule`` (the first
        rule that flags the cell, else empty), ``sensitivity`` (largest over
        the rules, positive when sensitive), ``upper_protection``,
        ``lower_protection``. It holds true values: internal. The structure
        is in ``attrs["structure"]``.
    """
    frame = check_dataframe(data)
    parsed = [parse_rule(r) for r in (rules or [])]
    if not parsed:
        raise ParameterError("rules must hold at least one rule, e.g. 'freq>=3'")
    tabulated = "structure" in frame.attrs and "count" in frame.columns and value is None
    if tabulated:
        structure: TableStructure = frame.attrs["structure"]
        needing = [r.text for r in parsed if r.kind != "freq"]
        if needing:
            raise ParameterError(
                f"rules {needing} need individual contributions: give the microdata and value"
            )
        out = frame.copy()
        positions = structure.cell_positions(frame)
        count = np.zeros(structure.n_cells, dtype=np.int64)
        count[positions] = frame["count"].to_numpy(np.int64)
        total = count.astype(np.float64)
        largest = np.zeros((structure.n_cells, 2))
        magnitude = False
    else:
        if dims is None:
            raise ParameterError("dims must name the classifying columns of the microdata")
        dims = check_columns(frame, dims, "dims")
        needing = [r.text for r in parsed if r.kind != "freq"]
        if needing and value is None:
            raise ParameterError(
                f"rules {needing} read contributions: give value (the magnitude variable)"
            )
        counted = tabulate(
            frame, dims, hierarchies=hierarchies, categories=categories, total_label=total_label
        )
        structure = counted.attrs["structure"]
        amounts = np.ones(len(frame))
        if value is not None:
            check_columns(frame, [value], "value")
            amounts = non_negative(frame[value], f"value column {value!r}")
            if np.isnan(amounts).any():
                row = int(np.flatnonzero(np.isnan(amounts))[0])
                raise DataError(f"value column {value!r} is missing in row {row + 1}")
        if contributor is not None:
            check_columns(frame, [contributor], "contributor")
            if frame[contributor].isna().any():
                k = int(np.flatnonzero(frame[contributor].isna().to_numpy())[0])
                raise DataError(f"contributor column {contributor!r} is missing in row {k + 1}")
            ids = pd.factorize(frame[contributor])[0].astype(np.int64)
        else:
            ids = np.arange(len(frame), dtype=np.int64)
        top = max([2] + [r.n for r in parsed if r.kind == "dominance"])
        count, total, largest = contributions(frame, structure, amounts, ids, top)
        out = structure.labels()
        positions = np.arange(structure.n_cells)
        out["count"] = count
        magnitude = value is not None
        if magnitude:
            out["true_sum"] = total
    primary = np.zeros(structure.n_cells, dtype=bool)
    rule_text = np.full(structure.n_cells, "", dtype=object)
    sensitivity = np.full(structure.n_cells, -np.inf)
    upper = np.zeros(structure.n_cells)
    lower = np.zeros(structure.n_cells)
    for rule in parsed:
        flagged, sens, up, low = _rule_levels(rule, count, total, largest, magnitude)
        rule_text[flagged & ~primary] = rule.text
        primary |= flagged
        sensitivity = np.maximum(sensitivity, sens)
        upper = np.maximum(upper, up)
        lower = np.maximum(lower, low)
    lower = np.minimum(lower, total)
    out["primary"] = primary[positions]
    out["rule"] = rule_text[positions]
    out["sensitivity"] = sensitivity[positions]
    out["upper_protection"] = upper[positions]
    out["lower_protection"] = lower[positions]
    out.attrs["structure"] = structure
    return out
