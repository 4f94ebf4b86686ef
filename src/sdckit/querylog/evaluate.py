"""Utility and risk of a protected search log.

* Utility: the semantic remain percentage SRP of Erola et al. (2011, §4.1,
  eq. 4) at every level l: for each original user, the queries of each
  level-l category found both in her original log and in her released user,
  rho = sum_c min(M_l(i, c), R_l(z(i), c)), over her queries classified at
  level l, chi = sum_c M_l(i, c); SRP is the average of rho / chi over the
  users with chi > 0. Beside it: the worst case 1/k (eq. 5: groups without a
  common interest), and a random partition into groups of the same size
  aggregated the same way (the baseline the paper beats).
* Privacy: every released user stands for at least k original users, and no
  original user id is in the release.
* Linkage attack: an attacker holding an original user's queries links her
  to the released user sharing most queries (multiset intersection; a tie
  among several released users counts as a uniform pick among them). Even when the link hits her group, the released user
  stands for all its members alike, so her re-identification probability is
  P(link hits her group) / |group| <= 1/k. Against the log with ids merely
  replaced by numbers (the AOL release) the same attack succeeds for almost
  every user.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sdckit._results import FrozenResult
from sdckit._validation import check_random_state
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.querylog.aggregate import aggregate_groups
from sdckit.querylog.partition import check_k, random_partition
from sdckit.querylog.protect import ProtectedLog
from sdckit.querylog.reading import QueryLog, read_log
from sdckit.querylog.similarity import QueryClassifier, classification_matrices
from sdckit.querylog.taxonomy import Taxonomy, load_taxonomy

__all__ = [
    "LinkageAttack",
    "LogEvaluation",
    "evaluate",
    "linkage_attack",
    "semantic_remain_percentage",
]


def semantic_remain_percentage(
    original: sp.spmatrix, released: sp.spmatrix, released_of_user: np.ndarray
) -> float:
    """SRP at one level (Erola et al. 2011, eq. 4), averaged over users.

    Parameters
    ----------
    original : scipy.sparse matrix
        Original users x categories counts at the level.
    released : scipy.sparse matrix
        Released users x the same categories.
    released_of_user : numpy.ndarray
        For each original user, the row of her released user.

    Returns
    -------
    float
        The mean over users with a classified query of rho / chi; NaN if no
        user has one.
    """
    orig = sp.csr_matrix(original)
    mine = sp.csr_matrix(released)[np.asarray(released_of_user)]
    chi = np.asarray(orig.sum(axis=1)).ravel()
    rho = np.asarray(orig.minimum(mine).sum(axis=1)).ravel()
    has = chi > 0
    if not has.any():
        return float("nan")
    return float(np.mean(rho[has] / chi[has]))


@dataclass(frozen=True)
class LinkageAttack(FrozenResult):
    """The linkage attack on a release (see the module notes).

    Attributes
    ----------
    group_link_rate : float
        Mean probability that an original user is linked to her own
        released user.
    reidentification_mean : float
        Mean probability of re-identifying an original user (the link hits
        her group, and the attacker picks her among its members).
    reidentification_max : float
        The largest of these probabilities.
    bound : float
        1/k.
    """

    group_link_rate: float
    reidentification_mean: float
    reidentification_max: float
    bound: float

    def summary(self) -> str:
        """The attack's success against 1/k."""
        verdict = "within" if self.reidentification_max <= self.bound + 1e-12 else "ABOVE"
        return (
            f"linkage attack: re-identification {self.reidentification_mean:.3f} on average, "
            f"{self.reidentification_max:.3f} at most ({verdict} 1/k = {self.bound:.3f}); "
            f"users linked to their own released user: {self.group_link_rate:.1%}"
        )


