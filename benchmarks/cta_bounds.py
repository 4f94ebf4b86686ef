"""Benchmark: how much of CTA's distance to the LP bound is the bound's weakness (issue 24).

The tables of ``benchmarks/cta.py`` (same records, seeds and p-table), the model
``restore_additivity(..., method="elementary")`` solves (``max_deviation = 3``).
Three lower bounds on every additive table's total deviation:

* ``LP``: the LP relaxation (the baseline of ``benchmarks/cta.py``);
* ``LP + valid lower bounds``: the same, with the lower bound of every cell and
  aggregate that cannot be 0 (lower bound 1 or 2) raised to 3, which every table
  without 1s and 2s obeys;
* ``integer, no rule against 1s and 2s``: the integer CTA without the cells' "0 or
  at least 3" rule, solved by HiGHS within ``--time-limit`` (its optimum, or the
  bound HiGHS proves, is below the real problem's optimum). Skipped with
  ``--no-integer``.

With ``--real-time-limit S``, the real problem too (the rule included): the whole
model, started from the LP relaxation dived and repaired as
``restore_additivity`` starts it, run by HiGHS for ``S`` seconds: the best table
it finds and the bound it proves, between which the optimum lies.

If the integer problem without the rule has the LP bound as optimum, integrality
costs nothing and the whole distance between a restored table and the LP bound
comes from the rule against 1s and 2s (which the relaxation ignores) and from the
heuristic. CPU seconds per bound (``time.process_time``).

    .venv/bin/python benchmarks/cta_bounds.py --only 5 [--time-limit 300] [--no-integer]
        [--real-time-limit 600]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cta

from sdckit._highs import NoTableInTime
from sdckit.tables import add_record_keys, cell_key_perturb, design_ptable
from sdckit.tables.additivity import WHOLE_EFFORT, _Elementary, _lp_start, _solve_elementary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", default="5", help="table numbers of benchmarks/cta.py, e.g. 5 or 4,5"
    )
    parser.add_argument(
        "--time-limit", type=float, default=300.0, help="seconds for the integer problem"
    )
    parser.add_argument("--no-integer", action="store_true", help="the two LP bounds only")
    parser.add_argument(
        "--real-time-limit",
        type=float,
        default=0.0,
        help="seconds for the real problem (the rule included); 0 (default): not run",
    )
    parser.add_argument("--adult", default="../shared/data/adult.csv", help="path of adult.csv")
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"numpy {np.__version__}, pandas {pd.__version__}, load average {os.getloadavg()[0]:.1f}"
    )
    ptable = design_ptable(3, 2.01)
    for number in (int(n) for n in args.only.split(",")):
        name, sizes, n = cta.SHAPES[number]
        records = (
            cta.adult(args.adult)
            if name == cta.ADULT
            else cta.synthetic(sizes, n, seed=len(sizes) * 7 + sizes[0])
        )
        if records is None:
            continue
        data = add_record_keys(records, 2011)
        perturbed = cell_key_perturb(data, ptable, dims=[str(c) for c in records.columns]).internal
        problem = _Elementary.of_perturbed(perturbed, max_deviation=3)
        lower = problem.lower.copy()
        raised = (lower >= 1) & (lower <= 2)
        lower[raised] = 3.0
        inner = problem.structure.inner_mask()
        valid = _Elementary(
            problem.structure,
            problem.p,
            lower,
            problem.upper,
            problem.weights,
            problem.binary & (lower <= 2),
        )
        no_rule = _Elementary(
            problem.structure,
            problem.p,
            problem.lower,
            problem.upper,
            problem.weights,
            np.zeros_like(problem.binary),
        )
        runs = [("LP", problem, True), ("LP + valid lower bounds", valid, True)]
        if not args.no_integer:
            runs.append(("integer, no rule against 1s and 2s", no_rule, False))
        print(
            f"{name}: {problem.structure.n_cells:,} cells; lower bounds raised to 3: "
            f"{int((raised & inner).sum()):,} elementary cells, {int((raised & ~inner).sum()):,} aggregates"
        )
        for label, model, relax in runs:
            info: dict = {}
            cpu = time.process_time()
            try:
                _solve_elementary(
                    model,
                    model.p,
                    model.movable(),
                    None if relax else args.time_limit,
                    info,
                    relax=relax,
                )
            except NoTableInTime:
                print(
                    f"  {label}: no integer table within {args.time_limit:.0f} s, so no bound "
                    f"beyond the LP's ({time.process_time() - cpu:.1f} s CPU)"
                )
                continue
            cpu = time.process_time() - cpu
            extra = ""
            if not relax:
                extra = f", proven bound {info.get('dual_bound', float('nan')):.1f}"
            print(
                f"  {label}: {info['status']}, total deviation {info['objective']:.1f}{extra} "
                f"({cpu:.1f} s CPU)"
            )
        if args.real_time_limit > 0:
            cpu = time.process_time()
            free = problem.movable()
            start = _lp_start(problem, free, None, [], {})
            info = {}
            found = _solve_elementary(
                problem,
                problem.p if start is None else start,
                free,
                args.real_time_limit,
                info,
                options={"mip_heuristic_effort": WHOLE_EFFORT},
            )
            cpu = time.process_time() - cpu
            best = "none" if found is None else f"{problem.cost(found):.0f}"
            print(
                f"  integer, the real problem ({args.real_time_limit:.0f} s): {info['status']}, "
                f"best table {best}, proven bound {info.get('dual_bound', float('nan')):.1f} "
                f"({cpu:.1f} s CPU)"
            )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
