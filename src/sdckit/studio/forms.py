"""Forms of the masking methods, generated from the registry: no form is written by hand.

For every registered method (:func:`sdckit.microdata.available_maskers`) the
form lists its parameters from the function's signature (names, defaults,
type annotations), its numpydoc ``Parameters`` section (help text, and the
choices written as ``{"a", "b"}`` in the type line) and the ranges declared
when it was registered (``register_masker(..., ranges=...)``). A new method
appears in the studio as soon as it is registered.

Each parameter gets one widget type:

* ``columns``: several of the file's columns (an ``Iterable[str]`` of column names);
* ``column``: one column (a ``str`` the docstring describes as a column);
* ``choice``: one of ``choices`` (a ``Literal`` or a ``{...}`` set in the docstring);
* ``integer``, ``number``, ``boolean``, ``string``;
* ``json``: anything else (mappings, lists of numbers), typed as JSON text.

A parameter is ``required`` when it has no default, or when its help says
so ("The key variables (required).", "Required: the data swap rate"): a
method whose ``columns`` defaults to None but refuses to run without them
(local suppression, PRAM) gets a form that asks for them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from sdckit.microdata.base import available_maskers, get_masker, masker_ranges
from sdckit.studio.recipe import RESERVED

__all__ = ["method_form", "method_forms"]

_SECTION = re.compile(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", re.M)
#: A parameter whose help says "(required)" or has a sentence starting "Required" must be given, even
#: when its signature default is None (the method then refuses to run without it).
_REQUIRED = re.compile(r"\(required\b|(^|[.:;]\s+)required\b", re.I)


def _parameter_docs(func: Callable[..., Any]) -> dict[str, tuple[str, str]]:
    """``{name: (type line, help text)}`` from the numpydoc ``Parameters`` section."""
    doc = inspect.getdoc(func) or ""
    match = re.search(r"^Parameters\n-{3,}\n(.*?)(?=^\S[^\n]*\n-{3,}\n|\Z)", doc, re.M | re.S)
    if not match:
        return {}
    out: dict[str, tuple[str, str]] = {}
    names: list[str] = []
    type_line = ""
    help_lines: list[str] = []

    def flush() -> None:
        text = " ".join(" ".join(help_lines).split())
        for name in names:
            out[name] = (type_line, text)

    for line in match.group(1).splitlines():
        if line and not line[0].isspace():
            flush()
            head, _, type_line = line.partition(" : ")
            names = [n.strip().lstrip("*") for n in head.split(",") if n.strip()]
            type_line = type_line.strip()
            help_lines = []
        elif line.strip():
            help_lines.append(line.strip())
    flush()
    return out


def _members(annotation: str) -> list[str]:
    """The members of a union annotation written as text, split at top-level ``|``."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(annotation):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "|" and depth == 0:
            out.append(annotation[start:i].strip())
            start = i + 1
    out.append(annotation[start:].strip())
    return [m for m in out if m]


def _choices(annotation: str, type_line: str) -> list[Any] | None:
    literal = re.search(r"Literal\[(.*?)\]", annotation)
    text = literal.group(1) if literal else None
    if text is None:
        braces = re.search(r"\{([^{}]*)\}", type_line)
        text = braces.group(1) if braces else None
    if text is None:
        return None
    values: list[Any] = []
    for item in text.split(","):
        item = item.strip()
        if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
            values.append(item[1:-1])
        elif item == "None":
            values.append(None)
        elif re.fullmatch(r"-?\d+", item):
            values.append(int(item))
        else:
            return None  # not a plain set of values
    return values or None


def _widget(name: str, annotation: str, type_line: str, help_text: str) -> dict[str, Any]:
    members = _members(annotation)
    nullable = "None" in members
    simple = [m for m in members if m != "None"]
    about_columns = bool(
        re.search(r"\b(columns?|identifier)\b", f"{type_line} {help_text[:120]}", re.I)
    )
    out: dict[str, Any] = {"nullable": nullable}
    if any(re.fullmatch(r"(Iterable|Sequence|list)\[str\]", m) for m in simple):
        out["type"] = "columns"
        return out
    first = simple[0] if simple else "Any"
    choices = _choices(annotation, type_line)
    if first.startswith("Literal[") or (first == "str" and choices):
        out["type"] = "choice"
        out["choices"] = choices
    elif first == "str":
        out["type"] = "column" if about_columns else "string"
    elif first == "bool":
        out["type"] = "boolean"
    elif first == "int":
        out["type"] = "integer"
    elif first == "float":
        out["type"] = "number"
    else:
        out["type"] = "json"
    return out


def _plain_default(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (bool, int, float, str)) for v in value
    ):
        return list(value)
    return None


def method_form(name: str) -> dict[str, Any]:
    """The generated form of one registered masking method.

    Parameters
    ----------
    name : str
        A name from :func:`sdckit.microdata.available_maskers`.

    Returns
    -------
    dict
        ``{"name", "description", "parameters": [...]}``; each parameter has
        ``name``, ``type`` (see the module), ``annotation`` (as written in
        the code), ``default``, ``required``, ``nullable``, ``help``, and
        where they exist ``choices``, ``minimum``, ``maximum``.
    """
    func = get_masker(name)
    docs = _parameter_docs(func)
    ranges = masker_ranges(name)
    parameters = []
    for param in inspect.signature(func).parameters.values():
        if param.name in RESERVED or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        annotation = (
            param.annotation
            if isinstance(param.annotation, str)
            else inspect.formatannotation(param.annotation)
        )
        if param.annotation is inspect.Parameter.empty:
            annotation = "Any"
        type_line, help_text = docs.get(param.name, ("", ""))
        required = param.default is inspect.Parameter.empty or bool(_REQUIRED.search(help_text))
        entry: dict[str, Any] = {
            "name": param.name,
            "annotation": annotation,
            "default": _plain_default(param.default),
            "required": required,
            "help": help_text,
            **_widget(param.name, annotation, type_line, help_text),
        }
        if required:
            entry["nullable"] = False
        if param.name in ranges:
            low, high = ranges[param.name]
            entry["minimum"], entry["maximum"] = low, high
        parameters.append(entry)
    return {"name": name, "description": available_maskers()[name], "parameters": parameters}


def method_forms() -> list[dict[str, Any]]:
    """The forms of every registered masking method, by name.

    Returns
    -------
    list of dict
        One :func:`method_form` per method of
        :func:`sdckit.microdata.available_maskers`.
    """
    return [method_form(name) for name in available_maskers()]
