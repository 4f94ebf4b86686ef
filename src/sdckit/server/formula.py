"""Regression formulas, parsed into an allowed structure and never evaluated.

An analyst writes ``log(wage) ~ age + square(age) + sex + age:sex``; the
parser turns it into a :class:`Formula` of variable names, transformation
names and interaction terms. Nothing in the text is ever executed: there is
no ``eval``, no arithmetic, no nested call, no attribute access, no literal
number, so a formula cannot smuggle an expression such as
``1/(abs(x - 41) + 0.0001)`` (the artificial outlier of Bleninger, Drechsler
& Ronning 2011, equation 1) or code into the server. Whether the
names and transformations are allowed is decided afterwards by the rules in
:mod:`sdckit.server.rules` (Lucero et al. 2011, Section 3.2).

Grammar::

    formula := factor "~" term ("+" term)*
    term    := factor (":" factor)*          an interaction (or a main effect)
             | factor ("*" factor)*          a*b means a + b + a:b (all lower-order terms)
    factor  := NAME | NAME "(" NAME ")"      a variable, or a transformation of one

NAME is ``[A-Za-z_][A-Za-z0-9_]*``. Every model has an intercept.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sdckit.errors import FormulaError
from sdckit.server._parsing import TokenParser, scan

__all__ = [
    "Factor",
    "Formula",
    "FormulaError",
    "Term",
    "as_formula",
    "parse_factor",
    "parse_formula",
]

MAX_FORMULA_LENGTH = 2000

_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[~+*:()]))")


@dataclass(frozen=True, order=True)
class Factor:
    """A variable, optionally transformed (``transform`` is a function name such as "log")."""

    variable: str
    transform: str | None = None

    def to_string(self) -> str:
        return f"{self.transform}({self.variable})" if self.transform else self.variable

    def to_dict(self) -> dict[str, Any]:
        return {"variable": self.variable, "transform": self.transform}


@dataclass(frozen=True)
class Term:
    """A main effect (one factor) or an interaction of two or more factors."""

    factors: tuple[Factor, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "factors", tuple(sorted(set(self.factors))))

    @property
    def order(self) -> int:
        return len(self.factors)

    def to_string(self) -> str:
        return ":".join(f.to_string() for f in self.factors)


@dataclass(frozen=True)
class Formula:
    """``response ~ terms`` (with an intercept)."""

    response: Factor
    terms: tuple[Term, ...]

    @property
    def main_effects(self) -> tuple[Factor, ...]:
        return tuple(t.factors[0] for t in self.terms if t.order == 1)

    @property
    def interactions(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if t.order > 1)

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable named (response first), without repeats."""
        names = [self.response.variable]
        names += [f.variable for t in self.terms for f in t.factors]
        return tuple(dict.fromkeys(names))

    def to_string(self) -> str:
        return f"{self.response.to_string()} ~ {' + '.join(t.to_string() for t in self.terms)}"

    def __str__(self) -> str:
        return self.to_string()

    def to_dict(self) -> dict[str, Any]:
        return {
            "response": self.response.to_dict(),
            "terms": [[f.to_dict() for f in t.factors] for t in self.terms],
        }

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> Formula:
        """Build from ``{"response": {...}, "terms": [[{variable, transform}, ...], ...]}``."""
        try:
            response = _factor_from(mapping["response"])
            terms = [Term(tuple(_factor_from(f) for f in term)) for term in mapping["terms"]]
        except (KeyError, TypeError) as exc:
            raise FormulaError(
                "formula mapping needs 'response' ({variable, transform}) and 'terms' (a list of "
                f"lists of {{variable, transform}}): {exc}"
            ) from None
        if not terms:
            raise FormulaError("formula needs at least one predictor term")
        for raw, term in zip(mapping["terms"], terms, strict=True):
            if len(raw) != len({f.variable for f in term.factors}):
                raise FormulaError(f"term {term.to_string()} interacts a variable with itself")
        if _uses_response(response, terms):
            raise FormulaError(
                f"the response variable {response.variable!r} also appears among the predictors"
            )
        return cls(response, tuple(dict.fromkeys(terms)))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _uses_response(response: Factor, terms: Sequence[Term]) -> bool:
    """True when any predictor uses the response's variable, in any transformation."""
    return any(f.variable == response.variable for t in terms for f in t.factors)


def _factor_from(obj: Any) -> Factor:
    if isinstance(obj, str):
        return parse_factor(obj)
    if not isinstance(obj, Mapping):
        raise FormulaError(f"a formula factor must be a mapping or a string, got {obj!r}")
    variable, transform = obj.get("variable"), obj.get("transform")
    if not isinstance(variable, str) or not _NAME.fullmatch(variable):
        raise FormulaError(f"factor variable must be a name, got {variable!r}")
    if transform is not None and (not isinstance(transform, str) or not _NAME.fullmatch(transform)):
        raise FormulaError(f"factor transform must be a name or null, got {transform!r}")
    return Factor(variable, transform)


