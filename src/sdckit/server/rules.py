"""The confidentiality rules of the analysis server, one function each.

Every rule returns a :class:`Verdict`: whether the query may go on, the
rule's name, and a reason an analyst can act on. A reason never states a
protected count nor a confidential threshold (Gamma, Gamma*, the minimum
category size and the R-squared bound are agency secrets, Lucero et al. (2011),
Sections 3.1.1 and 3.2); it says what to change.

Universe rules (Lucero et al. 2011, Section 3.1.1):
:func:`no_marginal_1_or_2`, :func:`universe_gamma`.
Regression rules (Section 3.2; attacks of Bleninger, Drechsler & Ronning
2011): :func:`allowed_variables`, :func:`response_variable`,
:func:`max_predictors`, :func:`approved_transformations`,
:func:`interaction_hierarchy`, :func:`no_fully_interacted_dummy_model`,
:func:`category_support`, :func:`binary_predictor_support`,
:func:`analysis_sample_size`, :func:`residual_degrees_of_freedom`,
:func:`r_squared_bound`, :func:`leverage_bound`, :func:`exact_prediction`,
:func:`design_rank`.
Table rules: :func:`no_small_cells`, :func:`dominance`.
Correlation: :func:`correlation_bound`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit.server.formula import Formula, Term
from sdckit.server.metadata import Metadata
from sdckit.server.universe import UniverseEvaluation

__all__ = [
    "Verdict",
    "allowed_variables",
    "analysis_sample_size",
    "approved_transformations",
    "binary_predictor_support",
    "category_support",
    "correlation_bound",
    "design_rank",
    "dominance",
    "exact_prediction",
    "interaction_hierarchy",
    "leverage_bound",
    "max_predictors",
    "no_fully_interacted_dummy_model",
    "no_marginal_1_or_2",
    "no_small_cells",
    "r_squared_bound",
    "residual_degrees_of_freedom",
    "response_dominance",
    "response_variable",
    "transformation_domain",
    "universe_gamma",
]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one rule.

    Attributes
    ----------
    rule : str
        The rule's name (e.g. ``"universe_gamma"``).
    passed : bool
        False when the rule refuses the query.
    reason : str
        Why, and what the analyst can change; empty when passed without remark.
    adjustments : tuple of str
        What the server changed to let the query pass (e.g. categories
        absorbed into a reference), in words.
    """

    rule: str
    passed: bool
    reason: str = ""
    adjustments: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "passed": self.passed,
            "reason": self.reason,
            "adjustments": list(self.adjustments),
        }


def _pass(rule: str, reason: str = "", adjustments: Iterable[str] = ()) -> Verdict:
    return Verdict(rule, True, reason, tuple(adjustments))


def _refuse(rule: str, reason: str) -> Verdict:
    return Verdict(rule, False, reason)


# --------------------------------------------------------------------------- universes


GENERIC_SMALL_REASON = (
    "this universe, one of its pieces or categories, or an overlap of its pieces holds too "
    "few units (possibly none); widen it with more categories or neighbouring bins, or remove "
    "a condition"
)


def no_marginal_1_or_2(
    evaluation: UniverseEvaluation, *, min_marginal: int = 3, rules: str = "default"
) -> Verdict:
    """No Marginal 1 or 2 rule (Lucero et al. 2011, Section 3.1.1).

    For a universe defined with m variables, no (m-1)-dimensional marginal
    total of the m-way implicit table may be 1 or 2 (more generally, lie in
    1..min_marginal-1): such a margin lets an intruder difference a universe
    against one that leaves out those one or two units. The implicit table
    counts the whole dataset over the chosen variables' levels and bins
    (missing values form their own level), as in the paper's inequality for
    Table 1, so the verdict depends only on *which* variables the universe
    names, never on the levels or bins it selects.

    ``rules="mas2011"`` is the paper's rule: a margin passes when it is
    ">= 3 OR = 0", so a refusal says "one or two units here".
    ``rules="default"`` also refuses an empty margin (over the declared
    levels and bins; the missing code, which no universe can select, is left
    out), with the generic reason of the Gamma rule: a refusal then
    says only that some combination holds fewer than ``min_marginal`` units,
    possibly none.
    """
    rule = "no_marginal_1_or_2"
    table = evaluation.table
    if table.ndim == 0:
        return _pass(rule)
    if rules == "default":
        # Every declared level and bin counts (an empty one too); the missing
        # code of each axis does not, since no universe can select it.
        sub = table[tuple(slice(0, size - 1) for size in table.shape)]
        for axis in range(sub.ndim):
            if np.any(sub.sum(axis=axis) < min_marginal):
                return _refuse(rule, GENERIC_SMALL_REASON)
        return _pass(rule)
    for axis, name in enumerate(evaluation.variables):
        margin = table.sum(axis=axis)
        if np.any((margin >= 1) & (margin < min_marginal)):
            return _refuse(
                rule,
                f"summed over {name!r}, a combination of the other universe variables "
                f"({', '.join(v for v in evaluation.variables if v != name) or 'none'}) holds only "
                "one or two units, which a pair of universes could single out; drop a variable "
                "from the universe or define it with coarser categories or bins",
            )
    return _pass(rule)


