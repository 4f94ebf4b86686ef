"""Names that left a package's namespace stay importable from it for one release, with a warning.

Issue 14 (item 8) moved plumbing — neighbour-search internals, key arithmetic,
closed-form helpers — out of the package namespaces (``sdckit.tables``,
``sdckit.server``, ...) into their modules. Old code importing them from the
package keeps working through a module ``__getattr__`` (PEP 562) that warns
with :class:`~sdckit.errors.SDCDeprecationWarning` and names the new home.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from sdckit.errors import SDCDeprecationWarning

__all__ = ["moved_names"]


def moved_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving names that moved out of ``package``.

    Parameters
    ----------
    package : str
        The package whose namespace the names left (for the message).
    homes : mapping
        ``{name: "sdckit.module.where.it.lives"}``.

    Returns
    -------
    callable
        ``__getattr__(name)`` for the package's ``__init__``: returns the
        moved object with a deprecation warning, raises AttributeError for
        any other name.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(
            f"{package}.{name} is not part of the package's public API any more; "
            f"import it from {home}",
            SDCDeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)

    return __getattr__
