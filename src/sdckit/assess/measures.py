"""The measure protocol of the assessment, and the registry the assessment and its report iterate over.

Every comparison result (a utility or risk measure of one release) provides
:meth:`Measure.summary`, :meth:`Measure.headline` and :meth:`Measure.note`.
:func:`~sdckit.assess.assess` computes every registered measure from one
:class:`MeasureInputs`; :class:`~sdckit.assess.Utility` and
:class:`~sdckit.assess.Risk` hold them by name; :class:`~sdckit.assess.Assessment`
builds its summary, its headline figures (one row of a sweep table) and its
notes, and :func:`~sdckit.assess.report` its summary table and figure list,
by walking :data:`MEASURES` rather than naming each measure. To add a measure:

1. in a module of its own (or ``utility.py``/``risk.py``), write its result
   class (a frozen :class:`MeasureResult` with ``summary()``, ``headline()``,
   ``note()`` when it has a finding, and a ``LABELS`` mapping of its headline
   keys to report labels) and a function ``compute(inputs)`` taking
   a :class:`MeasureInputs` and returning the result, or None where the
   measure does not apply (work several measures share, such as the
   nearest-record search or the regression, is on the inputs, done once);
2. add one :class:`MeasureSpec` line to :data:`MEASURES` below, importing
   the module (a ``figure=`` drawing function puts a figure in the report).

Nothing else changes: the assessment, its summary, headline and notes, the
report, the sweep table and the command line (which prints the summary)
follow the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from sdckit.assess import categorical, risk, utility
from sdckit.assess._inputs import MeasureInputs
from sdckit.assess._result import MeasureResult

__all__ = [
    "MEASURES",
    "Measure",
    "MeasureFigure",
    "MeasureInputs",
    "MeasureResult",
    "MeasureSpec",
    "headline_labels",
    "measures_of",
    "registered",
]


@runtime_checkable
class Measure(Protocol):
    """What every assessment measure's result provides.

    A protocol: results provide it by having the three methods, without
    inheriting from it (:class:`MeasureResult` gives ``headline`` and ``note``
    defaults and their documentation).

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol is not instantiated.
    """

    def summary(self) -> str:
        """Text for a person, one or several lines."""
        ...

    def headline(self) -> dict[str, float]:
        """The key figures as ``{name: number}``: names unique across measures."""
        ...

    def note(self) -> str | None:
        """One plain-language finding for the report's notes, or None when there is none."""
        ...


class MeasureFigure(NamedTuple):
    """A measure's figure in the report: what a ``figure=`` drawing function returns.

    Parameters
    ----------
    title : str
        Its heading.
    caption : str
        What it shows, for a person (cite the paper it comes from).
    figure : matplotlib.figure.Figure
        The drawing (a ``matplotlib.figure.Figure``, no pyplot state needed).
    """

    title: str
    caption: str
    figure: Any


@dataclass(frozen=True)
class MeasureSpec:
    """One registered measure.

    Attributes
    ----------
    name : str
        Its name: the attribute of :class:`~sdckit.assess.Utility` or
        :class:`~sdckit.assess.Risk` that holds it.
    side : {"utility", "risk"}
        Which half of the assessment holds it.
    result : type
        Its result class (provides :class:`Measure`).
    compute : callable
        ``compute(inputs)`` with a :class:`MeasureInputs`: the result, or None
        where the measure does not apply to the data.
    note_rank : int
        Where its note goes among the notes, most important first (smaller first).
    figure_rank : int
        Where its figures go in the report (smaller first).
    figure : callable, optional
        ``figure(result)``: a :class:`MeasureFigure` for the report, or None.
        The built-in measures' figures are drawn by ``report.py`` itself.
    """

    name: str
    side: Literal["utility", "risk"]
    result: type
    compute: Callable[[MeasureInputs], Any]
    note_rank: int
    figure_rank: int
    figure: Callable[[Any], MeasureFigure | None] | None = None


# How each built-in measure is computed from the shared inputs (None where it does not apply).


def _columnwise(
    measure: Callable[..., Any], over: str, minimum: int = 1, **options: str
) -> Callable[[MeasureInputs], Any]:
    """``compute`` of a measure over the inputs' ``over`` columns ("numeric" or "categorical").

    None with fewer than ``minimum`` such columns; ``options`` map the
    measure's keyword arguments to the inputs' attributes.
    """

    def compute(i: MeasureInputs) -> Any:
        columns = getattr(i, over)
        if len(columns) < minimum:
            return None
        extra = {name: getattr(i, attribute) for name, attribute in options.items()}
        return measure(i.original, i.masked, columns=columns, schema=i.schema, **extra)

    return compute


_correlation = _columnwise(utility.compare_correlations, "numeric", 2, top="top")
_moments = _columnwise(utility.compare_moments, "numeric")
_pca = _columnwise(utility.compare_pca, "numeric", 2)
_mi = _columnwise(utility.compare_mutual_information, "categorical", 2)
_mahalanobis = _columnwise(risk.compare_mahalanobis, "numeric", top="top")
_interval = _columnwise(risk.interval_disclosure, "numeric", k="interval_k")


