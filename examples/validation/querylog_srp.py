"""Validation: semantic microaggregation of the AOL sample (Erola et al. 2011, §4.2).

On ``../shared/data/aol_query_log_sample.csv`` (128 users, 20,000 lines) with
the ODP239 taxonomy (``../shared/data/odp239_taxonomy.csv``, three levels) and
WordNet (Debian's wordnet-base, if installed), levels 1..3:

1. the share of queries classified down to each level (the paper's Figure 2);
2. SRP by level for k = 2..10, semantic partition vs a random partition
   (mean of 5) vs the worst case 1/k, with the first category and with the
   first five categories per term (the paper's Figure 3);
3. the time with five categories over the time with one (Figure 4), and
   the time against the number of queries (the first 32, 64, 128 users);
   CPU time of this process, so that other work on a shared machine moves
   the ratios less;
4. the linkage attack's re-identification probability against 1/k;
5. exact (one block) vs blocked mode (blocks of at most 32 users), ODP239.

    .venv/bin/python examples/validation/querylog_srp.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from sdckit.errors import SDCError
from sdckit.querylog import (
    LogEvaluation,
    ODP239Taxonomy,
    ProtectedLog,
    QueryLog,
    Taxonomy,
    WordNetTaxonomy,
    evaluate,
    protect,
    read_log,
)

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
LOG = DATA / "aol_query_log_sample.csv"
ODP = DATA / "odp239_taxonomy.csv"
LEVELS = 3
KS = range(2, 11)


def main() -> None:
    if not LOG.exists() or not ODP.exists():
        sys.exit(f"needs {LOG} and {ODP}")
    log = read_log(LOG)
    print(log.summary())
    print()
    taxonomies: list[tuple[str, Taxonomy]] = [("ODP239", ODP239Taxonomy(ODP))]
    try:
        taxonomies.append(("WordNet", WordNetTaxonomy()))
    except SDCError as exc:
        print(f"WordNet skipped: {exc}")
    for name, taxonomy in taxonomies:
        print(f"=== taxonomy {name}: {taxonomy.describe()}")
        print()
        run(log, taxonomy)
    odp = taxonomies[0][1]
    print("5. Exact (one block) vs blocked (blocks of at most 32 users), ODP239, k = 5")
    for label, block in (("exact", None), ("blocked", 32)):
        result = protect(log, k=5, taxonomy=odp, levels=LEVELS, block_size=block, random_state=5)
        report = evaluate(result, taxonomy=odp, levels=LEVELS, random_state=105)
        srp = ", ".join(f"L{lv} {v:.3f}" for lv, v in enumerate(report.srp, start=1))
        print(
            f"   {label}: {result.stats['n_blocks']} block(s), smallest group "
            f"{result.stats['smallest_group']}; SRP {srp}"
        )


def run(log: QueryLog, taxonomy: Taxonomy) -> None:
    """Sections 1-4 for one taxonomy."""
    rows: dict[tuple[int, int], tuple[ProtectedLog, LogEvaluation]] = {}
    seconds: dict[int, float] = {1: 0.0, 5: 0.0}
    for categories in (1, 5):
        for k in KS:
            start = time.process_time()
            result = protect(
                log,
                k=k,
                taxonomy=taxonomy,
                levels=LEVELS,
                categories_per_term=categories,
                block_size=None,
                random_state=k,
            )
            seconds[categories] += time.process_time() - start
            rows[(categories, k)] = (
                result,
                evaluate(
                    result,
                    taxonomy=taxonomy,
                    levels=LEVELS,
                    categories_per_term=categories,
                    random_repeats=5,
                    random_state=100 + k,
                ),
            )

    print("1. Share of queries classified down to each level (paper, Figure 2: ~57% at level 5)")
    for categories in (1, 5):
        shares = rows[(categories, 2)][0].classification.classified_share
        text = ", ".join(f"level {lv}: {s:.1%}" for lv, s in enumerate(shares, start=1))
        print(f"   {categories} categor{'y' if categories == 1 else 'ies'} per term: {text}")
    print()

    print("2. SRP by level: semantic / random partition / 1/k (paper, Figure 3)")
    header = "| k | 1/k | " + " | ".join(
        f"L{lv} sem. (1 cat) | L{lv} rand. (1 cat) | L{lv} sem. (5 cat) | L{lv} rand. (5 cat)"
        for lv in range(1, LEVELS + 1)
    )
    print(header + " |")
    print("|" + "---|" * (2 + 4 * LEVELS))
    for k in KS:
        cells = [str(k), f"{1 / k:.3f}"]
        for lv in range(LEVELS):
            for categories in (1, 5):
                report = rows[(categories, k)][1]
                cells += [f"{report.srp[lv]:.3f}", f"{report.srp_random[lv]:.3f}"]
        print("| " + " | ".join(cells) + " |")
    above = all(rows[(c, k)][1].srp[lv] > 1 / k for c in (1, 5) for k in KS for lv in range(LEVELS))
    print(f"   every semantic SRP above 1/k: {above}")
    for categories in (1, 5):
        wins = sum(
            rows[(categories, k)][1].srp[lv] > rows[(categories, k)][1].srp_random[lv]
            for k in KS
            for lv in range(LEVELS)
        )
        print(
            f"   {categories} categor{'y' if categories == 1 else 'ies'} per term: semantic above "
            f"random in {wins} of {len(KS) * LEVELS} (k, level) cells"
        )
    gain = rows[(5, 5)][1].srp[LEVELS - 1] - rows[(1, 5)][1].srp[LEVELS - 1]
    print(
        f"   k = 5, level {LEVELS}: five categories minus one category = {gain:+.3f} "
        "(paper, L = 5, k = 5: about +0.10)"
    )
    print()

    print("3. Time (paper, Figure 4: five categories about 3x one; linear in queries)")
    print(f"   protect, k = 2..10: five categories / one category = {seconds[5] / seconds[1]:.2f}")
    users = np.unique(log.line_users)
    times = []
    for n_users in (32, 64, 128):
        keep = np.isin(log.to_frame()[log.user_column], log.user_ids[users[:n_users]])
        part = log.to_frame()[keep]
        start = time.process_time()
        protect(part, k=5, taxonomy=taxonomy, levels=LEVELS, block_size=None, random_state=0)
        times.append((n_users, len(part), time.process_time() - start))
    base = times[0]
    for n_users, n_queries, took in times:
        print(
            f"   first {n_users} users ({n_queries:,} queries): time ratio to the first 32 = "
            f"{took / base[2]:.2f} (queries ratio {n_queries / base[1]:.2f})"
        )
    print()

    print("4. Linkage attack: re-identification probability vs 1/k")
    print("| k | 1/k | mean | max | linked to own group | ids replaced by numbers (mean) |")
    print("|---|---|---|---|---|---|")
    for k in KS:
        report = rows[(1, k)][1]
        link = report.linkage
        pseudo = report.linkage_pseudonymized
        assert pseudo is not None  # computed for logs of up to 5,000 users
        print(
            f"| {k} | {1 / k:.3f} | {link.reidentification_mean:.3f} | "
            f"{link.reidentification_max:.3f} | {link.group_link_rate:.1%} | "
            f"{pseudo.reidentification_mean:.3f} |"
        )
    print()


if __name__ == "__main__":
    main()
