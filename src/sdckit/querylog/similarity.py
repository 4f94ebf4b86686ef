"""Classification matrices (Algorithm 1) and the incidence matrix (Algorithm 2).

Erola et al. (2011, §3.1): for each depth level l = 1..L the classification
matrix M_{U x C_l} counts, for each user, how often each category at level l
is found among the terms of the user's queries (a query repeated counts each
time); the incidence matrix M_{U x U}(i, j) = sum over levels and categories
of min(M_l(i, c), M_l(j, c)) is the users' similarity ODP_sim (eq. 1).

Both are built on sparse matrices. Each distinct query is classified once
(its terms through the taxonomy), giving a sparse queries x categories
matrix per level; the classification matrix is then the product of the sparse
users x queries count matrix with it. The sum of minima is computed exactly
from the sparse columns: in each category only the users with a non-zero
count meet, so the work is the sum over categories of (users in it)^2, and
the incidence is only ever formed for one block of users, never as a dense
users x users array of a large log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from sdckit._results import FrozenResult
from sdckit.errors import ParameterError
from sdckit.querylog.reading import QueryLog
from sdckit.querylog.taxonomy import Taxonomy

__all__ = [
    "Classification",
    "QueryClassifier",
    "classification_matrices",
    "incidence_matrix",
]


def _check_levels(levels: int) -> None:
    if not isinstance(levels, int) or isinstance(levels, bool) or levels < 1:
        raise ParameterError(f"levels must be a positive integer, got {levels!r}")


def _check_categories(categories_per_term: int) -> None:
    if (
        not isinstance(categories_per_term, int)
        or isinstance(categories_per_term, bool)
        or categories_per_term < 1
    ):
        raise ParameterError(
            f"categories_per_term must be a positive integer, got {categories_per_term!r}"
        )


class QueryClassifier:
    """Classifies query strings into sparse per-level category vectors.

    Distinct queries are classified once each; the category vocabulary of
    every level grows as queries are classified, so the original and the
    protected log can share one classifier (and one set of columns).

    Parameters
    ----------
    taxonomy : Taxonomy
        Where terms get their category paths.
    levels : int
        The maximum depth L.
    categories_per_term : int
        How many of a term's ranked category paths count (Erola et al. 2011,
        §4.2.2 compare the first one with the first five). At level l a
        term contributes each distinct level-l prefix of those paths once.
    """

    def __init__(self, taxonomy: Taxonomy, *, levels: int, categories_per_term: int = 1) -> None:
        _check_levels(levels)
        _check_categories(categories_per_term)
        self.taxonomy = taxonomy
        self.levels = levels
        self.categories_per_term = categories_per_term
        self.category_index: list[dict[tuple[str, ...], int]] = [{} for _ in range(levels)]
        self._cache: dict[str, tuple[list[list[int]], int, int, list[int]]] = {}

    def _classify_one(self, query: str) -> tuple[list[list[int]], int, int, list[int]]:
        cached = self._cache.get(query)
        if cached is not None:
            return cached
        terms = self.taxonomy.terms(query)
        per_level: list[list[int]] = [[] for _ in range(self.levels)]
        terms_deep = [0] * self.levels
        deepest = 0
        for paths in self.taxonomy.classify(terms):
            chosen = paths[: self.categories_per_term]
            for level in range(self.levels):
                prefixes = {p[: level + 1] for p in chosen if len(p) > level}
                if not prefixes:
                    continue
                terms_deep[level] += 1
                deepest = max(deepest, level + 1)
                index = self.category_index[level]
                for prefix in sorted(prefixes):
                    per_level[level].append(index.setdefault(prefix, len(index)))
        result = (per_level, deepest, len(terms), terms_deep)
        self._cache[query] = result
        return result

    def classify(
        self, queries: Sequence[str]
    ) -> tuple[list[sp.csr_matrix], np.ndarray, np.ndarray, np.ndarray]:
        """Classify queries.

        Parameters
        ----------
        queries : sequence of str
            Distinct query strings.

        Returns
        -------
        matrices : list of scipy.sparse.csr_matrix
            Per level, queries x categories counts (columns as far as known).
        depth : numpy.ndarray
            Per query, the deepest level at which some term is classified
            (0: no term classified).
        n_terms : numpy.ndarray
            Per query, its number of terms.
        terms_deep : numpy.ndarray
            Queries x levels: how many of the query's terms are classified
            down to each level (column 0: classified at all).
        """
        rows: list[list[int]] = [[] for _ in range(self.levels)]
        cols: list[list[int]] = [[] for _ in range(self.levels)]
        depth = np.zeros(len(queries), dtype=np.int64)
        n_terms = np.zeros(len(queries), dtype=np.int64)
        terms_deep = np.zeros((len(queries), self.levels), dtype=np.int64)
        for position, query in enumerate(queries):
            per_level, deepest, count, deep = self._classify_one(query)
            depth[position] = deepest
            n_terms[position] = count
            terms_deep[position] = deep
            for level in range(self.levels):
                codes = per_level[level]
                rows[level].extend([position] * len(codes))
                cols[level].extend(codes)
        matrices = []
        for level in range(self.levels):
            data = np.ones(len(rows[level]), dtype=np.int64)
            matrix = sp.csr_matrix(
                (data, (rows[level], cols[level])),
                shape=(len(queries), len(self.category_index[level])),
            )
            matrix.sum_duplicates()
            matrices.append(matrix)
        return matrices, depth, n_terms, terms_deep

    def widen(self, matrix: sp.csr_matrix, level: int) -> sp.csr_matrix:
        """Pad a matrix with empty columns up to the current categories of a level.

        Parameters
        ----------
        matrix : scipy.sparse.csr_matrix
            A matrix built when fewer categories were known.
        level : int
            Its level, 1-based.

        Returns
        -------
        scipy.sparse.csr_matrix
            The same counts with as many columns as level ``level`` now has.
        """
        width = len(self.category_index[level - 1])
        if matrix.shape[1] == width:
            return matrix
        return sp.csr_matrix((matrix.data, matrix.indices, matrix.indptr), (matrix.shape[0], width))


@dataclass(frozen=True)
class Classification(FrozenResult):
    """The classification matrices of a log (Erola et al. 2011, Algorithm 1).

    Attributes
    ----------
    matrices : tuple of scipy.sparse.csr_matrix
        M_{U x C_l} for l = 1..L: users x categories at level l, counts.
    query_matrices : tuple of scipy.sparse.csr_matrix
        Per level, distinct queries x categories (the classification of each
        distinct query of the log).
    classified_share : tuple of float
        Per level l, the share of queries (lines) with at least one term
        classified down to level l (Erola et al. 2011, Figure 2).
    term_level_share : tuple of float
        Per level l, the share of classified terms classified down to level l
        (the rule of §4.2.1 uses a level only when this share is large).
    n_terms, n_classified_terms : int
        Term occurrences in the log, and those with a category.
    """

    matrices: tuple[sp.csr_matrix, ...]
    query_matrices: tuple[sp.csr_matrix, ...]
    classified_share: tuple[float, ...]
    term_level_share: tuple[float, ...]
    n_terms: int
    n_classified_terms: int

    @property
    def levels(self) -> int:
        """The number of levels L."""
        return len(self.matrices)

    def summary(self) -> str:
        """Shares of queries classified by level: one line per level."""
        lines = [
            f"classification: {self.n_classified_terms:,} of {self.n_terms:,} term occurrences "
            "classified"
        ]
        for level, (share, term_share) in enumerate(
            zip(self.classified_share, self.term_level_share, strict=True), start=1
        ):
            lines.append(
                f"  level {level}: {share:.1%} of queries classified this deep "
                f"({term_share:.1%} of classified terms); "
                f"{self.matrices[level - 1].shape[1]:,} categories"
            )
        return "\n".join(lines)


def classification_matrices(
    log: QueryLog,
    *,
    classifier: QueryClassifier,
    progress: Callable[[int, int], None] | None = None,
) -> Classification:
    """Algorithm 1 of Erola et al. (2011): the classification matrix of each level.

    Parameters
    ----------
    log : QueryLog
        The log, as read by :func:`sdckit.querylog.read_log`.
    classifier : QueryClassifier
        The taxonomy, depth L and categories per term.
    progress : callable, optional
        ``progress(done, total)`` over distinct queries.

    Returns
    -------
    Classification
        The matrices and the shares of queries classified per level.
    """
    queries = log.queries
    step = 50_000
    parts: list[list[sp.csr_matrix]] = []
    depth_parts, term_parts, deep_parts = [], [], []
    for start in range(0, len(queries), step):
        matrices, depth, n_terms, terms_deep = classifier.classify(
            list(queries[start : start + step])
        )
        parts.append(matrices)
        depth_parts.append(depth)
        term_parts.append(n_terms)
        deep_parts.append(terms_deep)
        if progress is not None:
            progress(min(start + step, len(queries)), len(queries))
    levels = classifier.levels
    query_matrices = tuple(
        sp.csr_matrix(sp.vstack([classifier.widen(part[level], level + 1) for part in parts]))
        for level in range(levels)
    )
    # Weighted by how often each distinct query is asked (no per-line arrays).
    asked = np.bincount(log.line_queries, minlength=len(queries)).astype(np.int64)
    depth = np.concatenate(depth_parts)
    n_terms_total = int(asked @ np.concatenate(term_parts))
    deep_lines = asked @ np.concatenate(deep_parts)
    n_classified_terms = int(deep_lines[0])
    counts = log.user_query_counts()
    user_matrices = tuple(sp.csr_matrix(counts @ q) for q in query_matrices)
    return Classification(
        matrices=user_matrices,
        query_matrices=query_matrices,
        classified_share=tuple(
            float(asked[depth >= lv].sum() / log.n_lines) for lv in range(1, levels + 1)
        ),
        term_level_share=tuple(
            float(deep_lines[lv]) / n_classified_terms if n_classified_terms else 0.0
            for lv in range(levels)
        ),
        n_terms=n_terms_total,
        n_classified_terms=n_classified_terms,
    )


#: A category held by more than this share of a block's users is added as a
#: dense outer minimum over the whole block (contiguous, vectorised) instead of
#: scattered into the rows and columns of its users.
_DENSE_SHARE = 0.3


def _add_sum_of_minima(out: np.ndarray, matrix: sp.spmatrix) -> None:
    """Add sum_c min(M(i, c), M(j, c)) to ``out``, one category at a time.

    Only the users with a non-zero count in a category meet in it, so the
    work is the sum over categories of (users in it)^2, as for the sparse
    product of the 0/1 pattern with itself. A category most users of the
    block have is added densely (zeros add nothing to a minimum of counts).
    """
    csc = sp.csc_matrix(matrix)
    csc.eliminate_zeros()
    indptr, indices, data = csc.indptr, csc.indices, csc.data
    n = csc.shape[0]
    column = np.zeros(n, dtype=np.int64)
    buffer: np.ndarray | None = None
    for at in range(csc.shape[1]):
        start, stop = indptr[at], indptr[at + 1]
        if stop == start:
            continue
        rows = indices[start:stop]
        values = data[start:stop].astype(np.int64)
        if stop - start > _DENSE_SHARE * n:
            if buffer is None:
                buffer = np.empty((n, n), dtype=np.int64)
            column[:] = 0
            column[rows] = values
            np.minimum.outer(column, column, out=buffer)
            out += buffer
        else:
            out[np.ix_(rows, rows)] += np.minimum.outer(values, values)


def incidence_matrix(
    matrices: Sequence[sp.spmatrix],
    *,
    users: np.ndarray | None = None,
    levels: Sequence[int] | None = None,
) -> np.ndarray:
    """Algorithm 2 of Erola et al. (2011): common categories between users (ODP_sim, eq. 1).

    ``M_{U x U}(i, j) = sum_l sum_c min(M_l(i, c), M_l(j, c))``, computed
    exactly on sparse matrices (see the module notes) and only for the users
    asked for: never a dense users x users array of the whole log.

    Parameters
    ----------
    matrices : sequence of scipy.sparse matrices
        The classification matrices M_{U x C_l}, l = 1..L.
    users : numpy.ndarray, optional
        Row positions of the users of one block (default: all users; use
        this only for small logs).
    levels : sequence of int, optional
        The 1-based levels to sum over (default: all).

    Returns
    -------
    numpy.ndarray
        A dense, symmetric ``len(users) x len(users)`` integer array; its
        diagonal holds each user's own category count.
    """
    chosen = range(1, len(matrices) + 1) if levels is None else levels
    size = matrices[0].shape[0] if users is None else len(users)
    out = np.zeros((size, size), dtype=np.int64)
    for level in chosen:
        matrix = sp.csr_matrix(matrices[level - 1])
        if users is not None:
            matrix = matrix[users]
        _add_sum_of_minima(out, matrix)
    return out
