"""A maximum run time per analysis: a deadline the long steps check.

An analysis runs in one thread and cannot be stopped from outside, so the
engine sets a deadline before it starts and the steps that can take long
(each fit, each nested fit of a deviance table, each refit after absorbing
a category) call :func:`check_deadline`. Past it, the analysis stops with
:class:`AnalysisTimeout`, an invalid query (nothing is released).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator

from sdckit.errors import AnalysisTimeout

__all__ = ["AnalysisTimeout", "check_deadline", "deadline"]

_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar(
    "sdckit_analysis_deadline", default=None
)


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Run the block under a deadline of ``seconds`` (None: no limit).

    Parameters
    ----------
    seconds : float or None
        The maximum run time.

    Yields
    ------
    None
    """
    if seconds is None:
        yield
        return
    token = _DEADLINE.set((time.monotonic() + float(seconds), float(seconds)))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_deadline() -> None:
    """Raise :class:`AnalysisTimeout` when the current analysis is past its deadline."""
    current = _DEADLINE.get()
    if current is not None and time.monotonic() > current[0]:
        raise AnalysisTimeout(
            f"the analysis took longer than the server allows ({current[1]:g} s); use fewer "
            "predictors, interactions or categories, or a smaller universe"
        )
