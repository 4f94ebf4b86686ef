"""Running the command line in a test as a user types it.

Import as ``from cli_words import sdckit`` (``tests/`` is on sys.path).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

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


def masked_file(line: str, source: Path, output: Path, *paths: str | Path) -> pd.DataFrame:
    """Run ``sdckit`` as :func:`sdckit` does on ``source`` -> ``output`` (then ``paths``),
    assert that it succeeds, and read the output it wrote (CSV or Parquet)."""
    code = sdckit(line, source, output, *paths)
    assert code == 0, f"exit code {code} from {line!r}"
    return pd.read_parquet(output) if Path(output).suffix == ".parquet" else pd.read_csv(output)
