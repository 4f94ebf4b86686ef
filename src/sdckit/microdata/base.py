"""The masking interface every microdata method follows, and the registry by name.

A masking method is a function ``method(data, **params) -> MaskResult``:

* ``data`` is a DataFrame and is never modified;
* ``result.data`` has the same index, row order, column order and dtypes;
* ``result.diagnostics`` is a DataFrame with one row per record (same index);
* ``result.params`` records every parameter actually used (defaults included),
  so a run can be repeated;
* ``result.summary()`` is text for a person.

Registering a method (``@register_masker("name")``) lets the command line,
:func:`sdckit.assess.sweep` and anything else run it by name through
:func:`mask`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from sdckit.errors import ParameterError

__all__ = [
    "MaskResult",
    "Masker",
    "available_maskers",
    "get_masker",
    "mask",
    "register_masker",
]


def _freeze(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class MaskResult:
    """Output of a masking method.

    Attributes
    ----------
    data : DataFrame
        The masked data: same index, rows, columns and dtypes as the input.
    diagnostics : DataFrame
        Per-record diagnostics, indexed like ``data``.
    params : mapping
        Every parameter the method used, defaults included.
    method : str
        Registered name of the method.
    stats : mapping
        Whole-dataset figures (e.g. share of cells changed).
    """

    data: pd.DataFrame
    diagnostics: pd.DataFrame
    params: Mapping[str, Any] = field(default_factory=dict)
    method: str = ""
    stats: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", _freeze(self.params))
        object.__setattr__(self, "stats", _freeze(self.stats))

    def summary(self) -> str:
        """A short report of the run for a person."""
        lines = [
            f"{self.method or 'masking'}: {len(self.data)} records x {self.data.shape[1]} columns"
        ]
        if self.params:
            shown = ", ".join(f"{k}={_short(v)}" for k, v in self.params.items() if k != "schema")
            lines.append(f"  parameters: {shown}")
        for key, value in self.stats.items():
            if isinstance(value, float):
                lines.append(f"  {key.replace('_', ' ')}: {value:.4g}")
            else:
                lines.append(f"  {key.replace('_', ' ')}: {value}")
        return "\n".join(lines)


def _short(value: Any, limit: int = 4) -> str:
    """A parameter value for a summary line: long lists and mappings abbreviated."""
    if isinstance(value, (list, tuple)) and len(value) > limit:
        head = ", ".join(repr(v) for v in value[:limit])
        return f"[{head}, ... ({len(value)} in all)]"
    if isinstance(value, Mapping) and len(value) > limit:
        distinct = set(value.values())
        if len(distinct) == 1:
            return f"{{all {len(value)}: {next(iter(distinct))!r}}}"
        return f"{{{len(value)} entries}}"
    return repr(value)


Masker = Callable[..., MaskResult]


@dataclass(frozen=True)
class _Entry:
    name: str
    func: Masker
    description: str


_REGISTRY: dict[str, _Entry] = {}


def register_masker(name: str, description: str = "") -> Callable[[Masker], Masker]:
    """Decorator registering a masking method under ``name``."""

    def decorator(func: Masker) -> Masker:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ParameterError(f"a masking method named {name!r} is already registered")
        doc_lines = (func.__doc__ or "").strip().splitlines()
        _REGISTRY[name] = _Entry(name, func, description or (doc_lines[0] if doc_lines else ""))
        return func

    return decorator


def available_maskers() -> dict[str, str]:
    """``{name: one-line description}`` of every registered masking method."""
    _load_builtin()
    return {name: entry.description for name, entry in sorted(_REGISTRY.items())}


def get_masker(name: str) -> Masker:
    """The masking function registered as ``name``."""
    _load_builtin()
    try:
        return _REGISTRY[name].func
    except KeyError:
        raise ParameterError(
            f"unknown masking method {name!r}; available: {sorted(_REGISTRY)}"
        ) from None


def mask(method: str | Masker, data: pd.DataFrame, **params: Any) -> MaskResult:
    """Run a masking method, given by registered name or as a function."""
    func = get_masker(method) if isinstance(method, str) else method
    result = func(data, **params)
    if not isinstance(result, MaskResult):
        raise ParameterError(
            f"masking method {method!r} returned {type(result).__name__}, not a MaskResult"
        )
    return result


def _load_builtin() -> None:
    # Importing the package registers the built-in methods.
    import sdckit.microdata  # noqa: F401
