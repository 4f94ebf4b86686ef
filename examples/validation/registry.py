"""Every validation script against the papers, in one list, and a runner (``make validate``).

Each entry names the script, the paper (and section, table or figure) it
reproduces, the arguments of the full run that docs/validation.md quotes, an
expected runtime where one has been measured, and, for the fast subset, quick
arguments and text the output must contain: a number the paper reports and
sdckit reproduces. ``tests/docs/test_validation_fast.py`` runs the fast subset,
so a change that breaks a reproduced number fails a test.

    .venv/bin/python examples/validation/registry.py --out validation-output          # everything
    .venv/bin/python examples/validation/registry.py --out validation-output --fast   # fast subset
    .venv/bin/python examples/validation/registry.py --list

Every script's standard output goes to ``OUT/<script>.txt``; ``OUT/index.md``
lists each run with its paper, command, exit code, measured wall time and,
for the fast subset, whether each expected text was found. Scripts that read
``../shared/data`` exit with a message when the data are absent; that is
recorded, not hidden.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@dataclass(frozen=True)
class Entry:
    """One validation script."""

    script: str
    paper: str
    args: tuple[str, ...] = ()
    runtime: str = "not timed"
    fast_args: tuple[str, ...] | None = None
    expect: tuple[str, ...] = field(default_factory=tuple)


PMT = "Perry, Matloff & Tendick (2022)"
KIFER = "Kifer (2015)"
GH = "Giessing & Höhne (2011)"
LUCERO = "Lucero et al. (2011)"

REGISTRY: tuple[Entry, ...] = (
    Entry(
        "tables_invariant.py",
        f"{GH}, §3.2, Example 1 (invariant matrix, counts under four keep 148)",
        runtime="3 s CPU",
        fast_args=(),
        expect=(
            "counts under four: total 148.0000000 (paper: 148)",
            "i=1: sdckit 60.5319739 35.4680261",
        ),
    ),
    Entry(
        "maskers_oganian_moments.py",
        "Oganian (2011), §3 (third and fourth moments, eq. 25)",
        ("--replicates", "500", "--simulate", "20"),
        runtime="about 4 min",
        fast_args=("--replicates", "2", "--simulate", "0"),
        # The closed form on two fixed replicates (seeds [0, 1] and [1, 1]).
        expect=("| lognormal | 3 | +2.5 % | +7.", "| normal | 4 | +0.8 % | +4."),
    ),
    Entry(
        "rwn_prgeng.py",
        'Matloff & Tendick (2015), "Example": the female PhD under 31, eps 0.3 and 0.2',
        ("--example", "--n", "5000", "--reps", "20"),
        runtime="about 3 min",
        fast_args=("--example", "--n", "5000", "--reps", "1"),
        # First sample (seed 2015): 2 original matches; eps 0.3 finds 1, her own row; eps 0.2: 1 other.
        expect=("| 1 | 2 | 1 | 1 | 1 | 0 |",),
    ),
    Entry(
        "categorical_risk.py", "Benedetti & Franconi (1998) risk on testdata and free1 (issue 16)"
    ),
    Entry("kanon_adult.py", "k-anonymity search vs brute force on Adult (issue 16)"),
    Entry(
        "suda_adult.py",
        "SUDA: minimal sample uniques on Adult vs an enumeration, a planted record (issue 16)",
        ("--max-size", "7"),
    ),
    Entry("rwn_prgeng.py", 'Matloff & Tendick (2015), "Example": regression coefficients'),
    Entry(
        "rwn_bodyfat_section8.py",
        f"{PMT}, §8.1 and §8.3, Figures 4, 5, 8, 9 (bodyfat regression, distances, PCA)",
        ("--reps", "10"),
        runtime="about 6 min",
    ),
    Entry("maskers_oganian.py", "Oganian (2011), §5 (moment ratios)", ("--replicates", "500")),
    Entry("noise_business.py", "Oganian (2011) on the CASC business files (issue 31)"),
    Entry("maskers_bodyfat.py", f"{PMT}: RWN vs rank swapping vs MDAV on bodyfat"),
    Entry("assess_bodyfat.py", f"{PMT}, §8.3 (PC1 share, Cook's distance over eps)"),
    Entry("assess_prediction.py", f"{PMT}, §8.4 (prediction check)", ("--dataset", "pima")),
    Entry("distributed_rwn.py", f"{PMT}, §11.3 (partitioned RWN)"),
    Entry("rwn_categorical.py", "RWN on mixed files (categorical columns masked)"),
    Entry(
        "rwn_large_files.py",
        f"{PMT}, §§10-11: utility and risk of approximate and sampled neighbourhoods",
    ),
    Entry(
        "rwn_approximate_adult.py",
        f"{PMT}, §§10-11: approximate against exact RWN on Adult, estimated against true recall",
    ),
    Entry("server_differencing.py", f"{LUCERO}, §4, eq. (5) and bounds (6)"),
    Entry("server_perturbation.py", f"{LUCERO}, §4 with the padding defence"),
    Entry("server_utility.py", f"{LUCERO}: cost of the padding defence"),
    Entry("swaprate_gaussian.py", f"{KIFER}, §5.1 (Gaussian data)"),
    Entry("swaprate_adult.py", f"{KIFER}, §5.2-5.3 (Adult)"),
    Entry("swaprate_figure5.py", f"{KIFER}, Figure 5 (semi-synthetic Adult)", ("--runs", "50")),
    Entry("swaprate_lemma44.py", f"{KIFER}, Lemma 4.4"),
    Entry("swaprate_identifiability.py", f"{KIFER}, §4.1 (identifiability, our addition)"),
    Entry("swaprate_calibration.py", "swap-rate verdict calibration (issue 30)", ("--runs", "200")),
    Entry("swaprate_docs_examples.py", "the examples of docs/swaprate.md"),
    Entry("tables_ptables.py", f"{GH}, appendix Table 1 (perturbation tables)"),
    Entry("tables_adult.py", f"{GH}, §6, Table 5 style on Adult"),
    Entry("tables_second_round.py", f"{GH}: second round (issue 24)"),
    Entry(
        "tables_suppression.py",
        "Cell suppression (issue 21): audit vs enumeration, known optima, census-style comparison",
    ),
    Entry("querylog_srp.py", "Erola et al. (2011), §4.2 (SRP on the AOL sample)"),
    Entry(
        "querylog_zealous.py", "Götz et al. (2012): planted queries vs microaggregation and ZEALOUS"
    ),
    Entry("attacks_regression.py", "Bleninger, Drechsler & Ronning (2011), Tables 1-3"),
    Entry(
        "coprivacy_paper.py",
        "Domingo-Ferrer (2011), §4-5: Example 2, the N-player collapse, P2P search on AOL users",
        runtime="about 1 min on a loaded machine (8 s CPU)",
        fast_args=("--peers", "10", "--rounds", "20", "--largest", "3"),
        expect=("| (P, P) | 0.5 | 0.5 |", "dominant strategy solution: (H, H)"),
    ),
    Entry(
        "coprivacy_scenarios.py",
        "Domingo-Ferrer (2011), §6-7: vehicular networks and fingerprinted multicast, modelled",
        ("--draws", "2000"),
        runtime="about 50 s on a loaded machine (8 s CPU)",
        fast_args=("--draws", "100"),
        expect=(
            "| 6 | 2 | 0.6 | 0, 2 | no | yes |",
            "mixed equilibrium: fingerprint 0.400, plain 0.600; honest 0.800, leak 0.200",
        ),
    ),
    Entry("attacks_differencing.py", f"{LUCERO}, §3.1-§4 and {GH}, §5: attacks on Adult"),
    Entry(
        "attacks_peers.py",
        f"{LUCERO} and Bleninger, Drechsler & Ronning (2011): sdckit's server beside ACRO's and "
        "DataSHIELD's rules (attacks blocked, benign queries refused); prediction from the keys "
        "of EIA releases",
    ),
    Entry("rwn_large_files.py", f"{PMT}, §11 (large-data neighbourhoods)"),
    Entry(
        "attacks_scoring.py",
        f"{LUCERO}, §4: the differencing battery scored by what the intruder can recognise",
        args=("--runs", "200"),
        runtime="about 3.5 min on a loaded machine",
        fast_args=("--runs", "3"),
        expect=("runs in which an attack learned a value (agreeing estimates): 0",),
    ),
)


def run(entry: Entry, out: Path, *, fast: bool) -> dict[str, object]:
    """Run one entry, write its output, and return what index.md shows."""
    args = entry.fast_args if fast and entry.fast_args is not None else entry.args
    command = [sys.executable, str(HERE / entry.script), *args]
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    name = Path(entry.script).stem + ("-" + "-".join(a.strip("-") for a in args) if args else "")
    (out / f"{name}.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    missing = [text for text in entry.expect if text not in done.stdout] if fast else []
    return {
        "entry": entry,
        "command": " ".join([".venv/bin/python", f"examples/validation/{entry.script}", *args]),
        "output": f"{name}.txt",
        "code": done.returncode,
        "seconds": seconds,
        "missing": missing,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("validation-output"))
    parser.add_argument("--fast", action="store_true", help="only the fast subset, checked")
    parser.add_argument("--list", action="store_true", help="list the registry and exit")
    args = parser.parse_args()
    chosen = [e for e in REGISTRY if e.fast_args is not None] if args.fast else list(REGISTRY)
    if args.list:
        for entry in chosen:
            fast = " [fast]" if entry.fast_args is not None else ""
            print(f"{entry.script:<30} {entry.runtime:<14} {entry.paper}{fast}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Validation runs",
        "",
        "| script | paper | command | exit | wall time | expected text |",
        "|---|---|---|---|---|---|",
    ]
    failed = 0
    for entry in chosen:
        row = run(entry, args.out, fast=args.fast)
        check = (
            "-"
            if not args.fast
            else ("found" if not row["missing"] else f"MISSING {row['missing']}")
        )
        failed += bool(row["code"]) or bool(row["missing"])
        lines.append(
            f"| [{entry.script}]({row['output']}) | {entry.paper} | `{row['command']}` | "
            f"{row['code']} | {row['seconds']:.0f} s | {check} |"
        )
        print(lines[-1], flush=True)
    (args.out / "index.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"\n{len(chosen) - failed} of {len(chosen)} runs passed; outputs in {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
