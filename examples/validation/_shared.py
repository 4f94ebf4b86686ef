"""Helpers the validation scripts share (imported by scripts run as ``python examples/validation/X.py``)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd


def markdown(frame: pd.DataFrame) -> str:
    """A DataFrame as a markdown table (numbers to 4 decimals, ``|`` in a cell escaped)."""
    cells = [
        [f"{v:.4f}" if isinstance(v, float) else str(v).replace("|", "\\|") for v in row]
        for row in frame.to_numpy()
    ]
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def naive_bayes_resample(
    data: pd.DataFrame, columns: Sequence[str], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Draw N records from a Laplace-smoothed Naive Bayes model of ``columns`` given income.

    Income is drawn from ``data`` with replacement, then every attribute
    independently given it. Returns ``{column: values}`` with ``"income"``
    last, each attribute in the dtype of its levels.
    """
    n = len(data)
    income = data["income"].to_numpy()[rng.integers(0, n, n)]
    out = {}
    for col in columns:
        levels = np.sort(data[col].unique())
        values = np.empty(n, dtype=levels.dtype)
        for cls in np.unique(income):
            counts = (
                data.loc[data["income"] == cls, col].value_counts().reindex(levels, fill_value=0)
            )
            probs = (counts.to_numpy() + 1.0) / (counts.sum() + len(levels))
            rows = income == cls
            values[rows] = rng.choice(levels, size=int(rows.sum()), p=probs)
        out[col] = values
    out["income"] = income
    return out


def differencing_population(
    counts: np.ndarray, target: int, seed: int
) -> tuple[np.random.Generator, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The set-up of a differencing attack on a frequency table.

    Returns the generator seeded ``seed``, every unit's cell (``counts[c]``
    units in cell c), distinct record keys, and the two queries the attacker
    differences: everyone, and everyone but the first unit of cell ``target``.
    """
    rng = np.random.default_rng(seed)
    cells = np.repeat(np.arange(counts.size), counts)
    keys = rng.permutation(10 * cells.size)[: cells.size].astype(np.int64)
    everyone = np.ones(cells.size, dtype=bool)
    without_target = everyone.copy()
    without_target[np.flatnonzero(cells == target)[0]] = False
    return rng, cells, keys, everyone, without_target


def differencing_verdict(diff: np.ndarray, target: int) -> tuple[int, int]:
    """``(correct, wrong)`` of one differencing: the two tables differ by one unit in one cell,
    the target's (a correct disclosure) or another (apparent but wrong)."""
    if np.abs(diff).sum() == 1 and diff.max() == 1:
        return (1, 0) if diff[target] == 1 else (0, 1)
    return 0, 0


#: The text of Giessing & Höhne (2011) in the shared papers folder (read when present).
GIESSING_HOHNE = (
    Path(__file__).resolve().parents[3] / "shared" / "seeds" / "004_dc4073f5c10a766a.txt"
)


def paper_table_1() -> dict[int, np.ndarray]:
    """Rows 1..8 of the paper's 'Random Noise, D = k' blocks of Table 1 (columns 0, 3..13),
    by D; empty when the paper's text is absent."""
    if not GIESSING_HOHNE.exists():
        return {}
    text = GIESSING_HOHNE.read_text()
    start = text.index("Table 1: Zero mean, Variance")
    blocks = re.split(r"Random Noise, \$D = (\d)\$", text[start:])
    out = {}
    for k in range(1, len(blocks) - 1, 2):
        rows = []
        for line in blocks[k + 1].splitlines():
            parts = line.split()
            if len(parts) == 13 and parts[0].isdigit():
                rows.append([float(x) for x in parts[1:]])
            if len(rows) == 8:
                break
        out[int(blocks[k])] = np.array(rows)
    return out


def runs_arguments(
    description: str | None,
    *,
    runs: int,
    quick: int,
    quick_help: str,
    parser: argparse.ArgumentParser | None = None,
) -> tuple[argparse.Namespace, int]:
    """The ``--runs N`` and ``--quick`` options of a simulation script: its arguments, and the
    runs to do (``quick`` of them with ``--quick``). ``parser`` may carry the script's own
    options."""
    parser = parser or argparse.ArgumentParser(description=description)
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args()
    return args, quick if args.quick else args.runs
