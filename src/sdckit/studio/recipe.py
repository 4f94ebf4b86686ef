"""Recipes: a studio project as a TOML file, a Python script or ``sdckit`` commands, and its replay.

A recipe holds the input's fingerprint, the columns' kinds and roles, the
steps on the path to the released state (method, parameters, seed) and the
released columns. The three ways to replay it run the same library calls in
the same order, so each reproduces the studio's export byte for byte from
the original file:

* ``sdckit recipe run RECIPE INPUT -o OUTPUT`` (:func:`run_recipe`);
* the script of :func:`recipe_script` (plain :func:`sdckit.microdata.mask`
  calls, one per step);
* the commands of :func:`recipe_commands`: one generic ``sdckit recipe step``
  per step (any registered method, with its parameters as JSON values;
  intermediate states in Parquet, which keeps every dtype) and one
  ``sdckit recipe release`` keeping the released columns.

Each step is ``mask(method, data, schema=Schema.infer(data, kinds=...,
roles=...), random_state=seed, **params)`` (:func:`replay_step`): the schema
is inferred on the step's input with the project's declared kinds and roles,
as the studio does.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import re
import shlex
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import sdckit
from sdckit.errors import DataError, ParameterError
from sdckit.io import check_output_path, read_table, write_table
from sdckit.microdata.base import MaskResult, get_masker, mask, masker_ranges
from sdckit.schema import Schema

__all__ = [
    "Recipe",
    "check_params",
    "load_recipe",
    "parse_recipe",
    "recipe_commands",
    "recipe_script",
    "release_columns",
    "replay_step",
    "run_recipe",
]

#: Parameters every masker takes that a recipe sets itself (never a step's own parameter).
RESERVED = ("data", "schema", "random_state", "progress")
_FORMAT = 1


def _plain_value(value: Any, name: str) -> Any:
    """``value`` as TOML/JSON can hold it, or a ParameterError naming ``name``."""
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"{name} must be a finite number, got {value!r}")
        return value
    if isinstance(value, (list, tuple)):
        return [_plain_value(v, name) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain_value(v, name) for k, v in value.items()}
    raise ParameterError(
        f"{name}: a recipe holds numbers, text, true/false, lists and mappings; "
        f"got {type(value).__name__}"
    )


def check_params(method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Check a step's parameters against the method's signature and declared ranges.

    Parameters
    ----------
    method : str
        A registered masking method.
    params : mapping
        ``{parameter: value}``; a value of None is the method's default when
        that default is None and is left out.

    Returns
    -------
    dict
        The parameters as plain values, in the signature's order.

    Raises
    ------
    ParameterError
        A parameter the method does not take, a reserved one (``schema``,
        ``random_state``, ``progress``), a value no recipe can hold, or a
        number outside the declared range; the message names the parameter.
    """
    signature = inspect.signature(get_masker(method))
    known = {n: p for n, p in signature.parameters.items() if n not in RESERVED}
    for name in params:
        if name in RESERVED:
            raise ParameterError(
                f"{name}: set by the studio (the seed is random_state), not a step parameter"
            )
        if name not in known:
            raise ParameterError(
                f"{name}: {method} has no parameter {name!r}; it takes {sorted(known)}"
            )
    out: dict[str, Any] = {}
    ranges = masker_ranges(method)
    for name in known:
        if name not in params:
            continue
        value = params[name]
        if value is None:
            if known[name].default is None:
                continue
            raise ParameterError(f"{name}: give a value (its default is {known[name].default!r})")
        value = _plain_value(value, name)
        low, high = ranges.get(name, (None, None))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if (low is not None and value < low) or (high is not None and value > high):
                shown = f"[{_num(low)}, {_num(high)}]"
                raise ParameterError(f"{name} must be in {shown}, got {_num(value)}")
        out[name] = value
    return out


def _num(value: float | None) -> str:
    if value is None:
        return "..."
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def replay_step(
    data: pd.DataFrame,
    method: str,
    params: Mapping[str, Any],
    *,
    seed: int | None,
    kinds: Mapping[str, str],
    roles: Mapping[str, str],
    progress: Callable[[int, int], None] | None = None,
) -> MaskResult:
    """One step of a recipe: the schema inferred on ``data``, then the method.

    Parameters
    ----------
    data : DataFrame
        The step's input (never modified).
    method : str
        A registered masking method.
    params : mapping
        Its parameters.
    seed : int or None
        Its ``random_state``.
    kinds, roles : mapping
        The :meth:`sdckit.schema.Schema.infer` overrides
        (:func:`sdckit.studio.project.schema_overrides`); columns a method
        has removed are left out.
    progress : callable, optional
        ``progress(done, total)``.

    Returns
    -------
    MaskResult
    """
    schema = state_schema(data, kinds, roles)
    return mask(method, data, schema=schema, random_state=seed, progress=progress, **params)


