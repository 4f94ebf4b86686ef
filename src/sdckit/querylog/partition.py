"""The partition of users into groups of at least k (Algorithms 3 and 4).

Erola et al. (2011, §3.2): repeatedly take the two most similar users of the
incidence matrix, merge them into one user (their rows and columns added),
add the user most similar to the merged one, and so on until the group has k
users (Algorithm 4); remove the group and start again (Algorithm 3).

The paper's loop condition in Algorithm 3, ``while |U'| <= k``, is a
misprint: as printed the loop would never run on a log of more than k users.
It is read as ``while |U'| >= k``. When fewer than k users are left, they
cannot form a group of their own; each of them joins the group with which it
shares most categories (the sum of its incidence with the group's members;
ties go to the group formed first), so every group has between k and
2k - 1 users.

Lazy maxima: the pair to merge first is the largest cell of the remaining
incidence matrix (ties: first row, then first column). Each row's maximum is
cached; removing a group only lowers cells, so a row whose best column was in
the group keeps its cached maximum as an upper bound and is recomputed only
when it is the first row with the largest cached value. The first row whose
cached maximum is exact and largest is then the first row holding the true
largest cell (every row before it has a smaller bound), so the groups are
those of recomputing every such row at once, at a fraction of the work when
many users' best match is the same heavy searcher.

For large logs the quadratic incidence matrix cannot be held, so users are
first put into blocks by their top-level category profile (:func:`user_blocks`)
and the paper's algorithm runs inside each block; with ``block_size=None``
the whole log is one block (the exact method, for small logs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from sdckit._docs import shared_doc
from sdckit.errors import ParameterError
from sdckit.querylog.similarity import incidence_matrix

__all__ = [
    "check_k",
    "partition_blocks",
    "random_partition",
    "semantic_clusters",
    "semantic_partition",
    "user_blocks",
]

#: The ``{{groups}}`` marker: the classification matrices and the group size every
#: partition function takes (:func:`sdckit._docs.shared_doc`).
_groups_doc = shared_doc(
    {
        "groups": """
        matrices : sequence of scipy.sparse matrices
            The classification matrices M_{U x C_l}, l = 1..L.
        k : int
            The minimum group size.
        """
    }
)


def check_k(k: int, n_users: int) -> None:
    """Refuse a k that is not an integer >= 2 or exceeds the number of users.

    Parameters
    ----------
    k : int
        The group size.
    n_users : int
        Users in the log.
    """
    if not isinstance(k, int | np.integer) or isinstance(k, bool) or k < 2:
        raise ParameterError(f"k must be an integer of at least 2, got {k!r}")
    if k > n_users:
        raise ParameterError(f"k = {k} is larger than the number of users in the log ({n_users})")


def semantic_clusters(incidence: np.ndarray, *, k: int) -> list[np.ndarray]:
    """Algorithms 3 and 4 of Erola et al. (2011) on one incidence matrix.

    Algorithm 3's printed loop condition ``while |U'| <= k`` is read as
    ``while |U'| >= k`` (a misprint: as printed it never runs); the fewer
    than k users left at the end join the groups they share most with.

    Parameters
    ----------
    incidence : numpy.ndarray
        The symmetric users x users incidence matrix (common categories).
    k : int
        The minimum group size.

    Returns
    -------
    list of numpy.ndarray
        The groups, as row positions, in the order they were formed; the
        users left over when fewer than k remain are added to the groups
        they share most categories with (see the module notes).
    """
    n = incidence.shape[0]
    check_k(k, n)
    sim = np.array(incidence, dtype=np.int64, copy=True)
    np.fill_diagonal(sim, -1)
    active = np.ones(n, dtype=bool)
    # Row maxima cached: the largest cell of the matrix is the largest row
    # maximum (ties: first row, then first column, as a row-major argmax).
    # Removing a group only lowers cells, so the maximum cached for a row
    # whose best column left is an upper bound: such a row is marked stale
    # and recomputed only when it comes first (module notes, "Lazy maxima").
    row_arg = sim.argmax(axis=1)
    row_max = sim[np.arange(n), row_arg]
    stale = np.zeros(n, dtype=bool)
    clusters: list[np.ndarray] = []
    remaining = n
    while remaining >= k:  # the paper prints "<= k": a misprint (module notes)
        first = int(row_max.argmax())
        while stale[first]:
            row_arg[first] = sim[first].argmax()
            row_max[first] = sim[first, row_arg[first]]
            stale[first] = False
            first = int(row_max.argmax())
        second = int(row_arg[first])
        members = [first, second]
        chosen = np.zeros(n, dtype=bool)
        chosen[members] = True
        merged = sim[first] + sim[second]  # the merged user u' (Algorithm 4)
        while len(members) < k:
            candidates = np.where(active & ~chosen, merged, np.iinfo(np.int64).min)
            nearest = int(candidates.argmax())
            members.append(nearest)
            chosen[nearest] = True
            merged = merged + sim[nearest]
        group = np.array(members, dtype=np.int64)
        clusters.append(group)
        active[group] = False
        remaining -= len(group)
        sim[group, :] = -1
        sim[:, group] = -1
        row_max[group] = -2
        stale[group] = False
        in_group = np.zeros(n, dtype=bool)
        in_group[group] = True
        stale |= active & in_group[row_arg]
    leftover = np.flatnonzero(active)
    if leftover.size:
        base = [c.copy() for c in clusters]
        additions: list[list[int]] = [[] for _ in clusters]
        for user in leftover:
            shared = [int(incidence[user, c].sum()) for c in base]
            additions[int(np.argmax(shared))].append(int(user))
        clusters = [
            np.concatenate([c, np.array(a, dtype=np.int64)]) if a else c
            for c, a in zip(clusters, additions, strict=True)
        ]
    return clusters


def user_blocks(
    level_one: sp.spmatrix,
    *,
    k: int,
    block_size: int,
    level_two: sp.spmatrix | None = None,
) -> list[np.ndarray]:
    """Blocks of users with the same top-level category profile.

    Users are keyed by their dominant level-1 category (the one most of their
    terms fall in; users with no classified term form their own key) and
    sorted by it, then by their dominant level-2 category, then by their
    order in the log. A key with more than ``block_size`` users is cut into
    near-equal consecutive pieces of at most ``block_size``; consecutive keys
    (or pieces) are then packed, in sort order, into blocks of at most
    ``block_size`` users, a block under k users taking the next key too (the
    last joins the previous block). Every block thus has at least k users
    and at most ``block_size + k - 1``.

    Parameters
    ----------
    level_one : scipy.sparse matrix
        The level-1 classification matrix (users x top categories).
    k : int
        The minimum group size.
    block_size : int
        The largest block (at least 2k).
    level_two : scipy.sparse matrix, optional
        The level-2 classification matrix, to order users inside a key.

    Returns
    -------
    list of numpy.ndarray
        Row positions of the users of each block.
    """
    n = level_one.shape[0]
    check_k(k, n)
    if not isinstance(block_size, int) or block_size < 2 * k:
        raise ParameterError(
            f"block_size must be an integer of at least 2k = {2 * k}, got {block_size!r}"
        )
    key_one = _dominant(level_one)
    key_two = _dominant(level_two) if level_two is not None else np.zeros(n, dtype=np.int64)
    # Unclassified users (key -1) sort last, after every category.
    key_one = np.where(key_one < 0, np.iinfo(np.int64).max, key_one)
    order = np.lexsort((np.arange(n), key_two, key_one))
    sorted_keys = key_one[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], n]
    pieces: list[np.ndarray] = []
    for start, end in zip(starts, ends, strict=True):
        members = order[start:end]
        if len(members) > block_size:
            n_pieces = -(-len(members) // block_size)
            pieces.extend(np.array_split(members, n_pieces))
        else:
            pieces.append(members)
    # Consecutive keys are packed into blocks of up to block_size users, so
    # a block is as large as memory allows and holds neighbouring profiles.
    blocks: list[np.ndarray] = []
    pending: list[np.ndarray] = []
    size = 0
    for piece in pieces:
        if pending and size >= k and size + len(piece) > block_size:
            blocks.append(np.concatenate(pending))
            pending, size = [], 0
        pending.append(piece)
        size += len(piece)
    if pending:
        if size >= k or not blocks:
            blocks.append(np.concatenate(pending))
        else:
            blocks[-1] = np.concatenate([blocks[-1], *pending])
    return blocks


def _dominant(matrix: sp.spmatrix) -> np.ndarray:
    """Per row, the column with the largest count (first on ties); -1 for an empty row."""
    csr = sp.csr_matrix(matrix)
    csr.sum_duplicates()  # canonical: sorted columns, no duplicates
    lengths = np.diff(csr.indptr)
    row = np.repeat(np.arange(csr.shape[0]), lengths)
    # Within each row, the largest count first, then the smallest column.
    order = np.lexsort((csr.indices, -csr.data, row))
    out = np.full(csr.shape[0], -1, dtype=np.int64)
    nonempty = lengths > 0
    out[nonempty] = csr.indices[order[csr.indptr[:-1][nonempty]]]
    return out


@_groups_doc
def partition_blocks(
    matrices: Sequence[sp.spmatrix], *, k: int, block_size: int | None
) -> list[np.ndarray]:
    """The blocks the semantic partition runs in (one block for a small log or ``None``).

    Parameters
    ----------
    {{groups}}
    block_size : int or None
        The largest block; None: one block (the exact method).

    Returns
    -------
    list of numpy.ndarray
        Row positions of the users of each block.
    """
    n = matrices[0].shape[0]
    check_k(k, n)
    if block_size is None or n <= block_size:
        return [np.arange(n)]
    return user_blocks(
        matrices[0],
        k=k,
        block_size=block_size,
        level_two=matrices[1] if len(matrices) > 1 else None,
    )


@_groups_doc
def semantic_partition(
    matrices: Sequence[sp.spmatrix],
    *,
    k: int,
    block_size: int | None = 1000,
    levels: Sequence[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
    blocks: Sequence[np.ndarray] | None = None,
) -> np.ndarray:
    """Group users by Algorithms 2-4 of Erola et al. (2011), block by block.

    Parameters
    ----------
    {{groups}}
    block_size : int or None
        The largest block of users whose incidence matrix is formed (memory
        grows as its square); None runs the exact method on the whole log in
        one block. A log of at most ``block_size`` users is one block anyway.
    levels : sequence of int, optional
        The 1-based levels the similarity sums over (default: all).
    progress : callable, optional
        ``progress(done, total)`` in users grouped.
    blocks : sequence of numpy.ndarray, optional
        The blocks, when the caller has them already (from
        :func:`partition_blocks` with the same ``k`` and ``block_size``);
        default: computed here.

    Returns
    -------
    numpy.ndarray
        For each user (row of the matrices), the number of its group, 0..g-1.
    """
    if blocks is None:
        blocks = partition_blocks(matrices, k=k, block_size=block_size)
    n = matrices[0].shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    next_label = 0
    done = 0
    for block in blocks:
        incidence = incidence_matrix(matrices, users=block, levels=levels)
        for cluster in semantic_clusters(incidence, k=k):
            labels[block[cluster]] = next_label
            next_label += 1
        done += len(block)
        if progress is not None:
            progress(done, n)
    return labels


def random_partition(n_users: int, *, k: int, rng: np.random.Generator) -> np.ndarray:
    """A random partition into groups of at least k (the baseline of Erola et al. 2011, §4.1).

    Users are shuffled and cut into groups of k; the fewer than k left over
    join random groups, one each, as in the semantic partition.

    Parameters
    ----------
    n_users : int
        Number of users.
    k : int
        The minimum group size.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    numpy.ndarray
        For each user, the number of its group.
    """
    check_k(k, n_users)
    order = rng.permutation(n_users)
    n_groups = n_users // k
    labels = np.empty(n_users, dtype=np.int64)
    labels[order[: n_groups * k]] = np.repeat(np.arange(n_groups), k)
    rest = order[n_groups * k :]
    if rest.size:
        labels[rest] = rng.choice(n_groups, size=rest.size, replace=rest.size > n_groups)
    return labels
