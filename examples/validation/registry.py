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
    .venv/bin/python examples/validation/registry.py --by-paper     # docs/validation.md's index
    .venv/bin/python examples/validation/registry.py --out validation-output \
        --skip-blocks docs/validation.md docs/swaprate.md          # what no block runs

``make validate`` first rewrites every generated block of docs/validation.md
and docs/swaprate.md (``scripts/regenerate_docs.py``), then runs the entries
no block runs (``--skip-blocks``), so that no script runs twice. ``ITEMS``
lists every item of the papers (table, figure, example or claim) with its
verdict; ``--by-paper`` prints them with the counts per paper, the index at
the top of docs/validation.md.

Every script's standard output goes to ``OUT/<script>.txt``; ``OUT/index.md``
lists each run with its paper, command, exit code, measured wall time and,
for the fast subset, whether each expected text was found. Scripts that read
``../shared/data`` exit with a message when the data are absent; that is
recorded, not hidden.
"""

from __future__ import annotations

import argparse
import importlib.util
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
    Entry(
        "rwn_prgeng.py",
        'Matloff & Tendick (2015), "Example": regression coefficients',
        ("--reps", "5", "--n", "5000"),
    ),
    Entry(
        "rwn_bodyfat_section8.py",
        f"{PMT}, §8.1 and §8.3, Figures 4, 5, 8, 9 (bodyfat regression, distances, PCA)",
        ("--reps", "10"),
        runtime="about 6 min",
    ),
    Entry(
        "maskers_oganian.py",
        "Oganian (2011), §5 (moment ratios)",
        ("--replicates", "500"),
        runtime="about 2 min (123 s at load 5)",
    ),
    Entry(
        "maskers_oganian_linkage.py",
        "Oganian (2011), §5 (re-identification by record linkage, about 0.3%)",
        ("--replicates", "20"),
        # The first replicate (seeds [0, 1] and 0): two attributes known, plain scheme.
        expect=("| normal, plain (eqs. 5-9) | x1, x2 | 0.66% |",),
        fast_args=("--replicates", "1"),
    ),
    Entry(
        "noise_business.py",
        "Oganian (2011) on the CASC business files (issue 31)",
        runtime="about 1.5 min (80 s at load 7)",
    ),
    Entry(
        "noise_business.py",
        "Oganian (2011) on CASC with two constraint chains, 150 other seeds (issue 31)",
        (
            "--seeds",
            "150",
            "--seed-offset",
            "1000",
            "--only",
            "CASCrefmicrodata:multiplicative, constraints",
        ),
    ),
    Entry(
        "maskers_bodyfat.py",
        f"{PMT}: RWN vs rank swapping vs MDAV on bodyfat",
        ("--replications", "5"),
    ),
    Entry(
        "assess_bodyfat.py",
        f"{PMT}, §8.3 (PC1 share, Cook's distance over eps)",
        ("--reps", "10", "--seed", "2022"),
    ),
    Entry("assess_prediction.py", f"{PMT}, §8.4 (prediction check)", ("--dataset", "pima")),
    Entry(
        "assess_prediction.py",
        f"{PMT}, §8.4 (prediction check on pef, 5 of the paper's 25 replications)",
        ("--dataset", "pef", "--holdout", "1000", "--reps", "5"),
    ),
    Entry(
        "assess_prediction.py",
        f"{PMT}, §8.4 (pef with forests that beat the constant prediction: leaves of 20)",
        ("--dataset", "pef", "--holdout", "1000", "--reps", "5", "--min-leaf", "20"),
    ),
    Entry("distributed_rwn.py", f"{PMT}, §11.3 (partitioned RWN)"),
    Entry(
        "distributed_rwn.py",
        f"{PMT}, §11.3 (partitioned RWN at 10^6 records, inverted-file neighbour search)",
        ("--records", "1000000", "--neighbors", "ivf"),
        runtime="about 44 min on a loaded machine (681 CPU s)",
    ),
    Entry("rwn_categorical.py", "RWN on mixed files (categorical columns masked)"),
    Entry(
        "rwn_theorem.py",
        f"{PMT}, §6 (the theorem: the masked correlation as neighbourhoods shrink)",
        runtime="about 10 s",
        fast_args=(),
        expect=("| k = 2 | 20,000 | 0.8041 | 0.0041 |",),
    ),
    Entry(
        "rwn_large_files.py",
        f"{PMT}, §§10-11: utility and risk of approximate and sampled neighbourhoods",
        runtime="about 15 min of CPU (2016 s at load 8-16)",
    ),
    Entry(
        "rwn_approximate_adult.py",
        f"{PMT}, §§10-11: approximate against exact RWN on Adult, estimated against true recall",
    ),
    Entry("server_differencing.py", f"{LUCERO}, §4, eq. (5) and bounds (6)"),
    Entry(
        "server_perturbation.py",
        f"{LUCERO}, §4 with the padding defence",
        runtime="about 16 min at load 9 (937 s)",
    ),
    Entry(
        "server_utility.py",
        f"{LUCERO}: cost of the padding defence",
        runtime="about 3 min at load 9 (193 s)",
    ),
    Entry(
        "server_utility.py",
        f"{LUCERO}: cost of the padding defence with the wider factor range rejected",
        ("--quick", "--weight-range", "0.10", "0.30"),
    ),
    Entry("swaprate_gaussian.py", f"{KIFER}, §5.1 (Gaussian data)", ("--runs", "10")),
    Entry(
        "swaprate_gaussian.py",
        f"{KIFER}, §5.1, the point the text states (error/N about 0.0082), 100 runs",
        ("--paper-point", "100"),
    ),
    Entry("swaprate_adult.py", f"{KIFER}, §5.2-5.3 (Adult)", ("--runs", "5")),
    Entry(
        "swaprate_adult.py",
        f"{KIFER}, §5.4, Figures 8, 11 and 12 (Adult with its missing values)",
        ("--with-missing", "--runs", "5"),
        runtime="about 40 min on a loaded machine",
    ),
    Entry("swaprate_figure5.py", f"{KIFER}, Figure 5 (semi-synthetic Adult)", ("--runs", "50")),
    Entry(
        "swaprate_figure5.py",
        f"{KIFER}, Figure 5 and §5.1 with the verdict, 10 runs per point (the block)",
        ("--runs", "10", "--settings", "semi-synthetic Adult, rL;gaussian (Section 5.1)"),
        runtime="about 7.5 min at load 14-19 (448 s)",
    ),
    Entry(
        "swaprate_figure5.py",
        f"{KIFER}, Figure 5 on six attributes with the verdict, 2 runs per point (the block)",
        ("--runs", "2", "--settings", "semi-synthetic Adult, six"),
        runtime="about 11 min at load 16 (658 s)",
    ),
    Entry("swaprate_lemma44.py", f"{KIFER}, Lemma 4.4"),
    Entry("swaprate_identifiability.py", f"{KIFER}, §4.1 (identifiability, our addition)"),
    Entry("swaprate_calibration.py", "swap-rate verdict calibration (issue 30)", ("--runs", "270")),
    Entry(
        "swaprate_calibration.py",
        "swap-rate verdict calibration on real Adult, one run per cell of the quicker sets",
        (
            "--runs",
            "35",
            "--sets",
            "sex, race;education, race;age, education, sex;rL (3);rR (4);rL + rR (7);"
            "consensus rL | rR",
        ),
        runtime="about 4 min at load 14-19 (223 s)",
    ),
    Entry("swaprate_docs_examples.py", "the examples of docs/swaprate.md"),
    Entry(
        "swaprate_docs_examples.py",
        "docs/swaprate.md's example 1 over 20 seeds (coverage of its interval)",
        ("--seeds", "20"),
    ),
    Entry("tables_ptables.py", f"{GH}, appendix Table 1 beside sdckit's maximum-entropy design"),
    Entry(
        "tables_ptables.py",
        f"{GH}, appendix Table 1 (perturbation tables by the paper's own procedure)",
        ("--V", "2.004", "--objective", "paper"),
        runtime="3 s CPU",
    ),
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
    Entry(
        "querylog_zealous.py",
        "Götz et al. (2012): the attack on ZEALOUS over 20 seeds of its random stream",
        ("--zealous-seeds", "20"),
        runtime="about 2 min at load 12-14 (132 s)",
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
    Entry(
        "attacks_peers.py",
        f"{LUCERO}: the servers part alone",
        ("--part", "servers", "--show", "8"),
        runtime="about 40 min",
    ),
    Entry("attacks_peers.py", "the stress corpus's rare levels", ("--part", "corpus")),
    Entry("attacks_peers.py", "sdckit's refusals by cause", ("--part", "refusals")),
    Entry(
        "attacks_peers.py",
        "Bleninger, Drechsler & Ronning (2011): prediction from the keys of EIA releases",
        ("--part", "prediction"),
    ),
    Entry(
        "attacks_peers.py",
        "universes answered without their rare categories",
        ("--part", "universes"),
    ),
    Entry(
        "attacks_differencing.py", f"{LUCERO}: the residual of a variable", ("--part", "residual")
    ),
    Entry(
        "attacks_scoring.py",
        f"{LUCERO}, §4: the differencing battery scored by what the intruder can recognise",
        args=("--runs", "200"),
        runtime="about 3.5 min on a loaded machine",
        fast_args=("--runs", "3"),
        expect=("runs in which an attack learned a value (agreeing estimates): 0",),
    ),
)


VERDICTS = ("reproduced", "partly", "differs", "not reproducible", "own check")


@dataclass(frozen=True)
class Item:
    """One item of a paper (table, figure, example or claim) and what became of it here.

    ``section`` is the text of a heading of docs/validation.md (or ``""`` when no
    section covers the item); ``verdict`` is one of :data:`VERDICTS`; ``why``
    says in words what agrees or differs (the figures are in the section).
    """

    paper: str
    item: str
    section: str
    verdict: str
    why: str = ""


PAPERS: dict[str, str] = {
    LUCERO: "the Microdata Analysis System",
    GH: "small cells in census tables",
    KIFER: "estimating the swapping rate",
    "Oganian (2011)": "multiplicative noise with constraints",
    PMT: "RWN",
    "Matloff & Tendick (2015)": "the employee-database example",
    "Bleninger, Drechsler & Ronning (2011)": "regression attacks",
    "Erola et al. (2011)": "query logs",
    "Götz et al. (2012)": "publishing search logs",
    "Domingo-Ferrer (2011)": "coprivacy",
}

ITEMS: tuple[Item, ...] = (
    Item(
        LUCERO,
        "§4, eq. (5) and bounds (6): the differencing risk of Drop q",
        "Server: differencing risk of Drop q",
        "reproduced",
        "eq. (5) against simulation and against attacks on sdckit's Drop q, \"to two decimal "
        'places" as the paper says',
    ),
    Item(
        LUCERO,
        "§4, the differencing attack, Drop q against the added perturbation",
        "Section 4 with Drop q alone, the perturbation alone, and both",
        "reproduced",
        "for Drop q alone; the perturbation columns are sdckit's own defence",
    ),
    Item(
        LUCERO,
        "§3.1, what the rules cost an honest analyst",
        "What the defence costs an honest analyst",
        "own check",
    ),
    Item(
        LUCERO,
        "§3-4, differencing, padding and tables on Adult",
        "Attacks: differencing, padding and protected tables on Adult",
        "own check",
    ),
    Item(
        GH,
        "Appendix Table 1, transition matrices D = 3, 4, 5",
        "Transition matrices for D = 3, 4, 5",
        "reproduced",
        "with the paper's own procedure (`objective=\"paper\"`), row by row beside the paper's; "
        'the largest difference per row in "Tables, second round", part 2; sdckit\'s default '
        "(maximum entropy) differs from row 3 on by design",
    ),
    Item(
        GH,
        "Example 1, Table 3 rows for counts 1-3 (invariant matrix)",
        "Example 1: invariant matrix",
        "reproduced",
        "to every printed digit; Table 2 cannot be recomputed (the initial matrix is not printed)",
    ),
    Item(
        GH,
        "Table 5, SAFE against cell key noise",
        "Table 5 style on adult, re-run with the corrected maximum-entropy design",
        "differs",
        "the paper's census table is not public; on Adult's much smaller table SAFE does as well "
        "as noise",
    ),
    Item(
        GH,
        "§5, tables as an intruder sees them",
        "Attacks: differencing, padding and protected tables on Adult",
        "own check",
    ),
    Item(GH, "Table 4", "", "not reproducible", "not attempted yet (issue 24)"),
    Item(
        KIFER,
        "§5.1, Figures 2-4 and 6 (Gaussian data)",
        "Section 5.1: Gaussian data",
        "reproduced",
        "the pattern, and the one number the text states (error/N about 0.0082 at N = 10,000, "
        "alpha/N = 0.1): our 100-run mean is within two standard errors of it once the "
        "paper's own mean of 10 runs is given its sampling error",
    ),
    Item(
        KIFER,
        "§5.2, the imbalance (Figures 7-9)",
        "Section 5.2: the imbalance diagnostic",
        "reproduced",
        'about 0.15 on Adult, "extremely low" semi-synthetic',
    ),
    Item(
        KIFER,
        "§5.3, Figure 10, Consensus against Algorithm 1",
        "Section 5.3: Algorithm 1 on each half vs Consensus",
        "reproduced",
        "in kind (the figure prints no numbers); Consensus underestimates by about a quarter, "
        "which Lemma 4.4 explains",
    ),
    Item(
        KIFER,
        "Figure 5 (semi-synthetic Adult), with sdckit's verdict",
        "Kifer (2015), Figure 5",
        "reproduced",
        "the coverage of sdckit's 95% interval is an own check",
    ),
    Item(KIFER, "Lemma 4.4 (printed garbled, derived again)", "Lemma 4.4", "own check"),
    Item(
        KIFER,
        "the verdict on real Adult with a known truth",
        "Real Adult: verdict codes against a known truth",
        "own check",
    ),
    Item(
        KIFER,
        "§5.4, Figures 8, 11 and 12 (Adult with missing values)",
        "Section 5.4: Figures 8, 11 and 12",
        "partly",
        "the imbalance (about 0.15) and the re-swap detection hold; Consensus's error does not "
        "fade at larger swap counts as the paper says",
    ),
    Item(
        KIFER,
        "identifiability of the swap count",
        "Swap rate estimation: identifiability of the swap count",
        "own check",
        "sdckit's test, not the paper's",
    ),
    Item(
        "Oganian (2011)",
        "§5, moment ratios of the noise schemes",
        "Moment ratios of the noise schemes",
        "partly",
        "reproduced for normal data; wider on lognormal and two-zone data (outlier-driven; the "
        "paper does not say which summary its ranges are)",
    ),
    Item(
        "Oganian (2011)",
        "§3, higher moments (eqs. 24-26)",
        "Maskers: Oganian (2011) §3",
        "differs",
        "in size, not in kind: our inflation is larger; the paper does not define the moments it "
        "averaged",
    ),
    Item(
        "Oganian (2011)",
        "§5, re-identification by record linkage (about 0.3% in both schemes)",
        "Oganian (2011) §5, re-identification",
        "partly",
        "the same order of magnitude and no difference between the schemes when the intruder "
        "knows one or two of the three attributes; several times more when he knows all three "
        "(the paper says neither which attributes nor which data set)",
    ),
    Item(
        "Oganian (2011)",
        "§5 on business files",
        "Noise on the CASC business files",
        "own check",
    ),
    Item(
        PMT,
        "§8.3, PC1 share and Cook's distance on bodyfat",
        "Bodyfat: PC1 share and the largest Cook's distance",
        "reproduced",
        "the 11 records the paper drops are exactly ours",
    ),
    Item(
        PMT,
        "§8.4, the prediction check",
        "Prediction check (Section 8.4)",
        "reproduced",
        "on Pima; on pef the paper's forest (and ours, fully grown) is no better than always "
        "answering the commonest occupation, so forests with leaves of 20 are compared",
    ),
    Item(
        PMT,
        "§8, Figures 4, 5, 8, 9",
        "RWN on bodyfat: Perry, Matloff & Tendick (2022), §8.1 and §8.3",
        "reproduced",
        "Figure 4 more strongly than the paper says; Figures 8-9 print directions only",
    ),
    Item(
        PMT,
        "§8.1, standard errors valid as q → 0",
        "RWN on bodyfat: Perry, Matloff & Tendick (2022), §8.1 and §8.3",
        "reproduced",
        'the ratios approach 1 as q falls (subsection "§8.1")',
    ),
    Item(PMT, "§6, the theorem", "The Section 6 theorem", "reproduced"),
    Item(
        PMT,
        "RWN against rank swapping and MDAV (the paper's sdcMicro comparison)",
        "RWN, rank swapping and MDAV on bodyfat",
        "own check",
        "the paper prints no figures for it",
    ),
    Item(PMT, "§4.1, categorical columns", "RWN: categorical columns really masked", "own check"),
    Item(
        PMT,
        "§10-11, large files (Methods 1-2)",
        "RWN: utility and risk of the neighbourhood strategies for large files",
        "own check",
    ),
    Item(
        PMT,
        "§11.3, partitions (Method 3)",
        "Distributed RWN",
        "own check",
        "the paper prints no figure",
    ),
    Item(
        "Matloff & Tendick (2015)",
        '"Example": the regression of wage income',
        "The regression of wage income",
        "partly",
        "the pattern holds; coefficients differ (our own samples: R's random stream cannot be "
        "reproduced)",
    ),
    Item(
        "Matloff & Tendick (2015)",
        '"Example": the female PhD under 31',
        'RWN: Matloff & Tendick (2015), "Example"',
        "partly",
        "in kind; the paper's single sample per eps against 20 here",
    ),
    Item(
        "Bleninger, Drechsler & Ronning (2011)",
        "Tables 1-3, regression attacks",
        "Attacks: regression attacks on EIA",
        "not reproducible",
        "the IAB panel is confidential; on the public EIA file the pattern is reproduced row by "
        "row, and exact size is a stronger key there",
    ),
    Item(
        "Erola et al. (2011)",
        "Figure 2, queries classified by level",
        "1. Queries classified down to each level",
        "reproduced",
        "in pattern (coverage falls with depth); the ODP web service no longer exists, so "
        "offline WordNet classifies more queries than the paper's ODP",
    ),
    Item(
        "Erola et al. (2011)",
        "Figure 3, SRP semantic against random",
        "2. SRP by level",
        "partly",
        'the semantic gain holds for small k only; "above 1/k" does not hold for Algorithm 5 as '
        "printed",
    ),
    Item(
        "Erola et al. (2011)",
        "Figure 4, time",
        "3. Time",
        "partly",
        "linear in the queries; five categories do not cost three times one",
    ),
    Item(
        "Erola et al. (2011)", "k-anonymity at user level", "4. Linkage attack vs 1/k", "reproduced"
    ),
    Item(
        "Erola et al. (2011)", "exact against blocked mode", "5. Exact vs blocked mode", "own check"
    ),
    Item(
        "Götz et al. (2012)",
        "planted users (sybils) break a k-anonymous log; ZEALOUS resists them",
        "Search logs: planted queries and ZEALOUS",
        "reproduced",
        "qualitatively, on the AOL sample: the sybils join the target's group and reveal her "
        "hidden queries; against ZEALOUS the attacker does about as well as a coin",
    ),
    Item(
        "Götz et al. (2012)",
        "ZEALOUS's utility on the full AOL log",
        "Search logs: planted queries and ZEALOUS",
        "not reproducible",
        "the full log of 650,000 users is not available; the 128-user sample releases nothing, "
        "and synthetic logs give an upper bound only",
    ),
    Item(
        "Domingo-Ferrer (2011)",
        "§5, Example 2: the payoffs, the dominant strategy and the equilibria",
        "Example 2 (§5)",
        "reproduced",
        "with one correction: under the paper's own weak definition (H, P) and (P, H) are pure "
        "Nash equilibria too, where the paper says (H, H) is the only one",
    ),
    Item(
        "Domingo-Ferrer (2011)",
        "the N-player collapse",
        "N-player disclosure game",
        "reproduced",
    ),
    Item(
        "Domingo-Ferrer (2011)",
        "§4, P2P keyword search",
        "P2P anonymous keyword search on the AOL users",
        "own check",
        "the paper makes no quantitative claim",
    ),
    Item(
        "Domingo-Ferrer (2011)",
        "§5, tit-for-tat and reputation",
        "Tit-for-tat and reputation",
        "own check",
        "the paper names the protocols only",
    ),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def by_paper() -> str:
    """The index of docs/validation.md: every paper's items with their verdicts, then the counts."""
    lines: list[str] = []
    counts: dict[str, dict[str, int]] = {}
    for paper, topic in PAPERS.items():
        items = [item for item in ITEMS if item.paper == paper]
        count = {kind: sum(item.verdict == kind for item in items) for kind in VERDICTS}
        counts[paper] = count
        tally = ", ".join(f"{n} {kind}" for kind, n in count.items() if n)
        lines += [f"**{paper}, {topic}**: {len(items)} entries ({tally}).", ""]
        lines += ["| paper's item | section | verdict |", "|---|---|---|"]
        for item in items:
            verdict = f"**{item.verdict}**" + (f": {item.why}" if item.why else "")
            section = f'"{item.section}"' if item.section else "-"
            lines.append(f"| {_cell(item.item)} | {_cell(section)} | {_cell(verdict)} |")
        lines.append("")
    lines += ["Entries per paper:", ""]
    lines += ["| paper | entries | " + " | ".join(VERDICTS) + " |"]
    lines += ["|---|" + "---:|" * (len(VERDICTS) + 1)]
    for paper, count in counts.items():
        values = " | ".join(str(count[kind]) for kind in VERDICTS)
        lines.append(f"| {paper} | {sum(count.values())} | {values} |")
    totals = " | ".join(str(sum(c[kind] for c in counts.values())) for kind in VERDICTS)
    lines.append(f"| all | {len(ITEMS)} | {totals} |")
    return "\n".join(lines)


