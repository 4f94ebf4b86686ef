"""Offline taxonomies: a query's terms and each term's category paths.

Erola et al. (2011, §2.3) classify every term of a query in the Open
Directory Project (ODP) and use the categories at depth levels 1..L. The live
ODP service they queried no longer exists, so sdckit classifies offline,
behind one interface (:class:`Taxonomy`):

* :class:`ODP239Taxonomy` - the ODP239 subset of the ODP (Carpineto & Romano,
  2009: 14 top categories, 239 topics, 2,285 subtopics), read from the CSV
  where it is installed (never copied into sdckit); a term is matched to the
  category names and to the words of the names;
* :class:`WordNetTaxonomy` - WordNet's noun hierarchy (Miller, 1995), read
  from the dictionary files Debian's ``wordnet-base`` package installs;
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

from sdckit._docs import shared_doc
from sdckit.errors import DataError, ParameterError, SchemaError

__all__ = [
    "ODP239_ENV",
    "WORDNET_ENV",
    "ODP239Taxonomy",
    "TableTaxonomy",
    "Taxonomy",
    "WordNetTaxonomy",
    "load_taxonomy",
    "normalize_word",
    "odp239_default_path",
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

#: The ``{{classify}}`` marker: what every taxonomy's ``classify`` takes and returns
#: (:func:`sdckit._docs.shared_doc`); each method describes its own paths below it.
_classify_doc = shared_doc(
    {
        "classify": """
        Parameters
        ----------
        terms : sequence of tuple of str
            Terms as returned by :meth:`terms`.

        Returns
        -------
        list of tuple of category paths
        """
    }
)


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

    def _knows(self, term: tuple[str, ...]) -> bool:
        return term in self.entries

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
                if size == 1 or self._knows(candidate):
                    out.append(candidate)
                    i += size
                    break
        return out

    @_classify_doc
    def classify(self, terms: Sequence[tuple[str, ...]]) -> list[tuple[CategoryPath, ...]]:
        """The ranked category paths of each term (empty for an unknown term).

        {{classify}}
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


class _ReadTaxonomy(Taxonomy):
    """A taxonomy read from files at :attr:`path`: it describes itself by its name and path."""

    path: Path

    def describe(self) -> str:
        """Where the taxonomy was read from.

        Returns
        -------
        str
            ``<name> (<path>)``: ``odp239 (<file>)``, ``table (<file>)``,
            ``wordnet (<directory>)``.
        """
        return f"{self.name} ({self.path})"


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


class ODP239Taxonomy(_ReadTaxonomy):
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
        ``shared/data/odp239_taxonomy.csv`` beside the sdckit source checkout
        (:func:`odp239_default_path`; never relative to the working
        directory). When none of them exists, a :class:`DataError` names the
        places looked at.
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


#: The ODP239 file's name in the project's data directory.
_ODP239_FILE = "odp239_taxonomy.csv"


def odp239_default_path() -> Path:
    """Where the ODP239 file is looked for when no path and no environment variable name it.

    ``shared/data/odp239_taxonomy.csv`` beside the sdckit source checkout:
    the directory ``shared`` next to the checkout that holds ``src/sdckit``
    (``<checkout>/../shared/data/odp239_taxonomy.csv``), which is where the
    project keeps its data. It depends on where sdckit's own files are, never
    on the working directory (a stray ``../shared`` next to wherever a command
    runs is not read).

    Returns
    -------
    pathlib.Path
        The absolute path (it may not exist: an installed copy of sdckit has
        no checkout beside it).
    """
    checkout = Path(__file__).resolve().parents[3]  # <checkout>/src/sdckit/querylog/taxonomy.py
    return checkout.parent / "shared" / "data" / _ODP239_FILE


