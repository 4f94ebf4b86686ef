"""The measure protocol of the assessment, and the registry the assessment and its report iterate over.

Every comparison result (a utility or risk measure of one release) provides
:meth:`Measure.summary`, :meth:`Measure.headline` and :meth:`Measure.note`.
:class:`~sdckit.assess.Assessment` builds its summary, its headline figures
(one row of a sweep table) and its notes, and :func:`~sdckit.assess.report`
its summary table and figure list, by walking :data:`MEASURES` rather than
naming each measure. To add a measure:

1. write its result class (a :class:`~sdckit._results.FrozenResult` with
   ``summary()``, ``headline()``, ``note()`` and a ``LABELS`` mapping of its
   headline keys to report labels) and its function, in ``utility.py``,
   ``risk.py`` or a module of its own;
2. add one :class:`MeasureSpec` line to :data:`MEASURES` below;
3. give :class:`~sdckit.assess.Utility` or :class:`~sdckit.assess.Risk` its
   field, and compute it in :func:`~sdckit.assess.assess` (measures share
   work there: Cook's distances come from the regression, the linkage and
   the distance to the closest record from one search);
4. for a figure, register a drawing function in ``report.py``'s
   ``_MEASURE_FIGURES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from sdckit.assess.risk import (
    DistanceToClosest,
    ExtremeRecords,
    IntervalDisclosure,
    KeyRiskComparison,
    RecordLinkage,
)
from sdckit.assess.utility import (
    CorrelationComparison,
    MomentComparison,
    MutualInformationComparison,
    PCAComparison,
    PredictionCheck,
    RegressionComparison,
)

__all__ = ["MEASURES", "Measure", "MeasureSpec", "headline_labels", "measures_of"]


@runtime_checkable
class Measure(Protocol):
    """What every assessment measure's result provides.

    A protocol: results provide it by having the three methods, without
    inheriting from it.

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


@dataclass(frozen=True)
class MeasureSpec:
    """One registered measure.

    Attributes
    ----------
    name : str
        Its field of :class:`~sdckit.assess.Utility` or :class:`~sdckit.assess.Risk`.
    side : {"utility", "risk"}
        Which half of the assessment holds it.
    result : type
        Its result class (provides :class:`Measure`).
    note_rank : int
        Where its note goes among the notes, most important first (smaller first).
    figure_rank : int
        Where its figures go in the report (smaller first).
    """

    name: str
    side: Literal["utility", "risk"]
    result: type
    note_rank: int
    figure_rank: int


#: The registered measures. Within each side, this order is the order of the
#: summary and of the headline figures; notes and figures follow their ranks.
MEASURES: tuple[MeasureSpec, ...] = (
    MeasureSpec("correlation", "utility", CorrelationComparison, note_rank=60, figure_rank=10),
    MeasureSpec("moments", "utility", MomentComparison, note_rank=90, figure_rank=70),
    MeasureSpec("pca", "utility", PCAComparison, note_rank=80, figure_rank=60),
    MeasureSpec("regression", "utility", RegressionComparison, note_rank=70, figure_rank=20),
    MeasureSpec(
        "mutual_information", "utility", MutualInformationComparison, note_rank=95, figure_rank=95
    ),
    MeasureSpec("prediction", "utility", PredictionCheck, note_rank=100, figure_rank=100),
    MeasureSpec("linkage", "risk", RecordLinkage, note_rank=10, figure_rank=45),
    MeasureSpec("distance_to_closest", "risk", DistanceToClosest, note_rank=40, figure_rank=50),
    MeasureSpec("mahalanobis", "risk", ExtremeRecords, note_rank=20, figure_rank=40),
    MeasureSpec("cooks", "risk", ExtremeRecords, note_rank=30, figure_rank=30),
    MeasureSpec("interval", "risk", IntervalDisclosure, note_rank=55, figure_rank=55),
    MeasureSpec("keys", "risk", KeyRiskComparison, note_rank=50, figure_rank=90),
)


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
    for spec in MEASURES:
        if spec.side == side:
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
    for spec in MEASURES:
        labels.update(getattr(spec.result, "LABELS", {}))
    return labels
