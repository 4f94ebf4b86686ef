"""The sdckit exception hierarchy.

Every error sdckit raises on purpose derives from :class:`SDCError`, so a
caller (and the command line) can tell a problem with the input or the
parameters from a bug. Messages name the column, parameter or row at fault.

The analysis server's exceptions live here too: :class:`RuleViolation` is
the one exception that stands for a refusal (the server answers it with a
refusal naming ``rule``, never with an error); :class:`UniverseError` and
:class:`FormulaError` are the two refusals a query's definition can raise
before any rule of the data runs; :class:`AnalysisTimeout` stops an analysis
that runs past the server's limit.
"""

from __future__ import annotations

__all__ = [
    "AnalysisTimeout",
    "DataError",
    "FormulaError",
    "InfeasibleError",
    "ParameterError",
    "RuleViolation",
    "SDCDeprecationWarning",
    "SDCError",
    "SchemaError",
    "UniverseError",
]


class SDCError(Exception):
    """Base class of every error sdckit raises deliberately."""


class ParameterError(SDCError, ValueError):
    """A parameter has a value the method cannot use (the message names it)."""


class SchemaError(SDCError, ValueError):
    """A column is missing, has the wrong kind of values, or a role is inconsistent."""


class DataError(SDCError, ValueError):
    """The data themselves cannot be processed (missing values, empty input, unreadable file)."""


class InfeasibleError(SDCError):
    """An optimisation or a requested property cannot be satisfied by any solution."""


class RuleViolation(SDCError):
    """A confidentiality or query rule refuses a request; ``rule`` names it, ``reason`` says why.

    The analysis server turns it into a refusal (``Refusal`` with one
    failing verdict ``rule: reason``), as it does for a rule function's
    failing verdict; the reason never states a protected count.

    Parameters
    ----------
    rule : str
        The rule's name, as a verdict names it (e.g. ``"universe_definition"``).
    reason : str
        What is wrong and what the analyst can change.
    """

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"{rule}: {reason}")
        self.rule = rule
        self.reason = reason


class SDCDeprecationWarning(DeprecationWarning):
    """An old spelling that still works for one release (the message names the new one)."""


class _DefinitionError(RuleViolation, ParameterError):
    """A query part that does not fit the grammar or the metadata (``str()`` is the reason)."""

    rule = ""

    def __init__(self, message: str) -> None:
        RuleViolation.__init__(self, type(self).rule, message)
        # The message alone, as before: callers and the command line print it.
        self.args = (message,)

    def __str__(self) -> str:
        return self.reason


class UniverseError(_DefinitionError):
    """A universe cannot be understood: unknown variable, level or bin, or bad syntax.

    A refusal by the ``universe_definition`` rule; also a :class:`ParameterError`.

    Parameters
    ----------
    message : str
        What is wrong and what is allowed instead.
    """

    rule = "universe_definition"


class FormulaError(_DefinitionError):
    """A formula does not follow the grammar; ``position`` is the offending character.

    A refusal by the ``formula_syntax`` rule; also a :class:`ParameterError`.

    Parameters
    ----------
    message : str
        What is wrong, naming the position.
    position : int, optional
        0-based index of the offending character in the formula text.
    """

    rule = "formula_syntax"

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


class AnalysisTimeout(ParameterError):
    """An analysis of the analysis server ran past the server's maximum run time."""
