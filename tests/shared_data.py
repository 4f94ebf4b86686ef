"""Access to the public datasets in ../shared/data (tests skip with a clear reason if absent).

Import as ``from shared_data import shared_csv`` (``tests/`` is on sys.path);
never ``from conftest import ...``, which is ambiguous with several conftest files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_csv(name: str) -> pd.DataFrame:
    """Read ``../shared/data/<name>``, skipping the test with a clear reason when it is absent."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"shared dataset {path} is not present (CI places ../shared beside the clone)")
    return pd.read_csv(path)


def work_beside_shared_csv(name: str, directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copy ``../shared/data/<name>`` into ``directory`` and work there, as a user would
    (the test is skipped with a clear reason when the dataset is absent)."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"shared dataset {path} is not present")
    shutil.copy(path, directory / name)
    monkeypatch.chdir(directory)
