"""What the formula and universe parsers share: a cursor over ``(kind, text, position)`` tokens."""

from __future__ import annotations

import abc

#: One token: its kind, its text, and where it starts in the parsed text.
Token = tuple[str, str, int]


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
