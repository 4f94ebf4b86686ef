"""Differencing, padding and table attacks on Adult, where the truth is known (issue 25).

Server (Lucero et al. 2011, §3.1-§4): sdckit's AnalysisServer on Adult
(48,842 people; age, workclass, education, marital status, occupation, race,
sex, weekly hours, native country; the sensitive variable is fnlwgt, the
census's final weight, a number nobody outside knows), metadata inferred
with beta = 40, secret fixed. The battery attacks the six units alone in a
cell of a categorical variable by a cutpoint bin whose row is largest
(``find_cell_targets``), with 40 padded pairs each, against the default
rules and against the same server without the perturbation (Drop q alone).

Tables (Giessing & Höhne 2011, §5): cell-key tables of Adult with record
keys (seed 1) and the p-table ``sdckit tables`` designs by default (D = 3,
V = 2.01): the interval attack on sex x race x education with the published
D; averaging the cells five tables share, with consistent keys and with keys
drawn per table; differencing two tables of sex x race x education whose
populations differ by one person (200 people drawn, seed 0); two tables
restored by CTA separately and together (``restore_linked``).

Residual of a variable: Adult with one person (row 1) moved to a race of
her own ("Planted"), against the default rules, Drop q alone and exact
answers (our DataSHIELD emulation): ``ALL`` minus every race the server
answers alone.

Run:  .venv/bin/python examples/validation/attacks_differencing.py [--part servers|residual|tables]
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import pandas as pd

from sdckit.attacks import (
    DataSHIELDRules,
    LibraryServer,
    PeerServer,
    averaging_attack,
    interval_attack,
    overlap_differencing_attack,
    server_attack,
    shared_cells,
)
from sdckit.server import AnalysisServer, Metadata
from sdckit.tables import (
    add_record_keys,
    cell_key_perturb,
    design_ptable,
    restore_additivity,
    restore_linked,
)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
COLUMNS = (
    "age workclass education marital_status occupation race sex hours_per_week "
    "native_country fnlwgt"
).split()
SECRET = b"attacks-differencing-validation!"


def servers(adult: pd.DataFrame) -> None:
    metadata = Metadata.infer(adult, beta=40)
    for label, config in (("default rules", {}), ("Drop q alone", {"perturbation": False})):
        target = LibraryServer(AnalysisServer(adult, metadata, config, secret=SECRET))
        result = server_attack(
            adult, target=target, sensitive="fnlwgt", padding_pairs=40, random_state=0
        )
        print(f"\n### Server, {label}\n")
        print(result.summary())
    print("\ntargets (row, variable = level, bin):")
    for t in result.targets:
        print(f"  row {t.row}: {t.category} = {t.level}, {t.numeric} bin {t.bin}")


def residual(adult: pd.DataFrame) -> None:
    """ALL minus every large level, on Adult with one person moved to a race of her own."""
    race = adult["race"].to_numpy(dtype=object).copy()
    race[0] = "Planted"  # a level of one person; race has no missing value
    planted = adult.assign(race=race)
    metadata = Metadata.infer(planted, beta=40)
    servers = (
        ("default rules", LibraryServer(AnalysisServer(planted, metadata, {}, secret=SECRET))),
        (
            "Drop q alone",
            LibraryServer(
                AnalysisServer(planted, metadata, {"perturbation": False}, secret=SECRET)
            ),
        ),
        ("exact answers (DataSHIELD emulation)", PeerServer(planted, metadata, DataSHIELDRules())),
    )
    print("\n### ALL minus every large level: Adult, row 1 alone in race = Planted\n")
    for label, target in servers:
        result = server_attack(planted, target=target, sensitive="fnlwgt", targets=[])
        row = result.table.set_index("attack").loc["residual of a variable"]
        print(
            f"{label}: targets {row['targets']}, queries {row['queries']}, estimates "
            f"{row['estimates']:g}, learned {row['learned']:g}, oracle {row['oracle_recovered']:g}, "
            f"median error {row['median_error']:.3g}, counts of 1-2 released {row['small_counts']}"
        )


def tables(adult: pd.DataFrame) -> None:
    keyed = add_record_keys(adult[["sex", "race", "education", "marital_status"]], seed=1)
    ptable = design_ptable(3, 2.01)
    dims = ["sex", "race", "education"]
    released = cell_key_perturb(keyed, ptable, dims=dims)
    scored = released.table.assign(count=released.internal["count"].to_numpy())
    print("\n### Interval attack, sex x race x education, D = 3\n")
    print(interval_attack(scored, max_deviation=3, dims=dims, truth="count").summary())
    print("\n### Averaging the cells five tables share\n")
    five = [
        ["sex", "race"],
        ["sex", "education"],
        ["race", "education"],
        ["sex", "race", "education"],
        ["sex", "marital_status"],
    ]
    print(averaging_attack(keyed, ptable, tables=five, random_state=0).summary())
    print("\n### Two tables whose populations differ by one person\n")
    print(
        overlap_differencing_attack(
            keyed, ptable, dims=dims, n_targets=200, random_state=0
        ).summary()
    )
    print("\n### Two tables restored by CTA, separately and together\n")
    pair = [
        cell_key_perturb(keyed, ptable, dims=d).internal
        for d in (["sex", "race"], ["sex", "education"])
    ]
    separate = [restore_additivity(t, max_deviation=3).table for t in pair]
    shared = shared_cells(
        [t.drop(columns="perturbed").rename(columns={"restored": "perturbed"}) for t in separate],
        max_deviation=3,
    )
    disagree = int((shared["values"].map(len) > 1).sum())
    print(f"separately: {len(shared)} shared cells, {disagree} published with two values")
    print(shared.to_string(index=False))
    linked = restore_linked(pair, max_deviation=3)
    together = [
        t.drop(columns="perturbed").rename(columns={"restored": "perturbed"}) for t in linked.tables
    ]
    shared = shared_cells(together, max_deviation=3)
    disagree = int((shared["values"].map(len) > 1).sum())
    print(f"together (restore_linked): {len(shared)} shared cells, {disagree} with two values")


def main() -> int:
    path = DATA / "adult.csv"
    if not path.exists():
        print(f"skipping: {path} is not present")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["all", "servers", "residual", "tables"], default="all")
    part = parser.parse_args().part
    print(f"# {platform.machine()}, Python {platform.python_version()}")
    adult = pd.read_csv(path)[COLUMNS]
    for name, run in (("servers", servers), ("residual", residual), ("tables", tables)):
        if part in ("all", name):
            run(adult)
    return 0


if __name__ == "__main__":
    sys.exit(main())
