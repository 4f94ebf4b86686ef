"""Universes: the sub-populations analyses run on.

Lucero et al. (2011), Section 3.1. A *simple universe* is an
intersection of conditions, each selecting categories of a categorical
variable or cutpoint bins of a continuous one (never raw continuous values);
a *complex universe* is a union of simple universes ("pieces"). Universes are
evaluated through the *implicit table*: the contingency table of every
variable the universe mentions, in which each piece selects a set of cells.
A universe is *disjoint* when no two pieces share a cell, *joint* otherwise.

Two forms are accepted:

* a typed structure, ``{"pieces": [{"sex": ["female"], "income": {"bins": [3]}}, ...]}``
  (a continuous variable takes ``{"bins": [...]}``, ``{"node": id}`` for a
  partitioned-binning tree node, or a plain list of bin numbers);
* a readable string, ``sex = female AND income in bin 3 OR sex = male AND
  income in bins 1, 2``; also ``x in {a, b}``, ``income in node 2`` and ``ALL``.
  AND binds tighter than OR; keywords are case-insensitive; a level with
  spaces is written in quotes.

Bins are numbered from 0 in the order of the variable's cutpoints.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdckit.errors import UniverseError
from sdckit.server._parsing import TokenParser, scan
from sdckit.server.metadata import Metadata, Variable, level_key

__all__ = [
    "Condition",
    "GroupCount",
    "SimpleUniverse",
    "Universe",
    "UniverseError",
    "UniverseEvaluation",
    "as_universe",
    "evaluate_universe",
    "parse_universe",
    "without_rare_levels",
]

# The implicit table gets one cell per combination of codes; beyond this size
# the universe mentions too many variables to be checked cheaply.
_MAX_IMPLICIT_CELLS = 5_000_000


@dataclass(frozen=True)
class Condition:
    """``variable`` takes one of ``values``: level strings (categorical) or bin numbers."""

    variable: str
    values: tuple

    @property
    def is_bins(self) -> bool:
        return bool(self.values) and isinstance(self.values[0], int)

    def to_string(self) -> str:
        if self.is_bins:
            word = "bin" if len(self.values) == 1 else "bins"
            return f"{self.variable} in {word} {', '.join(str(v) for v in self.values)}"
        shown = [_quote(v) for v in self.values]
        if len(shown) == 1:
            return f"{self.variable} = {shown[0]}"
        return f"{self.variable} in {{{', '.join(shown)}}}"

    def to_dict_value(self) -> Any:
        return {"bins": list(self.values)} if self.is_bins else list(self.values)


@dataclass(frozen=True)
class SimpleUniverse:
    """An intersection of conditions, at most one per variable, sorted by variable."""

    conditions: tuple[Condition, ...]

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(c.variable for c in self.conditions)

    def to_string(self) -> str:
        if not self.conditions:
            return "ALL"
        return " AND ".join(c.to_string() for c in self.conditions)


@dataclass(frozen=True)
class Universe:
    """A union of simple universes; no pieces means the whole population."""

    pieces: tuple[SimpleUniverse, ...] = ()

    @property
    def is_everything(self) -> bool:
        return not self.pieces or any(not p.conditions for p in self.pieces)

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable the universe mentions, sorted."""
        return tuple(sorted({v for p in self.pieces for v in p.variables}))

    def possible_codes(self, variable: str, metadata: Metadata) -> np.ndarray | None:
        """Which codes of ``variable`` a unit of this universe can have.

        Read from the query alone, never from the data: a crosstab over
        ``region = north OR region = south`` has no east or west row to show.

        Parameters
        ----------
        variable : str
            A variable of ``metadata``.
        metadata : Metadata
            The server's metadata (levels and cutpoint bins).

        Returns
        -------
        ndarray of bool or None
            One flag per code (level or bin, in code order); None when the
            universe allows every code.
        """
        if self.is_everything:
            return None
        var = metadata.variable(variable)
        possible = np.zeros(len(var.code_labels()), dtype=bool)
        for piece in self.pieces:
            condition = next((c for c in piece.conditions if c.variable == variable), None)
            if condition is None:
                return None
            if condition.is_bins:
                possible[list(condition.values)] = True
            else:
                possible[[var.levels.index(v) for v in condition.values]] = True
        return None if possible.all() else possible

    def to_string(self) -> str:
        """Canonical readable form (parses back to an equal universe)."""
        if self.is_everything:
            return "ALL"
        return " OR ".join(p.to_string() for p in self.pieces)

    def __str__(self) -> str:
        return self.to_string()

    def to_dict(self) -> dict[str, Any]:
        """The typed structure ``{"pieces": [{variable: values}, ...]}``."""
        if self.is_everything:
            return {"pieces": []}
        return {
            "pieces": [{c.variable: c.to_dict_value() for c in p.conditions} for p in self.pieces]
        }


