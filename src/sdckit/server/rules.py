"""The confidentiality rules of the analysis server, one function each.

Every verdict the server can return comes from a function of this module:
whether the query may go on, the rule's name, and a reason an analyst can act
on. A reason never states a protected count nor a confidential threshold
(Gamma, Gamma*, the minimum category size and the R-squared bound are agency
secrets, Lucero et al. (2011), §3.1.1 and §3.2); it says what to change. A
rule depends only on the query, the public metadata and the data facts the
function is given; the engine (:mod:`sdckit.server.engine`) runs each rule
once per query, in the order of :data:`PIPELINE`.

Adding a rule: write a function here returning a :class:`Verdict` (cite the
paper section in its docstring, keep its refusal free of data-dependent
detail), list it in ``__all__`` and in the stage of :data:`PIPELINE` that runs
it, and call it from that stage (the analysis functions of
:mod:`sdckit.server.analyses`, or :func:`static_regression_rules` for a rule
that needs only the query and the metadata).

Query definition (Lucero et al. (2011), §3.1 and §3.2): :func:`universe_definition`,
:func:`formula_syntax` (from the parsers' :class:`~sdckit.errors.RuleViolation`).
Universe rules (§3.1.1): :func:`no_marginal_1_or_2`, :func:`universe_gamma`
(:func:`rare_categories_left_out` when a narrower universe passes instead);
then :func:`drop_q` (§3.1.2) and :func:`perturbation`.
Regression rules (§3.2; attacks of Bleninger, Drechsler & Ronning (2011)):
:func:`allowed_variables`, :func:`response_variable`, :func:`max_predictors`,
:func:`approved_transformations`, :func:`transformation_domain`,
:func:`interaction_hierarchy`, :func:`no_fully_interacted_dummy_model`,
:func:`analysis_sample_size`, :func:`category_support`,
:func:`interaction_support`, :func:`response_dominance`,
:func:`binary_predictor_support`, :func:`design_rank`,
:func:`residual_degrees_of_freedom`, :func:`r_squared_bound`,
:func:`leverage_bound`, :func:`exact_prediction`,
:func:`separated_outcomes`, :func:`undefined_standard_errors`,
:func:`absorption_retry`.
Table rules: :func:`no_small_cells`, :func:`dominance`.
Correlation: :func:`continuous_variables`, :func:`correlation_bound`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit._docs import shared_doc
from sdckit.errors import FormulaError, RuleViolation, UniverseError
from sdckit.server.config import ServerConfig
from sdckit.server.formula import Factor, Formula, Term
from sdckit.server.metadata import Metadata
from sdckit.server.universe import UniverseEvaluation

__all__ = [
    "PIPELINE",
    "Verdict",
    "absorption_retry",
    "allowed_variables",
    "analysis_sample_size",
    "approved_transformations",
    "binary_predictor_support",
    "category_support",
    "combined",
    "continuous_variables",
    "correlation_bound",
    "design_rank",
    "dominance",
    "drop_q",
    "exact_prediction",
    "formula_syntax",
    "interaction_hierarchy",
    "interaction_support",
    "leverage_bound",
    "max_predictors",
    "no_fully_interacted_dummy_model",
    "no_marginal_1_or_2",
    "no_small_cells",
    "perturbation",
    "r_squared_bound",
    "rare_categories_left_out",
    "residual_degrees_of_freedom",
    "response_dominance",
    "response_variable",
    "separated_outcomes",
    "static_regression_rules",
    "transformation_domain",
    "undefined_standard_errors",
    "universe_definition",
    "universe_gamma",
    "violation",
]

#: The stages of a query and the rules each runs, in order (what the engine
#: does; docs/server.md, "The pipeline"). A stage's first refusal stops the query.
PIPELINE: dict[str, tuple[str, ...]] = {
    "definition": ("universe_definition", "formula_syntax"),
    "static (regressions and plots)": (
        "allowed_variables",
        "response_variable",
        "max_predictors",
        "approved_transformations",
        "transformation_domain",
        "interaction_hierarchy",
        "no_fully_interacted_dummy_model",
    ),
    "universe": ("no_marginal_1_or_2", "universe_gamma", "rare_categories_left_out", "drop_q"),
    "crosstab": ("allowed_variables", "no_small_cells", "perturbation", "dominance"),
    "regression": (
        "analysis_sample_size",
        "category_support",
        "response_dominance",
        "binary_predictor_support",
        "interaction_support",
        "design_rank",
        "residual_degrees_of_freedom",
        "r_squared_bound",
        "leverage_bound",
        "exact_prediction",
        "separated_outcomes",
        "undefined_standard_errors",
        "absorption_retry",
    ),
    "correlation": (
        "allowed_variables",
        "approved_transformations",
        "transformation_domain",
        "continuous_variables",
        "analysis_sample_size",
        "binary_predictor_support",
        "correlation_bound",
    ),
}


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
        """The verdict as plain JSON-ready values.

        Returns
        -------
        dict
            ``rule``, ``passed``, ``reason`` and ``adjustments`` (a list).
        """
        return {
            "rule": self.rule,
            "passed": self.passed,
            "reason": self.reason,
            "adjustments": list(self.adjustments),
        }


#: The ``{{model}}`` marker: the Parameters entries of a rule that reads the parsed
#: model and the public metadata (:func:`sdckit._docs.shared_doc`).
_model_doc = shared_doc(
    {
        "model": """
        formula : Formula
            The parsed model.
        metadata : Metadata
            The public metadata.
        """
    }
)


def _pass(rule: str, reason: str = "", adjustments: Iterable[str] = ()) -> Verdict:
    return Verdict(rule, True, reason, tuple(adjustments))


def _refuse(rule: str, reason: str) -> Verdict:
    return Verdict(rule, False, reason)


def combined(rule: str, verdicts: Iterable[Verdict]) -> Verdict:
    """One verdict of ``rule`` standing for several of its verdicts (e.g. one per variable).

    Passed when all passed; reasons of the refusing ones and every
    adjustment are kept, in order.

    Parameters
    ----------
    rule : str
        The rule's name (the verdict's name even when ``verdicts`` is empty).
    verdicts : iterable of Verdict
        Verdicts of that rule.

    Returns
    -------
    Verdict
    """
    items = list(verdicts)
    passed = all(v.passed for v in items)
    reason = "; ".join(v.reason for v in items if not v.passed and v.reason)
    adjustments = tuple(a for v in items for a in v.adjustments)
    return Verdict(rule, passed, reason, adjustments)


# --------------------------------------------------------------------------- definitions


def universe_definition(error: UniverseError) -> Verdict:
    """The universe must be built from metadata variables, their categories and cutpoint bins.

    Lucero et al. (2011), §3.1 and §3.1.3: a universe is a union of
    intersections of categories, and a continuous variable enters it only
    through its cutpoint bins, never raw values (``income <= 46000`` next to
    ``income <= 46001`` would be a differencing attack). The universe parser
    raises :class:`~sdckit.errors.UniverseError` for anything else; its
    message names the query's fault and the metadata's choices only.

    Parameters
    ----------
    error : UniverseError
        What the parser found.

    Returns
    -------
    Verdict
        A refusal of ``universe_definition`` whose reason is the message.
    """
    return _refuse("universe_definition", error.reason)


def formula_syntax(error: FormulaError) -> Verdict:
    """A formula must follow the grammar of names, approved transformations and interactions.

    Lucero et al. (2011), §3.2, allow only approved transformations; the
    parser of :mod:`sdckit.server.formula` never evaluates text, so an
    expression such as the artificial outlier ``1/(|x - x_m| + eps)`` of
    Bleninger, Drechsler & Ronning (2011), eq. 1, is a syntax error naming
    its position.

    Parameters
    ----------
    error : FormulaError
        The parser's complaint, which names the offending position.

    Returns
    -------
    Verdict
        Always refused: the parser's message is the reason.
    """
    return _refuse("formula_syntax", error.reason)


def violation(error: RuleViolation) -> Verdict:
    """The refusing verdict of a :class:`~sdckit.errors.RuleViolation` raised while reading a query.

    Dispatches to :func:`universe_definition` or :func:`formula_syntax`; any
    other violation is refused under its own ``rule`` and ``reason``.

    Parameters
    ----------
    error : RuleViolation
        The raised refusal.

    Returns
    -------
    Verdict
        The failing verdict.
    """
    if isinstance(error, UniverseError):
        return universe_definition(error)
    if isinstance(error, FormulaError):
        return formula_syntax(error)
    return _refuse(error.rule, error.reason)


# --------------------------------------------------------------------------- universes


GENERIC_SMALL_REASON = (
    "this universe, one of its pieces or categories, or an overlap of its pieces holds too "
    "few units (possibly none); categories are checked one by one, so adding categories does "
    "not help: remove a rare category, select a whole declared group of categories (metadata "
    "'groups') or every category of the variable, widen it with neighbouring bins, or remove "
    "a condition"
)


def no_marginal_1_or_2(
    evaluation: UniverseEvaluation, *, min_marginal: int = 3, rules: str = "default"
) -> Verdict:
    """No Marginal 1 or 2 rule (Lucero et al. (2011), §3.1.1).

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
    out): a refusal then says only that some combination of the named
    variables holds fewer than ``min_marginal`` units, possibly none, and
    that only naming fewer variables helps (the verdict never depends on the
    levels or bins selected, so saying so reveals nothing more).

    Parameters
    ----------
    evaluation : UniverseEvaluation
        The universe evaluated on its implicit table over the whole dataset.
    min_marginal : int, default 3
        The smallest allowed non-empty margin.
    rules : {"default", "mas2011"}
        ``"mas2011"``: the paper's ">= 3 OR = 0"; ``"default"``: an empty margin refuses too.

    Returns
    -------
    Verdict
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
                # Depends on the variables named only, so it may say so (the rule name does).
                return _refuse(
                    rule,
                    f"a universe that names {', '.join(repr(v) for v in evaluation.variables)} "
                    "together is refused whatever categories or bins it selects: over the whole "
                    f"file some combination of them holds fewer than {min_marginal} units "
                    "(possibly none); define the universe with fewer of these variables, for "
                    "example by removing a condition",
                )
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
    """Universe Gamma rule (Lucero et al. (2011), §3.1.1).

    Every piece of the universe must hold at least Gamma units, with the
    cutpoint bins of a continuous variable combined within the piece but the
    levels of a categorical variable checked one by one ("bins representing
    different classes of an inherently categorical variable would not be
    combined"). When the universe is joint (pieces share cells), every
    non-empty intersection of pieces must also hold at least Gamma* units.
    Small universes, and small overlaps between pieces, are what
    differencing attacks are built from.

    sdckit's own extension: a condition that selects *every* level of a
    variable is one class, the variable observed, and the levels of a group
    declared in the metadata (:class:`~sdckit.server.metadata.Variable`,
    ``groups``) selected whole are one class, as a recoded variable's
    category would be; levels selected outside whole groups are still
    checked one by one. Such a class must hold at least Gamma units, and
    two complements that differencing could isolate are checked against
    Gamma*: its levels of fewer than Gamma units taken together (the class
    minus the levels that can be selected alone), and, for "every level",
    the units missing the variable (``ALL`` minus "observed"). Every level
    of a variable that no unit lacks is no condition.

    ``rules="mas2011"`` names the small piece in its reason and, as the
    paper does, checks only the *non-empty* intersections (and complements).
    ``rules="default"`` checks every intersection the pieces' definitions
    make possible (so an empty overlap is refused like a small one), refuses
    an empty complement like a small one (when the class has a level of
    fewer than Gamma units, or the variable has missing values in the
    data), and gives one generic reason for every small part, the same for
    none, one or two, or forty units.

    Parameters
    ----------
    evaluation : UniverseEvaluation
        The universe's pieces and intersections with their counts.
    gamma : int
        Smallest allowed piece (Gamma).
    gamma_star : int
        Smallest allowed intersection of pieces, and complement of a whole class (Gamma*).
    rules : {"default", "mas2011"}
        ``"mas2011"`` names the small part and skips empty intersections; ``"default"`` does not.

    Returns
    -------
    Verdict
        Passed with "joint universe" or "disjoint universe" as its note.
    """
    rule = "universe_gamma"
    low = 0 if rules == "default" else 1  # the smallest complement checked
    for group in evaluation.groups:
        limit = gamma if group.threshold == "gamma" else gamma_star
        rare = [sum(c for c in counts if c < gamma) for counts in group.level_counts
                if any(c < gamma for c in counts)]  # fmt: skip
        complements = [*rare, *group.missing_counts]
        if group.count < limit:
            reason = f"{group.description} is too small for the Universe Gamma rule; " + (
                "add categories or neighbouring bins to it, or remove that piece"
                if group.threshold == "gamma"
                else "make the pieces disjoint or make their overlap larger"
            )
        elif any(low <= c < gamma_star for c in complements):
            reason = (
                f"in {group.description}, the categories of fewer than Gamma units taken "
                "together, or the units missing the variable, are too few for the Universe "
                "Gamma rule; select the categories one by one, leaving out the rare ones"
            )
        else:
            continue
        return _refuse(rule, GENERIC_SMALL_REASON if rules == "default" else reason)
    kind = "joint" if evaluation.joint else "disjoint"
    return _pass(rule, f"{kind} universe")


