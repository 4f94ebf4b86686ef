"""docs/rwn.md's worked example: RWN on the Fair (1978) affairs survey, as the page shows it.

Runs the page's code (k = 10, eps = 0.15, q = 1, seed 2026; the two
occupations as categoricals) and prints the masker's summary and the
correlations of four pairs before and after, so that the figures the page
quotes are written by ``scripts/regenerate_docs.py docs/rwn.md``.

Run:  .venv/bin/python examples/rwn_worked_example.py
"""

from __future__ import annotations

import pandas as pd
import statsmodels.api as sm

from sdckit import rwn

PAIRS = (
    ("age", "yrs_married"),
    ("yrs_married", "children"),
    ("rate_marriage", "affairs"),
    ("religious", "affairs"),
)


def main() -> None:
    data = sm.datasets.fair.load_pandas().data
    for col in ("occupation", "occupation_husb"):
        data[col] = pd.Categorical(data[col].astype(int))
    result = rwn(data, k=10, eps=0.15, q=1.0, random_state=2026)
    print(result.summary())
    masked = result.data
    print()
    print(f"{'pair':<26}{'original':>10}{'masked':>10}")
    for a, b in PAIRS:
        before = data[[a, b]].corr().iloc[0, 1]
        after = masked[[a, b]].corr().iloc[0, 1]
        print(f"{a + ' ~ ' + b:<26}{before:>10.3f}{after:>10.3f}")


if __name__ == "__main__":
    main()
