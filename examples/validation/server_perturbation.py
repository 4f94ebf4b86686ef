"""Differencing risk of Lucero et al. (2011), Section 4, with Drop q alone, perturbation alone, both.

The attack of Section 4: an intruder releases the 2 x 2 table of U(n) and of
U(n-1) = U(n) without one unit (the target, an unemployed man) and reads the
difference T_{n-q1} - T_{n-1-q2}; a difference with a single 1 discloses the
target's cell - correctly, or (an "apparent-but-wrong" disclosure) in another
cell. "Only target differs" counts the differences that are non-zero in
the target's cell and zero in every other cell, which point to the target's
cell whatever the value. Three servers, on the same 978 units and the server's real code paths:

* Drop q alone (``sdckit.server.DropQ``, q ~ U{2..k}, keyed hash);
* the count perturbation alone (``sdckit.server.perturbation.Perturbation``:
  every released count perturbed by the key of its set of units, never 1
  or 2), with no unit dropped;
* both, as ``sdckit serve`` runs by default.

A fresh server secret per trial: what an intruder faces across deployments
whose secret she does not know. The perturbation does not depend on k; its
"alone" rate is repeated on every row.

Run:  .venv/bin/python examples/validation/server_perturbation.py [--quick]
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from _shared import differencing_population, differencing_verdict

from sdckit.server import DropQ
from sdckit.server.perturbation import Perturbation

TABLES = {
    "unequal (412, 87 / 351, 128)": np.array([412, 87, 351, 128]),
    "near-equal (245, 244 / 245, 244)": np.array([245, 244, 245, 244]),
}
TARGET = 1


def attack(counts: np.ndarray, k: int, trials: int, seed: int, *, dropq: bool, perturb: bool):
    """Correct and apparent-but-wrong disclosure rates of the differencing attack."""
    rng, cells, keys, everyone, without_target = differencing_population(counts, TARGET, seed)
    correct = wrong = only_target = 0
    for _ in range(trials):
        secret = rng.bytes(32)
        tables = []
        for members in (everyone, without_target):
            kept = (
                DropQ(keys, secret, k).subsample(members).kept if dropq else np.flatnonzero(members)
            )
            if perturb:
                table = Perturbation(keys, secret).cell_counts(kept, cells[kept], counts.size)
            else:
                table = np.bincount(cells[kept], minlength=counts.size)
            tables.append(table)
        diff = tables[0] - tables[1]
        others = np.delete(diff, TARGET)
        only_target += bool(diff[TARGET] != 0 and not others.any())
        right, mistaken = differencing_verdict(diff, TARGET)
        correct, wrong = correct + right, wrong + mistaken
    return correct / trials, wrong / trials, only_target / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials")
    args = parser.parse_args()
    trials = 1_000 if args.quick else 10_000
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    print(f"trials per cell of the table: {trials}, a fresh secret each")
    for name, counts in TABLES.items():
        print(f"\n2 x 2 table {name}, n = {counts.sum()}, target cell {TARGET}\n")
        print(
            "| k | Drop q alone: correct | wrong | only target differs "
            "| perturbation alone: correct | wrong | only target differs "
            "| both: correct | wrong | only target differs |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        alone = attack(counts, 2, trials, 300, dropq=False, perturb=True)
        for k in range(3, 8):
            drop = attack(counts, k, trials, 100 + k, dropq=True, perturb=False)
            both = attack(counts, k, trials, 200 + k, dropq=True, perturb=True)
            print("| " + " | ".join([str(k), *(f"{v:.4f}" for v in (*drop, *alone, *both))]) + " |")


if __name__ == "__main__":
    main()