def rare_categories_left_out(variable: str, left_out: Sequence[str], *, universe: str) -> Verdict:
    """Universe Gamma passed by leaving the universe's rare categories out, and saying so.

    sdckit's own extension of the Universe Gamma rule of Lucero et al.
    (2011), §3.1.1, under the ``default`` rule set: when a universe of one piece is
    refused because its one categorical condition lists categories of
    fewer than Gamma units (alone, or as the rare part of every level or
    of a declared group), the server answers the same piece without them,
    if that universe passes every universe rule on its own. The universe
    answered is one the analyst could have typed, checked as if she had;
    each category left out is one whose universe alone the rule refuses, so
    naming it tells her what asking for it alone would
    (:func:`sdckit.server.universe.without_rare_levels`; docs/server.md,
    "Rare categories left out").

    Parameters
    ----------
    variable : str
        The categorical variable of the condition.
    left_out : sequence of str
        The categories left out.
    universe : str
        The universe answered instead.

    Returns
    -------
    Verdict
        A passing ``universe_gamma`` verdict with the categories left out as its adjustment.
    """
    shown = ", ".join(repr(level) for level in left_out)
    return _pass(
        "universe_gamma",
        "disjoint universe",
        [
            f"{variable}: categor{'y' if len(left_out) == 1 else 'ies'} {shown} left out of the "
            "universe, too small to be selected (Universe Gamma rule); the answer is for the "
            f"universe {universe}"
        ],
    )