def _odp239_path(path: str | os.PathLike[str] | None) -> Path:
    """The ODP239 file: ``path``, else ``$SDCKIT_ODP239``, else :func:`odp239_default_path`."""
    if path is not None:
        return Path(path)
    from_env = os.environ.get(ODP239_ENV)
    if from_env:
        return Path(from_env)
    default = odp239_default_path()
    if default.is_file():
        return default
    raise DataError(
        f"the ODP239 taxonomy file was not found: not given, {ODP239_ENV} not set, and no "
        f"{str(default)!r} beside the sdckit checkout; give its path (--odp239-path FILE, or "
        f"ODP239Taxonomy(path)) or set {ODP239_ENV}"
    )


class TableTaxonomy(_ReadTaxonomy):
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


#: Environment variable naming the WordNet dictionary directory.
WORDNET_ENV = "SDCKIT_WORDNET"

#: Where Debian's ``wordnet-base`` package installs the WordNet 3.0 files.
WORDNET_DEBIAN_DIR = Path("/usr/share/wordnet")

# WordNet's noun lexicographer files (lexnames(5WN)), numbered 03..28: the
# 25 broad noun classes ("supersenses") plus noun.Tops, the top of the tree.
_NOUN_LEXFILES = {
    3: "Tops",
    4: "act",
    5: "animal",
    6: "artifact",
    7: "attribute",
    8: "body",
    9: "cognition",
    10: "communication",
    11: "event",
    12: "feeling",
    13: "food",
    14: "group",
    15: "location",
    16: "motive",
    17: "object",
    18: "person",
    19: "phenomenon",
    20: "plant",
    21: "possession",
    22: "process",
    23: "quantity",
    24: "relation",
    25: "shape",
    26: "state",
    27: "substance",
    28: "time",
}


