"""Does the fitted relaxed model reproduce the released data? A goodness-of-fit check (our addition).

Kifer (2015), Section 4.1: Algorithm 1 is only as good as its record model.
Under the relaxed swap process (Section 4.1.1) the released class c is a
mixture of the two true classes,

    P(r, s~ = c) = [(n_c - alpha) P_theta(r | c) + alpha P_theta(r | 1 - c)] / N,

so the mixture must explain every association among the attributes within a
released class. A misspecified model uses alpha for exactly that: with
Naive Bayes on real Adult data, {education, race} never swapped give alpha/N =
0.048 with a small imbalance (0.002), because the two attributes are
dependent within an income class and the only dependence Naive Bayes can
produce is the mixing of the classes by a swap. Neither the imbalance
(Section 4.1.4) nor the re-swap diagnostic (Section 4.3.2) sees such a
constant bias: the estimate rises with extra swaps as it should, from the
wrong starting point.

The check compares, for every pair of attributes (and every continuous
attribute alone), the observed table of binned values by released class
with the table the fitted model predicts, by the likelihood-ratio statistic
G = 2 sum O log(O / E). Binning: a categorical attribute keeps its levels
with at least 1% of the records (at most 9, the rest pooled), a continuous one
is cut at its octiles. Degrees of freedom: for a pair, the free cells of the
two tables less one for alpha, 2 (B_j B_k - 1) - 1. The class-conditional
margins are fitted from all the attributes together, not from this table, so
they absorb fewer degrees of freedom than their count: with 2 (B_j - 1)(B_k - 1)
(margins fully absorbed) the check rejected 1 of 20 semi-synthetic Adult runs
where Naive Bayes is the true model (p = 0.0005 for workclass x sex); the
conservative count keeps the power that matters, as real-data misfit is
gross (G in the hundreds to thousands on Adult). For a continuous attribute
alone, 2 B_j - 7 (its mean and variance in each class, and alpha, are fitted
from it). The p-values are combined by Bonferroni. The check needs the model's
bin probabilities (:meth:`RecordModel.bin_probabilities`); for a plug-in model
without them it is skipped and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from scipy import stats

from sdckit.swaprate.models import AttributeBins, EncodedRecords, RecordModel

__all__ = ["ModelFitCheck", "model_fit_check"]

_MIN_SHARE = 0.01
_MAX_LEVEL_BINS = 10
_QUANTILE_BINS = 8


@dataclass(frozen=True)
class ModelFitCheck:
    """Result of :func:`model_fit_check`.

    Attributes
    ----------
    available : bool
        False when the model cannot give bin probabilities (nothing checked).
    tables : tuple of (names, G, df, p-value)
        One entry per table checked: the attribute name(s), the statistic,
        its degrees of freedom and its p-value.
    level : float
        Significance level of the whole check (Bonferroni over the tables).
    fits : bool
        No table rejects at ``level / len(tables)`` (True when nothing was
        checked).
    worst : tuple or None
        The table with the smallest p-value.
    """

    available: bool
    tables: tuple[tuple[tuple[str, ...], float, int, float], ...]
    level: float
    fits: bool
    worst: tuple[tuple[str, ...], float, int, float] | None

    @property
    def reason(self) -> str:
        """The verdict of the check in plain words."""
        if not self.available:
            return "the model gives no bin probabilities, so its fit was not checked"
        if not self.tables or self.worst is None:
            return "one categorical attribute: nothing to check beyond what the model fits exactly"
        names, g, df, p = self.worst
        shown = " x ".join(names)
        if self.fits:
            return (
                f"the fitted model reproduces the released tables ({len(self.tables)} checked; "
                f"smallest p = {p:.2g}, {shown})"
            )
        return (
            f"the fitted model does not reproduce the released data: the table of {shown} by "
            f"released class departs from it (G = {g:,.1f} on {df} degrees of freedom, p = "
            f"{p:.2g}); the attributes are associated in a way the model can only explain by "
            "swaps, so alpha is biased"
        )

    def summary(self) -> str:
        """One line for a person."""
        return f"model fit check: {self.reason}"


def _attribute_bins(records: EncodedRecords, w: np.ndarray) -> list[AttributeBins]:
    out = []
    total = float(w.sum())
    for j, name in enumerate(records.categorical_names):
        codes = records.categorical[:, j]
        k = len(records.levels[j])
        share = np.bincount(codes, weights=w, minlength=k) / total
        order = np.argsort(-share, kind="stable")
        kept = [g for g in order[: _MAX_LEVEL_BINS - 1] if share[g] >= _MIN_SHARE]
        level_bins = np.full(k, len(kept), dtype=np.intp)
        level_bins[kept] = np.arange(len(kept))
        if int(level_bins.max()) + 1 < 2:
            continue
        out.append(AttributeBins(name, "categorical", j, level_bins[codes], level_bins=level_bins))
    for j, name in enumerate(records.continuous_names):
        x = records.continuous[:, j]
        distinct = np.unique(x)
        if len(distinct) < 2:
            continue
        order = np.argsort(x, kind="stable")
        cumulative = np.cumsum(w[order]) / total
        cuts = np.searchsorted(cumulative, np.arange(1, _QUANTILE_BINS) / _QUANTILE_BINS)
        values = np.unique(x[order][np.minimum(cuts, len(x) - 1)])
        # Each edge half-way to the next recorded value, so that a value on an
        # edge is not split between bins by rounding.
        above = np.searchsorted(distinct, values, side="right")
        keep = above < len(distinct)
        edges = 0.5 * (values[keep] + distinct[above[keep]])
        if not len(edges):
            continue
        codes = np.searchsorted(edges, x, side="left")
        out.append(AttributeBins(name, "continuous", j, codes, edges=edges))
    return out


def _g_test(
    model: RecordModel,
    parameters: Any,
    bins: tuple[AttributeBins, ...],
    s: np.ndarray,
    w: np.ndarray,
    alpha: float,
    n0: float,
    n1: float,
    df: int,
) -> tuple[float, float] | None:
    probs = model.bin_probabilities(parameters, bins)
    if probs is None:
        return None
    shape = probs.shape[1:]
    flat = bins[0].codes if len(bins) == 1 else bins[0].codes * shape[1] + bins[1].codes
    cells = int(np.prod(shape))
    statistic = 0.0
    for c, n_c in ((0, n0), (1, n1)):
        observed = np.bincount(flat[s == c], weights=w[s == c], minlength=cells)
        expected = ((n_c - alpha) * probs[c] + alpha * probs[1 - c]).ravel()
        expected = np.maximum(expected, 1e-12)
        positive = observed > 0
        statistic += 2.0 * float(
            (observed[positive] * np.log(observed[positive] / expected[positive])).sum()
        )
        statistic -= 2.0 * float((observed - expected).sum())  # 0 when the totals agree
    statistic = max(statistic, 0.0)
    return statistic, float(stats.chi2.sf(statistic, df))


def model_fit_check(
    model: RecordModel,
    parameters: Any,
    records: Any,
    swapped_class: np.ndarray,
    alpha: float,
    *,
    counts: np.ndarray | None = None,
    level: float = 0.01,
) -> ModelFitCheck:
    """Compare the released tables with those the fitted relaxed model predicts.

    Parameters
    ----------
    model : RecordModel
    parameters : object
        The fitted theta.
    records : EncodedRecords
        As encoded by the model.
    swapped_class : ndarray of 0/1
        The released swap attribute.
    alpha : float
        The fitted group swap count.
    counts : ndarray, optional
        Multiplicity of each row.
    level : float, default 0.01
        Significance level of the whole check (Bonferroni over the tables).

    Returns
    -------
    ModelFitCheck
    """
    s = np.asarray(swapped_class)
    w = np.ones(len(s)) if counts is None else np.asarray(counts, dtype=np.float64)
    if not isinstance(records, EncodedRecords):
        return ModelFitCheck(False, (), level, True, None)
    n1 = float(w[s == 1].sum())
    n0 = float(w.sum()) - n1
    attributes = _attribute_bins(records, w)
    tables: list[tuple[tuple[str, ...], float, int, float]] = []
    for attribute in attributes:
        if attribute.kind == "continuous":
            df = 2 * attribute.n_bins - 7
            if df >= 1:
                result = _g_test(model, parameters, (attribute,), s, w, alpha, n0, n1, df)
                if result is None:
                    return ModelFitCheck(False, (), level, True, None)
                tables.append(((attribute.name,), result[0], df, result[1]))
    for first, second in combinations(attributes, 2):
        df = 2 * (first.n_bins * second.n_bins - 1) - 1
        result = _g_test(model, parameters, (first, second), s, w, alpha, n0, n1, df)
        if result is None:
            return ModelFitCheck(False, (), level, True, None)
        tables.append(((first.name, second.name), result[0], df, result[1]))
    if not tables:
        return ModelFitCheck(True, (), level, True, None)
    worst = min(tables, key=lambda t: t[3])
    fits = worst[3] >= level / len(tables)
    return ModelFitCheck(True, tuple(tables), level, bool(fits), worst)