def state_schema(data: pd.DataFrame, kinds: Mapping[str, str], roles: Mapping[str, str]) -> Schema:
    """The schema a step sees: inferred on ``data`` with the declared kinds and roles.

    Parameters
    ----------
    data : DataFrame
        A state of the data.
    kinds, roles : mapping
        The :meth:`sdckit.schema.Schema.infer` overrides; columns ``data``
        lacks (a method removed them) are left out.

    Returns
    -------
    Schema
    """
    present = {str(c) for c in data.columns}
    return Schema.infer(
        data,
        kinds={c: k for c, k in kinds.items() if c in present},
        roles={c: r for c, r in roles.items() if c in present},
    )


@dataclass(frozen=True)
class Recipe:
    """A project reduced to what replays its release.

    Attributes
    ----------
    input_name : str
        The input file's name (for a person; the fingerprint decides).
    fingerprint : str
        ``"sha256:<hex>"`` of the input file's bytes.
    kinds, roles : mapping
        The :meth:`sdckit.schema.Schema.infer` overrides of every step.
    steps : list of mapping
        ``{"method", "params", "seed"}`` from the original to the released state.
    columns : list of str
        The released columns, in order.
    studio_roles : mapping
        The roles as the studio names them (for a person and for loading back).
    studio_kinds : mapping
        The kinds as the studio names them.
    snapshots : mapping
        ``{name: position in steps}`` (0 is the original).
    """

    input_name: str
    fingerprint: str
    kinds: Mapping[str, str]
    roles: Mapping[str, str]
    steps: Sequence[Mapping[str, Any]]
    columns: Sequence[str]
    studio_roles: Mapping[str, str] = field(default_factory=dict)
    studio_kinds: Mapping[str, str] = field(default_factory=dict)
    snapshots: Mapping[str, int] = field(default_factory=dict)

    def to_toml(self) -> str:
        """The recipe as TOML text (read back by :func:`load_recipe`).

        Returns
        -------
        str
        """
        lines = [
            "# sdckit studio recipe; replay it with",
            f"#   sdckit recipe run RECIPE.toml {self.input_name} -o RELEASE.csv",
            f"format = {_FORMAT}",
            f"sdckit_version = {_toml(sdckit.__version__)}",
            "",
            "[input]",
            f"file = {_toml(self.input_name)}",
            f"fingerprint = {_toml(self.fingerprint)}",
            "",
            "[release]",
            f"columns = {_toml(list(self.columns))}",
            "",
            "[schema]  # Schema.infer(data, kinds=..., roles=...) before every step",
            f"kinds = {_toml(dict(self.kinds))}",
            f"roles = {_toml(dict(self.roles))}",
            "",
            "[studio]  # the roles and kinds as the studio shows them",
            f"kinds = {_toml(dict(self.studio_kinds))}",
            f"roles = {_toml(dict(self.studio_roles))}",
            f"snapshots = {_toml(dict(self.snapshots))}",
        ]
        for step in self.steps:
            lines += ["", "[[steps]]", f"method = {_toml(step['method'])}"]
            if step.get("seed") is not None:
                lines.append(f"seed = {_toml(step['seed'])}")
            lines.append(f"params = {_toml(dict(step.get('params', {})))}")
        return "\n".join(lines) + "\n"


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml(value: Any) -> str:
    """One TOML value, inline (tables as inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = [
            f"{k if _BARE_KEY.match(str(k)) else json.dumps(str(k), ensure_ascii=False)} = "
            f"{_toml(v)}"
            for k, v in value.items()
        ]
        return "{" + ", ".join(items) + "}"
    raise ParameterError(f"a recipe cannot hold a value of type {type(value).__name__}")


def load_recipe(path: str | os.PathLike) -> Recipe:
    """Read a recipe written by :meth:`Recipe.to_toml`.

    Parameters
    ----------
    path : path
        The ``.toml`` file.

    Returns
    -------
    Recipe

    Raises
    ------
    DataError
        The file cannot be read or is not a recipe (the message says what is missing).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read recipe {str(p)!r}: {exc.strerror or exc}") from exc
    return parse_recipe(text, f"recipe {str(p)!r}")


