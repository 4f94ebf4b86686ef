"""Fixtures of the studio's tests: a copy of ../shared/data/testdata.csv and a studio over it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from studio_cases import ROLES

from shared_data import SHARED_DATA


@pytest.fixture
def testdata(tmp_path: Path) -> Path:
    """A private copy of testdata.csv (skipped with a reason when ../shared is absent)."""
    source = SHARED_DATA / "testdata.csv"
    if not source.exists():
        pytest.skip(f"shared dataset {source} is not present")
    target = tmp_path / "input" / "testdata.csv"
    target.parent.mkdir()
    shutil.copy(source, target)
    return target


@pytest.fixture
def project(testdata: Path):
    """A project over testdata.csv with :data:`ROLES` set."""
    from sdckit.studio import Project

    found = Project(testdata)
    found.set_columns(by_role=ROLES)
    return found


@pytest.fixture
def studio(testdata: Path, tmp_path: Path):
    """A studio session with testdata.csv open, exporting into ``tmp_path/out``."""
    from sdckit.studio.app import Studio, remove_uploads

    out = tmp_path / "out"
    out.mkdir()
    session = Studio(output_dir=out)
    session.open(session.allow(testdata))
    yield session
    remove_uploads(session)


@pytest.fixture
def client(studio):
    """A TestClient sending the session's token."""
    from fastapi.testclient import TestClient

    from sdckit.studio.app import create_app

    with TestClient(create_app(studio), headers={"X-Studio-Token": studio.token}) as found:
        yield found