def _threshold_layers(matrix: sp.csr_matrix) -> list[sp.csr_matrix]:
    layers = []
    current = sp.csr_matrix(matrix, copy=True)
    current.eliminate_zeros()
    while current.nnz:
        layer = current.copy()
        layer.data = np.ones_like(layer.data)
        layers.append(layer)
        current.data = current.data - 1
        current.eliminate_zeros()
    return layers


def linkage_attack(
    original_counts: sp.spmatrix,
    released_counts: sp.spmatrix,
    released_of_user: np.ndarray,
    *,
    group_sizes: np.ndarray,
    k: int,
    chunk_cells: int = 4_000_000,
) -> LinkageAttack:
    """Link each original user to the released user sharing most queries.

    Parameters
    ----------
    original_counts : scipy.sparse matrix
        Original users x queries counts.
    released_counts : scipy.sparse matrix
        Released users x the same queries.
    released_of_user : numpy.ndarray
        Each original user's true released user.
    group_sizes : numpy.ndarray
        Original users behind each released user.
    k : int
        The k the release promises.
    chunk_cells : int
        Cells of the users x released-users block held at once.

    Returns
    -------
    LinkageAttack
        Success rates against 1/k.
    """
    orig = sp.csr_matrix(original_counts)
    rel_layers = _threshold_layers(sp.csr_matrix(released_counts))
    n, g = orig.shape[0], released_counts.shape[0]
    rows = max(1, chunk_cells // max(g, 1))
    hit = np.zeros(n)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        shared = np.zeros((stop - start, g), dtype=np.int64)
        chunk_layers = _threshold_layers(orig[start:stop])
        for layer_o, layer_r in zip(chunk_layers, rel_layers, strict=False):
            shared += (layer_o @ layer_r.T).toarray().astype(np.int64)
        best = shared.max(axis=1, keepdims=True)
        ties = (shared == best).sum(axis=1)
        own = shared[np.arange(stop - start), released_of_user[start:stop]]
        hit[start:stop] = np.where(own == best.ravel(), 1.0 / ties, 0.0)
    reid = hit / np.asarray(group_sizes, dtype=float)[released_of_user]
    return LinkageAttack(
        group_link_rate=float(hit.mean()),
        reidentification_mean=float(reid.mean()),
        reidentification_max=float(reid.max()),
        bound=1.0 / k,
    )


@dataclass(frozen=True)
class LogEvaluation(FrozenResult):
    """Utility and risk of a protected search log.

    Attributes
    ----------
    k : int
        The k checked.
    srp : tuple of float
        SRP at levels 1..L of the release (eq. 4).
    srp_random : tuple of float
        SRP of random partitions of the same k, aggregated the same way
        (mean over ``random_repeats`` draws).
    srp_worst : float
        The theoretical worst case 1/k (eq. 5).
    classified_share : tuple of float
        Share of original queries classified down to each level.
    n_released_users, smallest_group : int
        Released users, and original users behind the smallest of them.
    privacy_ok : bool
        Every released user stands for at least k original users and no
        original id is in the release.
    linkage : LinkageAttack
        The attack on the release.
    linkage_pseudonymized : LinkageAttack or None
        The same attack on the log with ids replaced by numbers (small logs).
    top_queries : pandas.DataFrame
        The most frequent queries, counts before and after.
    categories : pandas.DataFrame
        Level-1 category shares before and after.
    params : mapping
        Taxonomy, levels and categories per term.
    """

    k: int
    srp: tuple[float, ...]
    srp_random: tuple[float, ...]
    srp_worst: float
    classified_share: tuple[float, ...]
    n_released_users: int
    smallest_group: int
    privacy_ok: bool
    linkage: LinkageAttack
    linkage_pseudonymized: LinkageAttack | None
    top_queries: pd.DataFrame
    categories: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The privacy verdict first, then SRP by level and the attack."""
        if self.privacy_ok:
            head = (
                f"privacy check passed: each of the {self.n_released_users:,} released users "
                f"stands for at least {self.k} original users (smallest group "
                f"{self.smallest_group}); no original user id in the release"
            )
        else:
            head = (
                f"privacy check FAILED: the smallest released user stands for "
                f"{self.smallest_group} original users (k = {self.k}), or an original id is "
                "in the release"
            )
        lines = [head, "  level  classified  SRP semantic  SRP random  1/k"]
        for level, (share, a, b) in enumerate(
            zip(self.classified_share, self.srp, self.srp_random, strict=True), start=1
        ):
            lines.append(
                f"  {level:>5}  {share:>10.1%}  {a:>12.3f}  {b:>10.3f}  {self.srp_worst:.3f}"
            )
        lines.append("  " + self.linkage.summary())
        if self.linkage_pseudonymized is not None:
            lines.append(
                "  the same attack on the log with ids replaced by numbers: re-identification "
                f"{self.linkage_pseudonymized.reidentification_mean:.3f} on average"
            )
        return "\n".join(lines)


def _category_shares(matrix: sp.spmatrix, names: list[str]) -> np.ndarray:
    totals = np.asarray(sp.csr_matrix(matrix).sum(axis=0)).ravel().astype(float)
    padded = np.zeros(len(names))
    padded[: len(totals)] = totals
    whole = padded.sum()
    return padded / whole if whole else padded


def evaluate(
    original: str | os.PathLike[str] | pd.DataFrame | QueryLog | ProtectedLog,
    *,
    released: str | os.PathLike[str] | pd.DataFrame | None = None,
    membership: pd.DataFrame | None = None,
    k: int | None = None,
    taxonomy: str | os.PathLike[str] | Taxonomy = "odp239",
    levels: int = 2,
    categories_per_term: int = 1,
    user_column: str = "AnonID",
    query_column: str = "Query",
    random_repeats: int = 5,
    random_state: int | np.random.Generator | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> LogEvaluation:
    """Evaluate a protected search log against its original.

    Parameters
    ----------
    original : path, DataFrame, QueryLog or ProtectedLog
        The original log; or the result of :func:`sdckit.querylog.protect`,
        which holds the original, the release and the membership.
    released : path or DataFrame, optional
        The release (needed unless ``original`` is a ProtectedLog).
    membership : pandas.DataFrame, optional
        The confidential table of ``original_user`` -> ``released_user``.
        Without it, each original user is taken to belong to the released
        user sharing most of her queries (ties: the first); the privacy
        check is then only as good as that reconstruction.
    k : int, optional
        The k to check (default: the size of the smallest group).
    taxonomy, levels, categories_per_term
        The classification SRP is measured in (see
        :func:`sdckit.querylog.protect`).
    user_column, query_column : str
        Column names of the logs.
    random_repeats : int
        Random partitions averaged for the baseline.
    random_state : None, int or numpy.random.Generator
        Seed of the baseline and of the attack's ties.
    progress : callable, optional
        ``progress(stage, done, total)``.

    Returns
    -------
    LogEvaluation
        SRP by level beside 1/k and the random baseline, the privacy check,
        the linkage attack and query statistics.
    """
    if not isinstance(random_repeats, int) or random_repeats < 1:
        raise ParameterError(f"random_repeats must be a positive integer, got {random_repeats!r}")
    rng = check_random_state(random_state)
    if isinstance(original, ProtectedLog):
        log = original.log
        release_frame = original.data
        membership = original.membership if membership is None else membership
        user_column, query_column = log.user_column, log.query_column
    else:
        if released is None:
            raise ParameterError("give the released log (released=...)")
        log = (
            original
            if isinstance(original, QueryLog)
            else read_log(original, user_column=user_column, query_column=query_column)
        )
        if isinstance(released, pd.DataFrame):
            release_frame = released
        else:
            release_frame = read_log(
                released, user_column=user_column, query_column=query_column
            ).to_frame()
    for column in (user_column, query_column):
        if column not in release_frame.columns:
            raise SchemaError(f"the released log has no column {column!r}")
    if len(release_frame) == 0:
        raise DataError("the released log holds no query")
    if user_column in release_frame and release_frame[user_column].isna().any():
        raise DataError("the released log has a row without a user id")
    rel_user_text = release_frame[user_column].astype(str).to_numpy(dtype=object)
    rel_ids, rel_user = np.unique(rel_user_text, return_inverse=True)
    query_index = {q: i for i, q in enumerate(log.queries)}
    rel_query_text = release_frame[query_column].astype(str).to_numpy(dtype=object)
    rel_query = np.array([query_index.get(q, -1) for q in rel_query_text], dtype=np.int64)
    if (rel_query < 0).any():
        first = int(np.flatnonzero(rel_query < 0)[0])
        raise DataError(
            f"the released log, row {first + 2}: query {rel_query_text[first]!r} is not in the "
            "original log (is this the release of that log?)"
        )
    n_rel = len(rel_ids)
    orig_counts = log.user_query_counts()
    rel_counts = sp.csr_matrix(
        (np.ones(len(rel_user), dtype=np.int64), (rel_user, rel_query)),
        shape=(n_rel, len(log.queries)),
    )
    rel_counts.sum_duplicates()

    if membership is not None:
        for column in ("original_user", "released_user"):
            if column not in membership.columns:
                raise SchemaError(f"the membership table has no column {column!r}")
        lookup = dict(
            zip(
                membership["original_user"].astype(str),
                membership["released_user"].astype(str),
                strict=True,
            )
        )
        rel_pos = {v: i for i, v in enumerate(rel_ids)}
        missing = [u for u in log.user_ids if u not in lookup]
        if missing:
            raise DataError(f"the membership table has no row for original user {missing[0]!r}")
        keyed = list(dict.fromkeys(lookup[u] for u in log.user_ids))
        unknown = [r for r in keyed if r not in rel_pos]
        if len(unknown) == len(keyed):
            raise DataError(
                f"released user {unknown[0]!r} of the membership table is not in the release"
            )
        if unknown:
            # Algorithm 5 can release no query for a group of light searchers
            # (each member's copies are drawn with probability below 1): such a
            # released user is in the key only, an empty row here. A group has
            # at least k >= 2 members, so a key naming an absent released user
            # for fewer is a wrong key (a typo, another release's key), refused.
            members = Counter(lookup[u] for u in log.user_ids)
            least = 2 if k is None else max(2, int(k))
            for name in unknown:
                if members[name] < least:
                    row = list(membership["released_user"].astype(str)).index(name) + 1
                    raise DataError(
                        f"released user {name!r} of the membership table (row {row}) is not in "
                        f"the release and groups {members[name]} original user(s): a group "
                        f"Algorithm 5 left without queries has at least {least} members, so "
                        "this key does not belong to this release"
                    )
            for name in unknown:
                rel_pos[name] = len(rel_pos)
            rel_ids = np.concatenate([rel_ids, np.array(unknown, dtype=object)])
            n_rel = len(rel_ids)
            rel_counts = sp.csr_matrix(
                (
                    rel_counts.data,
                    rel_counts.indices,
                    np.r_[rel_counts.indptr, [rel_counts.nnz] * len(unknown)],
                ),
                shape=(n_rel, len(log.queries)),
            )
        released_of_user = np.array([rel_pos[lookup[u]] for u in log.user_ids], dtype=np.int64)
    else:
        shared = _most_shared(orig_counts, rel_counts)
        released_of_user = shared
    group_sizes = np.bincount(released_of_user, minlength=n_rel)
    smallest = int(group_sizes.min())
    k_checked = smallest if k is None else k
    check_k(k_checked, log.n_users)
    ids_ok = not set(map(str, log.user_ids)).intersection(map(str, rel_ids))
    privacy_ok = smallest >= k_checked and ids_ok

    tax = load_taxonomy(taxonomy)
    classifier = QueryClassifier(tax, levels=levels, categories_per_term=categories_per_term)
    classification = classification_matrices(
        log,
        classifier=classifier,
        progress=None if progress is None else (lambda d, t: progress("classifying", d, t)),
    )
    query_matrices = classification.query_matrices
    srp = tuple(
        semantic_remain_percentage(m, rel_counts @ q, released_of_user)
        for m, q in zip(classification.matrices, query_matrices, strict=True)
    )
    random_srp = np.zeros((random_repeats, levels))
    for repeat in range(random_repeats):
        labels = random_partition(log.n_users, k=k_checked, rng=rng)
        group_line, query_line = aggregate_groups(log, labels, rng=rng)
        n_groups = int(labels.max()) + 1
        random_counts = sp.csr_matrix(
            (np.ones(len(group_line), dtype=np.int64), (group_line, query_line)),
            shape=(n_groups, len(log.queries)),
        )
        for level in range(levels):
            random_srp[repeat, level] = semantic_remain_percentage(
                classification.matrices[level],
                random_counts @ query_matrices[level],
                labels,
            )
        if progress is not None:
            progress("random baseline", repeat + 1, random_repeats)
    linkage = linkage_attack(
        orig_counts, rel_counts, released_of_user, group_sizes=group_sizes, k=k_checked
    )
    pseudonymized = None
    if log.n_users <= 5000:
        pseudonymized = linkage_attack(
            orig_counts,
            orig_counts,
            np.arange(log.n_users),
            group_sizes=np.ones(log.n_users, dtype=np.int64),
            k=k_checked,
        )
    before = np.bincount(log.line_queries, minlength=len(log.queries))
    after = np.asarray(rel_counts.sum(axis=0)).ravel()
    top = np.argsort(-before, kind="stable")[:10]
    top_queries = pd.DataFrame(
        {"query": log.queries[top], "original": before[top], "released": after[top]}
    )
    level_one = sorted(classifier.category_index[0], key=classifier.category_index[0].__getitem__)
    names = ["/".join(c) for c in level_one]
    categories = pd.DataFrame(
        {
            "category": names,
            "original": _category_shares(classification.matrices[0], names),
            "released": _category_shares(rel_counts @ query_matrices[0], names),
        }
    ).sort_values("original", ascending=False, kind="stable", ignore_index=True)
    return LogEvaluation(
        k=k_checked,
        srp=srp,
        srp_random=tuple(float(v) for v in np.nanmean(random_srp, axis=0)),
        srp_worst=1.0 / k_checked,
        classified_share=classification.classified_share,
        n_released_users=n_rel,
        smallest_group=smallest,
        privacy_ok=privacy_ok,
        linkage=linkage,
        linkage_pseudonymized=pseudonymized,
        top_queries=top_queries,
        categories=categories,
        params={
            "taxonomy": tax.describe(),
            "levels": levels,
            "categories_per_term": categories_per_term,
            "membership": "given" if membership is not None else "reconstructed by linkage",
            "random_repeats": random_repeats,
        },
    )


def _most_shared(orig_counts: sp.csr_matrix, rel_counts: sp.csr_matrix) -> np.ndarray:
    """Each original user's released user sharing most queries (first on ties)."""
    n, g = orig_counts.shape[0], rel_counts.shape[0]
    rows = max(1, 4_000_000 // max(g, 1))
    out = np.zeros(n, dtype=np.int64)
    rel_layers = _threshold_layers(rel_counts)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        shared = np.zeros((stop - start, g), dtype=np.int64)
        for layer_o, layer_r in zip(
            _threshold_layers(orig_counts[start:stop]), rel_layers, strict=False
        ):
            shared += (layer_o @ layer_r.T).toarray().astype(np.int64)
        out[start:stop] = shared.argmax(axis=1)
    return out
