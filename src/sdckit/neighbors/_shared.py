"""What the neighbour-search backends share: their query docstrings and eps-balls.

Each backend method answers one of :class:`~sdckit.neighbors.NeighborBackend`'s
questions; the parameters and returns of a question are written once here and
attached under each method's own summary line by :func:`answers`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TypeVar

import numpy as np

F = TypeVar("F", bound=Callable[..., object])

_ROWS = "rows : ndarray of int\n    Row numbers of the fitted matrix."
_POINTS = "points : ndarray\n    Query records, one per row, with the fitted matrix's columns."
_K = "k : int\n    Number of neighbours"
_RADIUS = "radius : ndarray\n    One radius per {}."
_NEAREST = "tuple of ndarray\n    Distances and indices, each len({}) x k, sorted by distance."


def _numpydoc(parameters: list[str], returns: str | None) -> str:
    """A Parameters (and Returns) section, indented as a method's docstring body."""
    text = "Parameters\n----------\n" + "\n".join(parameters)
    if returns is not None:
        text += "\n\nReturns\n-------\n" + returns
    return "\n" + "".join(f"        {line}\n" if line else "\n" for line in text.split("\n"))


_QUESTIONS: dict[str, tuple[list[str], str | None]] = {
    "fit": (["matrix : ndarray\n    The records, one per row."], None),
    "kneighbors": ([_ROWS, _K + " (the row itself included)."], _NEAREST.format("rows")),
    "radius_counts": (
        [_ROWS, _RADIUS.format("row")],
        "ndarray of int\n    Records within the radius, the row itself included.",
    ),
    "radius_neighbors": (
        [_ROWS, _RADIUS.format("row")],
        "list of ndarray\n    One array of row numbers per query row, the row itself first.",
    ),
    "query": ([_POINTS, _K + "."], _NEAREST.format("points")),
    "count_within": ([_POINTS, _RADIUS.format("point")], "ndarray of int"),
}


def answers(question: str, summary: str, *, returns: str | None = None) -> Callable[[F], F]:
    """Give a backend method ``summary`` and the documented parameters of ``question``.

    Parameters
    ----------
    question : str
        A method of :class:`~sdckit.neighbors.NeighborBackend` (or ``"fit"``).
    summary : str
        The method's own first line (and any paragraph after it).
    returns : str, optional
        The method's own Returns entry, where it says more than the question's
        (the order of the rows it returns, say).

    Returns
    -------
    callable
        A decorator setting the method's docstring.
    """

    parameters, answer = _QUESTIONS[question]
    section = _numpydoc(parameters, answer if returns is None else returns)

    def attach(method: F) -> F:
        method.__doc__ = summary + "\n" + section
        return method

    return attach


class BallRows(abc.ABC):
    """Row radius questions answered from ``_ball(rows, radius)``: the other records within.

    A subclass's ``_ball`` returns, per row, the other records (the row
    excluded) it finds within the radius, nearest first where it can tell.
    """

    @abc.abstractmethod
    def _ball(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        """Per row, the other records found within its radius (the row excluded)."""

    @answers(
        "radius_counts", "Records found within ``radius[i]`` of each fitted row, plus the row."
    )
    def radius_counts(self, rows: np.ndarray, radius: np.ndarray) -> np.ndarray:
        balls = self._ball(np.asarray(rows, dtype=np.int64), radius)
        return np.fromiter((len(b) + 1 for b in balls), dtype=np.int64, count=len(balls))

    @answers(
        "radius_neighbors", "Records found within ``radius[i]`` of each fitted row, and the row."
    )
    def radius_neighbors(self, rows: np.ndarray, radius: np.ndarray) -> list[np.ndarray]:
        rows = np.asarray(rows, dtype=np.int64)
        balls = self._ball(rows, radius)
        return [
            np.concatenate(([row], b)).astype(np.int64) for row, b in zip(rows, balls, strict=True)
        ]
