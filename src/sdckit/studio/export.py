"""A project's release: the publishable columns, the HTML assessment, the recipe and its replays.

Only columns whose role may be published are released: a ``sensitive``,
``id``, ``household`` or ``drop`` column is left out unless the steward
names it in ``override``, and then a warning names it. Every file is written
atomically (:mod:`sdckit.io`) into the chosen directory, never onto the input.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from sdckit.assess import Assessment, assess, report
from sdckit.errors import DataError, ParameterError, SchemaError, SDCError
from sdckit.io import atomic_write, write_table
from sdckit.microdata.base import changed_share
from sdckit.schema import Schema
from sdckit.studio.project import CONFIDENTIAL_ROLES, NEVER_RELEASED, Project
from sdckit.studio.recipe import (
    Recipe,
    recipe_commands,
    recipe_script,
    release_columns,
    state_schema,
)

__all__ = ["Export", "export_release", "project_recipe", "publishable_columns"]


def publishable_columns(
    project: Project, override: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """The columns a release holds, and a warning per confidential column let through.

    A column whose role is ``sensitive``, ``household`` or ``drop`` is left
    out unless overridden; one whose role is ``id`` (a direct identifier) is
    never released, override or not.

    Parameters
    ----------
    project : Project
        Its roles decide.
    override : iterable of str
        Confidential columns to release anyway (each gets a warning).

    Returns
    -------
    tuple
        ``(columns, warnings)``.

    Raises
    ------
    SchemaError
        An override names a column that is not in the file, or a direct identifier.
    """
    forced = list(override)
    for name in forced:
        project.check_column(name)
        if project.roles[name] in NEVER_RELEASED:
            raise SchemaError(
                f"column {name!r} has the role {project.roles[name]!r} (a direct identifier) and "
                "is never released; give it another role if it does not identify anyone"
            )
    columns, warnings = [], []
    for name, role in project.roles.items():
        if role in CONFIDENTIAL_ROLES:
            if name not in forced:
                continue
            warnings.append(
                f"column {name!r} has the role {role!r} and is released because it was "
                "overridden: check that it may be published"
            )
        columns.append(name)
    if not columns:
        raise ParameterError("override: no column may be published under the current roles")
    return columns, warnings


def project_recipe(project: Project, columns: Iterable[str] | None = None) -> Recipe:
    """The recipe of the project's current state.

    Parameters
    ----------
    project : Project
        The project.
    columns : iterable of str, optional
        The released columns (default :func:`publishable_columns` without override).

    Returns
    -------
    Recipe
    """
    chosen = list(columns) if columns is not None else publishable_columns(project)[0]
    kinds, roles = project.schema_overrides()
    path = project.path_to()
    position = {step.id: i for i, step in enumerate(path, start=1)} | {0: 0}
    return Recipe(
        input_name=project.path.name,
        fingerprint=project.fingerprint,
        kinds=kinds,
        roles=roles,
        steps=[{"method": s.method, "params": dict(s.params), "seed": s.seed} for s in path],
        columns=chosen,
        studio_roles=dict(project.roles),
        studio_kinds=dict(project.kinds),
        snapshots={n: position[i] for n, i in project.snapshots.items() if i in position},
    )


@dataclass(frozen=True)
class Export:
    """What :func:`export_release` wrote.

    Attributes
    ----------
    files : dict
        ``{"release", "report", "recipe", "script", "commands"}`` -> path written.
    columns : list of str
        The released columns.
    warnings : list of str
        One line per confidential column released by override, and per
        assessment measure that could not be computed.
    """

    files: dict[str, Path]
    columns: list[str]
    warnings: list[str] = field(default_factory=list)


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def check_basename(name: str) -> str:
    """A file stem with no directory part: letters, digits, ``_``, ``-`` and ``.`` only.

    Parameters
    ----------
    name : str
        The stem the user chose.

    Returns
    -------
    str
    """
    if not name or not set(name) <= _NAME_CHARS or name.startswith(".") or len(name) > 100:
        raise ParameterError(
            f"name: {name!r} is not a plain file name (letters, digits, '_', '-', '.'; "
            "no folder, not starting with '.')"
        )
    return name


def export_release(
    project: Project,
    directory: str | os.PathLike,
    *,
    name: str = "release",
    override: Iterable[str] = (),
    file_format: str = "csv",
    with_report: bool = True,
    confirm_unmasked: bool = False,
) -> Export:
    """Write the release, its HTML assessment, the recipe, the script and the commands.

    Parameters
    ----------
    project : Project
        The project; its current state is released.
    directory : path
        An existing folder (the input's file is never overwritten).
    name : str, default "release"
        Stem of the files: ``NAME.csv``, ``NAME-report.html``, ``NAME.toml``,
        ``NAME.py``, ``NAME.sh``.
    override : iterable of str
        Confidential columns to release anyway (a warning names each).
    file_format : {"csv", "parquet"}
        The release's format.
    with_report : bool, default True
        Write the HTML assessment (:func:`sdckit.assess.assess` and
        :func:`sdckit.assess.report`).
    confirm_unmasked : bool, default False
        Export even when the released values are the original file's (no
        method applied, or none that changed a released value); the export
        then warns that nothing was masked.

    Returns
    -------
    Export

    Raises
    ------
    ParameterError
        The release would be the original values and ``confirm_unmasked``
        is False (naming ``confirm_unmasked``); nothing is written.
    """
    stem = check_basename(name)
    if file_format not in ("csv", "parquet"):
        raise ParameterError(f"file_format must be 'csv' or 'parquet', got {file_format!r}")
    folder = Path(directory)
    if not folder.is_dir():
        raise DataError(f"output directory {str(folder)!r} does not exist")
    columns, warnings = publishable_columns(project, override)
    recipe = project_recipe(project, columns)
    files = {
        "release": folder / f"{stem}.{file_format}",
        "recipe": folder / f"{stem}.toml",
        "script": folder / f"{stem}.py",
        "commands": folder / f"{stem}.sh",
    }
    if with_report:
        files["report"] = folder / f"{stem}-report.html"
    for path in files.values():
        if path.resolve() == project.path:
            raise DataError(f"{str(path)!r} is the input file; export elsewhere or by another name")
    state = project.state()
    released = release_columns(state, columns)
    untouched = _unmasked(project, released, columns)
    if untouched and not confirm_unmasked:
        raise ParameterError(
            f"confirm_unmasked: {untouched}, so the release would publish the original file's "
            "values; apply a method, or confirm that the original may be published"
        )
    if untouched:
        warnings.insert(
            0, f"nothing was masked: {untouched}; the release holds the original values"
        )
    write_table(released, files["release"])
    _write_text(files["recipe"], recipe.to_toml())
    _write_text(files["script"], recipe_script(recipe))
    commands = recipe_commands(recipe, project.path.name, files["release"].name)
    _write_text(
        files["commands"],
        "#!/bin/sh\n# Replays the sdckit studio recipe; run in the folder holding "
        f"{project.path.name}.\nset -e\n" + "\n".join(commands) + "\n",
    )
    if with_report:
        try:
            assessment = _assessment(project, state, columns)
            report(assessment, path=files["report"], title=f"sdckit studio: {project.path.name}")
        except SDCError as exc:
            del files["report"]
            warnings.append(f"the assessment report could not be made: {exc}")
    return Export(files, columns, warnings)


def _unmasked(project: Project, released: pd.DataFrame, columns: list[str]) -> str:
    """Why the release is the original's values ("no method was applied"), or "" when it is not."""
    steps = project.path_to()
    if not steps:
        return "no method was applied"
    original = project.original
    if all(changed_share(original[c], released[c]) == 0 for c in columns):
        return f"the {len(steps)} step(s) applied changed no released value"
    return ""


def _assessment(project: Project, state: pd.DataFrame, columns: list[str]) -> Assessment:
    """The full assessment of the release's columns whose kind the steps kept.

    A recoded column (numbers become interval labels) cannot be compared
    value by value with its original; it is left out of the measures, and
    the key risk of the release is the studio's own panel.
    """
    kinds, roles = project.schema_overrides()
    before = Schema.infer(project.original, kinds=kinds, roles=roles)
    after = state_schema(state, kinds, roles)
    kept = [
        c for c in columns if before[c].kind is after[c].kind and before[c].role is after[c].role
    ]
    measured = [c for c in kept if c in before.maskable()]
    if not measured:
        raise ParameterError("no released column keeps its kind, so none can be assessed")
    keys = [c for c in project.columns_with("key") if c in measured]
    return assess(
        project.original.loc[:, kept],
        state.loc[:, kept],
        columns=measured,
        keys=keys or None,
        schema=Schema(tuple(before[c] for c in kept)),
    )


def _write_text(path: Path, text: str) -> None:
    def writer(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    atomic_write(path, writer)
