"""Offline taxonomies: a query's terms and each term's category paths.

Erola et al. (2011, §2.3) classify every term of a query in the Open
Directory Project (ODP) and use the categories at depth levels 1..L. The live
ODP service they queried no longer exists, so sdckit classifies offline,
behind one interface (:class:`Taxonomy`):

* :class:`ODP239Taxonomy` - the ODP239 subset of the ODP (Carpineto & Romano,
  2009: 14 top categories, 239 topics, 2,285 subtopics), read from the CSV
  where it is installed (never copied into sdckit); a term is matched to the
  category names and to the words of the names;
* :class:`TableTaxonomy` - a user's own term -> category-path table (CSV),
  e.g. a statistical office's classification.

A category path is a tuple of names from level 1 down (``("Arts",
"Animation", "Voice_Actors")``); its prefix of length l is the term's
category at level l. A term's paths are ranked, best first, as the ODP
returned them (Erola et al. 2011, Figure 1), so "the first category" and
"the first five categories" (§4.2.2) are well defined.
"""

from __future__ import annotations

import csv
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from sdckit.errors import DataError, ParameterError, SchemaError

__all__ = [
    "ODP239_ENV",
    "ODP239Taxonomy",
    "TableTaxonomy",
    "Taxonomy",
    "load_taxonomy",
    "normalize_word",
]

#: Environment variable naming the ODP239 taxonomy CSV.
ODP239_ENV = "SDCKIT_ODP239"

_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*", re.UNICODE)

# Function words carry no topic; they are neither terms nor category words.
_STOPWORDS = frozenset(
    "a an and are as at be by for from how in is it of on or the to was what when where "
    "who why with www com org net http https html htm".split()
)

CategoryPath = tuple[str, ...]


def normalize_word(word: str) -> str:
    """Lower-case a word and strip a plural ending, so ``Movies`` matches ``movie``.

    Parameters
    ----------
    word : str
        One word.

    Returns
    -------
    str
        The normalized word (``"categories"`` -> ``"category"``).
    """
    word = word.lower().replace("'", "")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    return [
        normalize_word(w)
        for w in _WORD.findall(text.replace("_", " "))
        if w.lower() not in _STOPWORDS
    ]


class Taxonomy(ABC):
    """One interface for every taxonomy: split a query into terms, classify terms.

    A subclass fills :attr:`entries`, a mapping from a term (a tuple of
    normalized words) to its ranked category paths; :meth:`terms` splits a
    query greedily into the longest terms the taxonomy knows, so a category
    name of several words ("voice actors") is one term.
    """

    name: str = "taxonomy"

    def __init__(self) -> None:
        self.entries: dict[tuple[str, ...], tuple[CategoryPath, ...]] = {}
        self.max_term_words = 1

    def _add(self, term: tuple[str, ...], path: CategoryPath) -> None:
        if not term:
            return
        known = self.entries.get(term, ())
        if path not in known:
            self.entries[term] = (*known, path)
        self.max_term_words = max(self.max_term_words, len(term))

    def terms(self, query: str) -> list[tuple[str, ...]]:
        """Split a query into terms: the longest known word sequences, else single words.

        Parameters
        ----------
        query : str
            The query text.

        Returns
        -------
        list of tuple of str
            Each term as its normalized words; function words are dropped.
        """
        words = _words(query)
        out: list[tuple[str, ...]] = []
        i = 0
        while i < len(words):
            for size in range(min(self.max_term_words, len(words) - i), 0, -1):
                candidate = tuple(words[i : i + size])
                if size == 1 or candidate in self.entries:
                    out.append(candidate)
                    i += size
                    break
        return out

    def classify(self, terms: Sequence[tuple[str, ...]]) -> list[tuple[CategoryPath, ...]]:
        """The ranked category paths of each term (empty for an unknown term).

        Parameters
        ----------
        terms : sequence of tuple of str
            Terms as returned by :meth:`terms`.

        Returns
        -------
        list of tuple of category paths
            For each term its category paths, best first; a path is a tuple
            of category names from level 1 down.
        """
        return [self.entries.get(term, ()) for term in terms]

    @property
    def depth(self) -> int:
        """The deepest level of any category path."""
        return max((len(p) for paths in self.entries.values() for p in paths), default=0)

    @abstractmethod
    def describe(self) -> str:
        """Where the taxonomy was read from, for reports.

        Returns
        -------
        str
            One line.
        """


