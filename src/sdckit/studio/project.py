"""A steward's project: the input file, its columns' kinds and roles, and a history tree of steps.

The input is read once (:func:`sdckit.io.read_table`) and never modified; its
fingerprint is the SHA-256 of the file's bytes, so a recipe can tell whether
it is replayed on the same file. Every state of the data is recomputed from
the original by replaying the steps on the path to it
(:func:`sdckit.studio.recipe.replay_step`, the one function the command line
and the exported script also run), and a few recent states are cached.

The history is a tree, not a stack: applying a method makes a child of the
current step, undo goes to the parent, redo to the child visited last, and
any step can be made current; branches stay, and snapshots name steps. This
is what sdcMicro's ``sdcApp`` lacks (its undo goes one step back only).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit._docs import shared_doc
from sdckit._roles import suspect_columns
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.io import read_table
from sdckit.microdata.base import MaskResult, get_masker
from sdckit.schema import Role, Schema
from sdckit.studio.metrics import state_metrics, suda_figures

if TYPE_CHECKING:
    from sdckit.studio.recipe import Recipe

__all__ = [
    "KINDS",
    "ROLES",
    "Project",
    "Step",
    "file_fingerprint",
    "schema_overrides",
]

#: Column kinds a steward can declare; ``date`` columns pass through untouched.
KINDS = ("numeric", "categorical", "ordinal", "date")
#: Column roles: ``other`` is an ordinary analysis variable, ``pass`` is
#: published untouched, ``drop`` is left out of the release.
ROLES = ("key", "sensitive", "weight", "id", "household", "other", "pass", "drop")
#: Roles whose columns a release leaves out unless the steward overrides it.
CONFIDENTIAL_ROLES = ("sensitive", "id", "household", "drop")
#: Roles whose columns no release holds, override or not: direct identifiers.
NEVER_RELEASED = ("id",)

# How each studio role reads in a sdckit Schema: the maskers see these.
_SCHEMA_ROLE = {
    "key": Role.KEY,
    "sensitive": Role.SENSITIVE,
    "weight": Role.WEIGHT,
    "id": Role.ID,
    "household": Role.ID,
    "other": Role.OTHER,
    "pass": Role.IGNORE,
    "drop": Role.IGNORE,
}
#: A name that says "weight": sampling_weight, household_weights, WGT, pw, fexp.
_WEIGHT_NAME = re.compile(r"weight|wgt|wght|(^|[^a-z])(wt|pw|fexp)([^a-z]|$)", re.I)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$")


def file_fingerprint(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, as ``"sha256:<hex>"``.

    Parameters
    ----------
    path : path
        The file.

    Returns
    -------
    str
        The fingerprint a recipe records and checks.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def weight_columns(data: pd.DataFrame) -> list[str]:
    """The columns that look like survey weights: named like one, numbers >= 0, not all 0.

    Such a column is suggested the role ``weight`` (the first) or ``pass``
    (any other; a project has one weight column), never a categorical kind,
    even when it takes few values (a constant design weight of 100).

    Parameters
    ----------
    data : DataFrame
        The original data.

    Returns
    -------
    list of str
        In column order.
    """
    out = []
    for name in data.columns:
        series = data[name]
        if not _WEIGHT_NAME.search(str(name)) or not pd.api.types.is_numeric_dtype(series.dtype):
            continue
        if pd.api.types.is_bool_dtype(series.dtype):
            continue
        values = series.dropna()
        if len(values) and bool((values >= 0).all()) and bool((values > 0).any()):
            out.append(str(name))
    return out


def _inferred_kind(series: pd.Series) -> str:
    dtype = series.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return "date"
    if isinstance(dtype, pd.CategoricalDtype):
        return "ordinal" if dtype.ordered else "categorical"
    if pd.api.types.is_bool_dtype(dtype):
        return "categorical"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    sample = series.dropna().astype(str).head(200)
    if len(sample) and bool(sample.str.match(_ISO_DATE).all()):
        return "date"
    return "categorical"


def schema_overrides(
    data: pd.DataFrame,
    kinds: Mapping[str, str],
    roles: Mapping[str, str],
    *,
    inferred: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """The ``kinds`` and ``roles`` arguments of :meth:`sdckit.schema.Schema.infer` for a project.

    Only what differs from sdckit's own inference is passed: a kind the
    steward changed, a role other than ``other``; a date column passes
    through (role ``ignore``).

    Parameters
    ----------
    data : DataFrame
        The original data (the kinds are judged on it).
    kinds : mapping
        ``{column: kind}`` of the project (see :data:`KINDS`).
    roles : mapping
        ``{column: role}`` of the project (see :data:`ROLES`).
    inferred : mapping, optional
        The kind sdckit infers for each column of ``data``, when known (a
        project infers them once, when the file is opened); judged on
        ``data`` otherwise.

    Returns
    -------
    tuple of dict
        ``(schema_kinds, schema_roles)``, plain strings, in column order.
    """
    schema_kinds: dict[str, str] = {}
    schema_roles: dict[str, str] = {}
    for name in data.columns:
        kind = kinds.get(name, "categorical")
        role = roles.get(name, "other")
        if kind == "date":
            schema_roles[name] = Role.IGNORE.value
            continue
        judged = inferred.get(name) if inferred is not None else None
        if kind != (judged or _inferred_kind(data[name])):
            schema_kinds[name] = kind
        if role != "other":
            schema_roles[name] = _SCHEMA_ROLE[role].value
    return schema_kinds, schema_roles


@dataclass(frozen=True)
class Step:
    """One node of the history tree: a method applied to its parent's state.

    Attributes
    ----------
    id : int
        0 for the original data (the root), then 1, 2, ... in order of creation.
    parent : int or None
        The step it was applied to (None for the root).
    method : str
        Registered masking method (empty for the root).
    params : mapping
        The method's parameters as given (plain values: numbers, strings,
        lists, mappings), without ``schema``, ``random_state`` and ``progress``.
    seed : int or None
        The ``random_state`` passed to the method.
    metrics : mapping
        Risk and utility of the state after the step (see :meth:`Project.metrics`).
    summary : str
        The method's own summary of the run.
    """

    id: int
    parent: int | None
    method: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    metrics: Mapping[str, Any] = field(default_factory=dict)
    summary: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The step as JSON-ready values.

        Returns
        -------
        dict
            ``id``, ``parent``, ``method``, ``params``, ``seed``, ``metrics``, ``summary``.
        """
        return {
            "id": self.id,
            "parent": self.parent,
            "method": self.method,
            "params": dict(self.params),
            "seed": self.seed,
            "metrics": dict(self.metrics),
            "summary": self.summary,
        }