def universe_gamma(
    evaluation: UniverseEvaluation, *, gamma: int, gamma_star: int, rules: str = "default"
) -> Verdict:
    """Universe Gamma rule (Lucero et al. 2011, Section 3.1.1).

    Every piece of the universe must hold at least Gamma units, with the
    cutpoint bins of a continuous variable combined within the piece but the
    levels of a categorical variable checked one by one. When the universe is
    joint (pieces share cells), every non-empty intersection of pieces must
    also hold at least Gamma* units. Small universes, and small overlaps
    between pieces, are what differencing attacks are built from.

    ``rules="mas2011"`` names the small piece in its reason and, as the
    paper does, checks only the *non-empty* intersections. ``rules="default"``
    checks every intersection the pieces' definitions make possible (so an
    empty overlap is refused like a small one) and gives one generic reason
    for every small part, the same for none, one or two, or forty units.
    """
    rule = "universe_gamma"
    for group in evaluation.groups:
        limit = gamma if group.threshold == "gamma" else gamma_star
        if group.count < limit:
            if rules == "default":
                return _refuse(rule, GENERIC_SMALL_REASON)
            if group.threshold == "gamma":
                advice = "add categories or neighbouring bins to it, or remove that piece"
            else:
                advice = "make the pieces disjoint or make their overlap larger"
            return _refuse(
                rule,
                f"{group.description} is too small for the Universe Gamma rule; {advice}",
            )
    kind = "joint" if evaluation.joint else "disjoint"
    return _pass(rule, f"{kind} universe")


# --------------------------------------------------------------------------- regressions


def allowed_variables(names: Iterable[str], metadata: Metadata) -> Verdict:
    """Only variables listed in the metadata may be used (Lucero et al. 2011, Section 3.1)."""
    unknown = [n for n in dict.fromkeys(names) if n not in metadata]
    if unknown:
        return _refuse(
            "allowed_variables",
            f"variable(s) {unknown} are not available; choose from {list(metadata.names)}",
        )
    return _pass("allowed_variables")


def response_variable(formula: Formula, metadata: Metadata, family: str) -> Verdict:
    """The response suits the model: continuous for OLS, two-level categorical for logit."""
    rule = "response_variable"
    var = metadata.variable(formula.response.variable)
    if family == "ols" and var.is_categorical:
        return _refuse(
            rule,
            f"the response {var.name!r} is categorical; OLS needs a continuous response "
            "(use family='logit' for a two-level response)",
        )
    if family == "logit":
        if formula.response.transform is not None:
            return _refuse(rule, "a logistic regression's response cannot be transformed")
        if not var.is_categorical or len(var.levels) != 2:
            return _refuse(
                rule,
                f"logistic regression needs a categorical response with exactly two levels; "
                f"{var.name!r} is {'categorical with ' + str(len(var.levels)) + ' levels' if var.is_categorical else 'continuous'}",
            )
    return _pass(rule)


def max_predictors(formula: Formula, *, limit: int = 20) -> Verdict:
    """At most ``limit`` predictor variables; interactions do not count (Lucero et al. 2011, Section 3.2)."""
    count = len(formula.main_effects)
    if count > limit:
        return _refuse(
            "max_predictors",
            f"the model has {count} predictor variables; at most {limit} are allowed "
            "(interactions do not count)",
        )
    return _pass("max_predictors")


