"""Benchmark: sdckit's secondary suppression side by side with R sdcTable on the same tables.

Issue 21. The hierarchical tables of ``benchmarks/suppression.py`` (the same
generator and seed: region and industry hierarchies of three levels, flat
extra dimensions) are written to files (leaf cells with their counts, one
hierarchy file per dimension in sdcTable's ``@;code`` layout) and protected:

* by R sdcTable (``benchmarks/peers/sdctable_protect.R`` through ``Rscript``,
  one R process per method): ``makeProblem`` from the leaf cells,
  ``primarySuppression(type = "freq", maxN = 2)``, each primary cell given the
  protection levels of sdckit's ``freq>=3`` rule (upper 3 - count, lower
  count), then ``protectTable`` with SIMPLEHEURISTIC, HYPERCUBE, HITAS, OPT and
  GAUSS, each killed after ``--time-limit`` seconds (OPT and HITAS also get
  0.8 of it, in whole minutes, as their own ``timeLimit``, after which they
  return the pattern they have);
* by sdckit: ``suppress(..., rules=["freq>=3"])`` with the methods that table
  runs in ``benchmarks/suppression.py``.

Before anything is compared, sdcTable's table is checked against sdckit's:
the same cells (every margin and hierarchy level), the same count in each,
and the same primary cells. Every pattern, sdcTable's included, is then
audited by sdckit's attacker LP (:func:`sdckit.tables.audit_suppression`,
settled intervals) against the ``freq>=3`` protection levels: ``exposed``
counts primary cells whose interval does not reach 0 and 3, ``exact`` cells
whose value the release gives away exactly.

Columns: cells, tool and method, primary cells, secondary cells and their
value (sum of counts), exposed and exact cells, the method's seconds
(sdckit: the whole ``suppress`` call, its own audit included; sdcTable:
``protectTable`` alone, timed inside R, without R's start-up, ``makeProblem``
and ``primarySuppression``), that time over one LP on the whole table (the
floor: the minimum and maximum of one cell with every cell unknown, timed in
this run), the CPU seconds of the same span, the seconds of the audit of
the pattern, and peak resident memory (sdckit: this process during the call;
sdcTable: the R process, all phases). After each table, sdckit / sdcTable time
ratios for the matching methods.

Needs ``Rscript`` with sdcTable installed (``benchmarks/peers/build_sdctable.sh
DIR`` builds it into ``DIR/R-lib``; pass ``--r-lib DIR/R-lib``). Without them
it says why on stderr and exits 0, writing nothing (so ``make bench`` keeps
the figures of docs/benchmarks.md): sdckit never depends on R.

    .venv/bin/python benchmarks/suppression_peer.py --r-lib /path/R-lib [--only N]
        [--time-limit 300] [--r-methods SIMPLEHEURISTIC,HYPERCUBE] [--methods hypercube]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
from suppression import SHAPES, lp_floor, peak_mib, reset_peak, synthetic

from sdckit.errors import InfeasibleError
from sdckit.tables import AuditResult, audit_suppression, primary_suppression, suppress, tabulate

PROTECT_R = Path(__file__).resolve().parent / "peers" / "sdctable_protect.R"
R_METHODS = ("SIMPLEHEURISTIC", "HYPERCUBE", "HITAS", "OPT", "GAUSS")
# sdckit's method and the sdcTable method it is timed against
PAIRS = {"hypercube": "HYPERCUBE", "modular": "HITAS", "optimal": "OPT"}
THRESHOLD = 3  # freq>=3: sdcTable's maxN = 2
# the tables: those of benchmarks/suppression.py, from 10^3 to 10^5 cells, plus a 4-way
# table between them (40 x 40 x 7 x 5 = 56,000 cells, about 24 records per cell)
TABLES = [
    SHAPES[0],
    SHAPES[1],
    ("4-way + 6 sizes + 4 ages", (6, 4), 1_300_000, ("hypercube", "modular")),
    SHAPES[3],
]


def r_environment(r_lib: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if r_lib:
        env["R_LIBS"] = r_lib
    return env


def peer_missing(env: dict[str, str]) -> str | None:
    """Why sdcTable cannot be run here, or None when it can."""
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (benchmarks/peers/build_sdctable.sh DIR builds R sdcTable)"
    probe = subprocess.run(
        ["Rscript", "-e", "cat(as.character(packageVersion('sdcTable')))"],
        env=env,
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return (
            "R sdcTable is not installed in R's library path (give --r-lib DIR/R-lib of "
            "benchmarks/peers/build_sdctable.sh DIR)"
        )
    return None


def versions(env: dict[str, str]) -> str:
    script = (
        "cat(R.version.string); for (p in c('sdcTable', 'sdcHierarchies', 'SSBtools', 'highs', "
        "'glpkAPI', 'Rglpk')) if (requireNamespace(p, quietly = TRUE)) "
        "cat(';', p, as.character(packageVersion(p)))"
    )
    return subprocess.run(
        ["Rscript", "-e", script], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def hierarchy_lines(spec: dict[str, list[str]] | None, leaves: list[str]) -> list[str]:
    """sdcTable's ``@;code`` layout (top down, depth first) of one dimension."""
    lines = ["@;Total"]
    if spec is None:
        return lines + [f"@@;{leaf}" for leaf in leaves]
    children = {child for kids in spec.values() for child in kids}

    def walk(node: str, depth: int) -> None:
        lines.append(f"{'@' * depth};{node}")
        for child in spec.get(node, []):
            walk(child, depth + 1)

    for root in (node for node in spec if node not in children):
        walk(root, 2)
    return lines


