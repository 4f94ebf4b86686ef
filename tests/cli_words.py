"""Running the command line in a test as a user types it.

Import as ``from cli_words import sdckit`` (``tests/`` is on sys.path).
"""

from __future__ import annotations

from pathlib import Path

from sdckit.cli.main import main


def sdckit(line: str, *paths: str | Path) -> int:
    """Run ``sdckit`` in-process with the words of ``line``; return its exit code.

    Each ``{}`` word of ``line`` stands for the next of ``paths``, passed as
    one word whatever it holds: ``sdckit("rankswap {} -o {} --p 10", src, out)``.
    """
    given = iter(paths)
    argv = [str(next(given)) if word == "{}" else word for word in line.split()]
    if next(given, None) is not None:
        raise ValueError(f"more paths than {{}} in {line!r}")
    return main(argv)