def drop_q() -> Verdict:
    """The Drop q rule: q ~ U{2..k} units leave every universe before any analysis.

    Lucero et al. (2011), §3.1.2 and §4: the draw is keyed by the universe's
    set of units (:mod:`sdckit.server.dropq`), so the difference of U(n) and
    U(n-1) is usually nonsense. Always passes; the note says that it ran,
    never how many or which units went.

    Returns
    -------
    Verdict
        A passing verdict of ``drop_q``.
    """
    return _pass("drop_q", "a few units were removed at random (Drop q rule)")


def perturbation() -> Verdict:
    """Counts carry cell-key noise and magnitudes fixed unit factors (docs/server.md, "Padding").

    sdckit's own defence against the padding attack that Lucero et al.
    (2011), §3.1.2, leave open, added on top of Drop q:
    every released count is perturbed by the key of its own set of units, as
    the ABS TableBuilder does (the record-key method of Fraser & Wooton
    (2006), as described by Giessing & Höhne (2011), §3), so none is 1 or
    2; cell means use fixed unit factors 1 +/- U[a, b] (Evans, Zayatz &
    Slanta (1998)). Always passes; it replaces
    :func:`no_small_cells` when the perturbation is on.

    Returns
    -------
    Verdict
        A passing verdict of ``perturbation``.
    """
    return _pass(
        "perturbation", "counts carry a small consistent noise and means use fixed unit weights"
    )