def _quote(value: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_.+\-]+", value) and value.upper() not in _KEYWORDS:
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


_KEYWORDS = {"AND", "OR", "IN", "BIN", "BINS", "NODE", "NODES", "ALL"}
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<word>[A-Za-z0-9_.+\-]+)
      | (?P<punct>[={},])
    )""",
    re.VERBOSE,
)


def _bad_character(text: str, pos: int) -> UniverseError:
    return UniverseError(
        f"universe: unexpected character {text[pos:].lstrip()[:1]!r} at position "
        f"{pos}; write conditions like 'sex = female AND income in bin 3'"
    )


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens = []
    for match in scan(_TOKEN, text, _bad_character):
        if match.group("string") is not None:
            raw = match.group("string")[1:-1]
            tokens.append(("value", re.sub(r"\\(.)", r"\1", raw), match.start("string")))
        elif match.group("word") is not None:
            word = match.group("word")
            kind = "kw" if word.upper() in _KEYWORDS else "value"
            tokens.append((kind, word.upper() if kind == "kw" else word, match.start("word")))
        else:
            tokens.append(("punct", match.group("punct"), match.start("punct")))
    return tokens


class _Parser(TokenParser):
    tokenize = staticmethod(_tokenize)

    def take(self, kind: str | None = None, value: str | None = None) -> tuple[str, str, int]:
        tok = self.peek()
        want = value or kind or "a token"
        if tok is None:
            raise UniverseError(f"universe {self.text!r}: expected {want} at the end")
        if (kind and tok[0] != kind) or (value and tok[1] != value):
            raise UniverseError(
                f"universe {self.text!r}: expected {want} at position {tok[2]}, found {tok[1]!r}"
            )
        self.i += 1
        return tok

    def parse(self) -> list[list[tuple[str, str, list]]]:
        if len(self.tokens) == 1 and self.tokens[0][:2] == ("kw", "ALL"):
            return []
        pieces = [self.piece()]
        while self.peek() is not None:
            self.take("kw", "OR")
            pieces.append(self.piece())
        return pieces

    def piece(self) -> list[tuple[str, str, list]]:
        conds = [self.condition()]
        while (tok := self.peek()) is not None and tok[:2] == ("kw", "AND"):
            self.take()
            conds.append(self.condition())
        return conds

    def condition(self) -> tuple[str, str, list]:
        name = self.take("value")[1]
        tok = self.peek()
        if tok is not None and tok[:2] == ("punct", "="):
            self.take()
            return (name, "levels", [self.take("value")[1]])
        self.take("kw", "IN")
        tok = self.peek()
        if tok is not None and tok[:2] == ("punct", "{"):
            self.take()
            values = [self.take("value")[1]]
            while (t := self.peek()) is not None and t[:2] == ("punct", ","):
                self.take()
                values.append(self.take("value")[1])
            self.take("punct", "}")
            return (name, "levels", values)
        if tok is not None and tok[0] == "kw" and tok[1] in ("BIN", "BINS", "NODE", "NODES"):
            self.take()
            kind = "bins" if tok[1].startswith("BIN") else "nodes"
            numbers = [self.number()]
            while (t := self.peek()) is not None and t[:2] == ("punct", ","):
                self.take()
                numbers.append(self.number())
            return (name, kind, numbers)
        found = "the end" if tok is None else repr(tok[1])
        raise UniverseError(
            f"universe {self.text!r}: after '{name} in' expected '{{levels}}', 'bin N' or "
            f"'node N', found {found}"
        )

    def number(self) -> int:
        tok = self.take("value")
        if not re.fullmatch(r"\d+", tok[1]):
            raise UniverseError(
                f"universe {self.text!r}: bin and node numbers are whole numbers, got {tok[1]!r}"
            )
        return int(tok[1])


def _resolve(name: str, kind: str, values: Sequence, metadata: Metadata, where: str) -> Condition:
    if name not in metadata:
        raise UniverseError(
            f"universe {where}: variable {name!r} is not available; allowed: {list(metadata.names)}"
        )
    var = metadata.variable(name)
    if var.is_categorical:
        if kind != "levels":
            raise UniverseError(
                f"universe {where}: {name!r} is categorical; select levels, e.g. "
                f"{name} in {{{', '.join(var.levels[:2])}}}"
            )
        keys = [level_key(v) for v in values]
        unknown = [k for k in keys if k not in var.levels]
        if unknown:
            raise UniverseError(
                f"universe {where}: {name!r} has no level(s) {unknown}; levels: {list(var.levels)}"
            )
        order = {lv: i for i, lv in enumerate(var.levels)}
        return Condition(name, tuple(sorted(set(keys), key=order.__getitem__)))
    if kind == "levels":
        raise UniverseError(
            f"universe {where}: {name!r} is continuous; a universe may use only its cutpoint "
            f"bins (0..{var.cutpoint_bins.n_bins - 1}: {', '.join(var.cutpoint_bins.public_labels)}), "
            f"e.g. '{name} in bin 0'"
        )
    bins: set[int] = set()
    if kind == "bins":
        for b in values:
            if isinstance(b, bool) or not isinstance(b, int | np.integer):
                raise UniverseError(f"universe {where}: bin numbers of {name!r} must be integers")
            if not 0 <= int(b) < var.cutpoint_bins.n_bins:
                raise UniverseError(
                    f"universe {where}: {name!r} has bins 0..{var.cutpoint_bins.n_bins - 1}, got {b}"
                )
            bins.add(int(b))
    else:
        nodes = {node.node_id: node for node in var.cutpoint_bins.nodes()}
        if not nodes:
            raise UniverseError(
                f"universe {where}: {name!r} was not binned by partitioning; select bins instead"
            )
        for node_id in values:
            if node_id not in nodes:
                raise UniverseError(
                    f"universe {where}: {name!r} has tree nodes {sorted(nodes)}, got {node_id}"
                )
            bins.update(nodes[node_id].bins)
    return Condition(name, tuple(sorted(bins)))


def _build(
    raw_pieces: list[list[tuple[str, str, list]]], metadata: Metadata, where: str
) -> Universe:
    pieces = []
    for index, raw in enumerate(raw_pieces, start=1):
        by_var: dict[str, Condition] = {}
        for name, kind, values in raw:
            cond = _resolve(name, kind, values, metadata, where)
            if name in by_var:
                keep = tuple(v for v in by_var[name].values if v in set(cond.values))
                if not keep:
                    raise UniverseError(
                        f"universe {where}: piece {index} asks for {name!r} in two sets that do "
                        "not overlap, so it selects nobody"
                    )
                cond = Condition(name, keep)
            by_var[name] = cond
        pieces.append(SimpleUniverse(tuple(by_var[v] for v in sorted(by_var))))
    if any(not p.conditions for p in pieces):
        return Universe(())
    unique = list(dict.fromkeys(pieces))
    return Universe(tuple(unique))


def parse_universe(text: str, metadata: Metadata) -> Universe:
    """Parse the readable string form of a universe, checking it against the metadata.

    Parameters
    ----------
    text : str
        The universe, e.g. ``"sex = female AND age in bins 0, 1"``.
    metadata : Metadata
        The public metadata it must fit.

    Returns
    -------
    Universe
    """
    if not isinstance(text, str):
        raise UniverseError(f"universe must be a string here, got {type(text).__name__}")
    if not text.strip():
        return Universe(())
    return _build(_Parser(text).parse(), metadata, repr(text))


def _from_structure(obj: Any, metadata: Metadata) -> Universe:
    pieces_obj = obj.get("pieces", None) if isinstance(obj, Mapping) else obj
    if pieces_obj is None:
        raise UniverseError("universe mapping needs a 'pieces' list")
    if not isinstance(pieces_obj, Sequence) or isinstance(pieces_obj, str):
        raise UniverseError("universe 'pieces' must be a list of {variable: selection} mappings")
    raw_pieces = []
    for index, piece in enumerate(pieces_obj, start=1):
        if not isinstance(piece, Mapping):
            raise UniverseError(
                f"universe piece {index} must be a mapping of variable -> selection"
            )
        raw: list[tuple[str, str, list[Any]]] = []
        for name, sel in piece.items():
            if isinstance(sel, Mapping):
                extra = set(sel) - {"bins", "nodes", "node", "levels"}
                if extra or len(sel) != 1:
                    raise UniverseError(
                        f"universe piece {index}: selection of {name!r} must have exactly one "
                        f"of 'levels', 'bins', 'node', 'nodes', got {sorted(sel)}"
                    )
                key, val = next(iter(sel.items()))
                vals = (
                    list(val) if isinstance(val, Sequence) and not isinstance(val, str) else [val]
                )
                kind = "nodes" if key == "node" else str(key)
                raw.append((name, kind, vals))
            elif isinstance(sel, Sequence) and not isinstance(sel, str):
                values = list(sel)
                var = metadata.variables.get(name)
                is_cont = var is not None and not var.is_categorical
                raw.append((name, "bins" if is_cont else "levels", values))
            else:
                raw.append((name, "levels", [sel]))
        if not raw:
            return Universe(())
        raw_pieces.append(raw)
    return _build(raw_pieces, metadata, "structure")


def as_universe(
    universe: Universe | str | Mapping | Sequence | None, metadata: Metadata
) -> Universe:
    """A :class:`Universe` from a universe, a string, a typed structure, or None (everyone).

    A :class:`Universe` built elsewhere is re-checked against ``metadata``.

    Parameters
    ----------
    universe : Universe, str, mapping or None
        The universe.
    metadata : Metadata
        The public metadata it must fit.

    Returns
    -------
    Universe
    """
    if universe is None:
        return Universe(())
    if isinstance(universe, Universe):
        return _from_structure(universe.to_dict(), metadata)
    if isinstance(universe, str):
        return parse_universe(universe, metadata)
    if isinstance(universe, Mapping | Sequence):
        return _from_structure(universe, metadata)
    raise UniverseError(
        f"universe must be a string, a mapping or a Universe, got {type(universe).__name__}"
    )


@dataclass(frozen=True)
class GroupCount:
    """A set of units the Universe Gamma rule checks: what it is, and how many units it holds.

    Attributes
    ----------
    description : str
        The piece or intersection, and the class of each categorical condition.
    count : int
        Units in the set.
    threshold : {"gamma", "gamma_star"}
        "gamma" for pieces, "gamma_star" for intersections.
    level_counts : tuple of tuple of int
        For each categorical condition that the set takes as a whole class (a
        declared group, or every level of a variable with missing values; every
        level of one never missing is no condition), the units of each of its
        levels.
    missing_counts : tuple of int
        For each condition that selects every level of a variable with
        missing values in the data, the units the set would hold with that
        variable missing instead (the complement of "variable observed").
    """

    description: str
    count: int
    threshold: str
    level_counts: tuple[tuple[int, ...], ...] = ()
    missing_counts: tuple[int, ...] = ()


@dataclass(frozen=True)
class UniverseEvaluation:
    """A universe laid out on its implicit table (internal: holds protected counts).

    Attributes
    ----------
    universe : Universe
    variables : tuple of str
        Axes of the implicit table; each axis has the variable's codes plus a
        last "missing" code.
    table : ndarray
        Units of the whole dataset in every cell of the implicit table.
    members : ndarray of bool
        Which records of the data belong to the universe.
    size : int
        Units in the universe.
    joint : bool
        True when two pieces share a cell of the implicit table.
    groups : tuple of GroupCount
        Pieces (split into the classes of their categorical conditions, bins
        combined) and non-empty intersections (likewise) for the Universe
        Gamma rule.
    """

    universe: Universe
    variables: tuple[str, ...]
    table: np.ndarray
    members: np.ndarray
    size: int
    joint: bool
    groups: tuple[GroupCount, ...]


def _selection_vectors(
    conditions: Mapping[str, Condition], variables: Sequence[str], metadata: Metadata
) -> list[np.ndarray]:
    """Per axis, a boolean vector of the selected codes (unconstrained: all, missing included)."""
    out = []
    for name in variables:
        var = metadata.variable(name)
        sel = np.zeros(var.n_codes + 1, dtype=bool)
        cond = conditions.get(name)
        if cond is None:
            sel[:] = True
        elif var.is_categorical:
            sel[[var.levels.index(v) for v in cond.values]] = True
        else:
            sel[list(cond.values)] = True
        out.append(sel)
    return out


def _outer_and(vectors: Sequence[np.ndarray]) -> np.ndarray:
    mask = np.ones((), dtype=bool)
    for axis, vec in enumerate(vectors):
        shape = [1] * len(vectors)
        shape[axis] = vec.size
        mask = mask & vec.reshape(shape)
    return mask


def _classes(var: Variable, chosen: np.ndarray) -> list[tuple[np.ndarray, str | None]]:
    """The classes of a categorical condition the Gamma rule checks apart.

    Every level is a class of its own ("classes of an inherently categorical
    variable would not be combined", Lucero et al. (2011), §3.1.1), except
    that a condition selecting every level is one class (the variable
    observed) and the levels of a declared group selected whole form one
    class, as a recoded variable's category would. Each class comes with
    its name when it is whole (None for a single level).
    """
    if chosen.size == var.n_codes:
        return [(chosen, "every level")]
    selected = set(chosen.tolist())
    out: list[tuple[np.ndarray, str | None]] = []
    grouped: set[int] = set()
    for name, codes in zip(var.groups, var.group_codes(), strict=True):
        if set(codes.tolist()) <= selected:
            out.append((codes, f"group {_quote(name)}"))
            grouped.update(codes.tolist())
    out += [(np.array([code]), None) for code in chosen if int(code) not in grouped]
    return sorted(out, key=lambda item: int(item[0][0]))


def _axis_counts(table: np.ndarray, selection: Sequence[np.ndarray], axis: int) -> np.ndarray:
    """Units of ``selection`` by code of ``axis``, that axis left free (missing code last)."""
    free = list(selection)
    free[axis] = np.ones_like(free[axis])
    others = tuple(i for i in range(table.ndim) if i != axis)
    return np.where(_outer_and(free), table, 0).sum(axis=others)


def _gamma_groups(
    label: str,
    selections: list[np.ndarray],
    variables: Sequence[str],
    metadata: Metadata,
    table: np.ndarray,
    threshold: str,
    *,
    skip_empty: bool,
) -> list[GroupCount]:
    """Split a selection into the classes of its categorical conditions; combine bins."""
    split_axes = []
    for axis, name in enumerate(variables):
        var = metadata.variable(name)
        chosen = np.flatnonzero(selections[axis][:-1])
        # An explicit condition never selects the missing code; bins of a
        # continuous variable are pooled.
        if var.is_categorical and chosen.size and not selections[axis][-1]:
            split_axes.append((axis, _classes(var, chosen)))
    groups = []
    for combo in itertools.product(*[c for _, c in split_axes]):
        sel = [s.copy() for s in selections]
        for (axis, _), (codes, _whole) in zip(split_axes, combo, strict=True):
            sel[axis] = np.zeros_like(sel[axis])
            sel[axis][codes] = True
        parts, level_counts, missing_counts = [], [], []
        for (axis, classes), (codes, whole) in zip(split_axes, combo, strict=True):
            var = metadata.variable(variables[axis])
            if len(classes) > 1 or whole is not None:
                shown = f"{var.name} = {_quote(var.levels[codes[0]])}"
                parts.append(shown if whole is None else f"{var.name} in {whole}")
            # Missing values form the implicit table's last code of each axis.
            observed = whole == "every level"
            if whole is None or (observed and table.take(-1, axis=axis).sum() == 0):
                continue  # a level, or every level of a variable never missing: no condition
            by_code = _axis_counts(table, sel, axis)
            level_counts.append(tuple(int(c) for c in by_code[codes]))
            if observed:
                missing_counts.append(int(by_code[-1]))
        count = int(table[_outer_and(sel)].sum())
        if skip_empty and count == 0:
            continue
        desc = label if not parts else f"{label}, {' AND '.join(parts)}"
        groups.append(
            GroupCount(desc, count, threshold, tuple(level_counts), tuple(missing_counts))
        )
    return groups


def evaluate_universe(
    universe: Universe,
    metadata: Metadata,
    codes: Mapping[str, np.ndarray],
    *,
    max_pieces: int | None = None,
    keep_empty_intersections: bool = False,
) -> UniverseEvaluation:
    """Lay ``universe`` out on its implicit table over the coded data.

    Parameters
    ----------
    universe : Universe
    metadata : Metadata
    codes : mapping
        ``{variable: integer codes}`` from :meth:`Metadata.encode` (-1 missing).
    max_pieces : int, optional
        Refuse unions of more pieces (bounds the intersections to check).
    keep_empty_intersections : bool, default False
        List every intersection the pieces' definitions allow, even one no
        unit falls in (the oracle-free rule set checks those too, so that an
        empty overlap is refused like a small one). By default, as in the
        paper, only non-empty intersections are listed.

    Returns
    -------
    UniverseEvaluation
    """
    some = next(iter(codes.values()))
    n_records = some.size
    if universe.is_everything:
        members = np.ones(n_records, dtype=bool)
        return UniverseEvaluation(
            universe,
            (),
            np.array(n_records),
            members,
            n_records,
            False,
            (GroupCount("the whole population", n_records, "gamma"),),
        )
    if max_pieces is not None and len(universe.pieces) > max_pieces:
        raise UniverseError(
            f"universe has {len(universe.pieces)} pieces; at most {max_pieces} may be combined"
        )
    variables = universe.variables
    shape = tuple(metadata.variable(v).n_codes + 1 for v in variables)
    if int(np.prod(shape, dtype=np.float64)) > _MAX_IMPLICIT_CELLS:
        raise UniverseError(
            f"universe uses variables {list(variables)} whose implicit table would have "
            f"{int(np.prod(shape, dtype=np.float64))} cells; use fewer variables"
        )
    # Missing codes (-1) go to each axis's last position.
    axis_codes = [np.where(codes[v] < 0, shape[i] - 1, codes[v]) for i, v in enumerate(variables)]
    cell = np.ravel_multi_index(axis_codes, shape)
    table = np.bincount(cell, minlength=int(np.prod(shape))).reshape(shape)

    piece_sel = [
        _selection_vectors({c.variable: c for c in p.conditions}, variables, metadata)
        for p in universe.pieces
    ]
    piece_masks = [_outer_and(s) for s in piece_sel]
    selected = np.logical_or.reduce(piece_masks)
    members = selected.ravel()[cell]
    joint = any(
        bool((piece_masks[a] & piece_masks[b]).any())
        for a, b in itertools.combinations(range(len(piece_masks)), 2)
    )
    groups: list[GroupCount] = []
    for index, (piece, sel) in enumerate(zip(universe.pieces, piece_sel, strict=True), start=1):
        label = f"piece {index} ({piece.to_string()})"
        groups += _gamma_groups(label, sel, variables, metadata, table, "gamma", skip_empty=False)
    if joint:
        # Every non-empty intersection of two or more pieces (Lucero et al. 2011: "all of
        # the non-empty intersections of the pieces must be checked").
        Overlap = tuple[tuple[int, ...], list[np.ndarray]]  # pieces, selections
        frontier: list[Overlap] = [((a,), piece_sel[a]) for a in range(len(piece_sel))]
        while frontier:
            grown: list[Overlap] = []
            for members_idx, sel in frontier:
                for b in range(members_idx[-1] + 1, len(piece_sel)):
                    inter = [s & t for s, t in zip(sel, piece_sel[b], strict=True)]
                    if not _outer_and(inter).any():
                        continue
                    grown.append(((*members_idx, b), inter))
            for members_idx, inter in grown:
                if not keep_empty_intersections and int(table[_outer_and(inter)].sum()) == 0:
                    continue
                names = " and ".join(str(i + 1) for i in members_idx)
                groups += _gamma_groups(
                    f"the intersection of pieces {names}",
                    inter,
                    variables,
                    metadata,
                    table,
                    "gamma_star",
                    skip_empty=not keep_empty_intersections,
                )
            frontier = grown
    return UniverseEvaluation(
        universe, variables, table, members, int(members.sum()), joint, tuple(groups)
    )


def without_rare_levels(
    evaluation: UniverseEvaluation, metadata: Metadata, *, gamma: int
) -> tuple[Universe, str, tuple[str, ...]] | None:
    """The universe with the listed categories of fewer than ``gamma`` units left out.

    For a universe of one piece whose one categorical condition lists a
    category holding fewer than ``gamma`` units of the piece (with its other
    conditions), the same piece listing only the others, and the condition
    as it was. Each category left out is one whose universe alone (that
    category and the piece's other conditions) the Universe Gamma rule
    refuses, so leaving it out tells the analyst nothing the refusal of that
    universe would not (Lucero et al. (2011), §3.1.1; docs/server.md,
    "Rare categories left out"). None when there is nothing to leave out, or
    nothing would be left, or the universe has several pieces or several
    categorical conditions (which rare combination to leave out would then
    be a choice).

    Parameters
    ----------
    evaluation : UniverseEvaluation
        The universe on its implicit table (:func:`evaluate_universe`).
    metadata : Metadata
        The public metadata.
    gamma : int
        The Universe Gamma threshold.

    Returns
    -------
    tuple of (Universe, str, tuple of str) or None
        The universe to answer instead, the variable whose condition lost
        categories, and those categories.
    """
    if len(evaluation.universe.pieces) != 1:
        return None
    (piece,) = evaluation.universe.pieces
    categorical = [c for c in piece.conditions if metadata.variable(c.variable).is_categorical]
    if len(categorical) != 1:
        return None
    (condition,) = categorical
    var = metadata.variable(condition.variable)
    selection = _selection_vectors(
        {c.variable: c for c in piece.conditions}, evaluation.variables, metadata
    )
    axis = evaluation.variables.index(var.name)
    counts = _axis_counts(evaluation.table, selection, axis)
    kept = tuple(v for v in condition.values if counts[var.levels.index(v)] >= gamma)
    if not kept or len(kept) == len(condition.values):
        return None
    conditions = tuple(
        Condition(c.variable, kept) if c is condition else c for c in piece.conditions
    )
    left_out = tuple(v for v in condition.values if v not in kept)
    return Universe((SimpleUniverse(conditions),)), var.name, left_out
