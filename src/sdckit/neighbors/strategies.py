"""The neighbourhood strategies of RWN at scale, by name.

``exact`` is the exact search of Perry, Matloff & Tendick (2022), Section 10
(a KD-tree, or the ``algorithm`` named); ``hnsw`` and ``ivf`` are faiss's
approximate indexes (:mod:`sdckit.neighbors.approximate`); ``sample`` and
``pairs`` are Methods 1 and 2 of their Section 11
(:mod:`sdckit.neighbors.sampled`).
"""

from __future__ import annotations

from collections.abc import Callable

from sdckit.errors import ParameterError
from sdckit.neighbors.approximate import HNSWBackend, IVFBackend
from sdckit.neighbors.backends import EXACT_ALGORITHMS, NeighborBackend, make_backend
from sdckit.neighbors.sampled import PairSampleBackend, SampleBackend

__all__ = ["STRATEGIES", "make_strategy"]

#: The names :func:`make_strategy` knows.
STRATEGIES = ("exact", "hnsw", "ivf", "sample", "pairs")


def make_strategy(
    name: str,
    *,
    metric: str = "euclidean",
    sample_size: int | None = None,
    fresh_sample: bool = False,
    algorithm: str = "auto",
    random_state: object = None,
    progress: Callable[[int, int], None] | None = None,
) -> NeighborBackend:
    """A new, unfitted neighbour backend for a strategy name.

    Parameters
    ----------
    name : {"exact", "hnsw", "ivf", "sample", "pairs"}
        The strategy.
    metric : str, default "euclidean"
        The distance (each strategy refuses one it does not support, by name).
    sample_size : int, optional
        m, for ``sample`` (default 10,000; 400 with ``fresh_sample``) and
        ``pairs`` (default 64); refused for the other strategies.
    fresh_sample : bool, default False
        For ``sample``: a fresh sample per record (Perry, Matloff & Tendick 2022, Section 11.1).
    algorithm : {"auto", "kd_tree", "ball_tree", "brute"}, default "auto"
        For ``exact``: the tree or brute search (:func:`sdckit.neighbors.make_backend`).
    random_state : None, int or numpy Generator
        Seed of the samples (``sample``, ``pairs``).
    progress : callable, optional
        ``progress(done, total)`` while an index or the pair sample is built.

    Returns
    -------
    NeighborBackend
    """
    if name not in STRATEGIES:
        raise ParameterError(
            f"neighbors must be one of {', '.join(map(repr, STRATEGIES))} or a backend, got {name!r}"
        )
    if sample_size is not None and name not in ("sample", "pairs"):
        raise ParameterError(f"sample_size applies to neighbors='sample' or 'pairs', not {name!r}")
    if fresh_sample and name != "sample":
        raise ParameterError(
            f"a fresh sample per record applies to neighbors='sample', not {name!r}"
        )
    if name == "exact":
        if algorithm not in EXACT_ALGORITHMS:
            raise ParameterError(
                f"algorithm names the exact search of neighbors='exact': one of "
                f"{', '.join(map(repr, EXACT_ALGORITHMS))}, got {algorithm!r}"
            )
        return make_backend(algorithm, metric)
    if name == "hnsw":
        return HNSWBackend(metric=metric, progress=progress)
    if name == "ivf":
        return IVFBackend(metric=metric, progress=progress)
    if name == "sample":
        return SampleBackend(
            sample_size, fresh=fresh_sample, metric=metric, random_state=random_state
        )
    return PairSampleBackend(
        64 if sample_size is None else sample_size,
        metric=metric,
        random_state=random_state,
        progress=progress,
    )
