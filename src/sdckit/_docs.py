"""Docstring sections written once and shared by several functions.

A function whose parameters mean the same as another's (the two files of an
assessment, a schema, a random state) documents them by a marker line
``{{name}}`` in its numpydoc ``Parameters`` section; :func:`shared_doc`
replaces the marker, at import, by the fragment of that name, indented as
the marker is. The docstring Python holds (``help()``, numpydoc's check,
Sphinx) is then complete, as if each function had it written out.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["shared_doc"]

T = TypeVar("T")

_MARKER = re.compile(r"^(?P<indent>[ \t]*)\{\{(?P<name>\w+)\}\}[ \t]*$", re.MULTILINE)


def shared_doc(fragments: Mapping[str, str]) -> Callable[[T], T]:
    """A decorator filling the ``{{name}}`` marker lines of a docstring from ``fragments``.

    Parameters
    ----------
    fragments : mapping of str to str
        ``{name: text}``; each text is a numpydoc fragment (one or more
        parameter entries), written without indentation.

    Returns
    -------
    callable
        The decorator: it sets the object's ``__doc__`` and returns the object.
        A marker naming no fragment raises ``KeyError`` at import.
    """

    def fill(match: re.Match[str]) -> str:
        text = textwrap.dedent(fragments[match["name"]]).strip("\n")
        return textwrap.indent(text, match["indent"])

    def decorate(obj: T) -> T:
        doc = getattr(obj, "__doc__", None)
        if doc:
            obj.__doc__ = _MARKER.sub(fill, doc)
        return obj

    return decorate
