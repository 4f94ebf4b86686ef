"""Perry, Matloff & Tendick (2022), §8 on bodyfat: Figures 4, 5, 8, 9 and §8.1's q -> 0.

On the cleaned bodyfat data (assess_bodyfat.py's cleaning), RWN at k = 5,
q = 1 and eps from 0 to 1.2, ``--reps`` releases per eps:

* Figures 4-5: the OLS of siri on BMI, neck, chest, abdomen and hip on each
  release; coefficients and standard errors against eps (the paper: "non-trivial
  variation in the estimated coefficients on the intercept, BMI, and neck",
  "numerous cases" of a sign different from the original's; standard errors
  "relatively stable" except the intercept's at larger eps);
* Figure 8: the minimum Euclidean distance (standardised variables) from each
  original record to the records of the release, against each record's
  distance to its nearest other record in the original;
* Figure 9: the cumulative share of variance of the first five principal
  components (scaled PCA);
* §8.1: "the standard errors are asymptotically valid, as q -> 0": at eps =
  0.5, the reported standard errors against q, beside the original's.

Figures are written to docs/img/rwn_bodyfat_coefficients.png and
docs/img/rwn_bodyfat_se.png.

    .venv/bin/python examples/validation/rwn_bodyfat_section8.py [--reps 10] [--no-figures]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
from assess_bodyfat import PREDICTORS, load_bodyfat
from scipy.spatial import cKDTree

from sdckit import rwn

IMG = Path(__file__).resolve().parents[2] / "docs" / "img"
TERMS = ["const", *PREDICTORS]
EPS = [round(0.1 * i, 1) for i in range(13)]
QS = [1.0, 0.5, 0.25, 0.1, 0.05, 0.0]


def ols(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    fit = sm.OLS(frame["siri"], sm.add_constant(frame[PREDICTORS])).fit()
    return fit.params[TERMS], fit.bse[TERMS]


def pc5_share(frame: pd.DataFrame) -> float:
    z = (frame - frame.mean()) / frame.std()
    values = np.linalg.eigvalsh(np.cov(z.to_numpy(), rowvar=False))[::-1]
    return float(values[:5].sum() / values.sum())


def min_distances(original: pd.DataFrame, masked: pd.DataFrame) -> np.ndarray:
    sd = original.std()
    a, b = (original / sd).to_numpy(), (masked / sd).to_numpy()
    return cKDTree(b).query(a, k=1)[0]


def _figure(table: pd.DataFrame, base: pd.Series, column: str, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(11, 6), sharex=True)
    for ax, term in zip(axes.ravel(), TERMS, strict=True):
        values = table[table["term"] == term]
        ax.scatter(values["eps"], values[column], s=8, alpha=0.5)
        ax.plot(values.groupby("eps")[column].mean(), color="black", lw=1)
        ax.axhline(base[term], color="tab:blue", lw=1.5)
        ax.set_title(term)
    for ax in axes[1]:
        ax.set_xlabel("eps (k = 5, q = 1)")
    fig.suptitle(title + " (blue: original data; dots: releases; line: mean)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2022)
    parser.add_argument("--no-figures", action="store_true")
    args = parser.parse_args()
    data, _ = load_bodyfat()
    rng = np.random.default_rng(args.seed)
    coef0, se0 = ols(data)
    nearest = cKDTree((data / data.std()).to_numpy()).query((data / data.std()).to_numpy(), k=2)
    rows, summary = [], []
    for eps in EPS:
        shares, distances = [], []
        for _ in range(args.reps):
            masked = rwn(data, k=5, eps=eps, q=1.0, random_state=rng).data
            coef, se = ols(masked)
            rows += [{"eps": eps, "term": t, "coef": coef[t], "se": se[t]} for t in TERMS]
            shares.append(pc5_share(masked))
            distances.append(min_distances(data, masked))
        d = np.concatenate(distances)
        summary.append(
            {
                "eps": eps,
                "pc5": np.mean(shares),
                "d_median": np.median(d),
                "d_zero": np.mean(d == 0),
            }
        )
    table = pd.DataFrame(rows)
    print(f"bodyfat: {len(data)} records; RWN k = 5, q = 1; {args.reps} releases per eps\n")
    print("Figures 4-5: coefficient and standard error, original and mean over releases")
    print(
        "| term | original coef | eps with a mean of the other sign | releases of the other sign |"
        " original SE | SE ratio at eps 0.1 | at 0.6 | at 1.2 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    mean = table.groupby(["term", "eps"])[["coef", "se"]].mean()
    for term in TERMS:
        part = table[table["term"] == term]
        flipped = np.sign(part["coef"]) != np.sign(coef0[term])
        eps_flip = [e for e in EPS if np.sign(mean.loc[(term, e), "coef"]) != np.sign(coef0[term])]
        ratio = [mean.loc[(term, e), "se"] / se0[term] for e in (0.1, 0.6, 1.2)]
        print(
            f"| {term} | {coef0[term]:.3f} | {', '.join(f'{e:g}' for e in eps_flip) or 'none'} | "
            f"{int(flipped.sum())} of {len(part)} | {se0[term]:.3f} | "
            + " | ".join(f"{r:.2f}" for r in ratio)
            + " |"
        )
    base_pc5 = pc5_share(data)
    print(
        f"\nFigures 8-9: original PC5 cumulative share {base_pc5:.3f}; median distance of a "
        f"record to its nearest other record in the original {np.median(nearest[0][:, 1]):.3f}"
    )
    print(
        "| eps | PC5 cumulative share | median min distance to the release | share at distance 0 |"
    )
    print("|---|---|---|---|")
    for row in summary:
        print(
            f"| {row['eps']:.1f} | {row['pc5']:.3f} | {row['d_median']:.3f} | {row['d_zero']:.1%} |"
        )

    print(
        "\n§8.1: eps = 0.5, standard error / original standard error against q (mean over releases)"
    )
    print("| q | " + " | ".join(TERMS) + " |")
    print("|---|" + "---|" * len(TERMS))
    for q in QS:
        ses = [
            ols(rwn(data, k=5, eps=0.5, q=q, random_state=rng).data)[1] for _ in range(args.reps)
        ]
        ratio = pd.concat(ses, axis=1).mean(axis=1) / se0
        print(f"| {q:g} | " + " | ".join(f"{ratio[t]:.3f}" for t in TERMS) + " |")

    if not args.no_figures:
        _figure(
            table, coef0, "coef", IMG / "rwn_bodyfat_coefficients.png", "Regression coefficients"
        )
        _figure(table, se0, "se", IMG / "rwn_bodyfat_se.png", "Regression standard errors")
        print(f"\nfigures written to {IMG.relative_to(IMG.parents[1])}")


if __name__ == "__main__":
    main()
