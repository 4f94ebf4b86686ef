"""What the intruder attacks, behind one interface: ``Target.fit(query) -> Answer or Refused``.

A :class:`RegressionQuery` says what the intruder asks for: OLS of a
response on regressors she defines from her background knowledge (a known
variable, an artificial outlier, a strategic dummy; Bleninger, Drechsler &
Ronning 2011, eqs. 1-4), on a universe (a subset of the records given by
ranges of numeric variables and levels of categorical ones). Each target
answers it in its own way:

* :class:`NaiveServer` computes the regressors on its data and answers any
  OLS (numpy's least squares): what the paper attacks;
* :class:`LibraryServer` translates the query into what sdckit's
  :class:`~sdckit.server.AnalysisServer` accepts — a formula and a universe
  of categories and cutpoint bins — and returns its answer or its refusal;
* :class:`ServiceTarget` (in :mod:`sdckit.attacks.client`) sends the same
  translation to a running service through its public HTTP API.

A strategic dummy cannot be written in sdckit's formula language (no
arithmetic, no literal numbers), so the translation uses the equivalent
subset: a regression on the records where the dummy is 1 has the same
intercept as the dummy's ``ŷ`` (Appendix A.2), and its universe is the
conjunction of the known levels and of the cutpoint bins that overlap the
known interval — the closest query the server's grammar admits. An
artificial outlier is sent as its expression, which the formula grammar
refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from sdckit._docs import shared_doc
from sdckit._validation import check_dataframe, check_random_state, plain_value
from sdckit.attacks.regression import (
    DEFAULT_QUANTILES,
    RegressionAttackResult,
    artificial_outlier,
    attack_params,
    check_attack_inputs,
    dummy_mean_isolates,
    indicator_rows,
    outlier_distance,
    quantile_subsets,
    regression_attack,
    relative_errors,
    result_row,
    strategic_dummy,
    unique_maximum,
)
from sdckit.errors import ParameterError, SchemaError

__all__ = [
    "Answer",
    "ArtificialOutlier",
    "Factor",
    "LibraryServer",
    "MaskedRelease",
    "NaiveServer",
    "PublicMetadata",
    "Refused",
    "RegressionQuery",
    "StrategicDummy",
    "Target",
    "Variable",
    "attack",
    "universe_text",
]

#: The ``{{fit}}`` marker of every target's ``fit`` docstring: its Parameters and
#: Returns, written once (:func:`sdckit._docs.shared_doc`).
fit_doc = shared_doc(
    {
        "fit": """
        Parameters
        ----------
        query : RegressionQuery
            What the intruder asks.

        Returns
        -------
        Answer or Refused
        """
    }
)


# ---------------------------------------------------------------------------
# Queries and answers
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Variable:
    """A regressor that is a variable of the file, untransformed."""

    name: str


@dataclass(frozen=True)
class ArtificialOutlier:
    """``z = 1/(d + ε)``, d the distance from the known values (eq. 1; :func:`outlier_distance`)."""

    known: Mapping[str, Any]
    epsilon: float = 1e-4


@dataclass(frozen=True)
class StrategicDummy:
    """1 where the record matches the known values (eqs. 2-4; :func:`strategic_dummy`)."""

    known: Mapping[str, Any]
    gamma: Mapping[str, float] = field(default_factory=dict)
    delta: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Factor:
    """A categorical variable as predictors: one dummy per level but the most common.

    Terms are named ``"name[level]"``, as sdckit's server names them; a
    level without a coefficient (the reference, or one the server absorbed)
    contributes 0 to a prediction.
    """

    name: str


Regressor = Variable | ArtificialOutlier | StrategicDummy | Factor


@dataclass(frozen=True)
class RegressionQuery:
    """OLS of ``response`` on an intercept and ``regressors``, on a universe.

    ``universe`` maps a numeric column to a ``(low, high)`` range (``low <=
    x <= high``, either end None for open) and a categorical column to a
    tuple of levels; empty means every record.
    """

    response: str
    regressors: tuple[Regressor, ...]
    universe: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """A released regression: coefficients by term (``"Intercept"`` first) and units used.

    ``means`` holds the regressors' means when the target reports them (the
    dummy's mean is the intruder's isolation check) and ``unique_max``
    whether each regressor has a unique maximum (the artificial outlier's
    check); a server that reports neither leaves them empty.
    """

    terms: tuple[str, ...]
    coefficients: tuple[float, ...]
    n_obs: int
    means: Mapping[str, float] = field(default_factory=dict)
    unique_max: Mapping[str, bool] = field(default_factory=dict)

    def coefficient(self, term: str) -> float:
        """The coefficient of ``term`` (0 when the server left the term out).

        Parameters
        ----------
        term : str
            A term name as the target reports it.

        Returns
        -------
        float
        """
        return self.coefficients[self.terms.index(term)] if term in self.terms else 0.0


@dataclass(frozen=True)
class Refused:
    """A refused query and the server's reasons."""

    reasons: tuple[str, ...]


