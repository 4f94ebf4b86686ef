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

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from attack_helpers import planted_people
from server_fixtures import SECRET
from test_padding_attack import service  # the running service on the planted data

from sdckit.attacks import (
    DataSHIELDRules,
    LibraryServer,
    PeerServer,
    find_cell_targets,
    server_attack,
)
from sdckit.attacks.client import ServiceTarget
from sdckit.attacks.differencing import agreed_value
from sdckit.errors import SchemaError
from sdckit.server import AnalysisServer
from sdckit.server.demo import demo_metadata


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
    # The attack is real: padded pairs give the exact wage once Drop q misses the target, and
    # the pairs that missed agree on it exactly: the intruder recognises the value.
    assert table.loc["padding", "learned"] == 1.0
    assert result.padding_curve["learned"].iloc[-1] == 1.0
    # One pair alone confirms nothing, whatever it gives.
    assert result.padding_curve["learned"].iloc[0] == 0.0
    assert result.summary().startswith("2 of 7 attacks learned")


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
    asked = result.table[result.table["queries"] > 0]
    assert asked["answered"].gt(0).all()


def test_no_target_is_said_plainly(planted):
    result = server_attack(planted[0], target=_library(planted), sensitive="wage", targets=[])
    assert result.summary().startswith("Nothing was attacked: no unit is alone in a cell")


class _NoisyServer:
    """Exact answers to the first pair, every later table's means scaled by random noise."""

    def __init__(self, server: PeerServer, seed: int) -> None:
        self.server, self.metadata, self.name = server, server.metadata, "noisy server"
        self.rng = np.random.default_rng(seed)
        self.calls = 0

    def ask(self, analysis: str, body: dict) -> dict:
        answer = self.server.ask(analysis, body)
        self.calls += 1
        if self.calls > 2 and answer.get("status") == "ok" and "row_means" in answer:
            answer["row_means"] = [
                None if m is None else m * (1 + self.rng.normal(0, 0.3))
                for m in answer["row_means"]
            ]
        return answer


def test_a_single_estimate_planted_within_one_percent_is_not_learned(planted):
    data, metadata, _ = planted
    noisy = _NoisyServer(PeerServer(data, metadata, DataSHIELDRules()), seed=3)
    result = server_attack(
        data, target=noisy, sensitive="wage", max_targets=1, padding_pairs=5, random_state=0
    )
    narrow = result.table.set_index("attack").loc["narrow condition"]
    # The first narrow pair is exact (an oracle sees the value) but the second disagrees:
    # the intruder cannot tell the hit from a miss, so nothing is learned.
    assert narrow["oracle_recovered"] == 1.0 and narrow["estimates"] == 2
    assert narrow["learned"] == 0.0
    assert result.learned.empty, result.summary()
    assert "chance hits the intruder cannot tell" in result.summary().splitlines()[0]


def test_agreement_needs_two_estimates_and_no_rival():
    assert agreed_value([100.0]) is None
    assert agreed_value([100.0, 250.0, 31.0]) is None
    assert agreed_value([100.0, 100.2, 250.0]) == pytest.approx(100.0, rel=0.005)
    # Two values equally supported: she cannot tell which is the target's.
    assert agreed_value([100.0, 100.1, 250.0, 250.2]) is None


@pytest.fixture(scope="module")
def rare_region(planted):
    """The planted people with one of them alone in a new region: ALL minus the others is her."""
    data = planted[0]
    region = data["region"].to_numpy(dtype=object).copy()
    region[10] = "island"
    data = data.assign(region=region)
    return data, demo_metadata(data)


@pytest.mark.parametrize(
    ("server", "leaks"),
    [("exact", True), ("default", False), ("drop q alone", False)],
)
def test_all_minus_every_large_level(rare_region, server, leaks):
    """Each query passes alone; only the answers' noise stands between the intruder and her wage."""
    data, metadata = rare_region
    target = {
        "exact": lambda: PeerServer(data, metadata, DataSHIELDRules()),
        "default": lambda: LibraryServer(AnalysisServer(data, metadata, {}, secret=SECRET)),
        "drop q alone": lambda: LibraryServer(
            AnalysisServer(data, metadata, {"perturbation": False}, secret=SECRET)
        ),
    }[server]()
    result = server_attack(data, target=target, sensitive="wage", targets=[])
    row = result.table.set_index("attack").loc["residual of a variable"]
    # The intruder found the variable (region) and asked every level alone: all but hers answered.
    # (ALL minus the others, and the same within each sex where the server answers it.)
    assert row["targets"] == 1 and row["estimates"] >= 1 and (row["estimates"] == 2 or not leaks)
    assert row["learned"] == (1.0 if leaks else 0.0), result.summary()
    assert row["small_counts"] == 0