def _regression(i: MeasureInputs) -> utility.RegressionComparison | None:
    return i.regression


def _prediction(i: MeasureInputs) -> utility.PredictionCheck | None:
    if not i.prediction or i.response is None:
        return None
    return utility.prediction_check(
        i.original,
        i.masked,
        i.response,
        i.predictors,
        schema=i.schema,
        holdout=i.holdout,
        n_replications=i.prediction_replications,
        n_jobs=i.n_jobs,
        random_state=i.random_state,
    )


def _linkage(i: MeasureInputs) -> risk.RecordLinkage:
    if list(i.linkage_columns) == list(i.columns):
        found = i.search[2]  # the search of the distance to the closest record
    else:
        found = i.link(*i.design(i.linkage_columns))
    return risk.RecordLinkage.from_search(i.original.index, i.linkage_columns, found)


def _closest(i: MeasureInputs) -> risk.DistanceToClosest:
    x0, x1, found = i.search
    return risk.DistanceToClosest.from_search(
        i.original.index,
        i.columns,
        i.scale,
        x0,
        x1,
        found,
        backend=i.backend,
        chunk_size=i.chunk_size,
        n_jobs=i.n_jobs,
    )


def _cooks(i: MeasureInputs) -> risk.ExtremeRecords | None:
    regression = i.regression
    if regression is None:
        return None
    return risk.ExtremeRecords(
        "Cook's distance",
        regression.original.cooks_distance.reindex(i.original.index),
        regression.masked.cooks_distance.reindex(i.masked.index),
        i.top,
    )


def _keys(i: MeasureInputs) -> risk.KeyRiskComparison | None:
    if not i.keys:
        return None
    return risk.compare_key_risk(
        i.original, i.masked, i.keys, sensitive=i.sensitive, schema=i.schema
    )


def _individual(i: MeasureInputs) -> categorical.IndividualRiskComparison | None:
    if not i.keys:
        return None
    return categorical.compare_individual_risk(i.original, i.masked, i.keys, schema=i.schema)


#: The registered measures. Within each side, this order is the order of the
#: summary and of the headline figures; notes and figures follow their ranks.
MEASURES: tuple[MeasureSpec, ...] = (
    # name, side, result class, compute, note rank, figure rank
    MeasureSpec("correlation", "utility", utility.CorrelationComparison, _correlation, 60, 10),
    MeasureSpec("moments", "utility", utility.MomentComparison, _moments, 90, 70),
    MeasureSpec("pca", "utility", utility.PCAComparison, _pca, 80, 60),
    MeasureSpec("regression", "utility", utility.RegressionComparison, _regression, 70, 20),
    MeasureSpec("mutual_information", "utility", utility.MutualInformationComparison, _mi, 95, 95),
    MeasureSpec("prediction", "utility", utility.PredictionCheck, _prediction, 100, 100),
    MeasureSpec("linkage", "risk", risk.RecordLinkage, _linkage, 10, 45),
    MeasureSpec("distance_to_closest", "risk", risk.DistanceToClosest, _closest, 40, 50),
    MeasureSpec("mahalanobis", "risk", risk.ExtremeRecords, _mahalanobis, 20, 40),
    MeasureSpec("cooks", "risk", risk.ExtremeRecords, _cooks, 30, 30),
    MeasureSpec("interval", "risk", risk.IntervalDisclosure, _interval, 55, 55),
    MeasureSpec("keys", "risk", risk.KeyRiskComparison, _keys, 50, 90),
    MeasureSpec(
        "individual_risk", "risk", categorical.IndividualRiskComparison, _individual, 52, 92
    ),
)


def registered(side: str | None = None) -> tuple[MeasureSpec, ...]:
    """The measures registered now (:data:`MEASURES`, read when called), of one side or all.

    Parameters
    ----------
    side : {"utility", "risk"}, optional
        Only the measures of this side; default all.

    Returns
    -------
    tuple of MeasureSpec
        In registration order.
    """
    return tuple(spec for spec in MEASURES if side is None or spec.side == side)


def measures_of(holder: object, side: str) -> list[tuple[MeasureSpec, Measure]]:
    """The registered measures of one side present in ``holder``, in registration order.

    Parameters
    ----------
    holder : Utility or Risk
        Holds each measure of ``side`` as the attribute named by its spec
        (None when the measure does not apply).
    side : {"utility", "risk"}
        Which registered measures to look up.

    Returns
    -------
    list of (MeasureSpec, Measure)
        The measures that are not None.
    """
    found = []
    for spec in registered(side):
        value = getattr(holder, spec.name)
        if value is not None:
            found.append((spec, value))
    return found


def headline_labels() -> Mapping[str, str]:
    """Labels of the headline keys for a report, from every registered measure's ``LABELS``.

    Returns
    -------
    mapping
        ``{headline key: label}``; a key without a label is shown with its
        underscores as spaces.
    """
    labels: dict[str, str] = {}
    for spec in registered():
        labels.update(getattr(spec.result, "LABELS", {}))
    return labels