@runtime_checkable
class Target(Protocol):
    """Anything that answers regression queries the way an analyst would receive them.

    A protocol: any object with a ``name`` and a ``fit(query)`` method is a
    target; it is never instantiated itself.

    Parameters
    ----------
    *args, **kwargs
        Not used.
    """

    name: str

    @fit_doc
    def fit(self, query: RegressionQuery) -> Answer | Refused:
        """Answer ``query`` or refuse it.

        {{fit}}
        """


def universe_mask(data: pd.DataFrame, universe: Mapping[str, Any]) -> np.ndarray:
    """The records of ``data`` inside ``universe`` ({column: level, set of levels or (low, high)})."""
    mask = np.ones(len(data), dtype=bool)
    for column, condition in universe.items():
        series = data[column]
        if (
            isinstance(condition, tuple)
            and len(condition) == 2
            and not isinstance(condition[0], str)
        ):
            values = series.to_numpy(dtype=float)
            low, high = condition
            if low is not None:
                mask &= values >= low
            if high is not None:
                mask &= values <= high
        else:
            mask &= series.isin(list(condition)).to_numpy()
    return mask


class NaiveServer:
    """Unrestricted OLS on the raw data: the server Bleninger, Drechsler & Ronning (2011) attack.

    Parameters
    ----------
    data : DataFrame
        The confidential file (not modified).
    name : str, default "naive server"
    """

    def __init__(self, data: pd.DataFrame, *, name: str = "naive server") -> None:
        self.data = check_dataframe(data, "data")
        self.name = name

    @fit_doc
    def fit(self, query: RegressionQuery) -> Answer | Refused:
        """Least squares of the response on the intercept and the regressors.

        {{fit}}
            Always an answer unless the universe is empty.
        """
        sub = self.data[universe_mask(self.data, query.universe)]
        if len(sub) == 0:
            return Refused(("empty universe",))
        columns = [np.ones(len(sub))]
        terms = ["Intercept"]
        for i, regressor in enumerate(query.regressors):
            if isinstance(regressor, Variable):
                columns.append(sub[regressor.name].to_numpy(dtype=float))
                terms.append(regressor.name)
            elif isinstance(regressor, Factor):
                values = sub[regressor.name].astype(object)
                counts = values.value_counts(sort=True)
                for level in counts.index[1:]:
                    columns.append((values == level).to_numpy(dtype=float))
                    terms.append(f"{regressor.name}[{level}]")
            elif isinstance(regressor, ArtificialOutlier):
                distance = outlier_distance(sub, known=regressor.known)
                columns.append(artificial_outlier(distance, epsilon=regressor.epsilon))
                terms.append(f"z{i}")
            else:
                columns.append(
                    strategic_dummy(
                        sub, known=regressor.known, gamma=regressor.gamma, delta=regressor.delta
                    ).astype(float)
                )
                terms.append(f"s{i}")
        design = np.column_stack(columns)
        y = sub[query.response].to_numpy(dtype=float)
        beta = np.linalg.lstsq(design, y, rcond=None)[0]
        return Answer(
            tuple(terms),
            tuple(float(b) for b in beta),
            len(sub),
            means={t: float(c.mean()) for t, c in zip(terms[1:], columns[1:], strict=True)},
            unique_max={t: unique_maximum(c) for t, c in zip(terms[1:], columns[1:], strict=True)},
        )