# --------------------------------------------------------------------------- regressions


def allowed_variables(names: Iterable[str], metadata: Metadata) -> Verdict:
    """Only variables listed in the metadata may be used (Lucero et al. (2011), §3.1).

    Parameters
    ----------
    names : iterable of str
        The variables the query names.
    metadata : Metadata
        The public metadata.

    Returns
    -------
    Verdict
        Refused naming the unknown variables and listing the allowed ones.
    """
    unknown = [n for n in dict.fromkeys(names) if n not in metadata]
    if unknown:
        return _refuse(
            "allowed_variables",
            f"variable(s) {unknown} are not available; choose from {list(metadata.names)}",
        )
    return _pass("allowed_variables")


def continuous_variables(names: Sequence[str], metadata: Metadata) -> Verdict:
    """A correlation takes continuous variables only.

    sdckit's own rule (the MAS of Lucero et al. (2011), §3, offers
    cross-tabulations and regressions, no correlations): categorical
    variables are cross-tabulated, where the table rules apply; a
    correlation of category codes would escape them. Refused under the
    name ``allowed_variables``, as the variables are not allowed here.

    Parameters
    ----------
    names : sequence of str
        The variables of the correlation (all in the metadata).
    metadata : Metadata
        The public metadata.

    Returns
    -------
    Verdict
        Refused listing the categorical ones.
    """
    categorical = [n for n in names if metadata.variable(n).is_categorical]
    if categorical:
        return _refuse(
            "allowed_variables",
            f"correlations need continuous variables; {categorical} are categorical "
            "(use a cross-tabulation)",
        )
    return _pass("allowed_variables")


@_model_doc
def response_variable(formula: Formula, metadata: Metadata, family: str) -> Verdict:
    """The response suits the model: continuous for OLS, two-level categorical for logit.

    Lucero et al. (2011), §3.2 (linear and logistic regression); a logit's
    response is never transformed.

    Parameters
    ----------
    {{model}}
    family : {"ols", "logit"}
        The model family.

    Returns
    -------
    Verdict
    """
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
            return _refuse(
                rule,
                "a logistic regression's response cannot be transformed; use the variable "
                "itself as the response",
            )
        if not var.is_categorical or len(var.levels) != 2:
            kind = (
                f"categorical with {len(var.levels)} levels" if var.is_categorical else "continuous"
            )
            return _refuse(
                rule,
                "logistic regression needs a categorical response with exactly two levels; "
                f"{var.name!r} is {kind}, choose a two-level response (or family='ols' for a "
                "continuous one)",
            )
    return _pass(rule)


def max_predictors(formula: Formula, *, limit: int = 20) -> Verdict:
    """At most ``limit`` predictor variables; interactions do not count (Lucero et al. (2011), §3.2).

    Parameters
    ----------
    formula : Formula
        The parsed model.
    limit : int, default 20
        Most predictor variables (main effects).

    Returns
    -------
    Verdict
    """
    count = len(formula.main_effects)
    if count > limit:
        return _refuse(
            "max_predictors",
            f"the model has {count} predictor variables; at most {limit} are allowed "
            "(interactions do not count); remove predictors",
        )
    return _pass("max_predictors")


