"""The one frozen-result base every sdckit result is built on.

Every capability returns a *result*: a frozen dataclass whose mapping fields
(``params``, ``stats`` and the like) are read-only views, and whose
``summary()`` is text for a person. This module is the bottom layer (it
imports nothing from sdckit but :mod:`sdckit._docs`), so masking, tables, assessment, swap-rate
estimation and the packages still to come share one definition of "frozen"
rather than each writing ``MappingProxyType`` again.

A subclass is an ordinary ``@dataclass(frozen=True)``; it gets, for free:

* every field whose value is a ``dict`` (or any mutable mapping) at
  construction replaced by a read-only ``MappingProxyType`` copy, so neither
  the caller's dict nor the result can be changed afterwards;
* :meth:`FrozenResult.summary`, a plain default (the result's name and its
  scalar fields) that a subclass overrides with text in its field's words;
* pickling, which ``MappingProxyType`` alone does not support (results cross
  process boundaries in parallel and distributed runs).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

import pandas as pd

from sdckit._docs import shared_doc

__all__ = ["FrozenResult", "MicrodataResult", "freeze"]


def freeze(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A read-only copy of ``mapping`` (an empty one for None).

    Parameters
    ----------
    mapping : mapping or None
        The mapping to copy; its values are not copied.

    Returns
    -------
    mapping
        A ``MappingProxyType`` over a new dict; assigning to it raises
        ``TypeError``.
    """
    if isinstance(mapping, MappingProxyType):
        return mapping
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class FrozenResult:
    """Base of every sdckit result: frozen, with read-only mappings and a summary.

    Subclasses declare their fields as a frozen dataclass; mutable mappings
    among the field values are frozen at construction (see :func:`freeze`).
    """

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, MutableMapping):
                object.__setattr__(self, item.name, freeze(value))

    def summary(self) -> str:
        """A short report of the result for a person.

        The default names the result and lists its scalar fields (numbers,
        text, booleans); results override it with a report in their own words.

        Returns
        -------
        str
            Plain text.
        """
        shown = []
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool | int | float | str) or value is None:
                shown.append(f"{item.name}={value!r}")
        return f"{type(self).__name__}" + (": " + ", ".join(shown) if shown else "")

    def __reduce__(self) -> tuple[Any, ...]:
        # MappingProxyType cannot be pickled: rebuild from plain dicts, and
        # __post_init__ freezes them again on the other side.
        state = {}
        for item in fields(self):
            if not item.init:
                continue
            value = getattr(self, item.name)
            state[item.name] = dict(value) if isinstance(value, MappingProxyType) else value
        return (_rebuild, (type(self), state))


def _rebuild(cls: type[FrozenResult], state: dict[str, Any]) -> FrozenResult:
    return cls(**state)


#: The attributes every protected copy of microdata has, documented once for
#: :class:`MicrodataResult` and its subclasses (:func:`sdckit._docs.shared_doc`).
microdata_doc = shared_doc(
    {
        "microdata_attributes": """
data : DataFrame
    The protected data: same index, rows, columns and dtypes as the input.
diagnostics : DataFrame
    Per-record diagnostics, indexed like ``data``.
params : mapping
    Every parameter the method used, defaults included.
method : str
    Name of the method (the registered name of a masker).
stats : mapping
    Whole-dataset figures (e.g. share of cells changed).
"""
    }
)


@microdata_doc
@dataclass(frozen=True)
class MicrodataResult(FrozenResult):
    """Base of every result that releases a protected copy of microdata.

    Masking methods (:class:`sdckit.microdata.MaskResult`) and the SAFE
    perturbation of tables' microdata (:class:`sdckit.tables.SafeResult`)
    both return one, so :func:`sdckit.assess.assess` can take either without
    ``microdata`` and ``tables`` importing each other.

    Attributes
    ----------
    {{microdata_attributes}}
    """

    data: pd.DataFrame
    diagnostics: pd.DataFrame
    params: Mapping[str, Any] = field(default_factory=dict)
    method: str = ""
    stats: Mapping[str, Any] = field(default_factory=dict)
