"""The sdckit exception hierarchy.

Every error sdckit raises on purpose derives from :class:`SDCError`, so a
caller (and the command line) can tell a problem with the input or the
parameters from a bug. Messages name the column, parameter or row at fault.
"""

from __future__ import annotations

__all__ = [
    "DataError",
    "InfeasibleError",
    "ParameterError",
    "RuleViolation",
    "SDCDeprecationWarning",
    "SDCError",
    "SchemaError",
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
    """A confidentiality rule refuses a request; ``rule`` names it, ``reason`` says why."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"{rule}: {reason}")
        self.rule = rule
        self.reason = reason


class SDCDeprecationWarning(DeprecationWarning):
    """An old spelling that still works for one release (the message names the new one)."""
