"""Census-like test data written as Parquet files (shared by the distributed tests)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd


def census_like(n: int, seed: int) -> pd.DataFrame:
    """Person records: region, age group, sex, tenure, income, hours, a weight."""
    rng = np.random.default_rng(seed)
    age = rng.integers(16, 90, size=n)
    hours = np.clip(rng.normal(35, 10, size=n), 0, 80).round(1)
    income = np.round(np.exp(rng.normal(10, 0.6, size=n)) * (1 + hours / 80), 2)
    return pd.DataFrame(
        {
            "region": rng.choice(["r1", "r2", "r3", "r4", "r5"], size=n),
            "age_group": np.minimum(age // 15, 5),
            "sex": rng.choice(["female", "male"], size=n),
            "tenure": rng.choice(["own", "rent", "other"], size=n, p=[0.6, 0.35, 0.05]),
            "age": age,
            "hours": hours,
            "income": income,
            "weight": rng.uniform(50, 150, size=n).round(3),
        }
    )


def write_parts(frame: pd.DataFrame, directory: Path, n_files: int) -> Path:
    """Write ``frame`` as ``n_files`` Parquet files of consecutive rows."""
    directory.mkdir(parents=True, exist_ok=True)
    for i, chunk in enumerate(np.array_split(np.arange(len(frame)), n_files)):
        frame.iloc[chunk].reset_index(drop=True).to_parquet(
            directory / f"part-{i:03d}.parquet", index=False
        )
    return directory


def digest(directory: Path) -> dict[str, str]:
    """Content hash and modification time of every file of ``directory`` (to show it untouched)."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() + str(p.stat().st_mtime_ns)
        for p in sorted(directory.iterdir())
    }


def plant_text_in_age(frame: pd.DataFrame, directory: Path, rows: int, row: int) -> None:
    """Add ``part-999.parquet``: ``rows`` records whose age is text, 'forty' in 1-based ``row``."""
    bad = frame.iloc[:rows].copy()
    bad["age"] = bad["age"].astype(str)
    bad.loc[bad.index[row - 1], "age"] = "forty"
    bad.to_parquet(directory / "part-999.parquet", index=False)
