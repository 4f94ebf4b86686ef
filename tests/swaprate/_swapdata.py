"""Data drawn exactly from the record models of Kifer (2015, Section 5.1, and the semi-synthetic Adult idea)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdckit.swaprate import RecordModel


def gaussian_data(n: int, seed: int, mu0: float = 0.0, mu1: float = 1.0) -> pd.DataFrame:
    """Section 5.1: half the records s = 0 with r ~ N(mu0, 1), half s = 1 with r ~ N(mu1, 1)."""
    rng = np.random.default_rng(seed)
    s = np.repeat([0, 1], [n - n // 2, n // 2])
    r = rng.normal(np.where(s == 1, mu1, mu0), 1.0)
    return pd.DataFrame({"r": r, "s": s}, index=pd.RangeIndex(100, 100 + n))


def naive_bayes_data(n: int, seed: int, n_attributes: int = 6, p1: float = 0.4) -> pd.DataFrame:
    """Categorical attributes independent given s (a Naive Bayes model), each moderately predictive."""
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < p1).astype(int)
    columns = {}
    for j in range(n_attributes):
        k = 3 + j % 3
        base = rng.dirichlet(np.ones(k) * 2)
        shifted = rng.dirichlet(np.ones(k) * 2)
        probs = np.vstack([base, 0.5 * base + 0.5 * shifted])
        u = rng.random(n)
        cdf = np.cumsum(probs[s], axis=1)
        codes = (u[:, None] > cdf).sum(axis=1)
        columns[f"x{j}"] = np.array([f"v{c}" for c in range(k)])[np.minimum(codes, k - 1)]
    columns["income"] = np.where(s == 1, "high", "low")
    return pd.DataFrame(columns)


def symmetric_halves_data(n: int, seed: int) -> pd.DataFrame:
    """Balanced s; left and right halves independent given s and mirror-symmetric between classes.

    Mirror symmetry (P(x | s=1) is P(x | s=0) reversed) makes each model's
    expected correct-class probability the same in both classes, so with
    conditional independence the two models' predictions are uncorrelated:
    exactly eq. 17 of Kifer (2015), the assumption of the Consensus algorithm.
    """
    rng = np.random.default_rng(seed)
    s = rng.permutation(np.repeat([0, 1], [n - n // 2, n // 2]))
    columns = {}
    for j, probs0 in enumerate(
        [[0.5, 0.3, 0.2], [0.45, 0.35, 0.2], [0.6, 0.25, 0.15], [0.4, 0.4, 0.2]]
    ):
        table = np.array([probs0, probs0[::-1]])
        cdf = np.cumsum(table[s], axis=1)
        codes = np.minimum((rng.random(n)[:, None] > cdf).sum(axis=1), 2)
        columns[f"x{j}"] = np.array(["a", "b", "c"])[codes]
    columns["s"] = s
    return pd.DataFrame(columns)


class OneAttributeMultinomial(RecordModel):
    """A plug-in model of one attribute (a multinomial per swap class), written against the
    documented :class:`~sdckit.swaprate.RecordModel` interface only: no parameter count."""

    name = "multinomial"

    def encode(self, data):
        return pd.factorize(data.iloc[:, 0], sort=True)[0]

    def fit(self, records, class_weights):
        k = records.max() + 1
        counts = np.stack([np.bincount(records, class_weights[:, a], k) for a in (0, 1)])
        return np.log((counts + 1) / (counts.sum(axis=1, keepdims=True) + k))

    def log_likelihood(self, parameters, records):
        return parameters[:, records].T