def parse_factor(text: str) -> Factor:
    """Parse ``"x"`` or ``"log(x)"`` into a :class:`Factor`.

    Parameters
    ----------
    text : str
        A variable, or a transformation of one.

    Returns
    -------
    Factor
    """
    if len(text) > MAX_FORMULA_LENGTH:
        raise FormulaError(f"formula factor is longer than {MAX_FORMULA_LENGTH} characters")
    parser = _Parser(text)
    factor = parser.factor()
    if parser.peek() is not None:
        raise FormulaError(f"formula factor {text!r} must be a name or transform(name)")
    return factor


def _bad_character(text: str, pos: int) -> FormulaError:
    bad_pos = pos + len(text[pos:]) - len(text[pos:].lstrip())
    return FormulaError(
        f"formula: character {text[bad_pos]!r} at position {bad_pos} is not allowed; "
        "a formula holds only variable names, approved transformations such as log(x), "
        "and the operators ~ + : *",
        bad_pos,
    )


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens = []
    for match in scan(_TOKEN, text, _bad_character):
        kind = "name" if match.group("name") else "op"
        tokens.append((kind, match.group(kind), match.start(kind)))
    return tokens


class _Parser(TokenParser):
    tokenize = staticmethod(_tokenize)

    def expect(self, kind: str, value: str | None = None) -> tuple[str, str, int]:
        tok = self.peek()
        want = repr(value) if value else "a variable name"
        if tok is None:
            raise FormulaError(f"formula {self.text!r}: expected {want} at the end", len(self.text))
        if tok[0] != kind or (value is not None and tok[1] != value):
            raise FormulaError(
                f"formula {self.text!r}: expected {want} at position {tok[2]}, found {tok[1]!r}",
                tok[2],
            )
        self.i += 1
        return tok

    def factor(self) -> Factor:
        name = self.expect("name")[1]
        tok = self.peek()
        if tok is not None and tok[1] == "(":
            self.i += 1
            arg = self.expect("name")[1]
            nxt = self.peek()
            if nxt is not None and nxt[1] == "(":
                raise FormulaError(
                    f"formula {self.text!r}: transformations cannot be nested (position {nxt[2]})",
                    nxt[2],
                )
            self.expect("op", ")")
            return Factor(arg, name)
        return Factor(name)

    def term_group(self) -> list[Term]:
        factors = [self.factor()]
        ops = set()
        while (tok := self.peek()) is not None and tok[1] in (":", "*"):
            ops.add(tok[1])
            self.i += 1
            factors.append(self.factor())
        if len({f.variable for f in factors}) != len(factors):
            # age:age or age:square(age) would be an unapproved transformation (age^3).
            raise FormulaError(
                f"formula {self.text!r}: "
                f"{':'.join(f.to_string() for f in factors)} interacts a variable with itself"
            )
        if len(ops) > 1:
            raise FormulaError(
                f"formula {self.text!r}: do not mix ':' and '*' in one term; write the "
                "interactions out with '+'"
            )
        if "*" in ops:
            # a*b*c: every non-empty subset of the factors, lower orders first.
            return [
                Term(combo)
                for size in range(1, len(factors) + 1)
                for combo in itertools.combinations(factors, size)
            ]
        return [Term(tuple(factors))]

    def parse(self) -> Formula:
        response = self.factor()
        self.expect("op", "~")
        terms = self.term_group()
        while self.peek() is not None:
            self.expect("op", "+")
            terms += self.term_group()
        if _uses_response(response, terms):
            raise FormulaError(
                f"formula {self.text!r}: the response variable {response.variable!r} also appears "
                "among the predictors (transformed or not); a model of a variable on itself "
                "discloses its values"
            )
        return Formula(response, tuple(dict.fromkeys(terms)))


def parse_formula(text: str) -> Formula:
    """Parse ``"y ~ x1 + log(x2) + x1:x3"`` into a :class:`Formula` (see the module grammar).

    Parameters
    ----------
    text : str
        The formula.

    Returns
    -------
    Formula

    Raises
    ------
    FormulaError
        The text does not follow the grammar; the message names the position.
    """
    if not isinstance(text, str):
        raise FormulaError(f"formula must be a string, got {type(text).__name__}")
    if len(text) > MAX_FORMULA_LENGTH:
        raise FormulaError(
            f"formula is {len(text)} characters long; at most {MAX_FORMULA_LENGTH} are accepted"
        )
    if "~" not in text:
        raise FormulaError(f"formula {text!r} needs a '~' between the response and the predictors")
    return _Parser(text).parse()


def as_formula(formula: Formula | str | Mapping[str, Any] | Sequence) -> Formula:
    """A :class:`Formula` from a formula, its text, or its typed mapping.

    Parameters
    ----------
    formula : Formula, str or mapping
        The model.

    Returns
    -------
    Formula
    """
    if isinstance(formula, Formula):
        return Formula.from_dict(formula.to_dict())
    if isinstance(formula, str):
        return parse_formula(formula)
    if isinstance(formula, Mapping):
        return Formula.from_dict(formula)
    raise FormulaError(
        f"formula must be a string, a mapping or a Formula, got {type(formula).__name__}"
    )
