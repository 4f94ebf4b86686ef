"""k-anonymity by optimal generalisation over hierarchies, then local suppression.

Step 1, the search. Each key with a :class:`~sdckit.microdata.recode.Hierarchy`
can be generalised to a level 0..h_j; a *node* of the lattice is one level per
key. A node is *feasible* when the records whose class (all keys together, a
missing value a category) holds fewer than k records are at most
``max_suppression`` of the file: those records are the ones local suppression
will have to treat. Among feasible nodes the search minimises the stated loss

    loss = (1 - s) * (1/p) sum_j level_j / h_j + s,

the mean over key cells of the share of each key's hierarchy climbed, a cell
of a record to be suppressed counting 1 (s the share of such records; Sweeney's
precision metric, 2002, §4, with suppression). The search follows the ideas of
ARX's Flash and OLA (Kohlmayer et al. 2012; El Emam et al. 2009) but is our
own: nodes are visited in increasing order of the lower bound
(1/p) sum_j level_j / h_j of their loss, and it stops as soon as that bound
reaches the best loss found; a node below (componentwise) a node already found
infeasible is infeasible too (generalising only merges classes) and is not
counted (predictive tagging).

Step 2, :func:`~sdckit.microdata.suppression.local_suppression` on the
generalised keys: every requested combination of keys is then k-anonymous
(checked), under either missing-value convention.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit._keys import SUPPRESSED_MISSING, combine_codes, key_codes
from sdckit._validation import RandomState, check_fraction
from sdckit.errors import ParameterError
from sdckit.microdata.base import MaskResult, column_changes, register_masker
from sdckit.microdata.recode import Hierarchy
from sdckit.microdata.suppression import check_k, check_key_columns, local_suppression
from sdckit.schema import Schema

__all__ = ["KAnonResult", "LatticeSearch", "kanon", "search_lattice"]


@dataclass(frozen=True)
class LatticeSearch:
    """The outcome of :func:`search_lattice`.

    Attributes
    ----------
    levels : dict
        The optimal level of each key.
    loss : float
        Its loss (see the module's docstring).
    suppressed_share : float
        Share of records in classes smaller than k at that node.
    evaluated : int
        Nodes whose classes were counted.
    lattice_size : int
        Nodes in the lattice.
    """

    levels: dict[str, int]
    loss: float
    suppressed_share: float
    evaluated: int
    lattice_size: int


def _level_codes(data: pd.DataFrame, keys: Sequence[str], hierarchies: Mapping[str, Hierarchy]):
    """Per key, the codes of the column generalised at each of its levels (missing a value).

    At the top of a hierarchy every record, a missing value included, is in one class: the
    key then says nothing, which a blank also says.
    """
    out = []
    for key in keys:
        hierarchy = hierarchies.get(key)
        height = 0 if hierarchy is None else hierarchy.height
        per_level = []
        for level in range(height + 1):
            if level and level == height:
                per_level.append(np.ones(len(data), dtype=np.int64))
                continue
            column = data[key] if level == 0 else hierarchy.generalise(data[key], level, name=key)  # type: ignore[union-attr]  # height 0 without one
            per_level.append(key_codes(column.to_frame(), [key])[:, 0] + 1)
        out.append(per_level)
    return out


class _RollUp:
    """Class sizes of lattice nodes rolled up from a counted node below, not recounted.

    Generalising a key only merges classes, so the classes of a node are
    unions of the classes of any node below it (componentwise): mapping the
    key codes of the lower node's class table to the higher levels and
    adding up its class counts gives the higher node's classes, in time
    proportional to the lower node's number of classes rather than to the
    number of records (the roll-up of ARX's Flash, Kohlmayer et al. 2012, §5).
    Each node is rolled up from the counted node below it with fewest classes.
    """

    def __init__(self, codes: list[list[np.ndarray]]) -> None:
        self.up: list[dict[tuple[int, int], np.ndarray]] = []
        for per_level in codes:
            maps = {}
            for low, high in itertools.combinations_with_replacement(range(len(per_level)), 2):
                table = np.zeros(int(per_level[low].max(initial=0)) + 1, dtype=np.int64)
                table[per_level[low]] = per_level[high]
                maps[(low, high)] = table
            self.up.append(maps)
        bottom = tuple(0 for _ in codes)
        stacked = np.column_stack([per_level[0] for per_level in codes])
        group, n_groups = combine_codes(stacked)
        first = np.zeros(n_groups, dtype=np.int64)
        first[group[::-1]] = np.arange(len(group) - 1, -1, -1)
        self.tables: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {
            bottom: (stacked[first], np.bincount(group, minlength=n_groups).astype(np.int64))
        }

    def classes(self, node: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Per class of ``node``: its size, repeated per row of the table it came from; and that row's count."""
        counted = np.array(list(self.tables))
        sizes_of = np.array([len(self.tables[m][1]) for m in self.tables])
        under = (counted <= np.asarray(node)).all(axis=1)
        below = tuple(int(v) for v in counted[under][int(np.argmin(sizes_of[under]))])
        table, counts = self.tables[below]
        mapped = np.column_stack(
            [self.up[j][(below[j], node[j])][table[:, j]] for j in range(len(node))]
        )
        group, n_groups = combine_codes(mapped)
        sizes = np.bincount(group, weights=counts, minlength=n_groups).astype(np.int64)
        if node not in self.tables:
            first = np.zeros(n_groups, dtype=np.int64)
            first[group[::-1]] = np.arange(len(group) - 1, -1, -1)
            self.tables[node] = (mapped[first], sizes)
        return sizes[group], counts


def search_lattice(
    data: pd.DataFrame,
    keys: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    *,
    k: int,
    max_suppression: float,
    exhaustive: bool = False,
) -> LatticeSearch:
    """The node of least loss whose classes smaller than k hold at most ``max_suppression``.

    Parameters
    ----------
    data : DataFrame
        The microdata.
    keys : sequence of str
        The key variables.
    hierarchies : mapping of str to Hierarchy
        Hierarchies of some keys (the others stay at level 0).
    k : int
        The k of k-anonymity.
    max_suppression : float
        Largest share of records allowed in classes smaller than k.
    exhaustive : bool, default False
        Count every node (a brute force, for checking the search).

    Returns
    -------
    LatticeSearch
    """
    codes = _level_codes(data, keys, hierarchies)
    heights = [len(c) - 1 for c in codes]
    climbing = [j for j, h in enumerate(heights) if h > 0]
    n = len(data)

    def bound(node: tuple[int, ...]) -> float:
        if not climbing:
            return 0.0
        return sum(node[j] / heights[j] for j in climbing) / len(climbing)

    def small_share(node: tuple[int, ...]) -> float:
        # From the records: the brute force's count, independent of the roll-up below.
        stacked = np.column_stack([codes[j][node[j]] for j in range(len(keys))])
        group, _ = combine_codes(stacked)
        sizes = np.bincount(group)
        return float((sizes[group] < k).sum()) / n

    rollup = _RollUp(codes)

    def rolled_share(node: tuple[int, ...]) -> float:
        sizes, counts = rollup.classes(node)
        return float(counts[sizes < k].sum()) / n

    nodes = list(itertools.product(*(range(h + 1) for h in heights)))
    best: tuple[float, float, tuple[int, ...]] | None = None
    infeasible: list[tuple[int, ...]] = []
    evaluated = 0
    queue = [(bound(node), node) for node in nodes]
    heapq.heapify(queue)
    while queue:
        lower, node = heapq.heappop(queue)
        if best is not None and lower >= best[0] and not exhaustive:
            break
        # Below a node already found infeasible: infeasible too (generalising only merges).
        if not exhaustive and infeasible and (np.asarray(infeasible) >= node).all(axis=1).any():
            continue
        share = small_share(node) if exhaustive else rolled_share(node)
        evaluated += 1
        if share > max_suppression:
            infeasible.append(node)
            continue
        loss = (1 - share) * lower + share
        if best is None or (loss, node) < (best[0], best[2]):
            best = (loss, share, node)
    if best is None:
        raise ParameterError(
            f"no generalisation reaches k-anonymity for k = {k} with at most "
            f"{max_suppression:g} of the records suppressed, even at the top of every hierarchy; "
            "allow more suppression (max_suppression) or give hierarchies for more keys"
        )
    return LatticeSearch(
        levels={key: int(best[2][j]) for j, key in enumerate(keys)},
        loss=float(best[0]),
        suppressed_share=float(best[1]),
        evaluated=evaluated,
        lattice_size=len(nodes),
    )


@dataclass(frozen=True)
class KAnonResult(MaskResult):
    """Result of :func:`kanon`.

    ``stats`` holds the chosen ``levels``, the search's ``loss``,
    ``nodes_evaluated`` and ``lattice_size``, and the suppression figures
    (``cells_suppressed``, ``records_suppressed``, ``achieved_k``);
    ``diagnostics`` the per-record count of blanked key values.
    """

    def expected_selection_share(self) -> float | None:
        """None: the changes follow the search, not a random share."""
        return None


@register_masker(
    "kanon",
    "k-anonymity: optimal generalisation over hierarchies + local suppression",
    ranges={"k_anonymity": (1, None), "max_suppression": (0, 1)},
)
def kanon(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    k_anonymity: int = 3,
    max_suppression: float = 0.05,
    combinations: int | Iterable[Iterable[str]] | None = None,
    importance: Sequence[str] | None = None,
    missing: str = SUPPRESSED_MISSING,
) -> KAnonResult:
    """Make the key variables k-anonymous: optimal generalisation, then local suppression.

    See the module's docstring for the search and its loss. Deterministic;
    ``random_state`` is accepted for the common interface and not used.

    Parameters
    ----------
    data : DataFrame
        The microdata; never modified.
    columns : iterable of str
        The key variables (required).
    schema : Schema, optional
        Checked against ``data`` when given.
    random_state : None, int or Generator
        Not used.
    progress : callable, optional
        ``progress(done, total)``.
    k_anonymity : int, default 3
        The k.
    hierarchies : mapping of str to Hierarchy, optional
        Generalisation hierarchies of some keys; without any, only local
        suppression runs.
    max_suppression : float, default 0.05
        Largest share of records the search may leave in classes smaller than k.
    combinations : None, int or iterable of iterables of str
        The combinations local suppression makes k-anonymous (see
        :func:`~sdckit.microdata.suppression.key_combinations`).
    importance : sequence of str, optional
        Every key, most important first (its values blanked last).
    missing : {"any", "category"}, default "any"
        How a blank counts in the final check.

    Returns
    -------
    KAnonResult
    """
    keys = check_key_columns(data, columns, schema)
    hierarchies = dict(hierarchies or {})
    stray = [c for c in hierarchies if c not in keys]
    if stray:
        raise ParameterError(f"hierarchies given for column(s) {stray} that are not keys {keys}")
    share = check_fraction(max_suppression, "max_suppression")
    k = check_k(k_anonymity, len(data))
    search = search_lattice(data, keys, hierarchies, k=k, max_suppression=share)
    generalised = data.copy()
    for key, level in search.levels.items():
        if level:
            generalised[key] = hierarchies[key].generalise(data[key], level, name=key)
    suppressed = local_suppression(
        generalised,
        columns=keys,
        k_anonymity=k,
        combinations=combinations,
        importance=importance,
        missing=missing,
        progress=progress,
    )
    out = suppressed.data
    relabelled = [c for c in keys if out[c].dtype != data[c].dtype]
    stats = {
        "levels": search.levels,
        "loss": search.loss,
        "nodes_evaluated": search.evaluated,
        "lattice_size": search.lattice_size,
        **{k_: v for k_, v in suppressed.stats.items() if k_ != "k_anonymity"},
        "k_anonymity": k,
    }
    params = {
        "columns": keys,
        "k_anonymity": k,
        "hierarchies": hierarchies or None,
        "max_suppression": share,
        "combinations": suppressed.params["combinations"],
        "importance": suppressed.params["importance"],
        "missing": suppressed.params["missing"],
    }
    return KAnonResult(
        data=out,
        diagnostics=suppressed.diagnostics,
        params=params,
        method="kanon",
        stats=stats,
        column_changes=column_changes(
            data, out, keys, selection_share=None, categorical=relabelled
        ),
    )
