"""Benchmark: additive noise on 10^5 records x 5 variables, before and after the cheaper cell coding.

Every record belongs to a masking cell (its zone x its structural-zero
pattern), and the cells used to be coded with ``np.unique`` three times
(zones, zero patterns row-wise, cells), each a full sort of n values (the
row-wise one of n rows). sdckit now codes them by hashing
(``pandas.factorize``) and sorts only the distinct values, which gives the
same codes in the same order, so the same seed gives the same output. The
per-column report every masker gets (``column_changes``) also coded each
column's original and masked values jointly (a hash of 2n values) to count
the changed cells; numeric columns now compare them directly.

Baseline, timed in the same run: the same ``additive_noise`` with both old
routes put back (the code before the change, kept here). Three cases: no zones (the
common case), two zones by threshold, and a structural-zero indicator. The
masked data, diagnostics and per-column table of both runs are checked to be
identical.

    .venv/bin/python benchmarks/noise.py [--n 100000] [--repeats 3]

Wall-clock seconds, best of ``--repeats`` runs (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
import pandas as pd
from _timing import best_run

import sdckit.microdata.base as base_module
import sdckit.microdata.noise as noise_module
from sdckit.microdata import additive_noise


def unique_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The coding before the change: a full sort of the values."""
    uniques, codes = np.unique(values, return_inverse=True)
    return uniques, codes.reshape(-1)


def unique_pattern_codes(pattern: np.ndarray) -> np.ndarray:
    """The coding before the change: a row-wise sort of the zero patterns."""
    return np.unique(pattern, axis=0, return_inverse=True)[1].reshape(-1)


def joint_changed_share(before: pd.Series, after: pd.Series) -> float:
    """The changed share before the change: a joint coding of both columns."""
    joint = pd.concat([before, after], ignore_index=True)
    codes = pd.factorize(joint, use_na_sentinel=True)[0]
    return float(np.mean(codes[: len(before)] != codes[len(before) :]))


def make_data(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cov = 0.5 * np.ones((5, 5)) + 0.5 * np.eye(5)
    x = rng.multivariate_normal(np.zeros(5), cov, size=n) * 10 + 40
    data = pd.DataFrame(x, columns=[f"v{j}" for j in range(5)])
    data.loc[rng.random(n) < 0.2, "v4"] = 0.0
    data["v4_is_zero"] = data["v4"] == 0.0
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}, Python {platform.python_version()}, "
        f"numpy {np.__version__}, pandas {pd.__version__}"
    )
    data = make_data(args.n, seed=1)
    columns = [f"v{j}" for j in range(5)]
    cases = {
        "no zones": {},
        "two zones (zone_thresholds=[45])": {"zone_thresholds": [45.0]},
        "structural zeros (v4)": {"structural_zeros": {"v4": "v4_is_zero"}},
    }
    print(f"additive noise, {args.n} records x 5 variables, best of {args.repeats}")
    print(f"{'case':<34} {'before s':>11} {'sdckit s':>9} {'speed-up':>9}  output")
    new_codes, new_patterns = noise_module._sorted_codes, noise_module._pattern_codes
    new_changed = base_module._changed_share
    for label, extra in cases.items():

        def run(extra: dict = extra) -> tuple[pd.DataFrame, ...]:
            result = additive_noise(data, columns=columns, random_state=7, **extra)
            return result.data, result.diagnostics, result.column_changes

        try:
            noise_module._sorted_codes = unique_codes
            noise_module._pattern_codes = unique_pattern_codes
            base_module._changed_share = joint_changed_share
            t_before, before = best_run(run, args.repeats)
        finally:
            noise_module._sorted_codes = new_codes
            noise_module._pattern_codes = new_patterns
            base_module._changed_share = new_changed
        t_after, after = best_run(run, args.repeats)
        same = all(x.equals(y) for x, y in zip(after, before, strict=True))
        same = "identical (data, diagnostics, column_changes)" if same else "DIFFERENT"
        print(f"{label:<34} {t_before:>11.3f} {t_after:>9.3f} {t_before / t_after:>8.2f}x  {same}")


if __name__ == "__main__":
    main()