def parse_recipe(text: str, where: str = "the recipe") -> Recipe:
    """A recipe from its TOML text.

    Parameters
    ----------
    text : str
        What :meth:`Recipe.to_toml` wrote.
    where : str, default "the recipe"
        How error messages name it.

    Returns
    -------
    Recipe
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{where} is not valid TOML: {exc}") from exc
    if doc.get("format") != _FORMAT:
        raise DataError(f"{where}: unknown format {doc.get('format')!r} (expected 1)")
    try:
        steps = [
            {"method": str(s["method"]), "params": dict(s.get("params", {})), "seed": s.get("seed")}
            for s in doc.get("steps", [])
        ]
        studio = doc.get("studio", {})
        return Recipe(
            input_name=str(doc["input"]["file"]),
            fingerprint=str(doc["input"]["fingerprint"]),
            kinds=dict(doc["schema"]["kinds"]),
            roles=dict(doc["schema"]["roles"]),
            steps=steps,
            columns=[str(c) for c in doc["release"]["columns"]],
            studio_roles=dict(studio.get("roles", {})),
            studio_kinds=dict(studio.get("kinds", {})),
            snapshots=dict(studio.get("snapshots", {})),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{where} lacks {exc}; write recipes with the studio") from None


def release_columns(data: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The released table: ``columns`` of ``data``, in that order.

    Parameters
    ----------
    data : DataFrame
        The final state.
    columns : sequence of str
        The released columns.

    Returns
    -------
    DataFrame
    """
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise DataError(f"column {missing[0]!r} of the release is not in the data")
    return data.loc[:, list(columns)]


def check_fingerprint(path: str | os.PathLike, expected: str) -> None:
    """Raise :class:`~sdckit.errors.DataError` unless ``path`` has the fingerprint ``expected``.

    Parameters
    ----------
    path : path
        The input file.
    expected : str
        ``"sha256:<hex>"``.
    """
    from sdckit.studio.project import file_fingerprint

    if not Path(path).is_file():
        raise DataError(f"input file {str(path)!r} does not exist")
    found = file_fingerprint(path)
    if found != expected:
        raise DataError(
            f"input file {str(path)!r} is not the file the recipe was made from: its fingerprint "
            f"is {found}, the recipe's {expected}; nothing was done"
        )


def _check_not_input(output: str | os.PathLike, input_path: str | os.PathLike) -> Path:
    out = check_output_path(output)
    if out.exists() and out.resolve() == Path(input_path).resolve():
        raise DataError(f"output {str(out)!r} is the input file; write the release elsewhere")
    return out