def write_table(table: pd.DataFrame, spec: dict, folder: Path) -> None:
    """The leaf cells (non-empty) and each dimension's hierarchy, as sdcTable reads them."""
    structure = table.attrs["structure"]
    inner = structure.inner_mask()[structure.cell_positions(table)]
    leaves = table[inner & (table["count"].to_numpy() > 0)]
    cells = leaves[list(structure.dims)].astype(str)
    cells["freq"] = leaves["count"].to_numpy()
    cells.to_csv(folder / "cells.csv", index=False)
    for axis, dim in enumerate(structure.dims):
        names = [str(c) for c in structure.categories[axis][: structure.n_leaves[axis]]]
        text = "\n".join(hierarchy_lines(spec.get(dim), names)) + "\n"
        (folder / f"hier_{dim}.csv").write_text(text)


def run_r(folder: Path, method: str, limit: float, env: dict[str, str]) -> tuple[str | None, float]:
    """Run one sdcTable method; (None or why it gave no pattern, peak RSS in MiB)."""
    command = ["Rscript", str(PROTECT_R), str(folder), method, str(THRESHOLD - 1)]
    # OPT and HITAS stop their cut and branch at a limit of their own (whole minutes, at
    # least one), set below ours so that they return the pattern they have
    command.append(str(max(1, int(0.8 * limit / 60))))
    for stale in ("status", "timing", "attack"):
        (folder / f"{stale}_{method}.csv").unlink(missing_ok=True)
    log = open(folder / f"log_{method}.txt", "w")
    process = subprocess.Popen(
        command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        os.killpg(process.pid, signal.SIGKILL)

    timer = threading.Timer(limit, stop)
    timer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    except BaseException:  # interrupted: R runs in its own session, so stop it too
        os.killpg(process.pid, signal.SIGKILL)
        raise
    finally:
        timer.cancel()
        log.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss / 1024
    if timed_out.is_set() and (folder / f"timing_{method}.csv").exists():
        return None, peak  # killed in attack(), after the pattern was written
    if timed_out.is_set():
        prepared = "prepared:" in (folder / f"log_{method}.txt").read_text()
        phase = "protectTable" if prepared else "makeProblem and primarySuppression"
        cpu = usage.ru_utime + usage.ru_stime
        return f"killed at the {limit:.0f} s limit ({cpu:.0f} s of CPU), in {phase}", peak
    if process.returncode != 0:
        lines = (folder / f"log_{method}.txt").read_text().strip().splitlines()
        # R's own error message, not its closing "Execution halted"
        errors = [line for line in lines if line.lstrip().startswith(("Error", "Fehler"))]
        last = errors[-1] if errors else next((ln for ln in reversed(lines) if ln.strip()), "")
        cpu = usage.ru_utime + usage.ru_stime
        return (
            f"failed (exit {process.returncode}) after {cpu:.0f} s of CPU: "
            f"{(last.strip() or 'no output')[:160]}",
            peak,
        )
    return None, peak


def sdctable_pattern(
    folder: Path, method: str, levels: pd.DataFrame, dims: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """sdcTable's suppressed and primary cells in the order of ``levels``'s rows.

    Raises an error when sdcTable's table is not sdckit's: other cells, or
    another count in a cell.
    """
    status = pd.read_csv(folder / f"status_{method}.csv", dtype={d: str for d in dims})
    structure = levels.attrs["structure"]
    if len(status) != structure.n_cells:
        raise RuntimeError(
            f"sdcTable's table has {len(status)} cells, sdckit's {structure.n_cells}"
        )
    order = np.full(structure.n_cells, -1)
    order[structure.cell_positions(status)] = np.arange(len(status))
    rows = order[structure.cell_positions(levels)]
    counts = status["Freq"].to_numpy()[rows]
    if not np.array_equal(counts, levels["count"].to_numpy()):
        k = int(np.flatnonzero(counts != levels["count"].to_numpy())[0])
        raise RuntimeError(
            f"sdcTable's count differs in the cell of row {k + 1}: {counts[k]} against "
            f"{levels['count'].iloc[k]}"
        )
    codes = status["sdcStatus"].to_numpy()[rows]
    return np.isin(codes, ["u", "x"]), codes == "u"


def exposed_primary(report: AuditResult, levels: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``levels``: a primary cell the audit finds exposed; one recomputable exactly."""
    structure = levels.attrs["structure"]
    exposed = np.zeros(structure.n_cells, dtype=bool)
    exact = np.zeros(structure.n_cells, dtype=bool)
    where = structure.cell_positions(report.cells)
    exposed[where] = report.cells["exposed"].to_numpy(bool)
    exact[where] = report.cells["exact"].to_numpy(bool)
    rows = structure.cell_positions(levels)
    primary = levels["primary"].to_numpy(bool)
    return exposed[rows] & primary, exact[rows] & primary


def attack_agreement(
    folder: Path,
    method: str,
    levels: pd.DataFrame,
    dims: list[str],
    verdicts: tuple[np.ndarray, np.ndarray],
) -> str:
    """sdcTable's own attack() on its pattern against sdckit's audit (``verdicts``: exposed,
    exact primary cells per row of ``levels``)."""
    path = folder / f"attack_{method}.csv"
    if not path.exists():
        return "sdcTable's attack() did not finish within the limit"
    attacked = pd.read_csv(path, dtype={d: str for d in dims})
    structure = levels.attrs["structure"]
    at = structure.cell_positions(levels)
    rows = np.full(structure.n_cells, -1)
    rows[at] = np.arange(len(levels))
    mine = rows[structure.cell_positions(attacked)]
    value = levels["count"].to_numpy(np.float64)[mine]
    low, up = attacked["low"].to_numpy(), attacked["up"].to_numpy()
    short = (low > value - levels["lower_protection"].to_numpy()[mine] + 1e-6) | (
        up < value + levels["upper_protection"].to_numpy()[mine] - 1e-6
    )
    theirs = np.zeros(len(levels), dtype=bool)
    theirs[mine] = np.abs(up - low) <= 1e-6
    exposed, exact = verdicts
    return (
        f"sdcTable's attack(): {int(short.sum())} of {len(attacked)} primary cells short of "
        f"the protection levels, {int(theirs.sum())} recomputable exactly; sdckit's audit: "
        f"{int(exposed.sum())} and {int(exact.sum())}; same exact cells: "
        f"{bool(np.array_equal(theirs, exact))}"
    )


def row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def pattern_row(
    name: str,
    levels: pd.DataFrame,
    tool: str,
    hidden: np.ndarray,
    report: AuditResult,
    *timing: str,
) -> None:
    """One line of the table: the pattern's size and value, its audit, then ``timing``."""
    counts = levels["count"].to_numpy(np.float64)
    primary = levels["primary"].to_numpy(bool)
    secondary = hidden & ~primary
    exposed, exact = exposed_primary(report, levels)
    row(
        name, levels.attrs["structure"].n_cells, tool, int(primary.sum()), int(secondary.sum()),
        f"{counts[secondary].sum():.0f}", int(exposed.sum()), int(exact.sum()), *timing,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--r-lib", default=None, help="R library holding sdcTable (R_LIBS)")
    parser.add_argument("--only", type=int, default=None, help="run table N only (0-3)")
    parser.add_argument(
        "--time-limit", type=float, default=300.0, help="seconds per sdcTable method (killed)"
    )
    parser.add_argument("--sdckit-time-limit", type=float, default=20.0, help="per HiGHS run")
    parser.add_argument("--r-methods", default=",".join(R_METHODS), help="sdcTable methods")
    parser.add_argument("--methods", default=None, help="sdckit methods (default: the table's)")
    parser.add_argument("--keep", default=None, help="write the files here and keep them")
    args = parser.parse_args()
    # a SIGTERM ends this run through run_r's cleanup, which stops the R process too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    env = r_environment(args.r_lib)
    why = peer_missing(env)
    if why is not None:
        # stderr only: scripts/regenerate_docs.py keeps the block of a run that prints nothing
        print(f"sdcTable side by side not run: {why}", file=sys.stderr)
        return
    print(f"# {platform.platform()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"# {versions(env)}")
    print(f"# {' '.join(sys.argv)}; load average {os.getloadavg()[0]:.1f}", flush=True)
    r_methods = args.r_methods.split(",")
    row(
        "table", "cells", "tool: method", "primary", "secondary", "secondary value",
        "exposed primary", "of them exact", "seconds", "CPU s", "CPU / LP", "audit s", "peak RSS",
    )  # fmt: skip
    print("|" + "---|" * 13)
    tables = TABLES if args.only is None else [TABLES[args.only]]
    gave_up: dict[str, int] = {}  # sdcTable methods that gave no pattern, at so many cells
    for name, extra, n, methods in tables:
        data, spec = synthetic(extra, n, seed=21)
        dims = ["region", "industry"] + [f"x{a}" for a in range(len(extra))]
        levels = primary_suppression(
            tabulate(data, dims, hierarchies=spec), rules=[f"freq>={THRESHOLD}"]
        )
        cells = int(levels.attrs["structure"].n_cells)
        primary = levels["primary"].to_numpy(bool)
        floor = lp_floor(levels, clock=time.process_time)
        cpu_seconds: dict[str, float] = {}
        notes = []

        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(args.keep or scratch) / f"table{TABLES.index((name, extra, n, methods))}"
            folder.mkdir(parents=True, exist_ok=True)
            write_table(levels, spec, folder)
            for method in r_methods:
                tool = f"sdcTable: {method}"
                if method in gave_up:
                    row(name, cells, tool, f"not run (none at {gave_up[method]} cells)", *[""] * 9)
                    continue
                failure, peak = run_r(folder, method, args.time_limit, env)
                if failure is not None:
                    gave_up[method] = cells
                    row(name, cells, tool, failure, *[""] * 8, f"{peak:.0f} MiB")
                    continue
                hidden, theirs = sdctable_pattern(folder, method, levels, dims)
                if not np.array_equal(theirs, primary):
                    raise RuntimeError(
                        f"sdcTable flags {int(theirs.sum())} primary cells, sdckit "
                        f"{int(primary.sum())} ({int((theirs != primary).sum())} differ)"
                    )
                timing = pd.read_csv(folder / f"timing_{method}.csv").set_index("phase")
                seconds, cpu = timing.loc["protect", "elapsed"], timing.loc["protect", "cpu"]
                cpu_seconds[method] = cpu
                report = audit_suppression(levels.assign(suppressed=hidden), intervals="settle")
                pattern_row(
                    name, levels, tool, hidden, report, f"{seconds:.1f}", f"{cpu:.1f}", f"{cpu / floor:.0f}",
                    f"{report.stats['seconds']:.1f}", f"{peak:.0f} MiB",
                )  # fmt: skip
                verdicts = exposed_primary(report, levels)
                agreement = attack_agreement(folder, method, levels, dims, verdicts)
                notes.append(f"{method}: {agreement}")
        for method in args.methods.split(",") if args.methods else methods:
            reset_peak()
            cpu_start, start = time.process_time(), time.perf_counter()
            try:
                result = suppress(levels, method=method, time_limit=args.sdckit_time_limit)
            except InfeasibleError as exc:
                row(name, cells, f"sdckit: {method}", str(exc), *[""] * 9)
                continue
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            cpu_seconds[method] = cpu
            assert result.audit is not None  # suppress audits by default
            pattern_row(
                name, levels, f"sdckit: {method}", result.internal["suppressed"].to_numpy(bool), result.audit,
                f"{seconds:.1f}", f"{cpu:.1f}", f"{cpu / floor:.0f}",
                f"{result.audit.stats['seconds']:.1f}", f"{peak_mib():.0f} MiB",
            )  # fmt: skip
        ratios = [
            f"{ours} / {theirs} = {cpu_seconds[ours] / cpu_seconds[theirs]:.2g}"
            for ours in cpu_seconds
            for theirs in (PAIRS.get(ours), "SIMPLEHEURISTIC")
            if ours in PAIRS and theirs in cpu_seconds
        ]
        for note in notes:
            print(f"#   {name}: {note}")
        print(
            f"#   {name}: CPU seconds sdckit / sdcTable: {'; '.join(ratios) or 'none'}; "
            f"one LP {floor * 1000:.0f} ms CPU; load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
