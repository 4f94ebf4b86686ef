"""Differencing and padding attacks (Lucero et al. 2011, §3.1-§4) against sdckit's own server.

Planted data (the server tests' ``planted_people``): six age bins each hold
exactly one doctorate, the targets. The battery finds them from the public
metadata and the file, and attacks through ``ask`` only: the library server
and the running service with the defaults learn nothing; the same server
without the perturbation (Drop q alone) gives the padding attack the exact
wages, which is the attack the perturbation exists for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from attack_helpers import planted_people
from server_fixtures import SECRET
from test_padding_attack import service  # the running service on the planted data

from sdckit.attacks import LibraryServer, find_cell_targets, server_attack
from sdckit.attacks.client import ServiceTarget
from sdckit.errors import SchemaError
from sdckit.server import AnalysisServer


@pytest.fixture(scope="module")
def planted():
    return planted_people()


def _library(planted, config=None) -> LibraryServer:
    data, metadata, _ = planted
    return LibraryServer(AnalysisServer(data, metadata, config or {}, secret=SECRET))


def test_the_targets_are_the_planted_units(planted):
    data, _, targets = planted
    found = find_cell_targets(data, _library(planted).metadata, sensitive="wage", max_targets=6)
    assert {t.position for t in found} == set(targets.values())
    assert all(t.category == "education" and t.level == "doctorate" for t in found)
    assert {t.bin: t.position for t in found} == targets


def test_drop_q_alone_falls_to_padding(planted):
    result = server_attack(
        planted[0],
        target=_library(planted, {"perturbation": False}),
        sensitive="wage",
        max_targets=3,
        padding_pairs=10,
        random_state=0,
    )
    table = result.table.set_index("attack")
    # The attack is real: padded pairs give the exact wage once Drop q misses the target.
    assert table.loc["padding", "recovered"] == 1.0
    assert result.padding_curve["recovered"].iloc[-1] == 1.0
    assert result.summary().startswith("2 of 6 attacks learned")


def test_the_default_server_learns_nothing(planted):
    result = server_attack(
        planted[0], target=_library(planted), sensitive="wage", padding_pairs=20, random_state=0
    )
    assert len(result.targets) == 6
    assert result.learned.empty, result.summary()
    assert result.summary().startswith("No differencing or padding attack learned")
    table = result.table.set_index("attack")
    assert (table["small_counts"] == 0).all()
    # Same unit set, same answer: asking again or rewriting the universe gains nothing.
    assert table.loc["repeated queries", "distinct_answers"] == 1
    # The third universe's union has an intersection of one unit: refused.
    assert "universe_gamma" in table.loc["third universe", "refused_by"]


def test_bad_sensitive_variable(planted):
    with pytest.raises(SchemaError, match="sensitive: 'education' is not a continuous"):
        server_attack(planted[0], target=_library(planted), sensitive="education")


__all__ = ["service"]


def test_the_service_learns_nothing(planted, service):
    url = str(service.base_url).rstrip("/")
    token = service.headers["Authorization"].removeprefix("Bearer ")
    with ServiceTarget(url, token) as target:
        result = server_attack(
            planted[0], target=target, sensitive="wage", max_targets=2, padding_pairs=8
        )
    assert len(result.targets) == 2
    assert result.learned.empty, result.summary()
    assert result.table["answered"].gt(0).all()


def test_no_target_is_said_plainly(planted):
    result = server_attack(planted[0], target=_library(planted), sensitive="wage", targets=[])
    assert result.summary().startswith("Nothing was attacked: no unit is alone in a cell")
