"""The base of every assessment measure's result: the measure protocol, with its defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from sdckit._results import FrozenResult

__all__ = ["MeasureResult"]


@dataclass(frozen=True)
class MeasureResult(FrozenResult):
    """Base of the comparison results: :class:`sdckit.assess.measures.Measure`, documented once.

    A subclass overrides :meth:`summary`, :meth:`headline` unless its headline
    keys are its attributes' names, and :meth:`note` when it has a finding of
    its own; ``LABELS`` maps its headline keys to the labels of the report's
    summary table.
    """

    LABELS: ClassVar[Mapping[str, str]] = {}

    def headline(self) -> dict[str, float]:
        """The key figures as ``{name: number}`` (one row of a sweep table).

        Returns
        -------
        dict
            Names unique across the measures; by default every ``LABELS`` key
            with the value of the attribute of that name (none without labels).
        """
        return {key: float(getattr(self, key)) for key in self.LABELS}

    def note(self) -> str | None:
        """One plain-language sentence for the report's notes.

        Returns
        -------
        str or None
            None (the default) when the figures speak in the summary.
        """
        return None