def run_recipe(
    recipe: Recipe | str | os.PathLike,
    input_path: str | os.PathLike,
    output: str | os.PathLike,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Replay a recipe on its input file and write the release (atomically).

    Parameters
    ----------
    recipe : Recipe or path
        The recipe, or its TOML file.
    input_path : path
        The original file; its fingerprint is checked before anything else.
    output : path
        The release to write (``.csv`` or ``.parquet``); never the input.
    progress : callable, optional
        ``progress(step, n_steps)`` after each step.

    Returns
    -------
    DataFrame
        The release written.

    Raises
    ------
    DataError
        The input is not the recipe's file, the recipe releases a column whose
        role is ``id`` (edited by hand: the studio never writes one), or a
        file cannot be read or written.
    """
    found = recipe if isinstance(recipe, Recipe) else load_recipe(recipe)
    identifiers = [c for c in found.columns if found.studio_roles.get(c) == "id"]
    if identifiers:
        raise DataError(
            f"column {identifiers[0]!r} of the release has the role 'id' (a direct identifier) "
            "in the recipe and is never released; nothing was done"
        )
    check_fingerprint(input_path, found.fingerprint)
    out = _check_not_input(output, input_path)
    data = read_table(input_path)
    for i, step in enumerate(found.steps, start=1):
        data = replay_step(
            data,
            step["method"],
            check_params(step["method"], step.get("params", {})),
            seed=step.get("seed"),
            kinds=found.kinds,
            roles=found.roles,
        ).data
        if progress is not None:
            progress(i, len(found.steps))
    released = release_columns(data, found.columns)
    write_table(released, out)
    return released


def recipe_script(recipe: Recipe) -> str:
    """A runnable Python script replaying ``recipe`` with plain sdckit calls.

    ``python SCRIPT INPUT OUTPUT`` writes the release; it checks the input's
    fingerprint first.

    Parameters
    ----------
    recipe : Recipe
        The recipe.

    Returns
    -------
    str
        The script's text.
    """
    lines = [
        f'"""Replay of an sdckit studio recipe on {recipe.input_name}.',
        "",
        "Usage: python THIS_SCRIPT INPUT OUTPUT. Writes the release the studio exported,",
        'byte for byte, after checking that INPUT is the file the recipe was made from."""',
        "",
        "import hashlib",
        "import sys",
        "",
        "from sdckit.io import read_table, write_table",
        "from sdckit.microdata import mask",
        "from sdckit.schema import Schema",
        "",
        f"INPUT = sys.argv[1] if len(sys.argv) > 1 else {recipe.input_name!r}",
        'OUTPUT = sys.argv[2] if len(sys.argv) > 2 else "release.csv"',
        f"FINGERPRINT = {recipe.fingerprint!r}",
        f"KINDS = {dict(recipe.kinds)!r}",
        f"ROLES = {dict(recipe.roles)!r}",
        "",
        'with open(INPUT, "rb") as fh:',
        '    found = "sha256:" + hashlib.sha256(fh.read()).hexdigest()',
        "if found != FINGERPRINT:",
        '    sys.exit(f"{INPUT} is not the file the recipe was made from ({found}); nothing done")',
        "",
        "data = read_table(INPUT)",
    ]
    for i, step in enumerate(recipe.steps, start=1):
        params = "".join(f", {k}={v!r}" for k, v in step.get("params", {}).items())
        lines += [
            f"# step {i}: {step['method']}",
            "schema = Schema.infer(",
            "    data,",
            "    kinds={c: k for c, k in KINDS.items() if c in data.columns},",
            "    roles={c: r for c, r in ROLES.items() if c in data.columns},",
            ")",
            f"data = mask({step['method']!r}, data, schema=schema, "
            f"random_state={step.get('seed')!r}{params}).data",
        ]
    lines += [
        f"write_table(data.loc[:, {list(recipe.columns)!r}], OUTPUT)",
        'print(f"wrote {OUTPUT}")',
    ]
    return "\n".join(lines) + "\n"


def recipe_commands(recipe: Recipe, input_path: str = "", output: str = "release.csv") -> list[str]:
    """The recipe as a sequence of ``sdckit`` shell commands.

    Every step is a generic ``sdckit recipe step METHOD IN -o OUT`` (any
    registered method; ``--param NAME=JSON``, ``--seed``, the schema as
    ``--kind``/``--role``), the first one with ``--fingerprint`` so a wrong
    input stops before anything is written. Intermediate states go to
    ``step1.parquet``, ``step2.parquet``... (Parquet keeps every dtype, so the
    next step reads what the studio held in memory); ``sdckit recipe release``
    keeps the released columns, and a last ``rm -f`` removes the intermediate
    states, which hold every column, confidential ones included.

    Parameters
    ----------
    recipe : Recipe
        The recipe.
    input_path : str, optional
        The input as the commands name it (default the recipe's file name).
    output : str, default "release.csv"
        The release file.

    Returns
    -------
    list of str
        One shell command per line, quoted for a POSIX shell.
    """
    source = input_path or recipe.input_name
    schema = [f"--kind={c}={k}" for c, k in recipe.kinds.items()]
    schema += [f"--role={c}={r}" for c, r in recipe.roles.items()]
    commands = []
    current = source
    for i, step in enumerate(recipe.steps, start=1):
        target = f"step{i}.parquet"
        words = ["sdckit", "recipe", "step", step["method"], current, "-o", target]
        if i == 1:
            words.append(f"--fingerprint={recipe.fingerprint}")
        if step.get("seed") is not None:
            words.append(f"--seed={step['seed']}")
        words += schema
        words += [
            f"--param={k}={json.dumps(v, ensure_ascii=False)}"
            for k, v in step.get("params", {}).items()
        ]
        commands.append(" ".join(shlex.quote(w) for w in words))
        current = target
    words = ["sdckit", "recipe", "release", current, "-o", output]
    if not recipe.steps:
        words.append(f"--fingerprint={recipe.fingerprint}")
    words += [f"--column={c}" for c in recipe.columns]
    commands.append(" ".join(shlex.quote(w) for w in words))
    if recipe.steps:
        # The intermediate states hold every column, confidential ones included: not left
        # beside the release, where they could be published with it.
        commands.append(
            "rm -f " + " ".join(f"step{i}.parquet" for i in range(1, len(recipe.steps) + 1))
        )
    return commands