def approved_transformations(
    formula: Formula, metadata: Metadata, *, approved: Sequence[str]
) -> Verdict:
    """Transformations only from the approved list, of numerical variables only.

    Lucero et al. (2011), Section 3.2: a free transformation can "deliberately
    overemphasize individual observations", e.g. the artificial outlier
    ``1/(|x - x_m| + eps)`` of Bleninger et al. (2011, equation 1), which
    makes one unit a leverage point whose fitted value is its own response.
    """
    rule = "approved_transformations"
    factors = [formula.response] + [f for t in formula.terms for f in t.factors]
    for factor in factors:
        if factor.transform is None:
            continue
        if factor.transform not in approved:
            return _refuse(
                rule,
                f"{factor.to_string()}: {factor.transform!r} is not an approved transformation; "
                f"use one of {list(approved)}",
            )
        var = metadata.variable(factor.variable)
        if var.is_categorical:
            return _refuse(
                rule,
                f"{factor.to_string()}: only numerical variables may be transformed; "
                f"{var.name!r} is categorical",
            )
    return _pass(rule)


def transformation_domain(factors: Iterable[Any], metadata: Metadata) -> Verdict:
    """Each transformation suits its variable's *declared* domain (log: positive; sqrt: non-negative).

    The domain is public metadata, checked against the whole dataset when
    the server loads it, so this verdict depends on the query and the
    metadata alone: a refusal never tells whether a universe holds a unit
    with a value outside the domain (the oracle of checking the universe's
    values at query time).
    """
    rule = "transformation_domain"
    for factor in factors:
        if factor.transform is None:
            continue
        var = metadata.variable(factor.variable)
        if var.is_categorical or var.admits(factor.transform):
            continue
        need = "positive" if factor.transform == "log" else "non-negative"
        return _refuse(
            rule,
            f"{factor.to_string()} needs a {need} variable; the metadata declare {var.name!r} "
            f"{var.domain or 'without a domain'}; choose another transformation",
        )
    return _pass(rule)


def interaction_hierarchy(formula: Formula, *, max_order: int = 3) -> Verdict:
    """Two- and three-way interactions only, and only above their lower-order terms.

    Lucero et al. (2011), Section 3.2: a two-way interaction needs both variables as main
    effects; a three-way interaction needs all three main effects and all
    three two-way interactions.
    """
    rule = "interaction_hierarchy"
    terms = set(formula.terms)
    mains = set(formula.main_effects)
    for term in formula.interactions:
        if term.order > max_order:
            return _refuse(
                rule,
                f"{term.to_string()} is a {term.order}-way interaction; at most {max_order}-way "
                "interactions are allowed",
            )
        missing = [f.to_string() for f in term.factors if f not in mains]
        if missing:
            return _refuse(
                rule,
                f"{term.to_string()} needs its variables as main effects too; add {missing}",
            )
        if term.order == 3:
            pairs = [
                Term((a, b)) for i, a in enumerate(term.factors) for b in term.factors[i + 1 :]
            ]
            absent = [p.to_string() for p in pairs if p not in terms]
            if absent:
                return _refuse(
                    rule,
                    f"{term.to_string()} needs each two-way interaction of its variables; add {absent}",
                )
    return _pass(rule)


def no_fully_interacted_dummy_model(formula: Formula, metadata: Metadata) -> Verdict:
    """No fully interacted model whose predictors are all dummies (Lucero et al. 2011, Section 3.2).

    Such a model is saturated: its fitted values are the cell means of the
    cross-classification, which discloses small cells a table would protect
    (Reznek 2003; Reznek and Riggs 2004, cited in Lucero et al. (2011)).
    """
    rule = "no_fully_interacted_dummy_model"
    mains = formula.main_effects
    if len(mains) < 2:
        return _pass(rule)
    if not all(metadata.variable(f.variable).is_categorical for f in mains):
        return _pass(rule)
    top = {frozenset(t.factors) for t in formula.interactions}
    if frozenset(mains) in top:
        return _refuse(
            rule,
            "the model interacts all of its predictors and every predictor is categorical, "
            "which reproduces the cell means of the full cross-classification; drop the "
            f"highest-order interaction {':'.join(f.to_string() for f in sorted(mains))} or add "
            "a numerical predictor",
        )
    return _pass(rule)