_STEP_DOC = {
    "step_call": """
method : str
    A registered masking method.
params : mapping, optional
    Its parameters (plain values).
seed : int, optional
    The ``random_state``.
""",
}


class Cancelled(Exception):
    """Raised inside a method's progress callback when its job is cancelled."""


ProgressFn = Callable[[int, int], None]


class Project:
    """An input file, its kinds and roles, and the history tree of steps applied to it.

    Parameters
    ----------
    path : path
        A CSV or Parquet file (read with :func:`sdckit.io.read_table`, never written).
    cache_size : int, default 4
        States kept in memory besides the original; others are recomputed.
    """

    def __init__(self, path: str | os.PathLike, *, cache_size: int = 4) -> None:
        self.path = Path(path).resolve()
        # The fingerprint hashes the file's bytes while the reader parses them (both let go
        # of the interpreter lock), so opening a large file costs about one read, not two.
        with ThreadPoolExecutor(max_workers=1) as pool:
            fingerprint = pool.submit(file_fingerprint, self.path)
            data = read_table(self.path)
            self.fingerprint = fingerprint.result()
        if data.shape[1] == 0 or len(data) == 0:
            raise DataError(f"input file {str(self.path)!r} holds no records")
        self.original = data
        # Judged once: the original never changes, and every step's schema compares with it.
        self._inferred: dict[str, str] = {str(c): _inferred_kind(data[c]) for c in data.columns}
        self.kinds: dict[str, str] = dict(self._inferred)
        self.roles: dict[str, str] = dict.fromkeys(self.kinds, "other")
        self.suggestions: dict[str, str] = {}
        #: ``{column: {"role": ..., "kind": ...}}``: what each suggestion proposes.
        self.suggested: dict[str, dict[str, str]] = {}
        weights = weight_columns(data)
        for suspect in suspect_columns(data):
            if suspect.name in weights:
                continue  # a weight with few values is a weight, not a code
            self.suggestions[suspect.name] = f"{suspect.kind}: {suspect.reason}"
            if suspect.kind == "identifier":
                self.roles[suspect.name] = "id"
                self.suggested[suspect.name] = {"role": "id"}
            elif pd.api.types.is_numeric_dtype(data[suspect.name].dtype):
                # A code stored as numbers (1/2 for sex): its values are categories.
                self.kinds[suspect.name] = "categorical"
                self.suggested[suspect.name] = {"kind": "categorical"}
        for i, name in enumerate(weights):
            # Only suggested, never set: "weight" may also be a person's body weight.
            if i == 0:
                self.suggestions[name] = "weight: named like a sampling weight (numbers >= 0)"
                self.suggested[name] = {"role": "weight"}
            else:
                self.suggestions[name] = (
                    f"weight: named like a weight; the studio uses one ({weights[0]!r}), "
                    "so this one passes through untouched"
                )
                self.suggested[name] = {"role": "pass"}
        self.steps: dict[int, Step] = {0: Step(0, None)}
        self.current = 0
        self.snapshots: dict[str, int] = {}
        self._redo: dict[int, int] = {}
        self._cache: OrderedDict[int, pd.DataFrame] = OrderedDict()
        self._cache_size = max(int(cache_size), 1)
        self._lock = threading.RLock()
        #: Incremented whenever kinds or roles change (a step computed before is stale).
        self.columns_version = 0
        self.steps[0] = Step(0, None, metrics=self.metrics(data))

    # ---- columns -------------------------------------------------------------------------
    def set_columns(
        self,
        *,
        roles: Mapping[str, str] | None = None,
        kinds: Mapping[str, str] | None = None,
        by_role: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        """Change kinds and roles; every state and its figures are recomputed from the original.

        Parameters
        ----------
        roles : mapping, optional
            ``{column: role}`` (see :data:`ROLES`).
        kinds : mapping, optional
            ``{column: kind}`` (see :data:`KINDS`).
        by_role : mapping, optional
            ``{role: [columns]}``; a column listed under two roles is a conflict.

        Raises
        ------
        SchemaError
            An unknown column, or a column given two roles (the message names it).
        ParameterError
            An unknown role or kind, or more than one weight column.
        """
        new_roles = dict(self.roles)
        new_kinds = dict(self.kinds)
        given: dict[str, str] = {}
        for role, names in (by_role or {}).items():
            for name in [names] if isinstance(names, str) else names:
                if name in given and given[name] != role:
                    raise SchemaError(
                        f"column {name!r} is given two roles, {given[name]!r} and {role!r}; "
                        "a column has one role"
                    )
                given[name] = role
        for name, role in (roles or {}).items():
            if name in given and given[name] != role:
                raise SchemaError(
                    f"column {name!r} is given two roles, {given[name]!r} and {role!r}; "
                    "a column has one role"
                )
            given[name] = role
        for name, role in given.items():
            self.check_column(name)
            if role not in ROLES:
                raise ParameterError(f"role of column {name!r}: unknown role {role!r}; use {ROLES}")
            new_roles[name] = role
        for name, kind in (kinds or {}).items():
            self.check_column(name)
            if kind not in KINDS:
                raise ParameterError(f"kind of column {name!r}: unknown kind {kind!r}; use {KINDS}")
            new_kinds[name] = kind
        weights = [c for c, r in new_roles.items() if r == "weight"]
        if len(weights) > 1:
            raise ParameterError(
                f"column {weights[1]!r}: only one weight column, and {weights[0]!r} is one already"
            )
        # The schema must accept the new declaration before anything changes.
        schema_kinds, schema_roles = schema_overrides(
            self.original, new_kinds, new_roles, inferred=self._inferred
        )
        try:
            Schema.infer(self.original, kinds=schema_kinds, roles=schema_roles)
        except SchemaError:
            raise
        with self._lock:
            self.roles, self.kinds = new_roles, new_kinds
            self.columns_version += 1
            self._cache.clear()
            # The original's per-column figures depend on its values only: kept.
            before = self.steps[0].metrics.get("columns", {})
            figures = state_metrics(self, self.original, known_columns=before)
            self.steps[0] = Step(0, None, metrics=figures)
            for step_id in sorted(self.steps):
                step = self.steps[step_id]
                if step.parent is not None:
                    self.steps[step_id] = Step(
                        step.id, step.parent, step.method, step.params, step.seed, {}, step.summary
                    )

    def check_column(self, name: str) -> None:
        """Raise :class:`~sdckit.errors.SchemaError`, naming it, unless ``name`` is a column.

        Parameters
        ----------
        name : str
            A column name.
        """
        if name not in self.kinds:
            raise SchemaError(f"column {name!r} is not in the file; it has {list(self.kinds)}")

    def schema_overrides(self) -> tuple[dict[str, str], dict[str, str]]:
        """The project's kinds and roles as :meth:`sdckit.schema.Schema.infer` arguments.

        Returns
        -------
        tuple of dict
            ``(schema_kinds, schema_roles)`` (see :func:`schema_overrides`).
        """
        return schema_overrides(self.original, self.kinds, self.roles, inferred=self._inferred)

    def columns_with(self, *roles: str) -> list[str]:
        """The columns having any of ``roles``, in file order.

        Parameters
        ----------
        *roles : str
            Studio roles (see :data:`ROLES`).

        Returns
        -------
        list of str
        """
        return [c for c, r in self.roles.items() if r in roles]

    # ---- history -------------------------------------------------------------------------
    def path_to(self, step_id: int | None = None) -> list[Step]:
        """The steps from the original to ``step_id`` (default the current one), root excluded.

        Parameters
        ----------
        step_id : int, optional
            A step of the tree.

        Returns
        -------
        list of Step
        """
        node = self.steps[self.current if step_id is None else self._known(step_id)]
        out = []
        while node.parent is not None:
            out.append(node)
            node = self.steps[node.parent]
        return out[::-1]

    def _known(self, step_id: int) -> int:
        if step_id not in self.steps:
            raise ParameterError(f"step: no step {step_id} in the history (0..{max(self.steps)})")
        return step_id

    def state(
        self, step_id: int | None = None, *, progress: ProgressFn | None = None
    ) -> pd.DataFrame:
        """The data after ``step_id`` (default the current step), recomputed or cached.

        Parameters
        ----------
        step_id : int, optional
            A step of the tree.
        progress : callable, optional
            Passed to the methods replayed.

        Returns
        -------
        DataFrame
            Not to be modified (it may be cached).
        """
        from sdckit.studio.recipe import replay_step

        target = self.current if step_id is None else self._known(step_id)
        if target == 0:
            return self.original
        with self._lock:
            if target in self._cache:
                self._cache.move_to_end(target)
                return self._cache[target]
        path = self.path_to(target)
        start, data = 0, self.original
        with self._lock:
            for i in range(len(path) - 1, -1, -1):
                if path[i].id in self._cache:
                    start, data = i + 1, self._cache[path[i].id]
                    break
        kinds, roles = self.schema_overrides()
        for step in path[start:]:
            data = replay_step(
                data,
                step.method,
                step.params,
                seed=step.seed,
                kinds=kinds,
                roles=roles,
                progress=progress,
            ).data
        self._remember(target, data)
        return data

    def _remember(self, step_id: int, data: pd.DataFrame) -> None:
        with self._lock:
            self._cache[step_id] = data
            self._cache.move_to_end(step_id)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    @shared_doc(_STEP_DOC)
    def compute_step(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        seed: int | None = None,
        parent: int | None = None,
        progress: ProgressFn | None = None,
    ) -> tuple[MaskResult, dict[str, Any]]:
        """Run a method on a step's state without touching the history.

        Parameters
        ----------
        {{step_call}}
        parent : int, optional
            The step to apply it to (default the current one).
        progress : callable, optional
            ``progress(done, total)``; it may raise to stop the method.

        Returns
        -------
        tuple
            The method's result and the figures of the new state.

        Raises
        ------
        ParameterError
            An unknown method, a parameter it does not take or a bad value.
        """
        from sdckit.studio.recipe import check_params, replay_step

        get_masker(method)
        clean = check_params(method, params or {})
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ParameterError(f"seed must be a whole number >= 0, got {seed!r}")
        base = self.current if parent is None else self._known(parent)
        data = self.state(base)
        kinds, roles = self.schema_overrides()
        result = replay_step(
            data, method, clean, seed=seed, kinds=kinds, roles=roles, progress=progress
        )
        figures = state_metrics(
            self,
            result.data,
            parent=data,
            parent_metrics=self.metrics_of(base),
            step_changes=result.column_changes,
        )
        return result, figures

    def add_step(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        seed: int | None,
        parent: int,
        result: MaskResult,
        metrics: Mapping[str, Any],
        columns_version: int | None = None,
    ) -> Step:
        """Record a computed step as a child of ``parent`` and make it current.

        When the kinds or roles changed while the step was computed
        (``columns_version`` is not :attr:`columns_version`), its data and
        figures are dropped and recomputed on demand under the new ones, as
        a replay of the recipe would.

        Parameters
        ----------
        method : str
            The method run.
        params : mapping
            Its parameters as given.
        seed : int or None
            The ``random_state``.
        parent : int
            The step it was applied to.
        result : MaskResult
            What :meth:`compute_step` returned.
        metrics : mapping
            The figures :meth:`compute_step` returned.
        columns_version : int, optional
            :attr:`columns_version` when the computation started.

        Returns
        -------
        Step
        """
        from sdckit.studio.recipe import check_params

        with self._lock:
            stale = columns_version is not None and columns_version != self.columns_version
            if stale:
                metrics = {}
            step = Step(
                max(self.steps) + 1,
                self._known(parent),
                method,
                check_params(method, params),
                seed,
                dict(metrics),
                result.summary(),
            )
            self.steps[step.id] = step
            self._redo[parent] = step.id
            self.current = step.id
            if not stale:
                self._remember(step.id, result.data)
        return step

    @shared_doc(_STEP_DOC)
    def apply(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        seed: int | None = None,
        progress: ProgressFn | None = None,
    ) -> Step:
        """Apply a method to the current state: a new child step, made current.

        Parameters
        ----------
        {{step_call}}
        progress : callable, optional
            ``progress(done, total)``.

        Returns
        -------
        Step
            The new step; on an error the history is unchanged.
        """
        parent = self.current
        result, metrics = self.compute_step(
            method, params, seed=seed, parent=parent, progress=progress
        )
        return self.add_step(
            method, params or {}, seed=seed, parent=parent, result=result, metrics=metrics
        )

    def undo(self) -> int:
        """Go to the parent of the current step (nothing happens at the original).

        Returns
        -------
        int
            The current step afterwards.
        """
        with self._lock:
            parent = self.steps[self.current].parent
            if parent is not None:
                self._redo[parent] = self.current
                self.current = parent
            return self.current

    def redo(self) -> int:
        """Go to the child of the current step visited (or created) last.

        Returns
        -------
        int
            The current step afterwards (unchanged when there is no child).
        """
        with self._lock:
            child = self._redo.get(self.current)
            if child is not None:
                self.current = child
            return self.current

    def goto(self, step_id: int) -> int:
        """Make any step of the tree current (branches are kept).

        Parameters
        ----------
        step_id : int
            The step, or the step of a snapshot.

        Returns
        -------
        int
            The current step afterwards.
        """
        with self._lock:
            target = self._known(step_id)
            node = target
            while (parent := self.steps[node].parent) is not None:
                self._redo[parent] = node
                node = parent
            self.current = target
            return target

    def snapshot(self, name: str, step_id: int | None = None) -> int:
        """Name a step (default the current one); a name given again moves to the new step.

        Parameters
        ----------
        name : str
            A name of 1 to 80 characters.
        step_id : int, optional
            The step to name.

        Returns
        -------
        int
            The step named.
        """
        if not isinstance(name, str) or not name.strip() or len(name) > 80:
            raise ParameterError("name: a snapshot needs a name of 1 to 80 characters")
        with self._lock:
            target = self.current if step_id is None else self._known(step_id)
            self.snapshots[name.strip()] = target
            return target

    def metrics_of(self, step_id: int) -> dict[str, Any]:
        """The figures of a step's state (computed now if roles changed since).

        Parameters
        ----------
        step_id : int
            A step of the tree.

        Returns
        -------
        dict
            See :meth:`metrics`.
        """
        step = self.steps[self._known(step_id)]
        if not step.metrics:
            figures = self.metrics(self.state(step_id))
            with self._lock:
                self.steps[step_id] = Step(
                    step.id, step.parent, step.method, step.params, step.seed, figures, step.summary
                )
            return figures
        return dict(step.metrics)

    # ---- figures -------------------------------------------------------------------------
    def metrics(self, data: pd.DataFrame) -> dict[str, Any]:
        """Risk of ``data`` and its utility against the original, as plain numbers.

        Risk: the key-combination counts of :func:`sdckit.assess.key_risk`
        (combinations, sample uniques, k-anonymity, records violating k = 2,
        3, 5, expected re-identifications, l-diversity of the first sensitive
        column) over the ``key`` columns, with the ``weight`` column if any.
        Utility: the share of cells changed per column
        (:func:`sdckit.microdata.base.column_changes`) and, for numeric
        columns, :func:`sdckit.assess.compare_moments` and
        :func:`sdckit.assess.compare_correlations`.

        Parameters
        ----------
        data : DataFrame
            A state of the project (same rows and columns as the original).

        Returns
        -------
        dict
            ``{"risk": {...}, "utility": {...}, "errors": {...}}``; a measure
            that cannot be computed is reported under ``errors`` by name.
        """
        return state_metrics(self, data)

    def suda(
        self, step_id: int | None = None, *, progress: ProgressFn | None = None
    ) -> dict[str, Any]:
        """SUDA figures of a step's state, added to its risk figures (see :func:`suda_figures`).

        Elliot, Manning & Ford (2002) over the ``key`` columns; it counts every
        subset of the keys, so it runs only when asked for (with progress).
        A step whose keys a later step leaves alone carries the figures on.

        Parameters
        ----------
        step_id : int, optional
            A step of the tree (default the current one).
        progress : callable, optional
            ``progress(done, total)`` over the subsets of keys.

        Returns
        -------
        dict
            The SUDA figures (also in the step's ``metrics["risk"]``).

        Raises
        ------
        ParameterError
            No column has the role ``key``.
        """
        from sdckit.studio.recipe import state_schema

        target = self.current if step_id is None else self._known(step_id)
        keys = self.columns_with("key")
        if not keys:
            raise ParameterError("key: SUDA needs key columns; give some columns the role 'key'")
        version = self.columns_version
        data = self.state(target)
        kinds, roles = self.schema_overrides()
        figures = suda_figures(
            data, keys, schema=state_schema(data, kinds, roles), progress=progress
        )
        figures_now = self.metrics_of(target)
        with self._lock:
            if version == self.columns_version:  # roles changed meanwhile: figures of old keys
                risk = {**figures_now.get("risk", {}), **figures}
                self.steps[target] = replace(
                    self.steps[target], metrics={**figures_now, "risk": risk}
                )
        return figures

    def load_recipe(self, recipe: Recipe, *, progress: ProgressFn | None = None) -> Step:
        """Set the roles and kinds of a recipe and replay its steps as a branch from the original.

        Parameters
        ----------
        recipe : Recipe
            From :func:`sdckit.studio.recipe.load_recipe`; its fingerprint must be the project's.
        progress : callable, optional
            Passed to the methods.

        Returns
        -------
        Step
            The last step replayed (made current); its snapshots are restored.

        Raises
        ------
        DataError
            The recipe was made from another file; nothing is changed.
        """
        if recipe.fingerprint != self.fingerprint:
            raise DataError(
                f"the recipe was made from another file ({recipe.fingerprint}); this project's "
                f"file {self.path.name!r} is {self.fingerprint}: nothing was changed"
            )
        self.set_columns(roles=dict(recipe.studio_roles), kinds=dict(recipe.studio_kinds))
        done = [self.steps[0]]
        parent = 0
        for entry in recipe.steps:
            result, figures = self.compute_step(
                entry["method"],
                entry["params"],
                seed=entry.get("seed"),
                parent=parent,
                progress=progress,
            )
            step = self.add_step(
                entry["method"],
                entry["params"],
                seed=entry.get("seed"),
                parent=parent,
                result=result,
                metrics=figures,
            )
            done.append(step)
            parent = step.id
        for name, position in recipe.snapshots.items():
            if 0 <= int(position) < len(done):
                self.snapshot(name, done[int(position)].id)
        self.goto(parent)
        return self.steps[parent]

    def describe(self) -> dict[str, Any]:
        """The project for the page: file, columns, history, snapshots (no data values).

        Returns
        -------
        dict
            JSON-ready.
        """
        with self._lock:
            current = self.current
            parent = self.steps[current].parent
            figures = self.metrics_of(current)
            before = self.metrics_of(parent) if parent is not None else None
            return {
                "file": self.path.name,
                "fingerprint": self.fingerprint,
                "n_records": len(self.original),
                "columns": [
                    {
                        "name": c,
                        "kind": self.kinds[c],
                        "role": self.roles[c],
                        "suggestion": self.suggestions.get(c),
                        "suggested_role": self.suggested.get(c, {}).get("role"),
                        "suggested_kind": self.suggested.get(c, {}).get("kind"),
                        "release": _release_rule(self.roles[c]),
                        "dtype": str(self.original[c].dtype),
                    }
                    for c in self.kinds
                ],
                "current": current,
                "steps": [
                    {k: v for k, v in s.as_dict().items() if k != "metrics"}
                    for s in self.steps.values()
                ],
                "path": [s.id for s in self.path_to(current)],
                "snapshots": dict(self.snapshots),
                "can_undo": parent is not None,
                "can_redo": current in self._redo,
                "metrics": figures,
                "change": _change(figures, before),
            }


def _release_rule(role: str) -> str:
    """How a release treats a column of ``role``: ``published``, ``confidential`` or ``never``."""
    if role in NEVER_RELEASED:
        return "never"
    return "confidential" if role in CONFIDENTIAL_ROLES else "published"


def _change(after: Mapping[str, Any], before: Mapping[str, Any] | None) -> dict[str, Any]:
    """Numeric figures of ``after`` minus those of ``before`` (same keys), by section."""
    if before is None:
        return {}
    out: dict[str, Any] = {}
    for section in ("risk", "utility"):
        a, b = after.get(section, {}), before.get(section, {})
        diffs = {}
        for key, value in a.items():
            old = b.get(key)
            if _is_number(value) and _is_number(old):
                diffs[key] = float(value) - float(old)
        out[section] = diffs
    return out


def _is_number(value: object) -> bool:
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )
