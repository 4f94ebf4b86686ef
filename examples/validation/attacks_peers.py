"""sdckit's server beside ACRO's and DataSHIELD's rules; prediction from the keys of a release (issue 25).

Part 1, Adult (48,842 people, sensitive ``fnlwgt``, metadata inferred with
beta = 40, secret fixed): the regression attacks of Bleninger, Drechsler &
Ronning (2011) (background age, education, occupation, race; approximate
age ±2.5%; all records and the oldest 10%; ``--max-targets`` targets per
subset, seed 0), the differencing and padding battery of Lucero et al.
(2011) (six units alone in their cells, ``--padding-pairs`` padded pairs
each) and two corpora of ``--benign`` honest queries drawn from the public
metadata (seed 0): the stress corpus (random subsets of at least half of a
variable's levels) and the realistic one (the universes analysts write,
docs/attacks.md), against sdckit's server with its default rules and
against our emulations of ACRO's default output checks and DataSHIELD's
default disclosure filters (:mod:`sdckit.attacks.peers`). The metadata
declare the groupings of ``adult_groups.yaml`` (native country by region,
education by level, ...).

``--part refusals``: sdckit's server alone on both corpora, its refusals
counted by the first rule that refused and its cause (the level, margin or
term behind it, from the file's counts).

``--part universes`` (seconds, no analysis): both corpora through the
universe rules alone (``universe_check``): how many are refused, by which
rule, and how many are answered with their rare categories left out.

``--part corpus`` (seconds, no analysis): the stress corpus's universes that
list a categorical level of fewer than Gamma people, by variable and by
whether they select every level, and how many the universe rules refuse
now (``universe_check`` on the same metadata).

Part 2, EIA (3,480 utility-months, as in attacks_regression.py): the
intruder knows TOTSALES, STATE and MONTH of every record and predicts
TOTREVENUE from the release — unmasked, RWN (k = 5, q = 1, seed 0) and
MDAV (k = 3) of TOTSALES and TOTREVENUE — against the same predictors built
without the target's record.

Run:  .venv/bin/python examples/validation/attacks_peers.py
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

import yaml
from _shared import markdown
from attacks_differencing import COLUMNS, DATA  # the same Adult columns and data folder

from sdckit.attacks import (
    ACRORules,
    DataSHIELDRules,
    LibraryServer,
    PeerServer,
    benign_corpus,
    compare_servers,
    prediction_attack,
    run_corpus,
)
from sdckit.microdata.base import get_masker
from sdckit.server import AnalysisServer, Metadata

SECRET = b"attacks-peers-validation-secret!"
GROUPS = Path(__file__).resolve().parent / "adult_groups.yaml"
GAMMA = 50  # sdckit's default Gamma (ServerConfig.gamma)


def load(name: str) -> pd.DataFrame:
    path = DATA / name
    if not path.exists():
        sys.exit(f"{path} is not present")
    return pd.read_csv(path)


def adult_metadata() -> tuple[pd.DataFrame, Metadata]:
    """Adult and its metadata: cutpoints with beta 40, the declared groups of adult_groups.yaml."""
    adult = load("adult.csv")[COLUMNS]
    groups = yaml.safe_load(GROUPS.read_text(encoding="utf-8"))
    return adult, Metadata.infer(adult, beta=40, groups=groups)


def servers_part(args: argparse.Namespace) -> None:
    adult, metadata = adult_metadata()
    servers = [
        LibraryServer(AnalysisServer(adult, metadata, {}, secret=SECRET)),
        PeerServer(adult, metadata, ACRORules()),
        PeerServer(adult, metadata, DataSHIELDRules()),
    ]
    corpus = benign_corpus(servers[0].metadata, n=args.benign, random_state=0)
    realistic = benign_corpus(
        servers[0].metadata, n=args.benign, universes="realistic", random_state=0
    )
    start = time.monotonic()
    result = compare_servers(
        adult,
        servers,
        sensitive="fnlwgt",
        background=["age", "education", "occupation", "race"],
        corpus=corpus,
        max_targets=args.max_targets,
        padding_pairs=args.padding_pairs,
        random_state=0,
        progress=lambda text: print(f"  {text}", file=sys.stderr),
    )
    print(f"**Part 1: Adult, {len(adult)} people; sensitive fnlwgt**\n")
    print(result.summary().splitlines()[0])
    print("\n".join(result.summary().splitlines()[1:3]), "\n")
    answers = pd.concat(
        [run_corpus(server, realistic).assign(server=str(server.name)) for server in servers],
        ignore_index=True,
    )
    refused = ~answers["answered"]
    table = result.table.drop(columns=["refused_by"]).rename(
        columns={"benign": "stress", "benign_refused": "stress_refused"}
    )
    table["realistic"] = len(realistic)
    table["realistic_refused"] = table["server"].map(refused.groupby(answers["server"]).mean())
    print(markdown(table), "\n")
    print("Rules behind the benign refusals (stress corpus; realistic corpus):\n")
    for row in result.table.itertuples():
        mine = answers[(answers["server"] == row.server) & refused]
        rules = mine["refused_by"].str.split(", ").explode().value_counts()
        ours = ", ".join(f"{k} ({v})" for k, v in rules.items())
        print(f"- {row.server}: {row.refused_by or 'none'}; {ours or 'none'}")
    print("\n**Attacks that learned something (share of their targets)**\n")
    learned = result.attacks[(result.attacks["learned"] > 0) | (result.attacks["small_counts"] > 0)]
    print(markdown(learned.reset_index(drop=True)) if len(learned) else "none", "\n")
    print("**Benign refusals by analysis and corpus**\n")
    both = pd.concat(
        [result.benign.assign(corpus="stress"), answers.assign(corpus="realistic")],
        ignore_index=True,
    ).assign(refused=lambda t: ~t["answered"])
    by = both.groupby(["server", "corpus", "analysis"])["refused"].agg(["size", "mean"])
    print(markdown(by.reset_index().rename(columns={"size": "queries", "mean": "refused"})), "\n")
    for name, frame in (("stress", result.benign), ("realistic", answers)):
        ours = frame[(frame["server"] == servers[0].name) & ~frame["answered"]]
        print(f"**sdckit's refusals of the {name} corpus ({len(ours)}), with the reason given**\n")
        for row in ours.head(args.show).itertuples():
            print(f"- `{row.query}` — {row.refused_by}")
        print("\nThe reasons they gave (each once):\n")
        for reason in dict.fromkeys(ours["reason"]):
            print(f"- {reason}")
        print()
    print(f"(part 1: {time.monotonic() - start:.0f} s; load {os.getloadavg()[0]:.1f})\n")


def _levels(universe: str) -> tuple[str, list[str]]:
    """The variable and levels of a one-condition stress universe ``name in {a, "b c"}``."""
    name, listed = universe.split(" in {", 1)
    return name, [v.strip().strip('"') for v in listed.rstrip("}").split(", ")]


def corpus_part(args: argparse.Namespace) -> None:
    """The stress universes that list a level rarer than Gamma, classified (no analysis run)."""
    adult, metadata = adult_metadata()
    server = AnalysisServer(adult, metadata, {}, secret=SECRET)
    corpus = benign_corpus(metadata.to_dict(public=True), n=args.benign, random_state=0)
    kinds = {"everyone": 0, "categorical levels": 0, "cutpoint bins": 0}
    rows = []
    for query in corpus:
        universe = str(query.body["universe"])
        if universe == "ALL" or " bins " in universe:
            kinds["everyone" if universe == "ALL" else "cutpoint bins"] += 1
            continue
        kinds["categorical levels"] += 1
        name, levels = _levels(universe)
        counts = adult[name].astype(str).value_counts()
        rare = [level for level in levels if counts.get(level, 0) < GAMMA]
        if rare:
            every = len(levels) == len(metadata.variable(name).levels)
            rows.append(
                {
                    "variable": name,
                    "selects": "every level" if every else "some levels",
                    "levels": len(levels),
                    "rare": len(rare),
                    "refused_now": bool(server.universe_check(universe).refused),
                }
            )
    print(f"**The stress corpus ({len(corpus)} queries, seed 0)**\n")
    print("universes: " + ", ".join(f"{k} {v}" for k, v in kinds.items()))
    print(
        f"queries whose universe lists a categorical level of fewer than {GAMMA} people "
        f"(each refused by the level-by-level Gamma rule): {len(rows)}\n"
    )
    table = (
        pd.DataFrame(rows)
        .groupby(["variable", "selects"])
        .agg(
            queries=("rare", "size"),
            levels_listed=("levels", "median"),
            of=("variable", lambda v: len(metadata.variable(v.iloc[0]).levels)),
            rare_listed=("rare", "mean"),
            refused_now=("refused_now", "sum"),
        )
        .reset_index()
        .astype({"levels_listed": int})
    )
    table["rare_listed"] = table["rare_listed"].map(lambda v: f"{v:.1f}")
    print(markdown(table), "\n")
    print(f"refused now (every level as one class, declared groups): {table.refused_now.sum()}\n")


def _why(row: pd.Series, adult: pd.DataFrame, metadata: Metadata) -> str:
    """The cause of one refusal of sdckit's server, from the query and the file's counts."""
    universe, rule = row["universe"], row["refused_by"].split(", ")[0]
    named = [v for v in metadata.names if f"{v} in " in universe or f"{v} = " in universe]
    counts = {v: adult[v].astype(str).value_counts() for v in named
              if metadata.variable(v).is_categorical}  # fmt: skip
    listed = {v: [level for level in metadata.variable(v).levels if f'"{level}"' in universe]
              for v in counts}  # fmt: skip
    rare = [v for v, levels in listed.items() if any(counts[v].get(x, 0) < GAMMA for x in levels)]
    if rule == "universe_gamma":
        every = [
            v for v, levels in listed.items() if len(levels) == len(metadata.variable(v).levels)
        ]
        if every:
            return f"every level of {every[0]}: its rare levels and missing units under Gamma*"
        if rare:
            return f"lists a level of {rare[0]} of fewer than {GAMMA} people"
        return "a piece (a level and a range of bins) of fewer than Gamma people"
    if rule == "no_marginal_1_or_2":
        small = [v for v in counts if (counts[v] < 3).any()]
        return f"{small[0] if small else 'a variable'} has a level of 1-2 people in the file"
    if rule == "design_rank":
        formula = row["query"].split(" on ")[0]
        fixed = [v for v in named if v in formula.split("~", 1)[-1]]
        return (
            "a predictor the universe holds fixed"
            if fixed
            else "categories aliased in the universe"
        )
    return rule


def refusals_part(args: argparse.Namespace) -> None:
    """sdckit's refusals of both corpora, by rule, universe variable and cause."""
    adult, metadata = adult_metadata()
    server = LibraryServer(AnalysisServer(adult, metadata, {}, secret=SECRET))
    for name in ("realistic", "stress"):
        corpus = benign_corpus(server.metadata, n=args.benign, universes=name, random_state=0)
        answers = run_corpus(server, corpus)
        answers["universe"] = [str(q.body["universe"]) for q in corpus]
        refused = answers[~answers["answered"]].copy()
        refused["rule"] = refused["refused_by"].str.split(", ").str[0]
        refused["cause"] = [_why(r, adult, metadata) for _, r in refused.iterrows()]
        print(
            f"**sdckit's refusals of the {name} corpus: {len(refused)} of {len(corpus)} "
            f"({len(refused) / len(corpus):.1%})**\n"
        )
        table = refused.groupby(["rule", "cause"]).size().rename("queries").reset_index()
        print(markdown(table.sort_values("queries", ascending=False)), "\n")
        changed = answers["adjusted_by"].str.split(", ").explode()
        print(
            f"Answered by changing the query ({name}): rare categories left out of the universe "
            f"{int((changed == 'universe_gamma').sum())}, aliased terms dropped "
            f"{int((changed == 'design_rank').sum())}.\n"
        )


