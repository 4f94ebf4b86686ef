"""Perry, Matloff & Tendick (2022), Section 6 theorem: the masked correlation as neighbourhoods shrink.

The theorem says that as the neighbourhoods shrink, the masked pair (U, V)
has the joint law of the original (X, Y). On bivariate normal data with
correlation 0.8 (n = 20,000, seed 2022; the data and seeds of
``tests/microdata/test_rwn_properties.py``, which asserts the order), this
prints the masked correlation and its error for k = 2, 50, 1,000 and for
eps = 0.01 (k = 1), and for eps = 0.3 on the first 2,000 records (a wide
radius mixes dissimilar records: Section 7).

Run:  .venv/bin/python examples/validation/rwn_theorem.py
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdckit import rwn


def main() -> None:
    rng = np.random.default_rng(2022)
    xy = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], size=20_000)
    data = pd.DataFrame(xy, columns=["x", "y"])
    runs = [
        ("k = 2", data, {"k": 2, "random_state": 11}),
        ("k = 50", data, {"k": 50, "random_state": 11}),
        ("k = 1,000", data, {"k": 1000, "random_state": 11}),
        ("k = 1, eps = 0.01", data, {"k": 1, "eps": 0.01, "random_state": 12}),
        (
            "k = 1, eps = 0.3, first 2,000 records",
            data.iloc[:2000],
            {"k": 1, "eps": 0.3, "random_state": 12},
        ),
    ]
    original = np.corrcoef(data["x"], data["y"])[0, 1]
    print(
        f"bivariate normal, correlation 0.8, n = {len(data):,}; sample correlation {original:.4f}"
    )
    print()
    print("| neighbourhood | records | masked correlation | error abs(r - 0.8) |")
    print("|---|---:|---:|---:|")
    for label, frame, params in runs:
        masked = rwn(frame, **params).data
        r = np.corrcoef(masked["x"], masked["y"])[0, 1]
        print(f"| {label} | {len(frame):,} | {r:.4f} | {abs(r - 0.8):.4f} |")


if __name__ == "__main__":
    main()
