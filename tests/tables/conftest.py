"""Fixtures for the tables tests: small census-like microdata with record keys."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.tables import add_record_keys


@pytest.fixture
def census() -> pd.DataFrame:
    """600 records: region/district hierarchy, age band, sex; skewed so small cells occur."""
    rng = np.random.default_rng(2024)
    n = 600
    district = rng.choice(["d1", "d2", "d3", "d4", "d5"], size=n, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    return pd.DataFrame(
        {
            "district": district,
            "age": rng.choice(["0-17", "18-39", "40-64", "65+"], size=n, p=[0.2, 0.4, 0.3, 0.1]),
            "sex": rng.choice(["F", "M"], size=n),
            "income": rng.gamma(2.0, 1000.0, size=n),
        },
        index=pd.RangeIndex(100, 100 + n, name="person"),
    )


@pytest.fixture
def keyed(census: pd.DataFrame) -> pd.DataFrame:
    return add_record_keys(census, 7)
