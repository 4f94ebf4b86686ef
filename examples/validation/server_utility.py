"""What the padding defence costs an honest analyst: errors and refusals with it on and off.

A few hundred realistic queries (cross-tabulations with cell means, OLS and
logistic regressions on universes of one or two categories, or a range of
cutpoint bins) on the demo data (5,000 generated people) and on the UCI
Adult data (``../shared/data/adult.csv``, 48,842 people, served as a
dataset), each answered by three servers over the same data and secret:

* "off": the rules as Lucero et al. (2011) state them (``rules="mas2011"``)
  and no perturbation - the server before the defence;
* "perturbation": the same rules plus the perturbation (the defence alone);
* "default": the oracle-free rule set plus the perturbation (``sdckit serve``).

Every answer is compared with the exact statistic of the whole universe
(no Drop q, no perturbation, computed by the same engine): the relative
error of counts (cells of at least 10 units) and of cell means, and the
error of regression coefficients in standard errors. Drop q alone causes
the "off" errors.

Run:  .venv/bin/python examples/validation/server_utility.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.server import AnalysisServer, Metadata, Refusal, analyses, generate_secret
from sdckit.server.config import load_config
from sdckit.server.demo import demo_metadata, make_demo_data
from sdckit.server.formula import as_formula
from sdckit.server.universe import as_universe, evaluate_universe

ADULT = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "adult.csv"
CONFIGS = {
    "off": {"rules": "mas2011", "perturbation": False},
    "perturbation": {"rules": "mas2011", "perturbation": True},
    "default": {},
}


def demo():
    data = make_demo_data(5000, random_state=0)
    spec = {
        "categorical": ["sex", "region", "education"],
        "continuous": ["age", "hours"],
        "response": ["wage", "log(wage)", "hours"],
        "mean": ["wage", "hours"],
        "binary": ("employed", ["age", "hours", "sex", "education"]),
    }
    return "demo (5,000)", data, demo_metadata(data), spec


def adult():
    data = pd.read_csv(ADULT)
    data = data.drop(columns=["fnlwgt", "education"])
    data["income"] = data["income"].str.rstrip(".")
    data.index.name = "person"
    categorical = [c for c in data.columns if data[c].dtype == object]
    metadata = Metadata.infer(data, categorical=categorical, beta=100)
    spec = {
        "categorical": ["sex", "race", "workclass", "marital_status", "relationship"],
        "continuous": ["age", "education_num", "hours_per_week"],
        "response": ["hours_per_week", "sqrt(hours_per_week)", "education_num"],
        "mean": ["hours_per_week", "age", "capital_gain"],
        "binary": ("income", ["age", "education_num", "hours_per_week", "sex"]),
    }
    return "adult (48,842)", data, metadata, spec


def universes(data, metadata, spec, rng, count):
    out = ["ALL"]
    cats = spec["categorical"]
    while len(out) < count:
        var = cats[rng.integers(len(cats))]
        levels = metadata.variable(var).levels
        chosen = rng.choice(
            levels, size=int(rng.integers(1, min(3, len(levels)) + 1)), replace=False
        )
        text = f"{var} in {{{', '.join(repr(str(v)).strip(chr(39)) for v in chosen)}}}"
        if any(" " in str(v) or "-" in str(v) for v in chosen):
            text = f"{var} in {{{', '.join(chr(34) + str(v) + chr(34) for v in chosen)}}}"
        if rng.random() < 0.5:
            cont = spec["continuous"][rng.integers(len(spec["continuous"]))]
            n_bins = metadata.variable(cont).binning.n_bins
            lo = int(rng.integers(0, max(n_bins - 2, 1)))
            hi = int(rng.integers(lo + 1, n_bins))
            text += f" AND {cont} in bins {', '.join(str(b) for b in range(lo, hi + 1))}"
        out.append(text)
    return out


def queries(metadata, spec, rng, universe_list, count):
    out = []
    for i in range(count):
        universe = universe_list[i % len(universe_list)]
        kind = ("crosstab", "ols", "logit")[i % 3]
        cats = spec["categorical"]
        if kind == "crosstab":
            rows, cols = rng.choice(cats, 2, replace=False)
            mean = spec["mean"][rng.integers(len(spec["mean"]))]
            out.append(("crosstab", universe, (str(rows), str(cols), mean)))
        elif kind == "ols":
            response = spec["response"][rng.integers(len(spec["response"]))]
            base = response.split("(")[-1].rstrip(")")
            pool = [v for v in spec["continuous"] + cats if v != base]
            terms = rng.choice(pool, int(rng.integers(2, 4)), replace=False)
            out.append(("ols", universe, f"{response} ~ {' + '.join(map(str, terms))}"))
        else:
            response, pool = spec["binary"]
            terms = rng.choice(pool, int(rng.integers(2, 4)), replace=False)
            out.append(("logit", universe, f"{response} ~ {' + '.join(map(str, terms))}"))
    return out


def truth(server, kind, universe, args):
    """The engine's exact answer on the whole universe (no Drop q, no perturbation)."""
    metadata = server.metadata
    parsed = as_universe(universe, metadata)
    members = evaluate_universe(parsed, metadata, server._coded.codes).members
    positions = np.flatnonzero(members)
    config = load_config(CONFIGS["off"])
    if kind == "crosstab":
        rows, cols, mean = args
        return analyses.crosstab(
            server._coded, positions, universe, rows, cols, config, mean_of=mean
        ).result
    formula = as_formula(args)
    return analyses.regression(server._coded, positions, universe, formula, kind, config).result