def command(entry: Entry, *, fast: bool = False) -> list[str]:
    """The entry's command line relative to the repository root, script first."""
    args = entry.fast_args if fast and entry.fast_args is not None else entry.args
    return [f"examples/validation/{entry.script}", *args]


def block_commands(docs: list[Path]) -> dict[str, Path]:
    """The command of every generated block of ``docs`` (scripts/regenerate_docs.py), and its doc."""
    spec = importlib.util.spec_from_file_location(
        "regenerate_docs", ROOT / "scripts" / "regenerate_docs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("regenerate_docs", module)
    spec.loader.exec_module(module)
    return {" ".join(block.argv): doc for doc in docs for block in module.blocks(doc)}


def run(entry: Entry, out: Path, *, fast: bool) -> dict[str, object]:
    """Run one entry, write its output, and return what index.md shows."""
    args = entry.fast_args if fast and entry.fast_args is not None else entry.args
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, *command(entry, fast=fast)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - start
    name = Path(entry.script).stem + ("-" + "-".join(a.strip("-") for a in args) if args else "")
    (out / f"{name}.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    missing = [text for text in entry.expect if text not in done.stdout] if fast else []
    return {
        "entry": entry,
        "command": " ".join([".venv/bin/python", *command(entry, fast=fast)]),
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
    parser.add_argument(
        "--by-paper", action="store_true", help="print the index by paper with its counts and exit"
    )
    parser.add_argument(
        "--skip-blocks",
        type=Path,
        nargs="+",
        default=[],
        metavar="DOC",
        help="skip the entries a generated block of DOC runs (scripts/regenerate_docs.py DOC)",
    )
    args = parser.parse_args()
    if args.by_paper:
        print(by_paper())
        return 0
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
    skipped = 0
    in_blocks = block_commands(args.skip_blocks) if args.skip_blocks else {}
    for entry in chosen:
        doc = in_blocks.get(" ".join(command(entry, fast=args.fast)))
        if doc is not None:
            lines.append(
                f"| {entry.script} | {entry.paper} | `{' '.join(command(entry, fast=args.fast))}` "
                f"| - | - | written into {doc} by its generated block |"
            )
            print(lines[-1], flush=True)
            skipped += 1
            continue
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
    ran = len(chosen) - skipped
    print(
        f"\n{ran - failed} of {ran} runs passed; outputs in {args.out}"
        + (f"; {skipped} entries left to the generated blocks" if skipped else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
