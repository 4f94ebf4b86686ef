"""Benchmark: secondary cell suppression of hierarchical tables from 10^3 to 10^5 cells.

Issue 21. Synthetic records with Zipf-like categories (so many cells fail
the frequency rule) are tabulated with a region and an industry hierarchy
of three levels (3 x 3 x 3 leaves, 40 categories with the margins each) and,
for 3- and 4-way tables, flat extra dimensions. The primary rule is
``freq>=3`` (protection: the attacker's interval must reach 0 and 3). Each
method's pattern is audited by the attacker's LP, and two baselines are timed
in the same run on the same table:

* ``/ audit``: the method's time over the audit of its own result
  (:func:`sdckit.tables.audit_suppression` with ``intervals="settle"``, as
  ``suppress`` runs it; ``--exact-audit`` also times the exact audit, two LPs
  per suppressed cell);
* ``/ LP``: the method's time over one LP on the whole table (the minimum and
  maximum of one cell with every cell unknown): the floor of any method that
  solves anything on the table.

Columns: cells, primary cells, secondary cells, suppressed value share,
exposed cells after the audit (the aim: 0), seconds, the two ratios, the CPU
seconds of the whole call (method and audit: on a shared machine the wall
clock says more about the load than about the method), and the peak resident
memory during that call (VmHWM reset before each method; before, the figure
was the process's peak, which carried the 2-way optimal model's memory into
every later line).

    .venv/bin/python benchmarks/suppression.py [--quick] [--time-limit 20] [--only N]
        [--methods hypercube,modular]
    .venv/bin/python benchmarks/suppression.py --phases [--only 2] [--exact-audit]
        [--trace] [--audit-time-limit SECONDS]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from sdckit.errors import InfeasibleError
from sdckit.tables import audit_suppression, primary_suppression, suppress, tabulate
from sdckit.tables.audit import attacker_intervals
from sdckit.tables.suppression import (
    Protection,
    hypercube_pattern,
    pattern_frames,
    primary_levels,
)

# (name, extra flat dimension sizes, records, methods)
SHAPES = [
    ("2-way region x industry", (), 6_000, ("hypercube", "modular", "optimal")),
    ("3-way + 6 sizes", (6,), 40_000, ("hypercube", "modular")),
    # the modular method's sub-tables here hold 4 x 4 x 7 x 11 cells, each solved by the
    # compact MILP: not run (docs/benchmarks.md)
    ("4-way + 6 sizes + 10 ages", (6, 10), 300_000, ("hypercube",)),
    # the same 123,200 cells with ten times the records (24 per cell): a business table of
    # 10^5 cells has far fewer primary cells than 2.4 records per cell give (19%)
    ("4-way dense, 3,000,000 records", (6, 10), 3_000_000, ("hypercube", "modular")),
]


def hierarchy(prefix: str) -> tuple[list[str], dict[str, list[str]]]:
    """27 leaves under 9 groups under 3 sections: three levels below the total."""
    leaves, spec = [], {}
    for a in range(3):
        section = f"{prefix}{a}"
        spec[section] = []
        for b in range(3):
            group = f"{section}{b}"
            spec[section].append(group)
            spec[group] = [f"{group}{c}" for c in range(3)]
            leaves += spec[group]
    return leaves, spec


def synthetic(extra: tuple[int, ...], n: int, seed: int) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    regions, region_spec = hierarchy("R")
    industries, industry_spec = hierarchy("I")
    columns = {}
    for name, labels in (("region", regions), ("industry", industries)):
        weights = 1.0 / np.arange(1, len(labels) + 1) ** 1.1
        columns[name] = rng.choice(labels, n, p=weights / weights.sum())
    for axis, k in enumerate(extra):
        weights = 1.0 / np.arange(1, k + 1) ** 0.8
        columns[f"x{axis}"] = rng.choice([f"v{j}" for j in range(k)], n, p=weights / weights.sum())
    return pd.DataFrame(columns), {"region": region_spec, "industry": industry_spec}


def reset_peak() -> None:
    """Start a new peak of resident memory (Linux: VmHWM), so each line has its own."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def peak_mib() -> float:
    """Peak resident memory since :func:`reset_peak` (the process's peak where not Linux)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def structure_cells(table: pd.DataFrame) -> int:
    return int(table.attrs["structure"].n_cells)


def lp_floor(table: pd.DataFrame, clock: Callable[[], float] = time.perf_counter) -> float:
    """One LP (min and max of one cell) over the whole table, every cell unknown.

    Seconds of ``clock``: wall clock by default, ``time.process_time`` for CPU seconds.
    """
    structure = table.attrs["structure"]
    relations, _ = structure.relations()
    values = table["count"].to_numpy(np.float64)
    hidden = np.ones(structure.n_cells, dtype=bool)
    start = clock()
    attacker_intervals(relations, values, hidden, cells=np.array([0]))
    return (clock() - start) / 2


def trace_audit() -> None:
    """Print each large component the settled audit models and each LP's CPU seconds on it."""
    from sdckit.tables import audit

    witness, run, settle = audit._witness_intervals, audit._run, audit._local_settle

    def traced_settle(sub, rhs, ub, truth, targets, need_lo, need_hi, known, **options):  # type: ignore[no-untyped-def]
        cpu = time.process_time()
        out = settle(sub, rhs, ub, truth, targets, need_lo, need_hi, known, **options)
        state, solves = out[2], out[4]
        asked = need_lo <= need_hi
        witnessed = int((audit._settled(known, targets, need_lo, need_hi) & asked).sum())
        print(
            f"#   local LPs on a component of {len(ub)} hidden cells: {int(asked.sum())} cells "
            f"asked, {witnessed} settled by the true table and the hypercubes, "
            f"{int((state == 1).sum())} proved protected by a restriction, "
            f"{int((state == 2).sum())} proved exposed by a relaxation, "
            f"{int(((state == 0) & asked).sum()) - witnessed} left to LPs over the component; "
            f"{solves} local LPs, {time.process_time() - cpu:.1f} s CPU, "
            f"peak RSS {peak_mib():.0f} MiB",
            flush=True,
        )
        return out

    def traced_witness(h, ub, scale, targets, need_lo, need_hi, **options):  # type: ignore[no-untyped-def]
        seed = options.get("seed")
        if len(ub) >= 1000:
            still = (
                None
                if seed is None
                else int((~audit._settled(seed, targets, need_lo, need_hi)).sum())
            )
            print(
                f"#   component: {len(ub)} hidden cells, {h.getNumRow()} relations, "
                f"{int((need_lo <= need_hi).sum())} cells asked, {still} open after the true "
                "table and the hypercubes",
                flush=True,
            )
        return witness(h, ub, scale, targets, need_lo, need_hi, **options)

    def traced_run(h):  # type: ignore[no-untyped-def]
        cpu = time.process_time()
        status = run(h)
        if h.getNumCol() >= 1000:
            print(f"#     LP: {time.process_time() - cpu:.1f} s CPU, {status}", flush=True)
        return status

    audit._witness_intervals, audit._run = traced_witness, traced_run
    audit._local_settle = traced_settle