def ask(server, kind, universe, args):
    if kind == "crosstab":
        rows, cols, mean = args
        return server.crosstab(universe, rows, cols, mean_of=mean)
    return server.regress(universe, args, family=kind)


def _cells(table) -> dict[tuple[str, str], tuple[float, float | None]]:
    """``{(row label, column label): (count, mean)}`` of a cross-tabulation."""
    means = table.means or [[None] * len(table.col_labels)] * len(table.row_labels)
    return {
        (r, c): (float(count), mean)
        for r, counts, row_means in zip(table.row_labels, table.counts, means, strict=True)
        for c, count, mean in zip(table.col_labels, counts, row_means, strict=True)
    }


def evaluate(name, data, metadata, spec, n_queries, seed):
    rng = np.random.default_rng(seed)
    secret = generate_secret()
    servers = {c: AnalysisServer(data, metadata, cfg, secret=secret) for c, cfg in CONFIGS.items()}
    qs = queries(metadata, spec, rng, universes(data, metadata, spec, rng, 40), n_queries)
    stats = {c: {"refused": 0, "counts": [], "means": [], "coef": [], "n": 0} for c in CONFIGS}
    for kind, universe, args in qs:
        exact = truth(servers["off"], kind, universe, args)
        for c, server in servers.items():
            answer = ask(server, kind, universe, args)
            stats[c]["n"] += 1
            if isinstance(answer, Refusal):
                stats[c]["refused"] += 1
                continue
            if exact is None:
                continue
            if kind == "crosstab":
                # Cells matched by their labels: a server may answer without a universe's
                # rare categories (docs/server.md), so the tables need not have one shape.
                true_cells, got_cells = _cells(exact), _cells(answer)
                for cell, (count, mean) in got_cells.items():
                    if cell not in true_cells:
                        continue
                    true_count, true_mean = true_cells[cell]
                    if true_count >= 10:
                        stats[c]["counts"].append(abs(count - true_count) / true_count)
                    if true_mean is not None and mean is not None and true_mean != 0:
                        stats[c]["means"].append(abs(mean - true_mean) / abs(true_mean))
            else:
                ref = {co.term: co for co in exact.coefficients}
                for co in answer.coefficients:
                    t = ref.get(co.term)
                    if t is not None and t.std_error and np.isfinite(t.std_error):
                        stats[c]["coef"].append(abs(co.estimate - t.estimate) / t.std_error)
    print(f"\n{name}: {n_queries} queries (a third each crosstab with means, OLS, logit)\n")
    print(
        "| server | refused | counts: median rel. error | p90 | means: median rel. error "
        "| p90 | coefficients: median error / SE | p90 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for c, s in stats.items():

        def q(values, p):
            return f"{np.percentile(values, p):.4f}" if values else "-"

        print(
            f"| {c} | {s['refused'] / s['n']:.1%} | {q(s['counts'], 50)} | {q(s['counts'], 90)} "
            f"| {q(s['means'], 50)} | {q(s['means'], 90)} | {q(s['coef'], 50)} "
            f"| {q(s['coef'], 90)} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 queries per dataset")
    parser.add_argument(
        "--weight-range",
        nargs=2,
        type=float,
        metavar=("A", "B"),
        help="unit factors and weights 1 +/- U[A, B] (default: the server's)",
    )
    args = parser.parse_args()
    if args.weight_range:
        for name in ("perturbation", "default"):
            CONFIGS[name]["perturbation_weight_range"] = tuple(args.weight_range)
    n = 60 if args.quick else 300
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    evaluate(*demo(), n, seed=1)
    if ADULT.exists():
        evaluate(*adult(), n, seed=2)
    else:
        print(f"\nskipping Adult: {ADULT} is absent")


if __name__ == "__main__":
    main()
