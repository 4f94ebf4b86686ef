"""Validation: individual, global and household risk on sdcMicro's testdata and free1.

sdcMicro is not installed here, so its figures are re-derived independently:
plain Python dictionaries count f_k and F_k (sum of the sampling weights) per
key combination, and the risk of each combination is computed from the
definitions sdcMicro's ``measure_risk`` documents (Franconi & Polettini 2004:
closed forms for f_k = 1, 2, the approximation p/(f - 1 + p) beyond), and, for
``method="exact"``, by summing the negative binomial series term by term. The
script prints sdckit's figures beside the independent ones and the largest
absolute difference per record, plus one combination of each f_k = 1, 2, 3
with its p_k so the reader can check it by hand.

    .venv/bin/python examples/validation/categorical_risk.py
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.assess import individual_risk, key_risk
from sdckit.schema import Schema

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
FILES = {
    "testdata": (
        "testdata.csv",
        ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"],
        "sampling_weight",
        "ori_hid",
    ),
    "free1": (
        "free1.csv",
        ["REGION", "SEX", "AGE", "MARSTAT", "KINDPERS", "NUMYOUNG", "NUMOLD"],
        "WEIGHT",
        None,
    ),
}


def reference_risk(f: int, big_f: float, exact: bool) -> float:
    """E(1/F | f) from the definitions, written without sdckit's code."""
    p = f / big_f
    if p >= 1:
        return 1 / f
    if exact:
        total, log_p, log_q = 0.0, math.log(p), math.log(1 - p)
        for h in range(f, f + 200_000):
            log_c = math.lgamma(h) - math.lgamma(f) - math.lgamma(h - f + 1)
            term = math.exp(log_c + f * log_p + (h - f) * log_q) / h
            total += term
            if term < 1e-18 and h > f / p:  # past the mode of the distribution of F
                break
        return total
    if f == 1:
        return p / (1 - p) * math.log(1 / p)
    if f == 2:
        return p / (1 - p) - (p / (1 - p)) ** 2 * math.log(1 / p)
    return p / (f - (1 - p))


def main() -> None:
    for name, (file, keys, weight, household) in FILES.items():
        path = DATA / file
        if not path.exists():
            print(f"skipped {name}: {path} is absent")
            continue
        data = pd.read_csv(path)
        # The keys are coded as numbers; they are categories (REGION has 182 of them).
        schema = Schema.infer(data, kinds=dict.fromkeys(keys, "categorical"))
        rows = list(zip(*(data[k].tolist() for k in keys), strict=True))
        counts: dict[tuple, int] = defaultdict(int)
        sums: dict[tuple, float] = defaultdict(float)
        for row, w in zip(rows, data[weight], strict=True):
            counts[row] += 1
            sums[row] += float(w)
        print(f"\n{name}: {len(data)} records, keys {', '.join(keys)}, weight {weight}")
        freq = np.array([counts[r] for r in rows])
        ours_keys = key_risk(data, keys, schema=schema)
        print(
            f"  records violating 2/3/5-anonymity: sdckit {list(ours_keys.violations.values())}, "
            f"reference {[int((freq < k).sum()) for k in (2, 3, 5)]}"
        )
        for method in ("approx", "exact"):
            ours = individual_risk(
                data,
                keys,
                weight=weight,
                household=household,
                method=method,
                schema=schema,
            )
            cache = {r: reference_risk(counts[r], sums[r], method == "exact") for r in counts}
            ref = np.array([cache[r] for r in rows])
            diff = float(np.abs(ours.risk.to_numpy() - ref).max())
            print(
                f"  {method}: expected re-identifications sdckit {ours.expected_reidentifications:.6f}"
                f", reference {ref.sum():.6f}; global risk sdckit {ours.global_risk:.8f}, "
                f"reference {ref.mean():.8f}; largest per-record difference {diff:.1e}"
            )
            if household is not None:
                house: dict[object, float] = defaultdict(lambda: 1.0)
                for h, r in zip(data[household], ref, strict=True):
                    house[h] *= 1 - r
                ref_h = np.array([1 - house[h] for h in data[household]])
                assert ours.household_risk is not None
                print(
                    f"  {method}: household expected re-identifications sdckit "
                    f"{ours.household_expected_reidentifications:.6f}, reference {ref_h.sum():.6f}"
                )
        for f in (1, 2, 3):
            combo = next((r for r in counts if counts[r] == f), None)
            if combo is not None:
                p = f / sums[combo]
                print(
                    f"  by hand, f_k = {f}: {dict(zip(keys, combo, strict=True))}, F_k = "
                    f"{sums[combo]:g}, p = {p:.6g}, r = {reference_risk(f, sums[combo], False):.8f}"
                )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
