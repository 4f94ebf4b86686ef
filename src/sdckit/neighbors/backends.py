"""Neighbour-search backends: the one interface every search in sdckit goes through.

A backend indexes an n x m design matrix once (:meth:`NeighborBackend.fit`)
and answers two kinds of question about it: about its own *rows* (the
neighbourhoods of RWN, Perry, Matloff & Tendick (2022), Section 5 step 2)
and about arbitrary *points* (an original record looked up in the masked
file by the record-linkage intruder, Oganian (2011), Section 5). Exact trees
are the default, the search Perry, Matloff & Tendick (2022), Section 10
assumes; approximate and partitioned searches (their Sections 10-11) plug in
here and then serve masking and assessment alike.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from sdckit.errors import ParameterError
from sdckit.neighbors._shared import answers

__all__ = [
    "BruteBackend",
    "NeighborBackend",
    "TreeBackend",
    "make_backend",
    "resolve_backend",
]

_TREE_METRICS = {"euclidean", "manhattan", "chebyshev", "minkowski"}
#: The exact searches by name.
EXACT_ALGORITHMS = ("auto", "kd_tree", "ball_tree", "brute")
# The approximate and sampled searches (sdckit.neighbors.strategies), also by name.
_STRATEGIES = ("exact", "hnsw", "ivf", "sample", "pairs")
#: Every name :func:`make_backend` and :func:`resolve_backend` accept.
BACKEND_NAMES = EXACT_ALGORITHMS + _STRATEGIES


def check_backend_name(value: str, name: str = "algorithm", *, objects: bool = False) -> str:
    """``value`` if it is a backend name :func:`make_backend` knows, else a one-line refusal.

    Parameters
    ----------
    value : str
        The name given.
    name : str, default "algorithm"
        The parameter's name in the error message.
    objects : bool, default False
        Whether the parameter also takes a backend object (the message says so).

    Returns
    -------
    str
        ``value``.
    """
    if value not in BACKEND_NAMES:
        either = "a neighbour-search backend or " if objects else ""
        raise ParameterError(
            f"{name} must be {either}one of {', '.join(map(repr, BACKEND_NAMES))}, got {value!r}"
        )
    return value


class NeighborBackend(Protocol):
    """What a neighbour-search backend provides.

    Row queries take *row numbers* of the fitted matrix; their results
    include the query row itself where the geometry says so (self-exclusion
    is :func:`sdckit.neighbors.exclude_self`'s job, which knows the row ids).
    Point queries take coordinates of records that need not be indexed.
    Every query may be called from several threads at once on a fitted
    backend; :meth:`fit` is never called while queries run.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol is not instantiated; a backend class has its own constructor.
    """

    name: str

    def fit(self, matrix: np.ndarray) -> None:
        """Index the n x m design matrix."""

    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Distances and indices (len(rows) x k, sorted) of the k nearest records."""
        ...

    def radius_counts(self, rows: np.ndarray, radius: np.ndarray) -> np.ndarray:
        """Number of records within ``radius[i]`` of each row (itself included)."""
        ...

    def radius_neighbors(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        """Indices of the records within ``radius[i]`` of each row (itself included)."""
        ...

    def query(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Distances and indices (len(points) x k, sorted) of the k nearest records to each point."""
        ...

    def count_within(self, points: np.ndarray, radius: np.ndarray) -> np.ndarray:
        """Number of records within ``radius[i]`` of each point (distance <= radius)."""
        ...


class TreeBackend:
    """Exact search with scikit-learn's KD-tree or ball tree.

    Parameters
    ----------
    algorithm : {"kd_tree", "ball_tree"}, default "kd_tree"
        The tree.
    metric : str, default "euclidean"
        One of "euclidean", "manhattan", "chebyshev", "minkowski".
    leaf_size : int, default 40
        scikit-learn's leaf size (also its default).
    """

    def __init__(self, algorithm: str = "kd_tree", metric: str = "euclidean", leaf_size: int = 40):
        if algorithm not in ("kd_tree", "ball_tree"):
            raise ParameterError(f"algorithm must be 'kd_tree' or 'ball_tree', got {algorithm!r}")
        if metric not in _TREE_METRICS:
            raise ParameterError(f"metric must be one of {sorted(_TREE_METRICS)}, got {metric!r}")
        self.name = algorithm
        self.metric = metric
        self.leaf_size = leaf_size
        self._tree: Any = None  # a fitted sklearn KDTree or BallTree
        self._matrix: np.ndarray | None = None

    @answers("fit", "Index the n x m design matrix.")
    def fit(self, matrix: np.ndarray) -> None:
        # Imported here: scikit-learn is heavy, and the command line should start fast.
        from sklearn.neighbors import BallTree, KDTree

        cls = KDTree if self.name == "kd_tree" else BallTree
        self._matrix = matrix
        self._tree = cls(matrix, leaf_size=self.leaf_size, metric=self.metric)

    def _fitted(self) -> tuple[Any, np.ndarray]:
        if self._tree is None or self._matrix is None:
            raise RuntimeError(f"the {self.name} backend is used before fit()")
        return self._tree, self._matrix

    @answers("kneighbors", "Distances and indices of the ``k`` nearest records to fitted rows.")
    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        matrix = self._fitted()[1]
        return self.query(matrix[rows], k)

    @answers(
        "radius_counts",
        "Number of records within ``radius[i]`` of each fitted row (itself included).",
    )
    def radius_counts(self, rows: np.ndarray, radius: np.ndarray) -> np.ndarray:
        matrix = self._fitted()[1]
        return self.count_within(matrix[rows], radius)

    @answers(
        "radius_neighbors",
        "Indices of the records within ``radius[i]`` of each fitted row (itself included).",
        returns="list of ndarray\n    One array of row numbers per query row, in no particular order.",
    )
    def radius_neighbors(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        tree, matrix = self._fitted()
        return list(tree.query_radius(matrix[rows], r=radius))

    @answers("query", "Distances and indices of the ``k`` nearest records to each point.")
    def query(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        tree, _ = self._fitted()
        dist, idx = tree.query(points, k=k, sort_results=True)
        return dist, idx

    @answers("count_within", "Number of records within ``radius[i]`` of each point.")
    def count_within(self, points: np.ndarray, radius: np.ndarray) -> np.ndarray:
        tree, _ = self._fitted()
        counts: np.ndarray = tree.query_radius(points, r=radius, count_only=True)
        return counts


class BruteBackend:
    """Exact Euclidean search by blocked matrix products (fast for small n or many columns).

    Parameters
    ----------
    metric : str, default "euclidean"
        Only "euclidean" is supported.
    """

    name = "brute"

    def __init__(self, metric: str = "euclidean"):
        if metric != "euclidean":
            raise ParameterError(
                f"the brute backend supports metric='euclidean' only, got {metric!r}"
            )
        self.metric = metric
        self._matrix: np.ndarray | None = None
        self._sq: np.ndarray | None = None

    @answers("fit", "Index the n x m design matrix.")
    def fit(self, matrix: np.ndarray) -> None:
        self._matrix = matrix
        self._sq = np.einsum("ij,ij->i", matrix, matrix)

    def _fitted(self) -> tuple[np.ndarray, np.ndarray]:
        if self._matrix is None or self._sq is None:
            raise RuntimeError("the brute backend is used before fit()")
        return self._matrix, self._sq

    def _point_distances(self, points: np.ndarray) -> np.ndarray:
        matrix, sq = self._fitted()
        d2 = (
            np.einsum("ij,ij->i", points, points)[:, None] + sq[None, :] - 2.0 * (points @ matrix.T)
        )
        return np.maximum(d2, 0.0, out=d2)

    def _distances(self, rows: np.ndarray) -> np.ndarray:
        matrix, sq = self._fitted()
        q = matrix[rows]
        d2 = sq[rows, None] + sq[None, :] - 2.0 * (q @ matrix.T)
        np.maximum(d2, 0.0, out=d2)
        d2[np.arange(len(rows)), rows] = 0.0  # exact zero to self despite rounding
        return np.sqrt(d2, out=d2)

    @staticmethod
    def _nearest(d: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        part = np.argpartition(d, k - 1, axis=1)[:, :k]
        pd_ = np.take_along_axis(d, part, axis=1)
        order = np.argsort(pd_, axis=1, kind="stable")
        return np.take_along_axis(pd_, order, axis=1), np.take_along_axis(part, order, axis=1)

    @answers("kneighbors", "Distances and indices of the ``k`` nearest records to fitted rows.")
    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._nearest(self._distances(rows), k)

    @answers(
        "radius_counts",
        "Number of records within ``radius[i]`` of each fitted row (itself included).",
    )
    def radius_counts(self, rows: np.ndarray, radius: np.ndarray) -> np.ndarray:
        counts: np.ndarray = (self._distances(rows) <= radius[:, None]).sum(axis=1)
        return counts

    @answers(
        "radius_neighbors",
        "Indices of the records within ``radius[i]`` of each fitted row (itself included).",
        returns="list of ndarray\n    One array of row numbers per query row, ascending.",
    )
    def radius_neighbors(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        within = self._distances(rows) <= radius[:, None]
        return [np.flatnonzero(r) for r in within]

    @answers("query", "Distances and indices of the ``k`` nearest records to each point.")
    def query(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        d = np.sqrt(self._point_distances(points))
        return self._nearest(d, k)

    @answers("count_within", "Number of records within ``radius[i]`` of each point.")
    def count_within(self, points: np.ndarray, radius: np.ndarray) -> np.ndarray:
        d = np.sqrt(self._point_distances(points))
        counts: np.ndarray = (d <= radius[:, None]).sum(axis=1)
        return counts


def make_backend(
    algorithm: str = "auto", metric: str = "euclidean", *, random_state: object = None
) -> NeighborBackend:
    """Build a backend by name.

    Parameters
    ----------
    algorithm : {"auto", "kd_tree", "ball_tree", "brute", "exact", "hnsw", "ivf", "sample", \
"pairs"}, default "auto"
        ``"auto"`` and ``"exact"`` are a KD-tree, the exact search Perry,
        Matloff & Tendick (2022), Section 10 assumes; ``"hnsw"`` and
        ``"ivf"`` faiss's approximate indexes, ``"sample"`` and ``"pairs"``
        the sampled neighbourhoods of their Section 11 (Methods 1 and 2),
        each with its defaults (:func:`sdckit.neighbors.make_strategy` sets
        their other parameters).
    metric : str, default "euclidean"
        Distance; the brute backend and IVF support "euclidean" only.
    random_state : None, int or numpy Generator
        Seed of the samples of ``"sample"`` and ``"pairs"`` (ignored by the others).

    Returns
    -------
    NeighborBackend
        A new, unfitted backend.
    """
    if check_backend_name(algorithm) in ("auto", "kd_tree", "exact"):
        return TreeBackend("kd_tree", metric)
    if algorithm == "ball_tree":
        return TreeBackend("ball_tree", metric)
    if algorithm == "brute":
        return BruteBackend(metric)
    # strategies imports this module (through the approximate and sampled backends).
    from sdckit.neighbors.strategies import make_strategy

    return make_strategy(
        algorithm,
        metric=metric,
        random_state=random_state if algorithm in ("sample", "pairs") else None,
    )


def resolve_backend(
    backend: NeighborBackend | str | None, name: str = "backend", *, random_state: object = None
) -> NeighborBackend:
    """A backend object from what a user passed: a name, a backend, or None.

    Parameters
    ----------
    backend : NeighborBackend, str or None
        None is ``"auto"`` (an exact KD-tree); a string is passed to
        :func:`make_backend`; an object is used as it is (it must have the
        :class:`NeighborBackend` methods).
    name : str, default "backend"
        The parameter's name in error messages.
    random_state : None, int or numpy Generator
        Seed of a ``"sample"`` or ``"pairs"`` backend named by ``backend``.

    Returns
    -------
    NeighborBackend
    """
    if backend is None:
        return make_backend("auto")
    if isinstance(backend, str):
        return make_backend(
            check_backend_name(backend, name, objects=True), random_state=random_state
        )
    missing = [
        method
        for method in ("fit", "query", "count_within")
        if not callable(getattr(backend, method, None))
    ]
    if missing:
        raise ParameterError(
            f"{name} must be a neighbour-search backend (sdckit.neighbors.NeighborBackend); "
            f"{type(backend).__name__} lacks {', '.join(missing)}"
        )
    return backend
