"""Shared helpers of the analysis-server tests (imported by conftest.py and test modules)."""

from __future__ import annotations

import numpy as np
import pandas as pd

SECRET = b"test-secret-0123456789abcdef"


def make_people(n: int = 2000, seed: int = 7) -> pd.DataFrame:
    """Synthetic people: sex, region, age, hours, wage (log-linear), employed."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["male", "female"], n)
    region = rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1])
    age = rng.integers(18, 80, n).astype(float)
    hours = np.clip(rng.normal(38.0, 8.0, n), 1.0, None)
    wage = np.exp(1.0 + 0.02 * age + 0.01 * hours + 0.2 * (sex == "male") + rng.normal(0, 0.4, n))
    employed = np.where(rng.random(n) < 0.7, "yes", "no")
    return pd.DataFrame(
        {
            "sex": sex,
            "region": region,
            "age": age,
            "hours": hours,
            "wage": wage,
            "employed": employed,
        },
        index=pd.Index(np.arange(n) * 5 + 11, name="person"),
    )
