"""Validation: perturbation tables for D = 3, 4, 5 and V = 2 + epsilon beside Table 1 of
Giessing & Höhne (2011, appendix).

Prints, for every D, the paper's design probabilities and ours (columns: perturbed
counts 0, 3, 4, ..., 13; rows: original counts 1..8), and the constraint checks
(rows sum to 1, zero mean, variance V, no mass on 1-2 or beyond D). The paper's
numbers are read from the text of the paper (../shared/seeds) when it is present.

    .venv/bin/python examples/validation/tables_ptables.py [--V 2.01] [--objective maxent] [--pstay 0.7]
"""

from __future__ import annotations

import argparse

import numpy as np
from _shared import paper_table_1

from sdckit.tables import design_ptable

COLUMNS = [0, *range(3, 14)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--V", type=float, default=2.01)
    parser.add_argument("--objective", default="maxent")
    parser.add_argument("--pstay", type=float, default=None, help="fix p_ii (the paper: 0.7)")
    args = parser.parse_args()
    paper = paper_table_1()
    header = "  i | " + " ".join(f"{j:>6d}" for j in COLUMNS)
    for D in (3, 4, 5):
        P = design_ptable(D, args.V, objective=args.objective, pstay=args.pstay)
        m = np.zeros((9, 14))
        for i in range(1, 9):
            row = P.transition(i)
            for j, p in row.items():
                if j < 14:
                    m[i, j] = p
        dev = np.arange(P.matrix.shape[1])[None, :] - np.arange(P.n_rows)[:, None]
        print(f"\n### D = {D}, V = {args.V} ({args.objective}, pstay={args.pstay})")
        print(
            f"checks: max |row sum - 1| = {np.abs(P.matrix.sum(1) - 1).max():.1e}, max |mean| = {np.abs((P.matrix * dev).sum(1)).max():.1e}, variances {np.round(P.variances[1:], 6).tolist()}, mass on 1-2: {P.matrix[:, 1:3].sum():g}, "
            f"mass beyond D: {P.matrix[np.abs(dev) > D].sum():g}"
        )
        if D in paper:
            pv = paper[D]
            pdev = np.array(COLUMNS)[None, :] - np.arange(1, 9)[:, None]
            print("paper: row variances " + str(np.round((pv * pdev**2).sum(1), 3).tolist()))
        print(header)
        for i in range(1, 9):
            ours = " ".join(f"{m[i, j]:6.3f}" for j in COLUMNS)
            print(f"{i:>3d} | {ours}   (sdckit)")
            if D in paper:
                print(f"{'':>3} | " + " ".join(f"{x:6.3f}" for x in paper[D][i - 1]) + "   (paper)")


if __name__ == "__main__":
    main()
