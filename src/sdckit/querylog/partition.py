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
first put into blocks of similar category profiles (:func:`user_blocks`) and
the paper's algorithm runs inside each block; with ``block_size=None`` the
whole log is one block (the exact method, for small logs).

Blocks. A block must hold the users the exact method would group together:
a user's best partners are those sharing most of her categories, counts
included (the incidence is a sum of minima of counts). Blocks keyed by a
user's dominant category split most of the exact method's groups on an
AOL-like log of 10^4 users: users mix topics, and two users who share most
categories often differ in the one they have most of
(``docs/benchmarks.md``, "Search logs: blocks by profile bisection"). Users
are therefore described by their whole profile, ``log(1 + count)`` of each
category of the deepest level in use
(a level-2 category fixes its level-1 parent; the logarithm keeps a heavy
searcher from outweighing the rest of a split), and the log is cut by
recursive balanced bisection: the principal direction of the profiles
gives a first split, balanced 2-means (Lloyd's step with both sides kept at
their sizes) refines it, and each side is cut again. The sizes are fixed in
advance so that the ``b = ceil(n / block_size)`` blocks are near-equal, at
least ``block_size / 2 >= k`` users each; the work is a few sparse
products per level of the tree, ``log2(b)`` levels. The deterministic start
of the power iteration and stable sorts make the blocks a function of the
matrices alone.
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
    matrices: Sequence[sp.spmatrix],
    *,
    k: int,
    block_size: int,
    levels: Sequence[int] | None = None,
) -> list[np.ndarray]:
    """Blocks of users with similar category profiles, by recursive balanced bisection.

    Each user is described by the log-counts ``log(1 + M_l(i, c))`` of the
    deepest level l in ``levels`` at which she has a category (a user with
    no category at all is a zero vector). The users are split in two along
    the principal direction of these vectors, the split is refined by a few
    steps of balanced 2-means (Lloyd's step with the sizes of the two sides
    kept), and each side is split again until the pieces hold at most
    ``block_size`` users (see the module notes, "Blocks"). The sizes are
    fixed in advance: the ``b = ceil(n / block_size)`` blocks hold
    ``floor(n / b)`` or ``ceil(n / b)`` users each, so every block has at
    least ``block_size / 2 >= k`` users.

    Parameters
    ----------
    matrices : sequence of scipy.sparse matrices
        The classification matrices M_{U x C_l}, l = 1..L.
    k : int
        The minimum group size.
    block_size : int
        The largest block (at least 2k).
    levels : sequence of int, optional
        The 1-based levels the similarity uses (default: all).

    Returns
    -------
    list of numpy.ndarray
        Row positions of the users of each block, in increasing order.
    """
    n = matrices[0].shape[0]
    check_k(k, n)
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 2 * k:
        raise ParameterError(
            f"block_size must be an integer of at least 2k = {2 * k}, got {block_size!r}"
        )
    features = _block_features(matrices, levels)
    n_blocks = -(-n // block_size)
    sizes = np.full(n_blocks, n // n_blocks, dtype=np.int64)
    sizes[: n % n_blocks] += 1
    blocks: list[np.ndarray] = []
    pending: list[tuple[np.ndarray, np.ndarray]] = [(np.arange(n), sizes)]
    while pending:
        users, leaves = pending.pop()
        if len(leaves) == 1:
            blocks.append(users)
            continue
        half = (len(leaves) + 1) // 2
        n_left = int(leaves[:half].sum())
        order = _bisect(sp.csr_matrix(features[users]), n_left)
        # Right side pushed first: blocks come out left to right.
        pending.append((np.sort(users[order[n_left:]]), leaves[half:]))
        pending.append((np.sort(users[order[:n_left]]), leaves[:half]))
    return blocks


def _block_features(matrices: Sequence[sp.spmatrix], levels: Sequence[int] | None) -> sp.csr_matrix:
    """Per user, log(1 + counts) at the deepest level of ``levels`` where she has a category."""
    chosen = sorted(range(1, len(matrices) + 1) if levels is None else levels, reverse=True)
    n = matrices[0].shape[0]
    placed = np.zeros(n, dtype=bool)
    parts = []
    for level in chosen:
        matrix = sp.csr_matrix(matrices[level - 1], dtype=np.float64)
        matrix.eliminate_zeros()
        take = (np.diff(matrix.indptr) > 0) & ~placed
        matrix = sp.csr_matrix(sp.diags(take.astype(np.float64)) @ matrix)
        matrix.eliminate_zeros()
        matrix.data = np.log1p(matrix.data)
        parts.append(matrix)
        placed |= take
    return sp.csr_matrix(sp.hstack(parts, format="csr"))


#: Steps of the power iteration for the principal direction, and the most
#: steps of balanced 2-means after it (it stops earlier when no user moves).
_POWER_STEPS = 20
_REFINE_STEPS = 10


def _bisect(features: sp.csr_matrix, n_left: int) -> np.ndarray:
    """An order of the rows whose first ``n_left`` form one side of a balanced 2-means split."""
    n = features.shape[0]
    mean = np.asarray(features.mean(axis=0)).ravel()
    # Principal direction of the centred rows, by power iteration from a fixed start.
    direction = np.full(features.shape[1], 1.0 / np.sqrt(max(features.shape[1], 1)))
    for _ in range(_POWER_STEPS):
        scores = features @ direction - mean @ direction
        step = features.T @ scores  # the scores sum to 0: no centring term
        norm = float(np.linalg.norm(step))
        if norm == 0.0:
            break
        step /= norm
        converged = float(np.abs(step - direction).max()) < 1e-9
        direction = step
        if converged:
            break
    order = np.argsort(features @ direction, kind="stable")
    left = np.zeros(n, dtype=bool)
    left[order[:n_left]] = True
    for _ in range(_REFINE_STEPS):
        # |x - c_left|^2 - |x - c_right|^2 = 2 x.(c_right - c_left) + const:
        # the n_left users with the smallest x.(c_right - c_left) go left.
        weights = np.where(left, -1.0 / n_left, 1.0 / (n - n_left))
        order = np.argsort(features @ (features.T @ weights), kind="stable")
        moved = np.zeros(n, dtype=bool)
        moved[order[:n_left]] = True
        if np.array_equal(moved, left):
            break
        left = moved
    return order


@_groups_doc
def partition_blocks(
    matrices: Sequence[sp.spmatrix],
    *,
    k: int,
    block_size: int | None,
    levels: Sequence[int] | None = None,
) -> list[np.ndarray]:
    """The blocks the semantic partition runs in (one block for a small log or ``None``).

    Parameters
    ----------
    {{groups}}
    block_size : int or None
        The largest block; None: one block (the exact method).
    levels : sequence of int, optional
        The 1-based levels the similarity uses (default: all); the blocks
        are formed on the deepest of them (:func:`user_blocks`).

    Returns
    -------
    list of numpy.ndarray
        Row positions of the users of each block.
    """
    n = matrices[0].shape[0]
    check_k(k, n)
    if block_size is None or n <= block_size:
        return [np.arange(n)]
    return user_blocks(matrices, k=k, block_size=block_size, levels=levels)


@_groups_doc
def semantic_partition(
    matrices: Sequence[sp.spmatrix],
    *,
    k: int,
    block_size: int | None = 2000,
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
        :func:`partition_blocks` with the same ``k``, ``block_size`` and
        ``levels``);
        default: computed here.

    Returns
    -------
    numpy.ndarray
        For each user (row of the matrices), the number of its group, 0..g-1.
    """
    if blocks is None:
        blocks = partition_blocks(matrices, k=k, block_size=block_size, levels=levels)
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
