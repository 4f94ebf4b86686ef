"""What the formula and universe parsers share: a cursor over ``(kind, text, position)`` tokens."""

from __future__ import annotations

import abc
import re
from collections.abc import Callable, Iterator

#: One token: its kind, its text, and where it starts in the parsed text.
Token = tuple[str, str, int]


def scan(
    pattern: re.Pattern[str], text: str, error: Callable[[str, int], Exception]
) -> Iterator[re.Match[str]]:
    """Successive matches of ``pattern`` over ``text`` (trailing space dropped), end to end.

    Parameters
    ----------
    pattern : re.Pattern
        One token, leading white space included.
    text : str
        The text to split.
    error : callable
        ``error(text, position)`` builds the parser's error where no token
        starts (``text`` without its trailing space); it is raised.

    Yields
    ------
    re.Match
        One match per token, in order.
    """
    text = text.rstrip()
    pos = 0
    while pos < len(text):
        match = pattern.match(text, pos)
        if match is None:
            raise error(text, pos)
        yield match
        pos = match.end()


class TokenParser(abc.ABC):
    """A recursive-descent parser's state: the text, its tokens and the next one to read.

    A subclass supplies :meth:`tokenize` and its own grammar's methods.

    Parameters
    ----------
    text : str
        The text to parse.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = self.tokenize(text)
        self.i = 0

    @staticmethod
    @abc.abstractmethod
    def tokenize(text: str) -> list[Token]:
        """Split ``text`` into tokens, or raise the parser's error naming the position."""

    def peek(self) -> Token | None:
        """The next token, not consumed (None at the end)."""
        return self.tokens[self.i] if self.i < len(self.tokens) else None
