"""The padding-and-differencing attack of issue 23 on planted demo data (shared by tests and docs).

Lucero et al. (2011) name *padding* as the attack
Drop q does not stop. Two universes differ by one unit t: piece A1 =
"education = doctorate AND age in bins S + {j}" and A2 = the same without
bin j, where t is the only doctorate of age bin j; both are padded with the
same large piece of primary-educated people of age bins T, so that Drop q
usually removes units of the padding only. A cross-tabulation of education
with the mean wage then gives the doctorate row's count and mean in each
universe, and x_t = n1 m1 - n2 m2.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdckit.server.demo import demo_metadata, make_demo_data
from sdckit.server.metadata import Metadata

TARGET_BINS = (0, 1, 2, 3, 4, 5)
OTHER_BINS = tuple(range(6, 16))


def planted_people() -> tuple[pd.DataFrame, Metadata, dict[int, int]]:
    """Demo data where each of six age bins holds exactly one doctorate (the targets).

    Returns the data, its metadata and {age bin: row position of its target}.
    """
    data = make_demo_data(5000, random_state=0)
    metadata = demo_metadata(data)
    bins = metadata.encode(data)["age"]
    education = data["education"].to_numpy(dtype=object).copy()
    targets = {}
    for b in TARGET_BINS:
        rows = np.flatnonzero((bins == b) & (education == "doctorate"))
        targets[b] = int(rows[0])
        education[rows[1:]] = "tertiary"
    data = data.assign(education=education)
    return data, metadata, targets


def attack_pairs(n_pairs: int, seed: int = 0) -> list[tuple[int, str, str]]:
    """(target bin, universe with the target, universe without it), padding varied each time."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_pairs):
        j = TARGET_BINS[i % len(TARGET_BINS)]
        size = int(rng.integers(4, len(OTHER_BINS) + 1))
        others = sorted(int(b) for b in rng.choice(OTHER_BINS, size, replace=False))
        pad = sorted(int(b) for b in rng.choice(16, int(rng.integers(6, 17)), replace=False))
        padding = f"education = primary AND age in bins {', '.join(map(str, pad))}"
        with_t = sorted([*others, j])
        u1 = f"education = doctorate AND age in bins {', '.join(map(str, with_t))} OR {padding}"
        u2 = f"education = doctorate AND age in bins {', '.join(map(str, others))} OR {padding}"
        out.append((j, u1, u2))
    return out


def doctorate_row(answer: dict) -> tuple[int, float | None, list[int]]:
    """Released count and mean of the doctorate row, and every released count of the table."""
    i = answer["row_labels"].index("doctorate")
    counts = [c for row in answer["counts"] for c in row] + answer["row_totals"]
    counts += answer["col_totals"] + [answer["total"]]
    return answer["row_totals"][i], answer["row_means"][i], counts
