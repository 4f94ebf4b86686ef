"""The firms the attack tests plant: a few very large ones, their turnover following size."""

from __future__ import annotations

import numpy as np
import pandas as pd


def planted_firms(rng: np.random.Generator, size: np.ndarray) -> pd.DataFrame:
    """Firms of these sizes in four states, turnover = size x lognormal noise (drawn from ``rng``)."""
    n = len(size)
    return pd.DataFrame(
        {
            "size": size,
            "state": rng.choice(["north", "south", "east", "west"], size=n),
            "turnover": size * np.exp(rng.normal(10, 0.5, size=n)),
        }
    )