def category_support(
    variable: str,
    levels: Sequence[str],
    counts: Sequence[int],
    *,
    min_size: int,
    rules: str = "default",
) -> tuple[str, list[str], list[str], Verdict]:
    """Reference category and dummies of a categorical predictor (Lucero et al. 2011, Section 3.2).

    The most common category is the reference; a category with fewer than
    ``min_size`` units gets no dummy (it is absorbed into the reference), so
    a dummy can never pick out a handful of units - the strategic dummy of
    Bleninger et al. (2011, Section 2.2). With ``rules="default"`` an empty
    category is absorbed and listed exactly like a sparse one, so the note
    never tells "no unit" from "a few units"; ``"mas2011"`` drops empty
    categories silently.

    Returns
    -------
    reference, kept, absorbed, verdict
        The reference level, the levels keeping a dummy, the absorbed levels
        (empty categories are simply dropped) and a passing verdict listing
        the absorption.
    """
    counts_arr = np.asarray(counts)
    present = [
        (lv, int(c))
        for lv, c in zip(levels, counts_arr, strict=True)
        if c > 0 or rules == "default"
    ]
    reference = max(present, key=lambda item: item[1])[0] if present else levels[0]
    kept = [lv for lv, c in present if lv != reference and c >= min_size]
    absorbed = [lv for lv, c in present if lv != reference and c < min_size]
    adjustments = (
        [
            f"{variable}: categories {absorbed} are too sparse for a dummy (or empty) and were "
            f"absorbed into the reference category {reference!r}"
        ]
        if absorbed
        else []
    )
    return reference, kept, absorbed, _pass("category_support", "", adjustments)


def binary_predictor_support(
    columns: Mapping[str, np.ndarray], *, min_size: int, rules: str = "default"
) -> Verdict:
    """A numerical predictor taking two values must have enough units at each.

    Bleninger et al. (2011, Section 5) suggest "prohibiting regressions that
    contain dichotomous regressors with less than say 3 positive outcomes": a
    0/1 variable that is 1 for a single unit is the strategic dummy that
    reveals that unit's response, even when it is offered as a continuous
    variable. A column with a single value carries no information and is
    refused too. With ``rules="default"`` the single value is the case of
    two values one of which is held by no unit, refused with the same
    reason, so a refusal never tells "none" from "a few" from "all".
    """
    rule = "binary_predictor_support"
    for name, column in columns.items():
        values, counts = np.unique(column[~np.isnan(column)], return_counts=True)
        if rules == "default":
            if values.size <= 2 and (values.size < 2 or counts.min() < min_size):
                return _refuse(
                    rule,
                    f"{name} takes at most two values in this universe and one of them is held "
                    "by too few units (possibly none, possibly all but a few); such an indicator "
                    "can single out units - remove it or widen the universe",
                )
            continue
        if values.size == 1:
            return _refuse(
                rule, f"{name} takes a single value in this universe; remove it from the model"
            )
        if values.size == 2 and counts.min() < min_size:
            return _refuse(
                rule,
                f"{name} takes two values and one of them is held by too few units; such an "
                "indicator can single out units - remove it or widen the universe",
            )
    return _pass(rule)


def analysis_sample_size(
    n_complete: int, *, minimum: int, n_excluded: int = 0, min_cell_count: int = 3
) -> Verdict:
    """Units with every model variable observed must be at least ``minimum`` (Gamma*).

    Missing values shrink the universe the model actually uses; the Gamma
    protection must hold for that sample, not only for the universe. The
    units left out (``n_excluded``) must not be 1 .. ``min_cell_count`` - 1
    either: the released number of units, subtracted from the universe's
    total that a cross-tabulation of the same subsample releases, would
    count them - a cell of one or two units with a missing value.
    """
    if n_complete < minimum:
        return _refuse(
            "analysis_sample_size",
            "too few units in this universe have every model variable observed; widen the "
            "universe or use variables with fewer missing values",
        )
    if 0 < n_excluded < min_cell_count:
        return _refuse(
            "analysis_sample_size",
            "only one or two units of this universe lack a value of the variables used (a "
            "missing value or one outside a transformation's domain), and the number of units "
            "would count them; widen the universe or choose other variables",
        )
    return _pass("analysis_sample_size")


