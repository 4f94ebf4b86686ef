"""What every assessment measure is computed from: :class:`MeasureInputs`.

:func:`~sdckit.assess.assess` checks its arguments once, builds one
:class:`MeasureInputs` and hands it to each registered measure's ``compute``
(:data:`sdckit.assess.measures.MEASURES`). Work that several measures share is
done once, on first use: the regression (the regression comparison and Cook's
distances) and the nearest-record search between the files (the distance to
the closest record and, on the same variables, the record linkage).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdckit._pairs import joint_design
from sdckit._validation import RandomState
from sdckit.assess.distances import LinkSearch, link_search
from sdckit.neighbors import NeighborBackend
from sdckit.schema import Schema

if TYPE_CHECKING:
    from sdckit.assess.utility import RegressionComparison

__all__ = ["MeasureInputs"]


@dataclass
class MeasureInputs:
    """The checked inputs of one assessment, shared by every measure.

    Parameters
    ----------
    original, masked : DataFrame
        The two files, same rows in the same order (checked by ``assess``).
    schema : Schema
        Column kinds and roles of the original.
    columns : list of str
        The variables assessed.
    numeric, categorical : list of str
        The numeric (and ordinal) and the categorical ones among them.
    response : str or None
        The response of the regression and prediction checks.
    predictors : list of str
        Its predictors (empty without a response).
    linear : bool
        Whether the response is numeric (a linear regression applies).
    keys : list of str
        Key variables (quasi-identifiers); empty when none were given.
    sensitive : str or None
        The sensitive variable of l-diversity.
    linkage_columns : list of str
        What the linkage intruder knows.
    scale : str or None
        Scaling of the distance design (:func:`sdckit.schema.build_design`).
    weights : mapping or None
        Variable weights in distances.
    interval_k : float
        Interval half-width in standard deviations (interval disclosure).
    prediction : bool
        Whether the prediction check was asked for.
    prediction_replications : int
        Its replications.
    holdout : int, float or None
        Its holdout size.
    top : int
        How many extreme records a measure lists.
    backend : NeighborBackend
        The neighbour search of the distance-based measures.
    chunk_size : int
        Records per search block.
    n_jobs : int or None
        Threads of the searches (and jobs of the random forests).
    random_state : None, int or Generator
        For the prediction check.
    """

    original: pd.DataFrame
    masked: pd.DataFrame
    schema: Schema
    columns: list[str]
    numeric: list[str]
    categorical: list[str]
    response: str | None
    predictors: list[str]
    linear: bool
    keys: list[str]
    sensitive: str | None
    linkage_columns: list[str]
    scale: str | None
    weights: Mapping[str, float] | None
    interval_k: float
    prediction: bool
    prediction_replications: int
    holdout: int | float | None
    top: int
    backend: NeighborBackend
    chunk_size: int
    n_jobs: int | None
    random_state: RandomState

    def design(self, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The two files' distance designs over ``columns``, scaled and weighted alike.

        Parameters
        ----------
        columns : sequence of str
            The variables of the design; weights of other variables are dropped.

        Returns
        -------
        (ndarray, ndarray)
            The original's and the masked file's rows in one space.
        """
        weights = {c: w for c, w in (self.weights or {}).items() if c in columns} or None
        return joint_design(
            self.original,
            self.masked,
            list(columns),
            self.schema,
            scale=self.scale,
            weights=weights,
        )

    def link(self, x0: np.ndarray, x1: np.ndarray) -> LinkSearch:
        """The nearest masked record of every original one (:func:`link_search`).

        Parameters
        ----------
        x0, x1 : ndarray
            The original's and the masked file's designs.

        Returns
        -------
        LinkSearch
            Distances, nearest rows and ties.
        """
        return link_search(
            x0, x1, backend=self.backend, chunk_size=self.chunk_size, n_jobs=self.n_jobs
        )

    @cached_property
    def search(self) -> tuple[np.ndarray, np.ndarray, LinkSearch]:
        """The designs over every assessed variable and their nearest-record search, done once."""
        weights = dict(self.weights) if self.weights is not None else None
        x0, x1 = joint_design(
            self.original, self.masked, self.columns, self.schema, scale=self.scale, weights=weights
        )
        return x0, x1, self.link(x0, x1)

    @cached_property
    def regression(self) -> RegressionComparison | None:
        """The regression of the response on its predictors in both files, done once (None without one)."""
        from sdckit.assess.utility import compare_regression

        if not self.linear or self.response is None:
            return None
        return compare_regression(
            self.original, self.masked, self.response, self.predictors, schema=self.schema
        )
