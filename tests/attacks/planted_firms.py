"""The firms the attack tests plant: a few very large ones, their turnover following size."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdckit.server import Metadata


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


def service_firms() -> tuple[pd.DataFrame, Metadata]:
    """500 firms, two of them the only northern firm of their size bin, and their metadata.

    The data of the end-to-end service tests (and of
    ``examples/validation/attacks_scoring.py``): the differencing battery's
    targets are the one northern firm of the lowest and of the highest size
    bin (cutpoints depend on the sizes only, not on the states).
    """
    rng = np.random.default_rng(5)
    data = planted_firms(rng, np.round(np.exp(rng.normal(3, 1.3, size=500))) + 1)
    metadata = Metadata.infer(data, beta=40, categorical=["state"])
    bins = metadata.encode(data)["size"]
    state = data["state"].to_numpy(dtype=object).copy()
    for b in (bins.min(), bins.max()):
        rows = np.flatnonzero(bins == b)
        state[rows] = [["south", "east", "west"][i % 3] for i in range(rows.size)]
        state[rows[0]] = "north"
    return data.assign(state=state), metadata