def _format_number(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


class PublicMetadata:
    """What an analyst sees of a server's metadata: each variable's kind and inner cutpoints.

    Built from the public form (``AnalysisServer.public_metadata()`` or the
    service's ``GET /api/metadata``); the intruder translates her knowledge
    into universes with it and with nothing else.

    Parameters
    ----------
    public : mapping
        The public metadata, ``{"variables": {name: {...}}}``.
    """

    def __init__(self, public: Mapping[str, Any]) -> None:
        variables = public.get("variables")
        if not isinstance(variables, Mapping):
            raise ParameterError("public metadata must hold a 'variables' mapping")
        self.variables: dict[str, Mapping[str, Any]] = dict(variables)

    def is_categorical(self, name: str) -> bool:
        """Whether ``name`` is categorical.

        Parameters
        ----------
        name : str
            A variable the server offers.

        Returns
        -------
        bool
        """
        return self.variables[name].get("kind") == "categorical"

    def bin_of(self, name: str, value: float) -> int:
        """The cutpoint bin holding ``value`` (bins are ``[e_j, e_{j+1})``, numbered from 0).

        Parameters
        ----------
        name : str
            A continuous variable.
        value : float
            A value of it.

        Returns
        -------
        int
        """
        edges = np.asarray(self.variables[name]["cutpoints"]["inner_edges"], dtype=float)
        return int(np.searchsorted(edges, float(value), side="right"))

    def n_bins(self, name: str) -> int:
        """Number of cutpoint bins of a continuous variable.

        Parameters
        ----------
        name : str
            A continuous variable.

        Returns
        -------
        int
        """
        return len(self.variables[name]["cutpoints"]["inner_edges"]) + 1


def universe_text(metadata: PublicMetadata, universe: Mapping[str, Any]) -> str:
    """A universe in sdckit's universe language: levels, and the cutpoint bins overlapping a range.

    Parameters
    ----------
    metadata : PublicMetadata
        The server's public metadata (its inner cutpoints are public).
    universe : mapping
        Column -> ``(low, high)`` or a tuple of levels, as in :class:`RegressionQuery`.

    Returns
    -------
    str
        ``"ALL"`` or a conjunction such as ``"STATE in {CA} AND TOTSALES in bins 7, 8"``.
    """
    parts = []
    for column, condition in universe.items():
        if metadata.is_categorical(column):
            levels = ", ".join(quote_level(str(plain_value(v))) for v in condition)
            parts.append(f"{column} in {{{levels}}}")
        else:
            low, high = condition
            first = 0 if low is None else metadata.bin_of(column, low)
            last = metadata.n_bins(column) - 1 if high is None else metadata.bin_of(column, high)
            bins = ", ".join(str(b) for b in range(first, max(last, first) + 1))
            parts.append(f"{column} in bins {bins}")
    return " AND ".join(parts) if parts else "ALL"


def quote_level(level: str) -> str:
    """A category level as a quoted literal of the server's universe language."""
    # Always quoted: a level may be a keyword of the universe language (Oregon is "OR").
    return '"' + level.replace('"', '\\"') + '"'


def translate_query(
    query: RegressionQuery, metadata: PublicMetadata
) -> tuple[str | None, str, list[tuple[str, Regressor]]]:
    """(formula or None when not expressible, universe text, [(term, regressor)])."""
    universe = dict(query.universe)
    terms: list[str] = []
    mapping: list[tuple[str, Regressor]] = []
    for regressor in query.regressors:
        if isinstance(regressor, Variable | Factor):
            terms.append(regressor.name)
            mapping.append((regressor.name, regressor))
        elif isinstance(regressor, ArtificialOutlier):
            # The intruder's expression, as she would type it; the grammar refuses it.
            distance = " + ".join(
                f"abs({c} - {_format_number(v) if isinstance(v, int | float) else v})"
                for c, v in regressor.known.items()
            )
            terms.append(f"1/({distance} + {_format_number(regressor.epsilon)})")
        else:
            # The dummy's subset as a universe (see the module docstring).
            for column, value in regressor.known.items():
                if metadata.is_categorical(column):
                    universe[column] = (value,)
                    continue
                x = float(value)
                if column in regressor.gamma:
                    g = float(regressor.gamma[column])
                    low, high = x - g, x + g
                elif column in regressor.delta:
                    d = float(regressor.delta[column])
                    low, high = sorted((x / (1 + d), x / (1 - d)))
                else:
                    low = high = x
                previous = universe.get(column)
                if previous is not None:
                    low = max(low, previous[0]) if previous[0] is not None else low
                    high = min(high, previous[1]) if previous[1] is not None else high
                universe[column] = (low, high)
    if not terms:
        return None, universe_text(metadata, universe), mapping
    return f"{query.response} ~ {' + '.join(terms)}", universe_text(metadata, universe), mapping


class LibraryServer:
    """sdckit's :class:`~sdckit.server.AnalysisServer` (the library), default rules unless given.

    Parameters
    ----------
    server : AnalysisServer
        The server to attack; the intruder sees only its answers and its
        public metadata.
    name : str, default "sdckit AnalysisServer"
    """

    def __init__(self, server: Any, *, name: str = "sdckit AnalysisServer") -> None:
        self.server = server
        self.metadata = PublicMetadata(server.public_metadata())
        self.name = name

    @fit_doc
    def fit(self, query: RegressionQuery) -> Answer | Refused:
        """Send the translated query (see the module docstring) and return the server's answer.

        {{fit}}
            Refused with the server's reasons, or the released coefficients.
        """
        formula, universe, _ = translate_query(query, self.metadata)
        if formula is None:
            return Refused(
                ("the query has no regressor the server's formula language can express",)
            )
        result = self.server.regress(universe, formula)
        if getattr(result, "refused", False):
            return Refused(tuple(result.reasons))
        return Answer(
            tuple(c.term for c in result.coefficients),
            tuple(float(c.estimate) for c in result.coefficients),
            int(result.n_obs),
        )

    def ask(self, analysis: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Any analysis, answered as the service answers it (``to_dict()`` of the result).

        Parameters
        ----------
        analysis : {"crosstab", "regression", "correlation", "universe_check"}
            The analysis, named as the service's route.
        body : mapping
            The request body the service takes (``universe``, ``rows``,
            ``mean_of``, ``formula``, ``variables``...).

        Returns
        -------
        dict
            ``status`` "ok" with the released numbers, or "refused" with ``refusals``.
        """
        universe = body.get("universe")
        if analysis == "crosstab":
            result = self.server.crosstab(
                universe, body["rows"], body.get("cols"), mean_of=body.get("mean_of")
            )
        elif analysis == "regression":
            result = self.server.regress(universe, body["formula"], body.get("family", "ols"))
        elif analysis == "correlation":
            result = self.server.correlation(universe, list(body["variables"]))
        elif analysis == "universe_check":
            result = self.server.universe_check(universe)
        else:
            raise ParameterError(
                f"analysis must be crosstab, regression, correlation or universe_check, "
                f"got {analysis!r}"
            )
        return dict(result.to_dict())


class MaskedRelease:
    """A masked file the intruder holds whole: she fits any regression on it.

    Parameters
    ----------
    masked : DataFrame
        The released file (same rows in the same order as the original).
    name : str, default "masked release"
    """

    def __init__(self, masked: pd.DataFrame, *, name: str = "masked release") -> None:
        self.data = check_dataframe(masked, "masked")
        self.name = name
        self._naive = NaiveServer(masked, name=name)

    @fit_doc
    def fit(self, query: RegressionQuery) -> Answer | Refused:
        """Least squares on the released file.

        {{fit}}
        """
        return self._naive.fit(query)


# ---------------------------------------------------------------------------
# The attack against any target
# ---------------------------------------------------------------------------


def _prediction(answer: Answer, query: RegressionQuery, known: Mapping[str, Any]) -> float:
    """ŷ_m from the coefficients: intercept + Σ β·(target's regressor value)."""
    value = answer.coefficient(answer.terms[0]) if answer.terms else 0.0
    for i, regressor in enumerate(query.regressors):
        if isinstance(regressor, Variable):
            value += answer.coefficient(regressor.name) * float(known[regressor.name])
        elif isinstance(regressor, Factor):
            value += answer.coefficient(f"{regressor.name}[{known[regressor.name]}]")
        elif isinstance(regressor, ArtificialOutlier):
            value += answer.coefficient(f"z{i}") / regressor.epsilon
        else:
            value += answer.coefficient(f"s{i}")
    return value


def _isolated(answer: Answer, attack_name: str) -> bool:
    """The intruder's isolation check on an answer (Bleninger, Drechsler & Ronning 2011, §4.2).

    The dummy's mean is 1/n, or z has a unique maximum, when the target
    reports them; otherwise a released count of units used of 1 or 2.
    """
    if attack_name == "dummy" and "s0" in answer.means:
        return dummy_mean_isolates(answer.means["s0"], answer.n_obs)
    if attack_name == "outlier" and "z0" in answer.unique_max:
        return bool(answer.unique_max["z0"])
    return answer.n_obs <= 2


def _dummy_regressors(
    regressor: StrategicDummy, extra: Sequence[str], for_library: bool
) -> tuple[Regressor, ...]:
    # The library form needs a term besides the universe: the size variable, which the intruder knows.
    if for_library and not extra:
        return (regressor, Variable(next(iter(regressor.known))))
    return (regressor, *(Variable(c) for c in extra))


def _query_row(
    target: Target,
    data: pd.DataFrame,
    form: str,
    label: str,
    columns: list[str],
    categorical: list[str],
    tolerance: float | None,
    bg: list[str],
    extras: list[str],
    sensitive: str,
    approx_mode: str,
    epsilon: float,
    universe: dict[str, Any],
    positions: np.ndarray,
    truth: np.ndarray,
    quantile: float,
    n: int,
    for_library: bool,
) -> dict[str, Any]:
    """One table row: one query per target through ``target.fit``.

    ``form`` is "outlier", "dummy" (the strategic dummy; for a server its
    subset as a universe) or "factors" (the dummy's numeric conditions as a
    universe and its categorical ones as categorical predictors, whose
    coefficient for the target's level carries the target's deviation).
    """
    predicted = np.full(len(positions), np.nan)
    answered = np.zeros(len(positions), dtype=bool)
    isolated = np.zeros(len(positions), dtype=bool)
    units = np.full(len(positions), np.nan)
    tolerances = {} if tolerance is None else {bg[0]: tolerance}
    for t, position in enumerate(positions):
        known = {c: plain_value(data[c].iloc[position]) for c in bg}
        subset_known = {c: known[c] for c in columns}
        regressors: tuple[Regressor, ...]
        if form == "outlier":
            regressors = (ArtificialOutlier(subset_known, epsilon), *(Variable(c) for c in extras))
        else:
            kept = subset_known
            if form == "factors":
                kept = {c: v for c, v in subset_known.items() if c not in categorical}
            dummy = StrategicDummy(
                kept,
                gamma=tolerances if approx_mode == "additive" else {},
                delta=tolerances if approx_mode == "multiplicative" else {},
            )
            regressors = _dummy_regressors(dummy, extras, for_library)
            if form == "factors":
                regressors = (*regressors, *(Factor(c) for c in categorical))
        query = RegressionQuery(sensitive, regressors, universe)
        answer = target.fit(query)
        if not isinstance(answer, Answer):
            continue
        answered[t] = True
        if for_library:
            terms = tuple(r for r in regressors if not isinstance(r, StrategicDummy))
            predicted[t] = _prediction(answer, RegressionQuery(sensitive, terms, universe), known)
        else:
            predicted[t] = _prediction(answer, query, known)
        isolated[t] = _isolated(answer, "outlier" if form == "outlier" else "dummy")
        units[t] = answer.n_obs
    errors = relative_errors(predicted, truth)
    name = {
        "outlier": "artificial outlier",
        "dummy": "strategic dummy",
        "factors": "strategic dummy as categorical predictors",
    }[form]
    smallest = float(np.nanmin(units)) if answered.any() else float("nan")
    return result_row(quantile, name, label, n, isolated, errors, answered, smallest)


def attack(
    data: pd.DataFrame,
    *,
    target: Target,
    sensitive: str,
    background: Sequence[str] | str,
    approx: float | None = None,
    approx_mode: str = "multiplicative",
    epsilon: float = 1e-4,
    size: str | None = None,
    quantiles: Sequence[float] = DEFAULT_QUANTILES,
    extra: Sequence[str] | str | None = None,
    attacks: Sequence[str] | str = ("outlier", "dummy"),
    max_targets: int | None = 200,
    random_state: Any = None,
    through_queries: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> RegressionAttackResult:
    """Run the regression attacks of :func:`regression_attack` against any :class:`Target`.

    A :class:`NaiveServer` or :class:`MaskedRelease` is attacked with the
    fast per-target fits of :func:`regression_attack` (every record is a
    target). Any other target (sdckit's server, a live service) gets one
    query per target and row of the table, through :meth:`Target.fit`
    only; ``max_targets`` targets per subset are drawn at random (the
    largest records when the subset is smaller).

    Parameters
    ----------
    data : DataFrame
        The confidential file: the intruder's background knowledge and the
        truth the answers are scored against. The target never sees it
        through this function.
    target : Target
        What is attacked.
    sensitive, background, approx, approx_mode, epsilon, size, quantiles, extra, attacks
        As in :func:`regression_attack`.
    max_targets : int or None, default 200
        Targets per subset for a server target (None: every record).
    random_state : None, int or numpy.random.Generator
        Draws the targets of a server attack.
    through_queries : bool, default False
        Send one query per target through ``target.fit`` even for a naive
        server or a masked release (slow; it checks the fast fits).
    progress : callable, optional
        Called as ``progress(done, total)``.

    Returns
    -------
    RegressionAttackResult
        The paper's columns; for a server, ``answered`` is the share of
        queries answered, ``identified`` the share of answers that the
        intruder's isolation check shows to single out 1 or 2 units (a
        released count of units used of 1 or 2), and ``recovered`` the
        share of targets whose value came back within 1%.
    """
    if isinstance(target, NaiveServer | MaskedRelease) and not through_queries:
        # The whole file is at hand: the closed-form attack, without a query per target.
        naive_on_data = isinstance(target, NaiveServer) and target.data is data
        return regression_attack(
            data,
            sensitive=sensitive,
            background=background,
            approx=approx,
            approx_mode=approx_mode,
            epsilon=epsilon,
            size=size,
            quantiles=quantiles,
            extra=extra,
            attacks=attacks,
            released=None if naive_on_data else target.data,
            target_name=target.name,
            progress=progress,
        )
    if not isinstance(target, Target):
        raise ParameterError(f"target must have a fit(query) method, got {type(target).__name__}")
    bg, size_column, extras, approx, epsilon, qs, chosen = check_attack_inputs(
        data, sensitive, background, size, extra, approx, approx_mode, epsilon, quantiles, attacks
    )
    if max_targets is not None and (isinstance(max_targets, bool) or int(max_targets) < 1):
        raise ParameterError(f"max_targets must be a positive integer or None, got {max_targets!r}")
    metadata = getattr(target, "metadata", None)
    if metadata is not None:
        for c in [sensitive, *bg]:
            if c not in metadata.variables:
                raise SchemaError(
                    f"{c!r} is not a variable the server offers (its metadata lists "
                    f"{sorted(metadata.variables)})"
                )
    rng = check_random_state(random_state)
    truth_all = data[sensitive].to_numpy(dtype=float)
    subsets = quantile_subsets(data, size_column, qs)
    sizes = data[size_column].to_numpy(dtype=float)
    rows = []
    for_library = metadata is not None
    total = len(subsets)
    for done, (q, positions) in enumerate(subsets):
        chosen_positions = positions
        if max_targets is not None and len(positions) > max_targets:
            chosen_positions = np.sort(rng.choice(positions, int(max_targets), replace=False))
        universe: dict[str, Any] = {}
        if q > 0:
            universe[size_column] = (float(sizes[positions].min()), None)
        for attack_name in chosen:
            for label, columns, tolerance in indicator_rows(bg, approx, attack_name):
                forms = [attack_name]
                categorical = [
                    c for c in columns if metadata is not None and metadata.is_categorical(c)
                ]
                if attack_name == "dummy" and categorical:
                    forms.append("factors")
                for form in forms:
                    rows.append(
                        _query_row(
                            target,
                            data,
                            form,
                            label,
                            columns,
                            categorical,
                            tolerance,
                            bg,
                            extras,
                            sensitive,
                            approx_mode,
                            epsilon,
                            universe,
                            chosen_positions,
                            truth_all[chosen_positions],
                            q,
                            len(positions),
                            for_library,
                        )
                    )
        if progress is not None:
            progress(done + 1, total)
    params = attack_params(
        sensitive, bg, size_column, approx, approx_mode, epsilon, qs, extras, chosen
    )
    params["max_targets"] = max_targets
    return RegressionAttackResult(table=pd.DataFrame(rows), target=target.name, params=params)
