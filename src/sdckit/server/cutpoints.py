"""Cutpoints for continuous variables: the four binning methods of the MAS.

Lucero et al. (2011), Section 3.1.3. A universe may never be defined
by a raw continuous value (an analyst could otherwise difference
``income <= 46000`` against ``income <= 46001``); continuous variables are
shown as categorical recodes whose bins each hold at least beta observations.

* **fixed width**: every bin ``[lo + j w, lo + (j+1) w)`` has the same width,
  the smallest w giving every bin at least beta observations;
* **minimum width**: bins of about beta observations, identical values never
  split across bins;
* **increasing width**: a first width that grows (by ``growth``) from bin to
  bin, widening a bin until it holds beta, and a last, open bin once fewer
  than 2 beta observations remain;
* **partitioned**: top-down binary splits of the sorted data into halves of
  about equal size while both halves keep at least beta; the binary tree of
  allowed nodes is returned (Figure 4).

On the paper's example {1,1,2,2,4,4,5,6} with beta = 2 these give Table 3.

Bins are left-closed intervals ``[edges[j], edges[j+1])``; for assigning
values the first bin extends to -inf and the last to +inf, so every finite
value falls into exactly one bin.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sdckit.errors import DataError, ParameterError

__all__ = ["METHODS", "Binning", "PartitionNode", "cutpoints"]

METHODS = ("fixed_width", "minimum_width", "increasing_width", "partitioned")

# A value lying exactly on a fixed-width edge belongs to the upper bin; the
# tolerance keeps floating-point division from pushing it into the lower one.
_EDGE_TOL = 1e-9


@dataclass(frozen=True)
class PartitionNode:
    """A node of the partitioned-binning tree: the union of leaf bins low_bin..high_bin."""

    node_id: int
    low_bin: int
    high_bin: int
    children: tuple[PartitionNode, ...] = ()

    @property
    def bins(self) -> tuple[int, ...]:
        """Leaf bins covered by this node."""
        return tuple(range(self.low_bin, self.high_bin + 1))

    def walk(self) -> list[PartitionNode]:
        """This node and all its descendants, breadth first."""
        out, queue = [], [self]
        while queue:
            node = queue.pop(0)
            out.append(node)
            queue.extend(node.children)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "bins": [self.low_bin, self.high_bin],
            "children": [c.to_dict() for c in self.children],
        }

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> PartitionNode:
        low, high = mapping["bins"]
        return cls(
            int(mapping["node_id"]),
            int(low),
            int(high),
            tuple(cls.from_dict(c) for c in mapping.get("children", ())),
        )


@dataclass(frozen=True)
class Binning:
    """Cutpoints of one continuous variable.

    Attributes
    ----------
    method : str
        One of :data:`METHODS` (or ``"given"`` for cutpoints read from metadata).
    edges : tuple of float
        ``n_bins + 1`` increasing edges; bin j is ``[edges[j], edges[j+1])``.
    beta : int
        Minimum number of observations per bin the cutpoints were built for.
    counts : tuple of int
        Observations per bin in the data the cutpoints were built on (for the
        administrator; not part of the public metadata).
    tree : PartitionNode or None
        For partitioned binning, the tree of nodes an analyst may select.
    width : float or None
        The fixed width, or the first width of increasing-width binning.
    """

    method: str
    edges: tuple[float, ...]
    beta: int = 1
    counts: tuple[int, ...] = ()
    tree: PartitionNode | None = None
    width: float | None = None
    _inner: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        edges = tuple(float(e) for e in self.edges)
        if len(edges) < 2:
            raise ParameterError(f"cutpoints need at least two edges, got {list(edges)}")
        if any(not math.isfinite(e) for e in edges):
            raise ParameterError(f"cutpoint edges must be finite, got {list(edges)}")
        # The last bin is closed, so it may be the single value [v, v].
        if any(b <= a for a, b in itertools.pairwise(edges[:-1])) or edges[-1] < edges[-2]:
            raise ParameterError(f"cutpoint edges must increase strictly, got {list(edges)}")
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "counts", tuple(int(c) for c in self.counts))
        object.__setattr__(self, "_inner", np.asarray(edges[1:-1], dtype=np.float64))

    @property
    def n_bins(self) -> int:
        return len(self.edges) - 1

    @property
    def labels(self) -> tuple[str, ...]:
        """Readable interval of every bin, e.g. ``"[28000, 39000)"``."""
        out = []
        for j in range(self.n_bins):
            low, high = self.edges[j], self.edges[j + 1]
            close = "]" if j == self.n_bins - 1 else ")"
            out.append(f"[{low:g}, {high:g}{close}")
        return tuple(out)

    @property
    def public_labels(self) -> tuple[str, ...]:
        """Bin labels with open outer bins, e.g. ``"< 28000"``, ..., ``">= 91000"``.

        The outermost edges are the minimum and maximum of the data the
        cutpoints were built on; publishing them would disclose the most
        extreme units' values, so the public form leaves them out.
        """
        if self.n_bins == 1:
            return ("all values",)
        inner = self.edges[1:-1]
        middle = [f"[{lo:g}, {hi:g})" for lo, hi in itertools.pairwise(inner)]
        return (f"< {inner[0]:g}", *middle, f">= {inner[-1]:g}")

    def assign(self, values: Any) -> np.ndarray:
        """Bin index (0..n_bins-1) of every value; -1 for a missing value."""
        arr = np.asarray(values, dtype=np.float64)
        codes = np.searchsorted(self._inner, arr, side="right").astype(np.int64)
        codes[np.isnan(arr)] = -1
        return codes

    def nodes(self) -> tuple[PartitionNode, ...]:
        """The allowed tree nodes (partitioned binning), breadth first; () otherwise."""
        return tuple(self.tree.walk()) if self.tree is not None else ()

    def to_dict(self, *, include_counts: bool = False, public: bool = False) -> dict[str, Any]:
        """Plain mapping; ``public=True`` gives what an analyst may see.

        The public form has only the inner edges (the outer ones are the
        data's minimum and maximum) and never the bin counts.
        """
        if public:
            out: dict[str, Any] = {"method": self.method, "inner_edges": list(self.edges[1:-1])}
            if self.tree is not None:
                out["tree"] = self.tree.to_dict()
            return out
        out = {"method": self.method, "edges": list(self.edges), "beta": self.beta}
        if self.width is not None:
            out["width"] = self.width
        if self.tree is not None:
            out["tree"] = self.tree.to_dict()
        if include_counts:
            out["counts"] = list(self.counts)
        return out

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> Binning:
        if "edges" not in mapping:
            raise ParameterError("cutpoints mapping needs 'edges'")
        tree = mapping.get("tree")
        return cls(
            method=str(mapping.get("method", "given")),
            edges=tuple(mapping["edges"]),
            beta=int(mapping.get("beta", 1)),
            counts=tuple(mapping.get("counts", ())),
            tree=PartitionNode.from_dict(tree) if tree is not None else None,
            width=mapping.get("width"),
        )


def _sorted_values(x: Any, beta: int) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64).ravel()
    arr = arr[~np.isnan(arr)]
    if not np.all(np.isfinite(arr)):
        raise DataError("cutpoints: the variable holds infinite values")
    if arr.size < beta:
        raise DataError(
            f"cutpoints: {arr.size} non-missing observations cannot fill a bin of beta={beta}"
        )
    return np.sort(arr)


def _fixed_width_counts(xs: np.ndarray, lo: float, widths: np.ndarray) -> np.ndarray:
    """Smallest bin count for each candidate width (vectorised over widths)."""
    codes = np.floor((xs[:, None] - lo) / widths[None, :] + _EDGE_TOL).astype(np.int64)
    nbins = codes[-1, :] + 1  # xs sorted: the last row holds the largest bin index
    offsets = np.concatenate([[0], np.cumsum(nbins)[:-1]])
    counts = np.bincount((codes + offsets[None, :]).ravel(), minlength=int(nbins.sum()))
    return np.minimum.reduceat(counts, offsets)


def _fixed_width(xs: np.ndarray, beta: int) -> float:
    n, lo, hi = xs.size, xs[0], xs[-1]
    span = hi - lo
    if span == 0:
        return 1.0
    # Necessary conditions: the first and last bins hold beta values each, and
    # there are at most n // beta bins. A value at distance d from lo changes
    # bin only at the breakpoints w = d/j, and every bin is constant on
    # (previous breakpoint, breakpoint]; so testing the breakpoints (and L) in
    # increasing order finds the smallest width up to that interval, and the
    # breakpoint returned keeps edges on data values (Table 3: width 2).
    low_bound = max(xs[beta - 1] - lo, hi - xs[n - beta], span / (n // beta))
    distinct = np.unique(xs - lo)
    distinct = distinct[distinct > 0]
    batch = max(1, min(256, 4_000_000 // n))
    window_low = low_bound
    while window_low <= span:
        window_high = window_low * 2
        j_max = int(np.floor(span / window_low)) + 1
        j = np.arange(1, j_max + 1, dtype=np.float64)
        cand = (distinct[:, None] / j[None, :]).ravel()
        cand = cand[(cand >= window_low) & (cand < window_high)]
        if window_low == low_bound:
            cand = np.append(cand, low_bound)
        cand = np.unique(cand[cand > 0])
        for start in range(0, cand.size, batch):
            widths = cand[start : start + batch]
            ok = np.flatnonzero(_fixed_width_counts(xs, lo, widths) >= beta)
            if ok.size:
                return float(widths[ok[0]])
        window_low = window_high
    # One bin holding everything always passes (n >= beta).
    return float(span * (1 + 1e-6) + 1e-12)


def _fixed_width_binning(xs: np.ndarray, beta: int) -> Binning:
    lo = float(xs[0])
    width = _fixed_width(xs, beta)
    codes = np.floor((xs - lo) / width + _EDGE_TOL).astype(np.int64)
    counts = np.bincount(codes)
    edges = lo + width * np.arange(counts.size + 1)
    return Binning("fixed_width", tuple(edges), beta, tuple(counts), width=width)


def _minimum_width_binning(xs: np.ndarray, beta: int) -> Binning:
    values, value_counts = np.unique(xs, return_counts=True)
    cum = np.cumsum(value_counts)
    starts: list[int] = []
    counts: list[int] = []
    base, first = 0, 0
    while first < values.size:
        last = int(np.searchsorted(cum, base + beta, side="left"))
        if last >= values.size:
            # Fewer than beta observations remain: they join the previous bin.
            if counts:
                counts[-1] += int(cum[-1] - base)
            else:
                starts.append(first)
                counts.append(int(cum[-1] - base))
            break
        starts.append(first)
        counts.append(int(cum[last] - base))
        base, first = int(cum[last]), last + 1
    edges = [float(values[s]) for s in starts] + [float(values[-1])]
    return Binning("minimum_width", tuple(edges), beta, tuple(counts))


def _increasing_width_binning(
    xs: np.ndarray, beta: int, width: float | None, growth: float
) -> Binning:
    n, lo, hi = xs.size, float(xs[0]), float(xs[-1])
    w = _fixed_width(xs, beta) if width is None else width
    first_width = w
    edges, counts = [lo], []
    start, taken = lo, 0
    while taken < n:
        remaining = n - taken
        if remaining < 2 * beta:
            # omega = infinity: the rest forms the last bin.
            end = start + w
            while end <= hi:
                w *= growth
                end = start + w
            edges.append(end)
            counts.append(remaining)
            break
        end = start + w
        below = int(np.searchsorted(xs, end, side="left"))
        while below - taken < beta:
            w *= growth
            end = start + w
            below = int(np.searchsorted(xs, end, side="left"))
        if 0 < n - below < beta:
            # The leftover could not fill a bin: close with an open last bin.
            while end <= hi:
                w *= growth
                end = start + w
            below = n
        edges.append(end)
        counts.append(below - taken)
        taken, start = below, end
        w *= growth
    return Binning("increasing_width", tuple(edges), beta, tuple(counts), width=first_width)


def _partitioned_binning(xs: np.ndarray, beta: int) -> Binning:
    values, value_counts = np.unique(xs, return_counts=True)
    cum = np.concatenate([[0], np.cumsum(value_counts)])
    leaves: list[tuple[int, int]] = []  # distinct-value index ranges [a, b]

    def split(a: int, b: int) -> tuple:
        """Nested tuples describing the subtree over distinct values a..b."""
        total = cum[b + 1] - cum[a]
        if b > a:
            # Split after distinct value s so that the left part is closest to half.
            half = cum[a] + total / 2.0
            s = int(np.searchsorted(cum[a + 1 : b + 1], half)) + a
            options = [t for t in (s - 1, s) if a <= t < b]
            s = min(options, key=lambda t: abs(cum[t + 1] - half))
            left, right = cum[s + 1] - cum[a], cum[b + 1] - cum[s + 1]
            if left >= beta and right >= beta:
                return ("node", split(a, s), split(s + 1, b))
        leaves.append((a, b))
        return ("leaf", len(leaves) - 1)

    structure = split(0, values.size - 1)

    def build(item: tuple) -> tuple[PartitionNode, int, int]:
        if item[0] == "leaf":
            return PartitionNode(-1, item[1], item[1]), item[1], item[1]
        left, l_low, _ = build(item[1])
        right, _, r_high = build(item[2])
        return PartitionNode(-1, l_low, r_high, (left, right)), l_low, r_high

    def number(node: PartitionNode) -> PartitionNode:
        # Breadth-first numbering: the root is node 0, its children 1 and 2, ...
        order = []
        queue = [node]
        while queue:
            cur = queue.pop(0)
            order.append(cur)
            queue.extend(cur.children)
        ids = {id(n): i for i, n in enumerate(order)}

        def rebuild(n: PartitionNode) -> PartitionNode:
            return PartitionNode(
                ids[id(n)], n.low_bin, n.high_bin, tuple(rebuild(c) for c in n.children)
            )

        return rebuild(node)

    root, _, _ = build(structure)
    tree = number(root)
    edges = [float(values[a]) for a, _ in leaves] + [float(values[-1])]
    counts = [int(cum[b + 1] - cum[a]) for a, b in leaves]
    return Binning("partitioned", tuple(edges), beta, tuple(counts), tree=tree)


def cutpoints(
    x: Any,
    method: str = "minimum_width",
    *,
    beta: int = 10,
    width: float | None = None,
    growth: float = 2.0,
) -> Binning:
    """Bin a continuous variable so that every bin holds at least ``beta`` observations.

    Lucero et al. (2011), Section 3.1.3.

    Parameters
    ----------
    x : array-like of numbers
        The variable; missing values are ignored.
    method : {"fixed_width", "minimum_width", "increasing_width", "partitioned"}
        The binning method (see the module docstring).
    beta : int, default 10
        Minimum number of observations in every bin (beta_FW, beta_MW, ...).
    width : float, optional
        First width for increasing-width binning; default the fixed width.
    growth : float, default 2
        Factor by which the width grows from one bin to the next
        (increasing width only).

    Returns
    -------
    Binning
        Edges, per-bin counts and, for partitioned binning, the tree of nodes.

    Examples
    --------
    >>> cutpoints([1, 1, 2, 2, 4, 4, 5, 6], "minimum_width", beta=2).edges
    (1.0, 2.0, 4.0, 5.0, 6.0)
    """
    if method not in METHODS:
        raise ParameterError(f"method must be one of {list(METHODS)}, got {method!r}")
    if isinstance(beta, bool) or not isinstance(beta, numbers.Integral) or beta < 1:
        raise ParameterError(f"beta must be an integer >= 1, got {beta!r}")
    beta = int(beta)
    if width is not None and (
        isinstance(width, bool)
        or not isinstance(width, numbers.Real)
        or not math.isfinite(width)
        or width <= 0
    ):
        raise ParameterError(f"width must be a finite number > 0, got {width!r}")
    if isinstance(growth, bool) or not isinstance(growth, numbers.Real) or not growth > 1:
        raise ParameterError(f"growth must be a number > 1, got {growth!r}")
    xs = _sorted_values(x, beta)
    if method == "fixed_width":
        return _fixed_width_binning(xs, beta)
    if method == "minimum_width":
        return _minimum_width_binning(xs, beta)
    if method == "increasing_width":
        return _increasing_width_binning(xs, beta, width, float(growth))
    return _partitioned_binning(xs, beta)
