"""Fixtures for the analysis-server tests: a small census-like dataset and a server over it."""

from __future__ import annotations

import pandas as pd
import pytest
from server_fixtures import SECRET, make_people

from sdckit.server import AnalysisServer, Metadata


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return make_people()


@pytest.fixture(scope="module")
def people_metadata(people: pd.DataFrame) -> Metadata:
    return Metadata.infer(people, beta=40)


@pytest.fixture
def server(people: pd.DataFrame, people_metadata: Metadata) -> AnalysisServer:
    return AnalysisServer(people, people_metadata, secret=SECRET)


@pytest.fixture
def exact_server(people: pd.DataFrame, people_metadata: Metadata) -> AnalysisServer:
    """The server without the perturbation: answers are those of the Drop q subsample."""
    return AnalysisServer(people, people_metadata, {"perturbation": False}, secret=SECRET)