def residual_degrees_of_freedom(df_resid: float, *, minimum: int) -> Verdict:
    """A model must leave at least ``minimum`` residual degrees of freedom.

    A model with nearly as many parameters as units fits them almost exactly.
    """
    if df_resid < minimum:
        return _refuse(
            "residual_degrees_of_freedom",
            "the model has too many parameters for the units in this universe; use fewer "
            "predictors, interactions or categories, or widen the universe",
        )
    return _pass("residual_degrees_of_freedom")


def design_rank(dependent_terms: Sequence[str]) -> Verdict:
    """The design matrix must have full column rank (no term is a combination of others)."""
    if dependent_terms:
        return _refuse(
            "design_rank",
            f"term(s) {list(dependent_terms)} are exact linear combinations of other terms in "
            "this universe; remove them",
        )
    return _pass("design_rank")


def r_squared_bound(r_squared: float, *, maximum: float) -> Verdict:
    """Output is suppressed when R-squared is too close to 1 (Lucero et al. 2011, Section 3.2).

    With such a fit, anyone knowing a unit's predictors could estimate its
    response almost exactly from the coefficients.
    """
    if not np.isfinite(r_squared) or r_squared > maximum:
        return _refuse(
            "r_squared_bound",
            "the model fits the data almost perfectly (R-squared too close to 1), so its "
            "coefficients would predict individual responses; remove predictors that nearly "
            "determine the response",
        )
    return _pass("r_squared_bound")


def leverage_bound(leverage: np.ndarray, *, maximum: float) -> Verdict:
    """No unit may have leverage above ``maximum``.

    A unit's fitted value is ``h y_own + (1 - h) * (others)``; as its leverage
    h tends to 1 the fitted value tends to its own response. This is how the
    artificial outlier and the strategic dummy of Bleninger et al. (2011,
    Sections 2.1-2.2, Appendix A) disclose a value: Lucero et al.'s (2011) "subset of
    units for whom the response variable can be predicted unusually well".
    """
    if leverage.size and float(np.max(leverage)) > maximum:
        return _refuse(
            "leverage_bound",
            "a few units have so much influence on the fit that it would nearly reproduce "
            "their responses (extreme leverage); remove predictors or transformations that "
            "single out extreme or rare values, or absorb rare categories",
        )
    return _pass("leverage_bound")


def exact_prediction(
    residuals: np.ndarray, *, scale: float, tolerance: float, min_group: int
) -> Verdict:
    """Refuse when a small group of units is predicted (almost) exactly.

    Units whose residual is below ``tolerance * scale`` have their response
    revealed by the fitted model. A large such group (every unit of a big
    category with the same response) is group-level information a table
    would also show; a group smaller than ``min_group`` is a disclosure
    (Lucero et al. 2011, Section 3.2).
    """
    exact = int(np.count_nonzero(np.abs(residuals) <= tolerance * max(scale, 1e-300)))
    if 0 < exact < min_group:
        return _refuse(
            "exact_prediction",
            "the model predicts the response of a small group of units exactly; remove the "
            "predictor, category or interaction that isolates them, or widen the universe",
        )
    return _pass("exact_prediction")


def correlation_bound(correlations: np.ndarray, names: Sequence[str], *, maximum: float) -> Verdict:
    """No pair of variables may be (almost) perfectly correlated: r^2 must not exceed ``maximum``.

    A correlation is a one-predictor regression; the R-squared rule applies.
    """
    r2 = np.asarray(correlations, dtype=np.float64) ** 2
    np.fill_diagonal(r2, 0.0)
    if np.any(~np.isfinite(r2)) or np.any(r2 > maximum):
        i, j = np.unravel_index(int(np.nanargmax(np.where(np.isfinite(r2), r2, np.inf))), r2.shape)
        return _refuse(
            "correlation_bound",
            f"{names[i]} and {names[j]} are almost perfectly correlated (or one is constant) in "
            "this universe; one would reveal the other",
        )
    return _pass("correlation_bound")


