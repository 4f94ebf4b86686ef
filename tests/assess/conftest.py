"""Fixtures of the assessment tests: small numeric data and a masked release of it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def numeric_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """300 records of three correlated numerics and a categorical, and a noisy release."""
    rng = np.random.default_rng(7)
    n = 300
    x = rng.multivariate_normal([0, 5, 10], [[1, 0.6, 0.3], [0.6, 1, 0.5], [0.3, 0.5, 1]], size=n)
    original = pd.DataFrame(
        {
            "a": x[:, 0],
            "b": x[:, 1],
            "c": x[:, 2],
            "group": pd.Categorical(rng.choice(["x", "y", "z"], size=n)),
        },
        index=pd.RangeIndex(100, 100 + n, name="rec"),
    )
    masked = original.copy()
    masked[["a", "b", "c"]] += rng.normal(scale=0.3, size=(n, 3))
    return original, masked


@pytest.fixture
def assessment_figures() -> set[str]:
    """The figures of the report of an RWN release assessed with a response, keys and a sensitive
    variable: one per measure that draws one, and the RWN neighbourhoods."""
    return {
        "correlation",
        "regression",
        "cooks_distance",
        "mahalanobis",
        "distance_to_closest",
        "pca",
        "covariance_ratio",
        "neighborhoods",
        "key_frequencies",
    }
