"""Approximate k-nearest-neighbour search with faiss: HNSW and IVF indexes.

Perry, Matloff & Tendick (2022), Section 10: exact neighbourhoods cost
O(n^2) in an arbitrary metric, and exact trees degrade towards that in ten
or more dimensions. An approximate index (Malkov & Yashunin 2020 for HNSW;
Jégou, Douze & Schmid 2011 for the inverted file, IVF) finds most of the k
nearest records at a small fraction of the cost. How many it finds is
*measured*, never assumed: RWN estimates the recall on a sample of records
against exact search (:func:`sdckit.neighbors.recall.estimate_recall`).

The index holds the design in float32 (faiss's type): ranks among
candidates whose distances differ by less than about 10^-7 of their size may
swap. Distances returned are recomputed in float64 from the design, and the
eps-ball is decided on those true distances, so eps is respected exactly.
The eps-ball is taken among the ``max_neighbors + 1`` nearest candidates the
index returns: a ball holding more than ``max_neighbors`` other records is
cut to the nearest ``max_neighbors`` and reported as truncated
(``neighborhood_truncated`` in RWN's diagnostics), never silently.
"""

from __future__ import annotations

import abc
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from sdckit.errors import ParameterError
from sdckit.neighbors._shared import BallRows, answers

__all__ = ["HNSWBackend", "IVFBackend", "import_faiss"]

_ADD_BLOCK = 1 << 16


def import_faiss() -> Any:
    """The faiss module, or a one-line error saying how to get it.

    Returns
    -------
    module
        ``faiss``.
    """
    try:
        import faiss
    except ImportError:
        raise ParameterError(
            "the hnsw and ivf neighbour searches need the faiss-cpu package, which is not "
            "installed here: pip install 'faiss-cpu>=1.8', or use --neighbors exact, sample "
            "or pairs"
        ) from None
    return faiss


