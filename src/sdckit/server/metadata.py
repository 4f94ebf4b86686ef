"""Metadata of an analysis server: which variables an analyst may use, and how.

Lucero et al. (2011), Section 3.1: analysts pick variables and
category levels from the metadata; a continuous variable is offered only as
the categorical recode given by its cutpoints (Section 3.1.3). The metadata
is public; the bin counts used to build it are not, and are left out of
:meth:`Metadata.to_dict` unless asked for.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
import yaml

from sdckit._validation import check_dataframe, describe_row, value_at
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.io import atomic_write
from sdckit.server.config import read_yaml
from sdckit.server.cutpoints import Binning, cutpoints

__all__ = ["CATEGORICAL", "CONTINUOUS", "DOMAINS", "Metadata", "Variable", "level_key"]

CATEGORICAL = "categorical"
CONTINUOUS = "continuous"

#: Declared domains of a continuous variable: which transformations it admits.
#: ``log`` needs "positive", ``sqrt`` "positive" or "non-negative".
DOMAINS = ("positive", "non-negative", "real")


def _observed_domain(values: np.ndarray) -> str:
    finite = values[np.isfinite(values)]
    if finite.size and float(finite.min()) > 0:
        return "positive"
    if finite.size and float(finite.min()) >= 0:
        return "non-negative"
    return "real"


def level_key(value: Any) -> str:
    """The string under which a data value is matched to a category level.

    Integral floats (``2.0`` read from a CSV) match the level ``"2"``.

    Parameters
    ----------
    value : object
        A data value.

    Returns
    -------
    str
    """
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return str(int(float(value)))
    return str(value)


def _level_strings(series: pd.Series) -> np.ndarray:
    """:func:`level_key` of every value, vectorised by dtype (missing values become "nan")."""
    if pd.api.types.is_bool_dtype(series):
        return series.astype(str).to_numpy(dtype=object)
    if pd.api.types.is_integer_dtype(series):
        return series.astype(str).to_numpy(dtype=object)
    if pd.api.types.is_float_dtype(series):
        values = series.to_numpy(dtype=np.float64)
        finite = np.isfinite(values)
        out = series.astype(str).to_numpy(dtype=object)
        integral = finite & (np.floor(values) == values)
        out[integral] = values[integral].astype(np.int64).astype(str)
        return out
    return series.astype(str).to_numpy(dtype=object)


@dataclass(frozen=True)
class Variable:
    """One variable an analyst may use.

    Attributes
    ----------
    name : str
        Column name in the data.
    kind : {"categorical", "continuous"}
    label : str
        Human-readable description.
    levels : tuple of str
        Categorical levels, in display order (matched by :func:`level_key`).
    level_labels : mapping
        Optional readable label of each level.
    binning : Binning or None
        Cutpoints of a continuous variable (required for continuous variables).
    domain : {"positive", "non-negative", "real"} or None
        The declared domain of a continuous variable; decides which approved
        transformations apply (log: positive; sqrt: non-negative). Public,
        and checked against the data when a server loads them, so that no
        refusal ever depends on the values of the units in a universe.
    groups : mapping
        Declared groupings of a categorical variable's levels, chosen by the
        data steward and public like the cutpoints of a continuous variable
        (``{"Europe": ("England", "France", ...), ...}``): disjoint sets of
        at least two levels each. The Universe Gamma rule checks a piece that
        selects a whole group as one class, as it would check a recoded
        variable's category (:func:`sdckit.server.rules.universe_gamma`).
    """

    name: str
    kind: str
    label: str = ""
    levels: tuple[str, ...] = ()
    level_labels: Mapping[str, str] = field(default_factory=dict)
    binning: Binning | None = None
    domain: str | None = None
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise SchemaError(
                f"variable name {self.name!r} must be an identifier (letters, digits, underscore)"
            )
        if self.kind not in (CATEGORICAL, CONTINUOUS):
            raise SchemaError(
                f"variable {self.name!r}: kind must be 'categorical' or 'continuous', got {self.kind!r}"
            )
        levels = tuple(level_key(v) for v in self.levels)
        if self.kind == CATEGORICAL:
            if len(levels) < 2:
                raise SchemaError(f"categorical variable {self.name!r} needs at least two levels")
            if len(set(levels)) != len(levels):
                raise SchemaError(f"categorical variable {self.name!r} repeats a level: {levels}")
        elif self.binning is None:
            raise SchemaError(f"continuous variable {self.name!r} needs cutpoints (a binning)")
        if self.domain is not None and (self.kind == CATEGORICAL or self.domain not in DOMAINS):
            raise SchemaError(
                f"variable {self.name!r}: domain must be one of {list(DOMAINS)} and only for a "
                f"continuous variable, got {self.domain!r}"
            )
        object.__setattr__(self, "levels", levels)
        labels = {level_key(k): str(v) for k, v in dict(self.level_labels).items()}
        unknown = sorted(set(labels) - set(levels))
        if unknown:
            raise SchemaError(f"variable {self.name!r}: labels given for unknown levels {unknown}")
        object.__setattr__(self, "level_labels", MappingProxyType(labels))
        object.__setattr__(self, "groups", MappingProxyType(self._checked_groups(levels)))

    def _checked_groups(self, levels: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
        """The declared groups in level order; a SchemaError for any that is not usable."""
        if not isinstance(self.groups, Mapping):
            raise SchemaError(
                f"variable {self.name!r}: groups must map a group name to a list of levels"
            )
        if self.groups and self.kind != CATEGORICAL:
            raise SchemaError(f"variable {self.name!r}: only a categorical variable has groups")
        order = {lv: i for i, lv in enumerate(levels)}
        seen: dict[str, str] = {}
        out = {}
        for group, members in self.groups.items():
            if isinstance(members, str) or not isinstance(members, Iterable):
                raise SchemaError(
                    f"variable {self.name!r}: group {group!r} must be a list of levels"
                )
            keys = list(dict.fromkeys(level_key(v) for v in members))
            unknown = [k for k in keys if k not in order]
            if unknown:
                raise SchemaError(
                    f"variable {self.name!r}: group {group!r} lists unknown level(s) {unknown}"
                )
            if len(keys) < 2:
                raise SchemaError(
                    f"variable {self.name!r}: group {group!r} needs at least two levels"
                )
            for key in keys:
                if key in seen:
                    raise SchemaError(
                        f"variable {self.name!r}: level {key!r} is in groups {seen[key]!r} and "
                        f"{group!r}; groups must not overlap"
                    )
                seen[key] = str(group)
            out[str(group)] = tuple(sorted(keys, key=order.__getitem__))
        return out

    def group_codes(self) -> list[np.ndarray]:
        """The level codes of every declared group, in declaration order.

        Returns
        -------
        list of ndarray
            One array of level indices per group.
        """
        order = {lv: i for i, lv in enumerate(self.levels)}
        return [np.array([order[v] for v in members]) for members in self.groups.values()]

    @property
    def is_categorical(self) -> bool:
        return self.kind == CATEGORICAL

    @property
    def cutpoint_bins(self) -> Binning:
        """The cutpoint bins of a continuous variable (a categorical one has none)."""
        if self.binning is None:
            raise SchemaError(f"variable {self.name!r} is categorical; it has no cutpoint bins")
        return self.binning

    @property
    def n_codes(self) -> int:
        """Number of levels (categorical) or bins (continuous)."""
        return len(self.levels) if self.is_categorical else self.cutpoint_bins.n_bins

    def code_labels(self) -> tuple[str, ...]:
        """Label of every code: the level, or the bin's public interval.

        Outer bins are open-ended (``"< 28000"``, ``">= 91000"``): their outer
        edges are the data's minimum and maximum, which no answer may show.
        """
        if self.is_categorical:
            return self.levels
        return self.cutpoint_bins.public_labels

    def encode(self, series: pd.Series) -> np.ndarray:
        """Integer code of every value (level index or bin index); -1 for missing."""
        if self.is_categorical:
            missing = pd.isna(series).to_numpy()
            strings = _level_strings(series)
            codes = pd.Index(list(self.levels)).get_indexer(strings).astype(np.int64)
            bad = (codes == -1) & ~missing
            if bad.any():
                first = int(np.flatnonzero(bad)[0])
                raise DataError(
                    f"column {self.name!r} holds {strings[first]!r} at "
                    f"{describe_row(series.index, first)}, "
                    f"which is not one of its metadata levels {list(self.levels)}"
                )
            return codes
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
        nonnumeric = np.isnan(values) & ~pd.isna(series).to_numpy()
        if nonnumeric.any():
            first = int(np.flatnonzero(nonnumeric)[0])
            raise DataError(
                f"continuous column {self.name!r} holds a non-numeric value "
                f"{value_at(series, first)}"
            )
        return self.cutpoint_bins.assign(values)

    def to_dict(self, *, include_counts: bool = False, public: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.label:
            out["label"] = self.label
        if self.is_categorical:
            out["levels"] = list(self.levels)
            if self.level_labels:
                out["level_labels"] = dict(self.level_labels)
            if self.groups:
                out["groups"] = {name: list(members) for name, members in self.groups.items()}
        else:
            out["cutpoints"] = self.cutpoint_bins.to_dict(
                include_counts=include_counts, public=public
            )
            out["bins"] = list(
                self.cutpoint_bins.public_labels if public else self.cutpoint_bins.labels
            )
            if self.domain is not None:
                out["domain"] = self.domain
        return out

    def admits(self, transform: str | None) -> bool:
        """Whether the declared domain admits ``transform`` (always, for square and none)."""
        if transform == "log":
            return self.domain == "positive"
        if transform == "sqrt":
            return self.domain in ("positive", "non-negative")
        return True

    @classmethod
    def from_dict(cls, name: str, mapping: Mapping[str, Any]) -> Variable:
        if not isinstance(mapping, Mapping):
            raise SchemaError(f"metadata for variable {name!r} must be a mapping")
        kind: Any = mapping.get("kind")  # validated by Variable itself
        binning = None
        if kind == CONTINUOUS:
            if "cutpoints" not in mapping:
                raise SchemaError(f"continuous variable {name!r} needs 'cutpoints' in the metadata")
            binning = Binning.from_dict(mapping["cutpoints"])
        return cls(
            name=name,
            kind=kind,
            label=str(mapping.get("label", "")),
            levels=tuple(mapping.get("levels", ())),
            level_labels=dict(mapping.get("level_labels", {})),
            binning=binning,
            domain=mapping.get("domain"),
            groups=mapping.get("groups") or {},
        )


@dataclass(frozen=True)
class Metadata:
    """The variables an analyst may use, by name."""

    variables: Mapping[str, Variable]

    def __post_init__(self) -> None:
        if isinstance(self.variables, Iterable) and not isinstance(self.variables, Mapping):
            self_vars = {v.name: v for v in self.variables}
        else:
            self_vars = dict(self.variables)
        for key, var in self_vars.items():
            if not isinstance(var, Variable) or var.name != key:
                raise SchemaError(f"metadata entry {key!r} must be a Variable named {key!r}")
        if not self_vars:
            raise SchemaError("metadata must list at least one variable")
        object.__setattr__(self, "variables", MappingProxyType(self_vars))

    def __contains__(self, name: object) -> bool:
        return name in self.variables

    def __iter__(self):
        return iter(self.variables.values())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.variables)

    def variable(self, name: str) -> Variable:
        """The variable called ``name``; a SchemaError naming the allowed ones otherwise."""
        try:
            return self.variables[name]
        except (KeyError, TypeError):
            raise SchemaError(
                f"variable {name!r} is not available to analysts; allowed: {list(self.variables)}"
            ) from None

    def encode(self, data: pd.DataFrame) -> dict[str, np.ndarray]:
        """Integer codes of every metadata variable over ``data`` (-1 for missing)."""
        check_dataframe(data, "data")
        missing = [name for name in self.variables if name not in data.columns]
        if missing:
            raise SchemaError(f"the data lack metadata variable(s) {missing}")
        return {name: var.encode(data[name]) for name, var in self.variables.items()}

    def to_dict(self, *, include_counts: bool = False, public: bool = False) -> dict[str, Any]:
        """Mapping ``{"variables": {name: {...}}}`` (bin counts left out by default).

        ``public=True`` is what an analyst sees: no counts and no outer
        cutpoint edges (they would reveal each variable's minimum and maximum).
        """
        return {
            "variables": {
                name: var.to_dict(include_counts=include_counts and not public, public=public)
                for name, var in self.variables.items()
            }
        }

    def with_domains(self, data: pd.DataFrame) -> Metadata:
        """These metadata with every continuous variable's domain checked against ``data``.

        A declared domain the data violate is a :class:`DataError` naming the
        variable; an undeclared one is set from the data (the narrowest of
        positive, non-negative, real) and becomes public like the rest.
        """
        variables = {}
        for name, var in self.variables.items():
            if var.is_categorical:
                variables[name] = var
                continue
            values = pd.to_numeric(data[name], errors="coerce").to_numpy(dtype=np.float64)
            observed = _observed_domain(values)
            if var.domain is not None and DOMAINS.index(observed) > DOMAINS.index(var.domain):
                bad = values <= 0 if var.domain == "positive" else values < 0
                first = int(np.flatnonzero(bad & np.isfinite(values))[0])
                raise DataError(
                    f"variable {name!r} is declared {var.domain} in the metadata but row "
                    f"{first + 1} holds {values[first]:g}"
                )
            variables[name] = var if var.domain is not None else replace(var, domain=observed)
        return Metadata(variables)

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> Metadata:
        if not isinstance(mapping, Mapping) or not isinstance(mapping.get("variables"), Mapping):
            raise SchemaError("metadata must be a mapping with a 'variables' mapping")
        return cls({n: Variable.from_dict(n, m) for n, m in mapping["variables"].items()})

    @classmethod
    def from_yaml(cls, path: str | Path) -> Metadata:
        return cls.from_dict(read_yaml(path, "metadata"))

    def to_yaml(self, path: str | Path, *, include_counts: bool = False) -> Path:
        """Write the metadata as YAML, atomically."""
        text = yaml.safe_dump(self.to_dict(include_counts=include_counts), sort_keys=False)

        def write(tmp: Path) -> None:
            tmp.write_text(text, encoding="utf-8")

        return atomic_write(path, write)

    @classmethod
    def infer(
        cls,
        data: pd.DataFrame,
        *,
        columns: Iterable[str] | None = None,
        categorical: Iterable[str] = (),
        continuous: Iterable[str] = (),
        method: str = "minimum_width",
        beta: int = 10,
        methods: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        groups: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
    ) -> Metadata:
        """Metadata for ``data``: numeric columns become continuous with cutpoints.

        Parameters
        ----------
        data : DataFrame
        columns : iterable of str, optional
            Variables to offer (default every column).
        categorical, continuous : iterable of str
            Force a column's kind (e.g. an integer-coded category).
        method : str, default "minimum_width"
            Binning method for continuous variables (see :func:`cutpoints`).
        beta : int, default 10
            Minimum observations per bin.
        methods : mapping, optional
            A binning method per continuous variable, overriding ``method``.
        labels : mapping, optional
            A readable label per variable.
        groups : mapping, optional
            Declared groupings of a categorical variable's levels,
            ``{variable: {group: [levels]}}`` (see :class:`Variable`).
        """
        check_dataframe(data, "data")
        names = list(data.columns) if columns is None else list(columns)
        forced_cat, forced_cont = set(categorical), set(continuous)
        both = forced_cat & forced_cont
        if both:
            raise ParameterError(f"columns {sorted(both)} are listed as categorical and continuous")
        unknown = [c for c in [*names, *forced_cat, *forced_cont] if c not in data.columns]
        if unknown:
            raise SchemaError(f"unknown column(s) {unknown}; the data have {list(data.columns)}")
        methods = dict(methods or {})
        labels = dict(labels or {})
        groups = dict(groups or {})
        stray = sorted(set(groups) - set(names))
        if stray:
            raise SchemaError(f"groups given for variable(s) {stray}, which are not offered")
        variables = {}
        for name in names:
            series = data[name]
            numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(
                series
            )
            if name in forced_cont or (numeric and name not in forced_cat):
                if name in groups:
                    raise SchemaError(
                        f"variable {name!r} is continuous; only categories have groups"
                    )
                binning = cutpoints(series.to_numpy(), methods.get(name, method), beta=beta)
                domain = _observed_domain(pd.to_numeric(series).to_numpy(dtype=np.float64))
                variables[name] = Variable(
                    name, CONTINUOUS, labels.get(name, ""), binning=binning, domain=domain
                )
            else:
                if isinstance(series.dtype, pd.CategoricalDtype):
                    levels = [level_key(v) for v in series.cat.categories]
                else:
                    levels = sorted({level_key(v) for v in series.dropna().to_numpy()})
                variables[name] = Variable(
                    name,
                    CATEGORICAL,
                    labels.get(name, ""),
                    tuple(levels),
                    groups={g: tuple(m) for g, m in groups.get(name, {}).items()},
                )
        return cls(variables)