def universes_part(args: argparse.Namespace) -> None:
    """The universe stage alone (``universe_check``) on both corpora: refused, and left narrower."""
    adult, metadata = adult_metadata()
    server = AnalysisServer(adult, metadata, {}, secret=SECRET)
    public = LibraryServer(server).metadata
    rows = []
    for name in ("realistic", "stress"):
        corpus = benign_corpus(public, n=args.benign, universes=name, random_state=0)
        checks = [server.universe_check(query.body["universe"]) for query in corpus]
        refused = [c.rules[0] for c in checks if c.refused]
        rows.append(
            {
                "corpus": name,
                "queries": len(corpus),
                "refused": len(refused),
                "by universe_gamma": refused.count("universe_gamma"),
                "by no_marginal_1_or_2": refused.count("no_marginal_1_or_2"),
                "answered without rare categories": sum(
                    any(v.rule == "universe_gamma" and v.adjustments for v in c.verdicts)
                    for c in checks
                    if not c.refused
                ),
            }
        )
    print(markdown(pd.DataFrame(rows)), "\n")


def prediction_part() -> None:
    raw = load("EIA.csv")
    data = raw[raw["UTILITYID"] != 0][["STATE", "MONTH", "TOTSALES", "TOTREVENUE"]].copy()
    data["MONTH"] = data["MONTH"].map(lambda m: f"m{m:02d}")
    data = data.reset_index(drop=True)
    numeric = ["TOTSALES", "TOTREVENUE"]
    releases = {
        "unmasked": data.copy(),
        "RWN (k = 5, q = 1)": get_masker("rwn")(
            data, k=5, q=1.0, columns=numeric, random_state=0
        ).data,
        "MDAV (k = 3)": get_masker("microaggregation")(
            data, columns=numeric, group_size=3, random_state=0
        ).data,
    }
    print(
        f"**Part 2: EIA, {len(data)} records; keys TOTSALES, STATE, MONTH; sensitive TOTREVENUE**\n"
    )
    rows = []
    for name, masked in releases.items():
        result = prediction_attack(
            data, masked, sensitive="TOTREVENUE", keys=["TOTSALES", "STATE", "MONTH"],
            random_state=0,
        )  # fmt: skip
        print(f"- {name}: {result.summary().splitlines()[0]}")
        rows += [{"file": name, **r} for r in result.table.to_dict("records")]
    print()
    print(markdown(pd.DataFrame(rows)), "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benign", type=int, default=1000, help="benign queries")
    parser.add_argument("--max-targets", type=int, default=50, help="regression targets/subset")
    parser.add_argument("--padding-pairs", type=int, default=20, help="padded pairs per target")
    parser.add_argument("--show", type=int, default=20, help="sdckit refusals listed")
    parser.add_argument(
        "--part",
        choices=["all", "servers", "corpus", "universes", "refusals", "prediction"],
        default="all",
    )
    args = parser.parse_args()
    print(f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}\n")
    if args.part in ("all", "servers"):
        servers_part(args)
    if args.part in ("all", "corpus"):
        corpus_part(args)
    if args.part in ("all", "universes"):
        universes_part(args)
    if args.part in ("all", "refusals"):
        refusals_part(args)
    if args.part in ("all", "prediction"):
        prediction_part()


if __name__ == "__main__":
    main()
