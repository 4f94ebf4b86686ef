"""Shared fixtures: small synthetic data. Shared datasets: ``from shared_data import shared_csv``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from shared_data import SHARED_DATA, shared_csv

__all__ = ["SHARED_DATA", "shared_csv"]


@pytest.fixture
def mixed_data() -> pd.DataFrame:
    """200 records: two correlated numerics, an integer count, a categorical, an id; odd index."""
    rng = np.random.default_rng(12345)
    n = 200
    x = rng.multivariate_normal([10.0, 50.0], [[4.0, 3.0], [3.0, 9.0]], size=n)
    return pd.DataFrame(
        {
            "id": np.arange(1000, 1000 + n),
            "height": x[:, 0],
            "weight": x[:, 1],
            "children": rng.integers(0, 4, size=n),
            "region": pd.Categorical(rng.choice(["north", "south", "east"], size=n)),
            "smoker": rng.choice(["yes", "no"], size=n),
        },
        index=pd.Index(np.arange(n) * 3 + 7, name="rec"),
    )
