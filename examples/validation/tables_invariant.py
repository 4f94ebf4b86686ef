"""Validation: Example 1 of Giessing & Höhne (2011, Section 3.2).

1. From the first row of Table 2 (the expected frequencies of the pooled counts
   1-3 after the invariant matrix R*), sdckit's split of the small counts
   reproduces Table 3's rows for counts 1, 2, 3 (with the paper's 12 threes
   staying threes), and the counts under four keep their total of 148.
2. A full no-small-cells invariant matrix R** for the Example 1 frequencies
   (96, 32, 20, 16, 15, ...; the tail beyond 5 is ours, the paper does not give
   it) with a banded initial matrix (D = 2): counts under four keep their total
   148, counts of four and more keep their expected frequencies.

    .venv/bin/python examples/validation/tables_invariant.py
"""

from __future__ import annotations

import numpy as np

from sdckit.tables import banded_transition, invariant_matrix
from sdckit.tables.invariant import split_small_counts

TABLE_3 = {1: (60.531974, 35.468026), 2: (9.510658, 22.489342), 3: (4.6240348, 12.0)}


def main() -> None:
    outflow = np.array([2.9690406, 0.4069246])  # Table 2, row 0-3, columns 4 and 5
    rows, delta = split_small_counts([96, 32, 20], outflow, outflow.sum(), stay3=0.6)
    expected = np.array([96, 32, 20])[:, None] * rows
    print("1. Table 3 rows for counts 1-3 (n_i0, n_i3, n_i4, n_i5): sdckit vs paper")
    for i in (1, 2, 3):
        e = expected[i - 1]
        print(f"   i={i}: sdckit {e[0]:.7f} {e[3]:.7f} {e[4]:.7f} {e[5]:.7f}   paper {TABLE_3[i]}")
    total = expected[:, [0, 3]].sum() + outflow.sum()
    print(f"   counts under four: total {total:.7f} (paper: 148); common bias delta = {delta:.6f}")

    v = np.array([0, 96, 32, 20, 16, 15, 12, 10, 9, 8, 7, 6, 5, 5, 4, 4], dtype=float)
    result = invariant_matrix(banded_transition(len(v), D=2, stay=0.8), v, alpha=0.7)
    e = result.expected_frequencies()
    print("2. R** for Example 1's frequencies (tail after 5 is ours)")
    print(f"   expected cells at 0 and 3: {e[0]:.6f} + {e[3]:.6f} = {e[0] + e[3]:.6f} (148 kept)")
    print(f"   expected cells at 1 or 2: {e[1] + e[2]:.1e}")
    print(f"   max |expected - observed| for counts >= 4: {np.abs(e[4:] - v[4:]).max():.2e}")
    print("   expected transitions n_ij (rows i = 1..6, columns j = 0, 3..6):")
    table = result.expected_transitions().loc[1:6, [0, 3, 4, 5, 6]]
    print(table.round(4).to_string())


if __name__ == "__main__":
    main()