def _read_csv_rows(path: Path, what: str) -> tuple[list[str], list[list[str]]]:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle))
    except OSError as exc:
        raise DataError(f"cannot read the {what} {str(path)!r}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"the {what} {str(path)!r} is not a readable UTF-8 CSV file") from exc
    if not rows:
        raise DataError(f"the {what} {str(path)!r} is empty")
    return [h.strip() for h in rows[0]], rows[1:]


def _require(header: list[str], name: str, path: Path, what: str) -> int:
    if name not in header:
        raise SchemaError(f"the {what} {str(path)!r} has no column {name!r}; it has {header}")
    return header.index(name)


class ODP239Taxonomy(Taxonomy):
    """The ODP239 taxonomy (Carpineto & Romano, 2009), read where it is installed.

    Each row of the CSV (columns ``category_path`` with ``/``-joined names,
    e.g. ``Arts/Animation/Voice_Actors``) names a category; the category names
    along the path (``Arts``; ``Animation``; ``Voice Actors``) and each of
    their words become terms of that category. A term's paths are ranked:
    paths whose name equals the term first, then those whose name holds it
    as a word; shallower paths first within each (``movies`` is
    ``Arts/Movies`` before ``Arts/Animation/Movies``); then file order.

    Parameters
    ----------
    path : path, optional
        The ``odp239_taxonomy.csv`` file. Default: the file named by the
        environment variable ``SDCKIT_ODP239``, else
        ``../shared/data/odp239_taxonomy.csv`` from the working directory.
    """

    name = "odp239"

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.path = _odp239_path(path)
        header, rows = _read_csv_rows(self.path, "ODP239 taxonomy")
        at = _require(header, "category_path", self.path, "ODP239 taxonomy")
        ranked: dict[tuple[str, ...], list[tuple[int, int, int, CategoryPath]]] = {}
        order = 0
        leaf_words: dict[str, list[str]] = {}
        for row in rows:
            if len(row) <= at or not row[at].strip():
                continue
            names = tuple(n for n in row[at].strip().split("/") if n)
            # Every prefix is a category too (the top categories have no row).
            for depth in range(1, len(names) + 1):
                prefix = names[:depth]
                leaf = leaf_words.get(prefix[-1])
                if leaf is None:
                    leaf = leaf_words[prefix[-1]] = _words(prefix[-1])
                candidates = [(0, tuple(leaf))] + [(1, (w,)) for w in leaf]
                for exactness, term in candidates:
                    if term:
                        ranked.setdefault(term, []).append((exactness, depth, order, prefix))
                order += 1
        for term, found in ranked.items():
            for _, _, _, category in sorted(found):
                self._add(term, category)
        if not self.entries:
            raise DataError(f"the ODP239 taxonomy {str(self.path)!r} holds no category path")

    def describe(self) -> str:
        """Where the taxonomy was read from.

        Returns
        -------
        str
            ``odp239 (<path>)``.
        """
        return f"odp239 ({self.path})"


def _odp239_path(path: str | os.PathLike[str] | None) -> Path:
    if path is not None:
        return Path(path)
    from_env = os.environ.get(ODP239_ENV)
    if from_env:
        return Path(from_env)
    default = Path.cwd().parent / "shared" / "data" / "odp239_taxonomy.csv"
    if default.exists():
        return default
    raise DataError(
        f"the ODP239 taxonomy file was not found: give its path (--taxonomy FILE with "
        f"--taxonomy-format odp239, or taxonomy=ODP239Taxonomy(path)) or set {ODP239_ENV}"
    )


class TableTaxonomy(Taxonomy):
    """A user's own term -> category-path table (CSV).

    One row per (term, category path); a term with several rows has several
    paths, ranked in file order. A path's levels are separated by ``/``
    (``Health/Conditions/Diabetes``). A term of several words is matched as
    a whole in a query before its single words.

    Parameters
    ----------
    path : path
        The CSV file.
    term_column, path_column : str
        Names of the term and category-path columns.
    separator : str
        What separates the levels of a path.
    """

    name = "table"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        term_column: str = "term",
        path_column: str = "category_path",
        separator: str = "/",
    ) -> None:
        super().__init__()
        if not separator:
            raise ParameterError("separator must not be empty")
        self.path = Path(path)
        header, rows = _read_csv_rows(self.path, "taxonomy table")
        term_at = _require(header, term_column, self.path, "taxonomy table")
        path_at = _require(header, path_column, self.path, "taxonomy table")
        for line, row in enumerate(rows, start=2):
            if len(row) <= max(term_at, path_at):
                raise DataError(
                    f"the taxonomy table {str(self.path)!r}, line {line}: too few fields"
                )
            names = tuple(n.strip() for n in row[path_at].split(separator) if n.strip())
            term = tuple(_words(row[term_at]))
            if not names or not term:
                raise DataError(
                    f"the taxonomy table {str(self.path)!r}, line {line}: empty term or "
                    "category path"
                )
            self._add(term, names)
        if not self.entries:
            raise DataError(f"the taxonomy table {str(self.path)!r} holds no term")

    def describe(self) -> str:
        """Where the taxonomy was read from.

        Returns
        -------
        str
            ``table (<path>)``.
        """
        return f"table ({self.path})"


def load_taxonomy(spec: str | os.PathLike[str] | Taxonomy) -> Taxonomy:
    """A taxonomy from a name or a file.

    Parameters
    ----------
    spec : str, path or Taxonomy
        ``"odp239"`` (the installed ODP239 file, see :class:`ODP239Taxonomy`),
        a path to a term -> category-path CSV (:class:`TableTaxonomy`), or a
        taxonomy object, returned as is.

    Returns
    -------
    Taxonomy
        The loaded taxonomy.
    """
    if isinstance(spec, Taxonomy):
        return spec
    if str(spec).lower() == "odp239":
        return ODP239Taxonomy()
    if str(spec).lower() == "wordnet":
        raise ParameterError(
            "taxonomy 'wordnet' is not available in this version of sdckit; use odp239 or a "
            "term -> category-path CSV file"
        )
    return TableTaxonomy(spec)