def phases(shape: tuple, without: bool, audit_limit: float | None = None) -> None:
    """The hypercube method phase by phase: what each costs (CPU seconds, peak memory)."""
    name, extra, n, _ = shape
    print(f"# {platform.platform()}, {os.cpu_count()} cores; {' '.join(sys.argv)}", flush=True)

    def report(phase: str, cpu: float, text: str) -> None:
        load = os.getloadavg()[0]
        print(
            f"{name}: {phase}: {text}; CPU {time.process_time() - cpu:.1f} s, "
            f"peak RSS {peak_mib():.0f} MiB, load average {load:.1f}",
            flush=True,
        )
        reset_peak()

    reset_peak()
    cpu = time.process_time()
    data, spec = synthetic(extra, n, seed=21)
    dims = ["region", "industry"] + [f"x{a}" for a in range(len(extra))]
    flagged = primary_suppression(tabulate(data, dims, hierarchies=spec), rules=["freq>=3"])
    structure = flagged.attrs["structure"]
    size = structure.n_cells
    values, primary = np.zeros(size), np.zeros(size, dtype=bool)
    upper, lower = np.zeros(size), np.zeros(size)
    positions = structure.cell_positions(flagged)
    values[positions] = flagged["count"].to_numpy(np.float64)
    primary[positions], upper[positions], lower[positions] = primary_levels(flagged)
    report("tabulate and primary rule", cpu, f"{size} cells, {int(primary.sum())} primary")
    cpu = time.process_time()
    cubes: list = []
    problem = Protection(values, primary, upper, lower, values + 1.0)
    hidden, missed = hypercube_pattern(structure, problem, chosen=cubes)
    report(
        "hypercube search",
        cpu,
        f"{int(hidden.sum())} suppressed, {len(cubes)} hypercubes, "
        f"{len(missed)} primary cells without one",
    )
    cpu = time.process_time()
    internal, _ = pattern_frames(flagged, structure, "count", primary, hidden)
    audit = audit_suppression(
        internal, intervals="settle", deviations=cubes, time_limit=audit_limit
    )
    limit = "" if audit_limit is None else f" (time limit {audit_limit:g} s)"
    report(
        f"settled audit from the hypercubes{limit}",
        cpu,
        f"{audit.stats['exposed']} exposed, of them {audit.stats['unsettled']} not settled, "
        f"{audit.stats['lp_solves']} LPs",
    )
    if without:
        cpu = time.process_time()
        plain = audit_suppression(internal, intervals="settle")
        same = bool((plain.cells["exposed"] == audit.cells["exposed"]).all())
        report(
            "baseline: settled audit without them",
            cpu,
            f"{plain.stats['exposed']} exposed, {plain.stats['lp_solves']} LPs, "
            f"same exposed cells: {same}",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the 10^3 and 10^4 tables")
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per HiGHS run")
    parser.add_argument(
        "--only",
        type=int,
        default=None,
        help="run table N only (0: 2-way, 1: 3-way, 2: 4-way, 3: 4-way dense)",
    )
    parser.add_argument("--methods", default=None, help="comma-separated methods to run")
    parser.add_argument(
        "--audit-time-limit",
        type=float,
        default=None,
        help="with --phases: seconds for the audit's LPs (cells left count as exposed)",
    )
    switches = {
        "--exact-audit": "also time the exact audit (two LPs per suppressed cell) of each "
        "pattern; with --phases, the settled audit without the hypercubes",
        "--phases": "hypercube only, phase by phase: CPU seconds and peak memory of the search "
        "and of the settled audit, each printed as soon as it ends",
        "--no-floor": "skip the one-LP floor (the / LP column)",
        "--trace": "with --phases: each large component and LP, and what the local LPs settle",
        "--simplex": "with --phases: every LP of the audit by the dual simplex from the last "
        "basis (as before session 7; the true table still seeds the witnesses)",
    }
    for flag, text in switches.items():
        parser.add_argument(flag, action="store_true", help=text)
    parser.add_argument(
        "--shape",
        default=None,
        help="with --phases: a table of your own, 'EXTRA:RECORDS' (e.g. '3,4:78000': region x "
        "industry x 3 x 4 categories, 78,000 records)",
    )
    args = parser.parse_args()
    if args.phases:
        shape = SHAPES[2 if args.only is None else args.only]
        if args.shape:
            extra, records = args.shape.split(":")
            sizes = tuple(int(k) for k in extra.split(","))
            shape = (f"4-way + {' x '.join(map(str, sizes))}", sizes, int(records), ())
        if args.trace:
            trace_audit()
        if args.simplex:
            import sdckit.tables.audit

            sdckit.tables.audit.LARGE_COMPONENT = 10**12
        phases(shape, args.exact_audit, args.audit_time_limit)
        return
    print(f"# {platform.platform()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"# {' '.join(sys.argv)}; load average {os.getloadavg()[0]:.1f}")
    header = (
        "| table | cells | method | primary | secondary | suppressed value share | exposed "
        "| seconds | / audit | / LP | CPU s (method + audit) | peak RSS |"
    )
    print(header)
    print("|" + "---|" * 12)
    shapes = SHAPES[:2] if args.quick else SHAPES
    if args.only is not None:
        shapes = [SHAPES[args.only]]
    for name, extra, n, methods in shapes:
        if args.methods:
            methods = tuple(args.methods.split(","))
        data, spec = synthetic(extra, n, seed=21)
        dims = ["region", "industry"] + [f"x{a}" for a in range(len(extra))]
        table = tabulate(data, dims, hierarchies=spec)
        floor = np.nan if args.no_floor else lp_floor(table)
        total = float(table["count"].sum())
        for method in methods:
            reset_peak()
            cpu = time.process_time()
            try:
                result = suppress(
                    table, rules=["freq>=3"], method=method, time_limit=args.time_limit
                )
            except InfeasibleError as exc:
                print(f"| {name} | {structure_cells(table)} | {method} | {exc} |||||||", flush=True)
                continue
            s = result.stats
            audit_seconds = result.audit.stats["seconds"] if result.audit is not None else np.nan
            peak = peak_mib()
            print(
                f"| {name} | {s['cells']} | {method} | {s['primary']} | {s['secondary']} | "
                f"{s['suppressed_value'] / total:.2%} | {s['exposed']} | "
                f"{s['seconds']:.1f} | {s['seconds'] / audit_seconds:.2f} | "
                f"{s['seconds'] / floor:.0f} | {time.process_time() - cpu:.1f} | "
                f"{peak:.0f} MiB |",
                flush=True,
            )
            if method == "hypercube":
                print(
                    f"#   hypercube: {s['no_hypercube']} primary cells without a hypercube of "
                    f"their own; {s['repaired']} of them exposed by the first audit, then "
                    "protected by deviation LPs",
                    flush=True,
                )
            if method == "modular":
                print(
                    f"#   modular: {s['subtables']} sub-tables, {s['hypercube_subtables']} of "
                    f"them protected by hypercubes, {s['relaxed_subtables']} relaxed; "
                    f"{s['repaired']} exposed primary cells repaired (by whole-table "
                    f"hypercubes, {s['lp_repaired']} of them by deviation LPs)",
                    flush=True,
                )
            if args.exact_audit and result.audit is not None:
                exact = audit_suppression(result.internal, intervals="exact")
                settled = result.audit.stats
                print(
                    f"#   audit of this pattern: settled {settled['seconds']:.1f} s "
                    f"({settled['lp_solves']} LPs), exact {exact.stats['seconds']:.1f} s "
                    f"({exact.stats['lp_solves']} LPs), exact / settled = "
                    f"{exact.stats['seconds'] / settled['seconds']:.1f}x; same exposed cells: "
                    f"{bool((exact.cells['exposed'] == result.audit.cells['exposed']).all())}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