class WordNetTaxonomy(_ReadTaxonomy):
    """WordNet's noun hierarchy (Miller, 1995), read from its installed dictionary files.

    A term is a WordNet noun (a lemma of ``index.noun``; several words for a
    compound such as "new york"); its category paths are those of its senses,
    most frequent sense first (the order of ``index.noun``). A sense's path
    is its noun class (the lexicographer file: ``animal``, ``food``,
    ``location``...) at level 1, then its hypernym chain from the top down,
    leaving out the generic top of the tree (the synsets of ``noun.Tops``:
    entity, physical entity, object...) and following the first hypernym
    where there are several; each synset is named by its first word. So
    "dog" is ``animal/chordate/vertebrate/mammal/placental/carnivore/canine/dog``.
    Only the first five senses of a term are kept.

    Parameters
    ----------
    path : path, optional
        The WordNet dictionary directory (holding ``data.noun`` and
        ``index.noun``). Default: ``$SDCKIT_WORDNET``, else
        ``/usr/share/wordnet``, where Debian's ``wordnet-base`` installs it.
    """

    name = "wordnet"

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.path = _wordnet_dir(path)
        self._synsets = self._read_data(self.path / "data.noun")
        self._chains: dict[str, tuple[str, ...]] = {}
        self._senses: dict[tuple[str, ...], list[str]] = {}
        self._paths: dict[tuple[str, ...], tuple[CategoryPath, ...]] = {}
        index = self.path / "index.noun"
        try:
            with open(index, encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith(" "):
                        continue
                    fields = line.split()
                    if len(fields) < 4:
                        continue
                    n_synsets = int(fields[2])
                    term = tuple(_words(fields[0]))
                    if term:
                        senses = self._senses.setdefault(term, [])
                        senses.extend(o for o in fields[-n_synsets:] if o not in senses)
                        self.max_term_words = max(self.max_term_words, len(term))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise DataError(f"cannot read the WordNet index {str(index)!r}: {exc}") from exc
        if not self._senses:
            raise DataError(f"the WordNet files in {str(self.path)!r} hold no noun")

    def _knows(self, term: tuple[str, ...]) -> bool:
        return term in self._senses

    def _chain(self, offset: str) -> tuple[str, ...]:
        """The synset's hypernym chain from the top down, without noun.Tops synsets."""
        known = self._chains.get(offset)
        if known is not None:
            return known
        pending: list[str] = []
        current: str | None = offset
        while current is not None and current in self._synsets and current not in self._chains:
            if current in pending:  # a cycle: never in WordNet 3.0, but do not loop
                break
            pending.append(current)
            current = self._synsets[current][2]
        base = self._chains.get(current, ()) if current is not None else ()
        for synset in reversed(pending):
            file_number, word, _ = self._synsets[synset]
            base = (*base, word) if file_number != 3 else base
            self._chains[synset] = base
        return self._chains.get(offset, ())

    @_classify_doc
    def classify(self, terms: Sequence[tuple[str, ...]]) -> list[tuple[CategoryPath, ...]]:
        """The ranked category paths of each term (its senses, most frequent first).

        {{classify}}
            For each term the paths of its first five senses (noun class, then
            hypernyms below noun.Tops); empty for a word WordNet lacks.
        """
        out = []
        for term in terms:
            paths = self._paths.get(term)
            if paths is None:
                found: list[CategoryPath] = []
                for offset in self._senses.get(term, [])[:5]:
                    file_number = self._synsets.get(offset, (3, "", None))[0]
                    if file_number == 3 or file_number not in _NOUN_LEXFILES:
                        continue
                    path = (_NOUN_LEXFILES[file_number], *self._chain(offset))
                    if path not in found:
                        found.append(path)
                paths = self._paths[term] = tuple(found)
            out.append(paths)
        return out

    @property
    def depth(self) -> int:
        """The deepest level of any category path.

        Returns
        -------
        int
            One more than the longest hypernym chain below noun.Tops.
        """
        return 1 + max(len(self._chain(offset)) for offset in self._synsets)

    @staticmethod
    def _read_data(path: Path) -> dict[str, tuple[int, str, str | None]]:
        synsets: dict[str, tuple[int, str, str | None]] = {}
        try:
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith(" "):
                        continue  # the licence at the head of the file
                    fields = line.split(" ")
                    n_words = int(fields[3], 16)
                    word = fields[4].replace("_", " ")
                    at = 4 + 2 * n_words
                    n_pointers = int(fields[at])
                    hypernym = None
                    for i in range(n_pointers):
                        symbol = fields[at + 1 + 4 * i]
                        if symbol in ("@", "@i"):
                            hypernym = fields[at + 2 + 4 * i]
                            break
                    synsets[fields[0]] = (int(fields[1]), word, hypernym)
        except (OSError, UnicodeDecodeError, ValueError, IndexError) as exc:
            raise DataError(f"cannot read the WordNet data file {str(path)!r}: {exc}") from exc
        return synsets


def _wordnet_dir(path: str | os.PathLike[str] | None) -> Path:
    if path is not None:
        directory = Path(path)
    elif os.environ.get(WORDNET_ENV):
        directory = Path(os.environ[WORDNET_ENV])
    else:
        directory = WORDNET_DEBIAN_DIR
    if not (directory / "data.noun").exists() or not (directory / "index.noun").exists():
        raise DataError(
            f"WordNet is not installed in {str(directory)!r} (no data.noun / index.noun): install "
            f"Debian's wordnet-base package (apt-get install wordnet-base), or give the "
            f"directory (--wordnet-path) or set {WORDNET_ENV}"
        )
    return directory


def load_taxonomy(spec: str | os.PathLike[str] | Taxonomy) -> Taxonomy:
    """A taxonomy from a name or a file.

    Parameters
    ----------
    spec : str, path or Taxonomy
        ``"odp239"`` (the installed ODP239 file, see :class:`ODP239Taxonomy`),
        ``"wordnet"`` (the installed WordNet, see :class:`WordNetTaxonomy`), a path to a term -> category-path CSV (:class:`TableTaxonomy`), or a
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
        return WordNetTaxonomy()
    return TableTaxonomy(spec)