def _positive(value: object, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


class _FaissBackend(BallRows):
    """What the HNSW and IVF backends share: candidates from the index, true distances."""

    exact = False
    name = "faiss"
    _metrics: tuple[str, ...] = ("euclidean",)

    def __init__(
        self,
        *,
        metric: str,
        max_neighbors: int,
        progress: Callable[[int, int], None] | None,
    ):
        if metric not in self._metrics:
            raise ParameterError(
                f"the {self.name} neighbour search supports metric "
                f"{', '.join(map(repr, self._metrics))} only, got {metric!r}; use "
                "neighbors='exact', 'sample' or 'pairs' for it"
            )
        self.metric = metric
        self.max_neighbors = _positive(max_neighbors, "max_neighbors")
        self.progress = progress
        self._matrix: np.ndarray | None = None
        self._index: Any = None

    @abc.abstractmethod
    def _new_index(self, faiss: Any, x: np.ndarray) -> Any:
        """The (trained, empty) index for the design ``x``, its search effort set."""

    @property
    def neighborhood_cap(self) -> int:
        """Most other records an eps-ball keeps (``max_neighbors``)."""
        return self.max_neighbors

    @answers("fit", "Build the index on the design matrix (a float32 copy), block by block.")
    def fit(self, matrix: np.ndarray) -> None:
        faiss = import_faiss()
        x = np.ascontiguousarray(matrix, dtype=np.float32)
        index = self._new_index(faiss, x)
        n = len(x)
        for start in range(0, n, _ADD_BLOCK):
            index.add(x[start : start + _ADD_BLOCK])
            if self.progress is not None:
                self.progress(min(start + _ADD_BLOCK, n), n)
        self._matrix = matrix
        self._index = index

    def _fitted(self) -> tuple[Any, np.ndarray]:
        if self._index is None or self._matrix is None:
            raise RuntimeError(f"the {self.name} backend is used before fit()")
        return self._index, self._matrix

    def _true_distances(self, points: np.ndarray, idx: np.ndarray) -> np.ndarray:
        matrix = self._fitted()[1]
        diff = matrix[np.maximum(idx, 0)] - points[:, None, :]
        if self.metric == "euclidean":
            d = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        elif self.metric == "manhattan":
            d = np.abs(diff).sum(axis=2)
        else:
            d = np.abs(diff).max(axis=2)
        return np.where(idx >= 0, d, np.inf)

    def _exact(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact answer for the few points the index returned too few candidates for."""
        matrix = self._fitted()[1]
        n = len(matrix)
        idx = np.broadcast_to(np.arange(n), (len(points), n))
        d = self._true_distances(points, np.ascontiguousarray(idx))
        part = np.argpartition(d, k - 1, axis=1)[:, :k] if k < n else idx[:, :k]
        return np.take_along_axis(d, part, axis=1), np.ascontiguousarray(part)

    def _search(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest candidates of each point, by true distance, sorted."""
        index, matrix = self._fitted()
        k = min(k, len(matrix))
        _, idx = index.search(np.ascontiguousarray(points, dtype=np.float32), k)
        idx = idx.astype(np.int64)
        missing = (idx < 0).any(axis=1)
        dist = self._true_distances(points, idx)
        if missing.any():  # too few candidates (a sparse IVF cell): search those exactly
            dist[missing], idx[missing] = self._exact(points[missing], k)
        order = np.argsort(dist, axis=1, kind="stable")
        return np.take_along_axis(dist, order, axis=1), np.take_along_axis(idx, order, axis=1)

    @answers(
        "kneighbors", "The ``k`` nearest records the index finds for fitted rows, by true distance."
    )
    def kneighbors(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._search(self._fitted()[1][rows], k)

    @answers("query", "The ``k`` nearest records the index finds for each point, by true distance.")
    def query(self, points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._search(points, k)

    def _balls(
        self, points: np.ndarray, radius: np.ndarray, rows: np.ndarray | None
    ) -> list[np.ndarray]:
        """Candidates within ``radius[i]`` (true distance), nearest first, the row itself excluded.

        At most ``max_neighbors + 1`` per point: one more than are kept, so
        that a truncated ball can be told from a full one.
        """
        extra = 2 if rows is not None else 1
        dist, idx = self._search(points, self.max_neighbors + extra)
        inside = dist <= radius[:, None]
        if rows is not None:
            inside &= idx != rows[:, None]
        return [i[w][: self.max_neighbors + 1] for i, w in zip(idx, inside, strict=True)]

    def _ball(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        return self._balls(self._fitted()[1][rows], radius, rows)

    @answers(
        "count_within",
        "Records found within ``radius[i]`` of each point, at most ``max_neighbors + 1``.",
    )
    def count_within(self, points: np.ndarray, radius: np.ndarray) -> np.ndarray:
        balls = self._balls(points, radius, None)
        return np.fromiter((len(b) for b in balls), dtype=np.int64, count=len(balls))


class HNSWBackend(_FaissBackend):
    """Approximate search with faiss's hierarchical navigable small-world graph (HNSW).

    Malkov & Yashunin (2020); faiss's ``IndexHNSWFlat``. Parameters in
    faiss's own terms. The defaults were chosen by measurement
    (``benchmarks/rwn_scaling.py --tune``, docs/benchmarks.md): on 10^5
    records of 10 i.i.d. Gaussian variables, the hardest of the benchmark's
    data, recall@10 is 0.997 at efSearch 16 and 1.000 from 32 up; 64 keeps a
    margin for larger files, where the graph is harder to search.

    Parameters
    ----------
    M : int, default 32
        Graph neighbours per node (faiss ``M``); memory about 8·M bytes per record.
    ef_search : int, default 64
        Candidate list length during search (faiss ``efSearch``); more is slower
        and finds more of the true neighbours. A query for k neighbours uses
        at least k.
    ef_construction : int, default 40
        Candidate list length while the graph is built (faiss ``efConstruction``).
    metric : {"euclidean", "manhattan", "chebyshev"}, default "euclidean"
        The distance (faiss ``METRIC_L2``, ``METRIC_L1``, ``METRIC_Linf``).
    max_neighbors : int, default 256
        Most other records an eps-ball keeps; a larger ball is cut to its
        nearest ``max_neighbors`` and reported.
    progress : callable, optional
        Called as ``progress(done, n)`` while records are added to the index.
    """

    name = "hnsw"
    _metrics = ("euclidean", "manhattan", "chebyshev")

    def __init__(
        self,
        M: int = 32,
        ef_search: int = 64,
        ef_construction: int = 40,
        *,
        metric: str = "euclidean",
        max_neighbors: int = 256,
        progress: Callable[[int, int], None] | None = None,
    ):
        super().__init__(metric=metric, max_neighbors=max_neighbors, progress=progress)
        self.M = _positive(M, "M", 2)
        self.ef_search = _positive(ef_search, "ef_search")
        self.ef_construction = _positive(ef_construction, "ef_construction")

    def _new_index(self, faiss: Any, x: np.ndarray) -> Any:
        kinds = {
            "euclidean": faiss.METRIC_L2,
            "manhattan": faiss.METRIC_L1,
            "chebyshev": faiss.METRIC_Linf,
        }
        index = faiss.IndexHNSWFlat(x.shape[1], self.M, kinds[self.metric])
        index.hnsw.efConstruction = self.ef_construction
        index.hnsw.efSearch = self.ef_search
        return index


class IVFBackend(_FaissBackend):
    """Approximate search with faiss's inverted file of k-means cells (IVF).

    Jégou, Douze & Schmid (2011); faiss's ``IndexIVFFlat``: the records are
    split into ``nlist`` k-means cells, and a query visits the ``nprobe``
    cells nearest to it. Euclidean distance only (the cells are k-means
    cells). The defaults were chosen by measurement (``benchmarks/rwn_scaling.py
    --tune``, docs/benchmarks.md).

    How the cost grows with n. A query compares itself with the cells'
    centroids (the *coarse quantizer*), then scans the ``nprobe`` nearest
    cells. With round(4·sqrt(n)) cells both parts grow as sqrt(n) per query,
    so the whole search grows as n^1.5: 29 times the processor time from 10^6
    to 10^7 records (docs/benchmarks.md). Above 10^6 records the default
    therefore keeps the cells at about ``CELL_SIZE`` records (nlist grows as n)
    and finds the nearest cells with an HNSW graph over the centroids
    (Malkov & Yashunin 2020) instead of comparing all of them: the work per
    query then stays about constant, and the whole search grows as n. Up to
    10^6 records the two rules give the same nlist and the flat quantizer is
    kept (its exact choice of cells costs little there).

    Parameters
    ----------
    nlist : int, optional
        Number of cells (faiss ``nlist``). Default max(round(4·sqrt(n)),
        round(n / CELL_SIZE)), at most n / 39 (faiss trains each centroid on
        at least 39 records).
    nprobe : int, default 32
        Cells visited per query (faiss ``nprobe``). Recall@10 on 10^5 i.i.d.
        Gaussian records: 0.91 at 16, 0.98 at 32 (docs/benchmarks.md).
    quantizer : {"auto", "flat", "hnsw"}, default "auto"
        How a query finds its nearest cells: ``"flat"`` compares it with every
        centroid (exact, cost ∝ nlist), ``"hnsw"`` searches an HNSW graph
        of the centroids (approximate, cost ∝ log nlist). ``"auto"`` takes
        ``"hnsw"`` when nlist exceeds ``HNSW_ABOVE`` cells, else ``"flat"``.
    metric : {"euclidean"}, default "euclidean"
        The distance.
    max_neighbors : int, default 256
        Most other records an eps-ball keeps; a larger ball is cut to its
        nearest ``max_neighbors`` and reported.
    random_state : int, default 0
        Seed of the training sample and of the k-means.
    progress : callable, optional
        Called as ``progress(done, n)`` while records are added to the index.
    """

    #: Records per cell the default nlist keeps above 10^6 records.
    CELL_SIZE = 250
    #: With quantizer="auto", more cells than this are found through an HNSW graph.
    HNSW_ABOVE = 4_096
    #: Training records per centroid when the centroids are many (HNSW quantizer).
    _TRAIN_PER_CELL = 40
    #: HNSW quantizer's efSearch while records are added (one nearest cell each).
    _ADD_EF_SEARCH = 16

    name = "ivf"

    def __init__(
        self,
        nlist: int | None = None,
        nprobe: int = 32,
        *,
        quantizer: str = "auto",
        metric: str = "euclidean",
        max_neighbors: int = 256,
        random_state: int = 0,
        progress: Callable[[int, int], None] | None = None,
    ):
        super().__init__(metric=metric, max_neighbors=max_neighbors, progress=progress)
        self.nlist = None if nlist is None else _positive(nlist, "nlist")
        self.nprobe = _positive(nprobe, "nprobe")
        if quantizer not in ("auto", "flat", "hnsw"):
            raise ParameterError(f"quantizer must be 'auto', 'flat' or 'hnsw', got {quantizer!r}")
        self.quantizer = quantizer
        self.random_state = _positive(random_state, "random_state", 0)

    def cells(self, n: int) -> tuple[int, str]:
        """The number of cells and the quantizer used for ``n`` records.

        Parameters
        ----------
        n : int
            Number of records indexed.

        Returns
        -------
        tuple of (int, str)
            ``(nlist, quantizer)``, the quantizer ``"flat"`` or ``"hnsw"``.
        """
        if self.nlist is not None and self.nlist > n:
            raise ParameterError(f"nlist={self.nlist} exceeds the number of records ({n})")
        if self.nlist is not None:
            nlist = self.nlist
        else:
            nlist = max(round(4 * np.sqrt(n)), round(n / self.CELL_SIZE))
        nlist = max(1, min(nlist, n // 39 if n >= 39 else 1))
        quantizer = self.quantizer
        if quantizer == "auto":
            quantizer = "hnsw" if nlist > self.HNSW_ABOVE else "flat"
        return nlist, quantizer

    def _new_index(self, faiss: Any, x: np.ndarray) -> Any:
        n, p = x.shape
        nlist, kind = self.cells(n)
        rng = np.random.default_rng(self.random_state)
        if kind == "flat":
            quantizer = faiss.IndexFlatL2(p)
            index = faiss.IndexIVFFlat(quantizer, p, nlist, faiss.METRIC_L2)
            index.cp.seed = self.random_state
            train = x if n <= 64 * nlist else x[np.sort(rng.choice(n, 64 * nlist, replace=False))]
            index.train(train)
        else:
            # Centroids by k-means on a flat index (fast matrix products), then an HNSW
            # graph over them as the quantizer: training the IVF through the graph
            # itself re-clusters far more slowly.
            size = self._TRAIN_PER_CELL * nlist
            train = x if n <= size else x[np.sort(rng.choice(n, size, replace=False))]
            kmeans = faiss.Kmeans(p, nlist, niter=10, seed=self.random_state)
            kmeans.train(np.ascontiguousarray(train))
            quantizer = faiss.IndexHNSWFlat(p, 32)
            quantizer.hnsw.efConstruction = 40
            quantizer.add(kmeans.centroids)
            # Adding a record needs only its one nearest centroid: a short search list
            # while adding (fit() lengthens it for the queries, which need nprobe cells).
            quantizer.hnsw.efSearch = self._ADD_EF_SEARCH
            index = faiss.IndexIVFFlat(quantizer, p, nlist, faiss.METRIC_L2)
            index.is_trained = True
        index.nprobe = min(self.nprobe, nlist)
        self._quantizer = quantizer  # faiss keeps a pointer: keep the object alive
        return index

    @answers("fit", "Build the index on the design matrix (a float32 copy), block by block.")
    def fit(self, matrix: np.ndarray) -> None:
        super().fit(matrix)
        if isinstance(self._quantizer, self._hnsw_type()):
            # The graph must return nprobe cells; a longer list found the same cells
            # at 2x10^6 records (recall 0.975 at 64, 0.974 at 32) for twice the time.
            self._quantizer.hnsw.efSearch = max(32, self.nprobe)

    @staticmethod
    def _hnsw_type() -> Any:
        return import_faiss().IndexHNSWFlat