def approved_transformations(
    formula: Formula, metadata: Metadata, *, approved: Sequence[str]
) -> Verdict:
    """Transformations only from the approved list, of numerical variables only.

    Lucero et al. (2011), §3.2: a free transformation can "deliberately
    overemphasize individual observations", e.g. the artificial outlier
    ``1/(|x - x_m| + eps)`` of Bleninger, Drechsler & Ronning (2011), eq. 1,
    which makes one unit a leverage point whose fitted value is its own
    response.

    Parameters
    ----------
    formula : Formula
        The parsed model (a correlation passes its variables as one).
    metadata : Metadata
        The public metadata.
    approved : sequence of str
        The approved transformation names.

    Returns
    -------
    Verdict
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
                f"{var.name!r} is categorical, use it untransformed",
            )
    return _pass(rule)


def transformation_domain(factors: Iterable[Factor], metadata: Metadata) -> Verdict:
    """Each transformation suits its variable's *declared* domain (log: positive; sqrt: non-negative).

    sdckit's own rule beside the approved transformations of Lucero et al.
    (2011), §3.2 (docs/server.md, "Refusals reveal nothing"). The domain is
    public metadata, checked against the whole dataset when the server loads
    it, so this verdict depends on the query and the metadata alone: a
    refusal never tells whether a universe holds a unit with a value outside
    the domain (the oracle of checking the universe's values at query time).

    Parameters
    ----------
    factors : iterable of Factor
        Every (possibly transformed) variable of the query.
    metadata : Metadata
        The public metadata with declared domains.

    Returns
    -------
    Verdict
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

    Lucero et al. (2011), §3.2: a two-way interaction needs both variables
    as main effects; a three-way interaction needs all three main effects
    and all three two-way interactions.

    Parameters
    ----------
    formula : Formula
        The parsed model.
    max_order : int, default 3
        Highest interaction order allowed.

    Returns
    -------
    Verdict
    """
    rule = "interaction_hierarchy"
    terms = set(formula.terms)
    mains = set(formula.main_effects)
    for term in formula.interactions:
        if term.order > max_order:
            return _refuse(
                rule,
                f"{term.to_string()} is a {term.order}-way interaction; at most {max_order}-way "
                "interactions are allowed, remove it or interact fewer variables",
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


@_model_doc
def no_fully_interacted_dummy_model(formula: Formula, metadata: Metadata) -> Verdict:
    """No fully interacted model whose predictors are all dummies (Lucero et al. (2011), §3.2).

    Such a model is saturated: its fitted values are the cell means of the
    cross-classification, which discloses small cells a table would protect
    (Reznek (2003); Reznek & Riggs (2004), cited in Lucero et al. (2011), §3.2).

    Parameters
    ----------
    {{model}}

    Returns
    -------
    Verdict
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


def static_regression_rules(
    formula: Formula, metadata: Metadata, family: str, config: ServerConfig
) -> list[Verdict]:
    """The regression rules that need only the query and the metadata, in order.

    :func:`allowed_variables`, :func:`response_variable`,
    :func:`max_predictors`, :func:`approved_transformations`,
    :func:`transformation_domain`, :func:`interaction_hierarchy` and
    :func:`no_fully_interacted_dummy_model` (Lucero et al. (2011), §3.2). The
    engine runs them once per regression, before the universe rules, so their
    refusals never depend on the data.

    Parameters
    ----------
    formula : Formula
        The model as parsed (never evaluated).
    metadata : Metadata
        The variables analysts may use, with declared domains.
    family : {"ols", "logit"}
        Linear or logistic.
    config : ServerConfig
        The thresholds (predictor limit, approved transformations, order).

    Returns
    -------
    list of Verdict
        The verdicts up to and including the first refusal.
    """
    verdicts = [allowed_variables(formula.variables, metadata)]
    if not verdicts[-1].passed:
        return verdicts
    factors = [formula.response] + [f for t in formula.terms for f in t.factors]
    checks: tuple[Callable[[], Verdict], ...] = (
        lambda: response_variable(formula, metadata, family),
        lambda: max_predictors(formula, limit=config.max_predictors),
        lambda: approved_transformations(
            formula, metadata, approved=config.approved_transformations
        ),
        lambda: transformation_domain(factors, metadata),
        lambda: interaction_hierarchy(formula, max_order=config.max_interaction_order),
        lambda: no_fully_interacted_dummy_model(formula, metadata),
    )
    for check in checks:
        verdicts.append(check())
        if not verdicts[-1].passed:
            break
    return verdicts


def category_support(
    variable: str,
    levels: Sequence[str],
    counts: Sequence[int] | np.ndarray,
    *,
    min_size: int,
    rules: str = "default",
) -> tuple[str, list[str], list[str], Verdict]:
    """Reference category and dummies of a categorical predictor (Lucero et al. (2011), §3.2).

    The most common category is the reference; a category with fewer than
    ``min_size`` units gets no dummy (it is absorbed into the reference), so
    a dummy can never pick out a handful of units - the strategic dummy of
    Bleninger, Drechsler & Ronning (2011), §2.2. With ``rules="default"`` an
    empty category is absorbed and listed exactly like a sparse one, so the
    note never tells "no unit" from "a few units"; ``"mas2011"`` drops empty
    categories silently.

    Parameters
    ----------
    variable : str
        The predictor's name (for the note).
    levels : sequence of str
        Its categories, in metadata order.
    counts : sequence of int
        Units of the analysis sample in each category.
    min_size : int
        Smallest category that keeps a dummy.
    rules : {"default", "mas2011"}
        ``"mas2011"`` drops empty categories silently; ``"default"`` absorbs and lists them.

    Returns
    -------
    reference : str
        The reference level.
    kept : list of str
        The levels keeping a dummy.
    absorbed : list of str
        The absorbed levels.
    verdict : Verdict
        A passing verdict listing the absorption.
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


def interaction_support(
    term: str, cells: np.ndarray, n_cells: int, *, min_size: int, rules: str = "default"
) -> tuple[bool, Verdict]:
    """An interaction of categorical predictors is left out when a cell of it is sparse.

    With its lower-order terms, an interaction of categories fits the mean
    of every cell of their cross-classification, the reference rows
    included, so a cell of fewer than ``min_size`` units would be disclosed
    as a saturated model discloses it (Lucero et al. (2011), §3.2, citing
    Reznek (2003)); the whole interaction is absorbed instead. Levels
    without a dummy (the reference and absorbed ones) form one merged level.
    With ``rules="default"`` an empty cell counts as sparse too, so leaving
    the interaction out never tells "none" from "a few"; ``"mas2011"`` looks
    at the non-empty cells only. Reported under ``category_support``.

    Parameters
    ----------
    term : str
        The interaction as written (for the note).
    cells : ndarray of int
        The cell of every unit of the analysis sample, 0 .. ``n_cells`` - 1.
    n_cells : int
        Cells of the cross-classification.
    min_size : int
        Smallest allowed cell.
    rules : {"default", "mas2011"}
        ``"mas2011"`` judges non-empty cells only; ``"default"`` empty cells too.

    Returns
    -------
    keep : bool
        False when the interaction is left out.
    verdict : Verdict
        A passing verdict of ``category_support``, noting the interaction left out.
    """
    if rules == "default":
        counts = np.bincount(cells, minlength=n_cells)
    else:
        counts = np.unique(cells, return_counts=True)[1]
    if np.any(counts < min_size):
        return False, _pass(
            "category_support",
            "",
            [f"{term}: left out because a combination of its categories is too sparse"],
        )
    return True, _pass("category_support")


def absorption_retry(variable: str, level: str, reference: str) -> Verdict:
    """A category absorbed into its reference after an output rule refused the fit.

    Lucero et al. (2011), §3.2: "the system may attempt to absorb additional
    categories". The engine absorbs the sparsest remaining category and
    refits, up to ``max_absorption_retries`` times; each absorption is
    listed under ``category_support``.

    Parameters
    ----------
    variable : str
        The categorical predictor.
    level : str
        The absorbed category.
    reference : str
        Its reference category.

    Returns
    -------
    Verdict
        A passing verdict of ``category_support`` noting the absorption.
    """
    return _pass(
        "category_support",
        "",
        [
            f"{variable}: category {level!r} was absorbed into the reference {reference!r} "
            "so that the output could be released"
        ],
    )


def binary_predictor_support(
    columns: Mapping[str, np.ndarray], *, min_size: int, rules: str = "default"
) -> Verdict:
    """A numerical predictor taking two values must have enough units at each.

    Bleninger, Drechsler & Ronning (2011), §5, suggest "prohibiting
    regressions that contain dichotomous regressors with less than say 3
    positive outcomes": a 0/1 variable that is 1 for a single unit is the
    strategic dummy that reveals that unit's response, even when it is
    offered as a continuous variable. A column with a single value carries
    no information and is refused too. With ``rules="default"`` the single
    value is the case of two values one of which is held by no unit,
    refused with the same reason, so a refusal never tells "none" from "a
    few" from "all".

    Parameters
    ----------
    columns : mapping of str to ndarray
        Each numerical predictor (as written) and its values in the analysis sample.
    min_size : int
        Fewest units allowed at either value.
    rules : {"default", "mas2011"}
        ``"mas2011"`` tells one value from two; ``"default"`` gives one reason for all.

    Returns
    -------
    Verdict
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

    sdckit's own rule: the Gamma* threshold of Lucero et al. (2011), §3.1.1,
    applied to the sample a model really uses: missing values shrink the universe, and the
    Gamma protection must hold for that sample, not only for the universe.
    The units left out (``n_excluded``) must not be 1 .. ``min_cell_count`` - 1
    either: the released number of units, subtracted from the universe's
    total that a cross-tabulation of the same subsample releases, would
    count them - a cell of one or two units with a missing value.

    Parameters
    ----------
    n_complete : int
        Units with every variable observed.
    minimum : int
        Gamma*.
    n_excluded : int, default 0
        Units left out for a missing value (0 when counts are perturbed).
    min_cell_count : int, default 3
        Smallest allowed non-zero count.

    Returns
    -------
    Verdict
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

    sdckit's own rule: a model with nearly as many parameters as units fits
    them almost exactly, the units "predicted unusually well" of Lucero et
    al. (2011), §3.2.

    Parameters
    ----------
    df_resid : float
        Units minus parameters.
    minimum : int
        Fewest residual degrees of freedom allowed.

    Returns
    -------
    Verdict
    """
    if df_resid < minimum:
        return _refuse(
            "residual_degrees_of_freedom",
            "the model has too many parameters for the units in this universe; use fewer "
            "predictors, interactions or categories, or widen the universe",
        )
    return _pass("residual_degrees_of_freedom")


def design_rank(dependent_terms: Sequence[str], *, predictors_left: int = 0) -> Verdict:
    """Terms that are exact linear combinations of the terms before them are left out.

    sdckit's own rule: a rank-deficient design has no unique coefficients to
    release (the MAS fits ordinary least squares, Lucero et al. (2011), §3.2).
    As R's ``lm`` reports such a term's coefficient as NA (aliased), the
    server fits the model without the aliased columns (the same column space,
    hence the same fitted values, residuals and output checks) and lists each
    one it left out. The verdict depends on the Drop-q subsample's design
    and names the same terms the refusal of a rank-deficient design named,
    so it reveals nothing that refusal did not (docs/server.md, "Refusals
    reveal nothing"). When no predictor is left, the query is refused.

    Parameters
    ----------
    dependent_terms : sequence of str
        Design columns that are linear combinations of earlier ones.
    predictors_left : int, default 0
        Columns of the design, intercept aside, once those are left out
        (0 refuses: no model of the predictors asked for is left to fit).

    Returns
    -------
    Verdict
        Passed without remark for a full-rank design; passed with one
        adjustment per aliased term when predictors are left; refused otherwise.
    """
    if not dependent_terms:
        return _pass("design_rank")
    if predictors_left > 0:
        return _pass(
            "design_rank",
            "",
            [
                f"{term}: dropped, aliased with the terms before it (an exact linear "
                "combination of them in this universe; R's lm reports its coefficient as NA)"
                for term in dependent_terms
            ],
        )
    return _refuse(
        "design_rank",
        f"term(s) {list(dependent_terms)} are exact linear combinations of the terms before "
        "them in this universe (a predictor the universe holds fixed, or categories that "
        "always occur together) and cannot be left out with a predictor still to fit; use "
        "predictors that vary in this universe, or widen the universe",
    )


def r_squared_bound(r_squared: float, *, maximum: float) -> Verdict:
    """Output is suppressed when R-squared is too close to 1 (Lucero et al. (2011), §3.2).

    With such a fit, anyone knowing a unit's predictors could estimate its
    response almost exactly from the coefficients.

    Parameters
    ----------
    r_squared : float
        R-squared of the released coefficients (McFadden's for a logit).
    maximum : float
        The bound.

    Returns
    -------
    Verdict
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
    artificial outlier and the strategic dummy of Bleninger, Drechsler &
    Ronning (2011), §2.1-2.2 and Appendix A, disclose a value: Lucero et al.'s
    (2011), §3.2, "subset of units for whom the response variable can be
    predicted unusually well".

    Parameters
    ----------
    leverage : ndarray
        Every unit's leverage (diagonal of the hat matrix).
    maximum : float
        The bound.

    Returns
    -------
    Verdict
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
    (Lucero et al. (2011), §3.2).

    Parameters
    ----------
    residuals : ndarray
        True residuals of the released coefficients.
    scale : float
        Scale of the response (its standard deviation; 1 for a logit).
    tolerance : float
        A residual within ``tolerance * scale`` counts as exact.
    min_group : int
        Smallest group that may be predicted exactly.

    Returns
    -------
    Verdict
    """
    exact = int(np.count_nonzero(np.abs(residuals) <= tolerance * max(scale, 1e-300)))
    if 0 < exact < min_group:
        return _refuse(
            "exact_prediction",
            "the model predicts the response of a small group of units exactly; remove the "
            "predictor, category or interaction that isolates them, or widen the universe",
        )
    return _pass("exact_prediction")


def separated_outcomes(error: BaseException) -> Verdict:
    """A logistic model whose fit fails (separated outcomes) is refused as an exact prediction.

    Complete or quasi-complete separation means some units' outcomes are
    predicted with certainty (Lucero et al. (2011), §3.2: units "predicted
    unusually well"); the fit then fails or diverges. The reason names the
    error's type only, never its message (which could hold values).

    Parameters
    ----------
    error : BaseException
        What the fit raised (a linear-algebra or value error).

    Returns
    -------
    Verdict
        A refusal of ``exact_prediction``.
    """
    return _refuse(
        "exact_prediction",
        "the logistic model separates the outcomes (some units' outcomes are predicted "
        f"with certainty) and cannot be estimated safely: {type(error).__name__}; remove "
        "the predictor or category that isolates them",
    )


def undefined_standard_errors(std_errors: np.ndarray) -> Verdict:
    """A logistic model with an undefined standard error is refused as an exact prediction.

    An infinite or undefined standard error is the mark of separated
    outcomes (Lucero et al. (2011), §3.2: units "predicted unusually well").

    Parameters
    ----------
    std_errors : ndarray
        The fit's standard errors.

    Returns
    -------
    Verdict
        Refused when any is not finite; the engine lists it only then.
    """
    if not np.all(np.isfinite(std_errors)):
        return _refuse(
            "exact_prediction",
            "the logistic model has undefined standard errors (the outcomes are separated); "
            "remove the predictor or category that isolates some units",
        )
    return _pass("exact_prediction")


def correlation_bound(correlations: np.ndarray, names: Sequence[str], *, maximum: float) -> Verdict:
    """No pair of variables may be (almost) perfectly correlated: r^2 must not exceed ``maximum``.

    sdckit's own rule: a correlation is a one-predictor regression, so the
    R-squared rule of Lucero et al. (2011), §3.2, applies to every pair.

    Parameters
    ----------
    correlations : ndarray
        The correlation matrix.
    names : sequence of str
        The variables, in matrix order.
    maximum : float
        The bound on r^2.

    Returns
    -------
    Verdict
    """
    r2 = np.asarray(correlations, dtype=np.float64) ** 2
    np.fill_diagonal(r2, 0.0)
    if np.any(~np.isfinite(r2)) or np.any(r2 > maximum):
        i, j = np.unravel_index(int(np.nanargmax(np.where(np.isfinite(r2), r2, np.inf))), r2.shape)
        return _refuse(
            "correlation_bound",
            f"{names[int(i)]} and {names[int(j)]} are almost perfectly correlated (or one is constant) in "
            "this universe; one would reveal the other, remove one of them",
        )
    return _pass("correlation_bound")


# --------------------------------------------------------------------------- tables


def no_small_cells(table: np.ndarray, *, min_count: int = 3) -> Verdict:
    """No released cell or margin of a cross-tabulation may hold 1 .. min_count-1 units.

    sdckit's own rule for tables, applied when the perturbation is off:
    counts come from the Drop-q subsample, and a cell of 1 or 2 identifies
    units - the cell of 1 that a differencing attack reads (Lucero et al.
    (2011), §3.1.2, Figure 1).

    Parameters
    ----------
    table : ndarray
        The table's counts, with a row and a column of units missing a value.
    min_count : int, default 3
        Smallest allowed non-zero count.

    Returns
    -------
    Verdict
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
    top_contributions: np.ndarray,
    cell_totals: np.ndarray,
    *,
    n: int = 2,
    k: float = 0.9,
    value_counts: np.ndarray | None = None,
    min_count: int = 3,
    perturbed_counts: np.ndarray | None = None,
) -> tuple[np.ndarray, Verdict]:
    """(n, k) dominance rule for cell means of a continuous variable, and too-few-units cells.

    A cell is sensitive when its ``n`` largest absolute contributions exceed
    the share ``k`` of the cell's total of absolute values: its mean would
    then nearly reveal those units' values. sdckit's own rule: the (n, k)
    rule of magnitude tables applied to cell means (the MAS paper, Lucero et
    al. (2011), §3, states no rule for means).
    With ``value_counts`` a mean is also suppressed when too few units have
    a value: fewer than ``min_count`` (true counts), or, with
    ``perturbed_counts``, a perturbed count below ``min_count``, so that a
    cell of one or two units never shows a mean whatever its noise and the
    suppression does not reveal the true count.

    Parameters
    ----------
    top_contributions : ndarray
        Per cell, the sum of the n largest absolute values.
    cell_totals : ndarray
        Per cell, the sum of absolute values.
    n : int, default 2
        Number of dominant units.
    k : float, default 0.9
        Dominance share.
    value_counts : ndarray, optional
        Per cell, the units with a value (true counts).
    min_count : int, default 3
        Fewest units with a value for a released mean.
    perturbed_counts : ndarray, optional
        Per cell, the perturbed count of units with a value.

    Returns
    -------
    suppressed : ndarray of bool
        Cells whose mean must be suppressed.
    verdict : Verdict
        A passing verdict listing the suppressions.
    """
    totals = np.asarray(cell_totals, dtype=np.float64)
    tops = np.asarray(top_contributions, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(totals > 0, tops / totals, 0.0)
    suppressed = share > k
    adjustments = (
        [f"{int(suppressed.sum())} cell mean(s) dominated by at most {n} units were suppressed"]
        if suppressed.any()
        else []
    )
    if value_counts is not None:
        if perturbed_counts is None:
            few = (value_counts > 0) & (value_counts < min_count)
            note = "cell means with values for fewer units than the minimum were suppressed"
        else:
            few = np.asarray(perturbed_counts) < min_count
            note = "cell means of cells with few units were suppressed"
        if (few & (value_counts > 0)).any():
            adjustments.append(note)
        suppressed = suppressed | few
    return suppressed, _pass("dominance", "", adjustments)


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
    :func:`dominance` suppresses in a table. sdckit's own rule, beside the
    regression rules of Lucero et al. (2011), §3.2. Each group (the
    universe, every category and every cell of an interaction of categorical
    predictors that holds at least ``min_size`` units) must not be dominated.

    Parameters
    ----------
    response : str
        The response as written (for the reason).
    y : ndarray
        Response values of the analysis sample.
    groups : sequence of (description, codes)
        Group code of every unit (``-1``: in no group) and what the groups are
        (e.g. ``"a category of region"``).
    n : int, default 2
        Number of dominant units.
    k : float, default 0.9
        Dominance share.
    min_size : int, default 10
        Groups smaller than this are not judged (their dummies are absorbed).

    Returns
    -------
    Verdict
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
