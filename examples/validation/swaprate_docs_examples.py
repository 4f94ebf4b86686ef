"""The two examples at the top of docs/swaprate.md, run as written; prints the verdict of each.

1. Where the method works: Kifer (2015) Section 5.1's Gaussian data (the
   Gaussian model is the true model), 500 known swaps.
2. Where it does not: the real Adult data, income swapped at rho = 0.05 by
   ``sdckit.microdata.swap`` (seed 1: alpha = 888), Naive Bayes on age,
   education and sex (a model that does not fit these data).

    .venv/bin/python examples/validation/swaprate_docs_examples.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.microdata import swap
from sdckit.swaprate import estimate_swap_count, swap_group_count

ADULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "adult.csv"


def main() -> None:
    # Example 1 (docs/swaprate.md): the method works.
    rng = np.random.default_rng(1)
    s = np.repeat([0, 1], 5000)
    data = pd.DataFrame({"r": rng.normal(s, 1.0), "s": s})
    released = swap_group_count(data, "s", 500, random_state=2).data
    est = estimate_swap_count(released, "s", ["r"], model="gaussian")
    print("example 1, true alpha = 500")
    print(est.verdict)

    # Example 2 (docs/swaprate.md): the method does not work, and says so.
    adult = pd.read_csv(ADULT)
    result = swap(adult, columns="income", rate=0.05, random_state=1)
    est = estimate_swap_count(result.data, "income", ["age", "education", "sex"])
    print(f"\nexample 2, true alpha = {result.alpha}")
    print(est.verdict)


if __name__ == "__main__":
    main()