# --------------------------------------------------------------------------- tables


def no_small_cells(table: np.ndarray, *, min_count: int = 3) -> Verdict:
    """No released cell or margin of a cross-tabulation may hold 1 .. min_count-1 units.

    Counts come from the Drop-q subsample; a cell of 1 or 2 identifies units
    (and lets two analysts who are in it learn about each other).
    """
    table = np.asarray(table)
    parts = [table.ravel()]
    for axis in range(table.ndim):
        parts.append(table.sum(axis=axis).ravel())
    parts.append(np.atleast_1d(table.sum()))
    every = np.concatenate(parts)
    if np.any((every >= 1) & (every < min_count)):
        return _refuse(
            "no_small_cells",
            "at least one cell or margin of the table would hold only one or two units; "
            "combine categories or bins of the row or column variable, or widen the universe",
        )
    return _pass("no_small_cells")


def dominance(
    top_contributions: np.ndarray, cell_totals: np.ndarray, *, n: int = 2, k: float = 0.9
) -> tuple[np.ndarray, Verdict]:
    """(n, k) dominance rule for cell means of a continuous variable.

    A cell is sensitive when its ``n`` largest absolute contributions exceed
    the share ``k`` of the cell's total of absolute values: its mean would
    then nearly reveal those units' values.

    Parameters
    ----------
    top_contributions : ndarray
        Per cell, the sum of the n largest absolute values.
    cell_totals : ndarray
        Per cell, the sum of absolute values.

    Returns
    -------
    sensitive, verdict
        Boolean array of cells whose mean must be suppressed, and a passing
        verdict listing the suppression.
    """
    totals = np.asarray(cell_totals, dtype=np.float64)
    tops = np.asarray(top_contributions, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(totals > 0, tops / totals, 0.0)
    sensitive = share > k
    adjustments = (
        [f"{int(sensitive.sum())} cell mean(s) dominated by at most {n} units were suppressed"]
        if sensitive.any()
        else []
    )
    return sensitive, _pass("dominance", "", adjustments)


def response_dominance(
    response: str,
    y: np.ndarray,
    groups: Sequence[tuple[str, np.ndarray]],
    *,
    n: int = 2,
    k: float = 0.9,
    min_size: int = 10,
) -> Verdict:
    """(n, k) dominance rule for the response of a linear regression.

    An OLS fit passes through the group means of the response: with
    categorical predictors only, the intercept is the reference group's mean
    and intercept plus a dummy's coefficient is that category's mean, and in
    general the universe's mean is the intercept plus the coefficients times
    the predictors' means (proportions a cross-tabulation of the same
    universe releases). A regression would thus release the cell means that
    :func:`dominance` suppresses in a table. Each group (the universe, every
    category and every cell of an interaction of categorical predictors that
    holds at least ``min_size`` units) must not be dominated.

    Parameters
    ----------
    response : str
        The response as written (for the reason).
    y : ndarray
        Response values of the analysis sample.
    groups : sequence of (description, codes)
        Group code of every unit (``-1``: in no group) and what the groups are
        (e.g. ``"a category of region"``).
    """
    rule = "response_dominance"
    values = np.abs(np.asarray(y, dtype=np.float64))
    for description, codes in groups:
        codes = np.asarray(codes, dtype=np.int64)
        inside = codes >= 0
        if not inside.any():
            continue
        cells, vals = codes[inside], values[inside]
        ncell = int(cells.max()) + 1
        size = np.bincount(cells, minlength=ncell)
        total = np.bincount(cells, weights=vals, minlength=ncell)
        order = np.lexsort((-vals, cells))
        ordered = cells[order]
        rank = np.arange(ordered.size) - np.searchsorted(ordered, ordered, side="left")
        top = rank < n
        tops = np.bincount(ordered[top], weights=vals[order][top], minlength=ncell)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(total > 0, tops / total, 0.0)
        if ((share > k) & (size >= min_size)).any():
            return _refuse(
                rule,
                f"a few units dominate the response {response} in {description}, so the fitted "
                "means would nearly reveal their values; restrict the universe with bins of the "
                "response, drop or coarsen that predictor, or transform the response (e.g. log)",
            )
    return _pass(rule)
