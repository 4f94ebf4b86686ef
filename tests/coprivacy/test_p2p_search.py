"""The P2P anonymous keyword search simulator (Domingo-Ferrer (2011), §4)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdckit.coprivacy import Workload, log_workload, simulate_p2p, zipf_workload
from sdckit.coprivacy.p2p_search import COPRIVATE, DIRECT, REJECTED, _entropy
from sdckit.errors import ParameterError
from shared_data import SHARED_DATA


def _workload(originators, topics, n_peers) -> Workload:
    return Workload(
        originators=np.array(originators, dtype=np.int32),
        topics=np.array(topics, dtype=np.int32),
        peer_names=tuple(f"p{i}" for i in range(n_peers)),
        topic_names=tuple(f"t{t}" for t in range(max(topics) + 1)),
    )


def test_incremental_entropy_matches_the_definition() -> None:
    counts = np.array([3, 1, 1, 5])
    p = counts / counts.sum()
    direct = -(p * np.log2(p)).sum()
    assert _entropy(
        int(counts.sum()), float(sum(c * math.log2(c) for c in counts))
    ) == pytest.approx(direct)


def test_hand_made_profiles_follow_the_papers_rules() -> None:
    # Peer 0 asks topic 0 twice: the first lifts her entropy from 0 (no: stays 0 -> submit, H 0 >= 0),
    # the second keeps H(Y) at 0 (one topic) -> submit. Then topic 1 (H rises to 1 bit) -> submit.
    # A third topic-0 query would lower H(Y^0) below 0.918: forward to peer 1, who has nothing
    # (H stays 0, not > 0): rejected; peer 2 has topic 1 once: adding topic 0 raises her H: accepts.
    work = _workload([2, 0, 0, 0, 0], [1, 0, 0, 1, 0], 3)
    result = simulate_p2p(work, max_attempts=2, random_state=0)
    assert list(result.outcomes[:4]) == [DIRECT] * 4
    assert result.outcomes[4] in (COPRIVATE, REJECTED)
    # Whatever the order of attempts, peer 2 is the only one who gains by accepting.
    assert result.submitters[4] == 2
    assert result.outcomes[4] == COPRIVATE
    peers = result.per_peer.set_index("peer")
    assert peers.loc["p2", "requests_accepted"] == 1
    assert peers.loc["p1", "requests_accepted"] == 0


def test_forwarding_spreads_a_query_evenly_over_the_peers() -> None:
    # One peer repeating one topic among many others: her forwarded copies go to every peer
    # before any peer gets a second one (the corrected Expression (2)).
    rng = np.random.default_rng(0)
    n_peers = 6
    others = rng.integers(1, n_peers, 600)
    topics = rng.integers(1, 50, 600)
    originators = np.concatenate([[0] * 5, others, [0] * 30])
    all_topics = np.concatenate([[1, 2, 3, 4, 5], topics, [0] * 30])
    result = simulate_p2p(
        _workload(originators, all_topics, n_peers), max_attempts=1, random_state=1
    )
    forwarded = result.outcomes[-30:] != DIRECT
    assert forwarded.sum() > 10
    asked = int(result.attempts[-30:].sum())
    assert asked == forwarded.sum()  # one attempt each
    # Evenly spread: the peer who learned most of p0's queries learned ceil(asked / 5) of them.
    share = result.per_peer.set_index("peer").loc["p0", "max_share_learned_by_a_peer"]
    assert round(share * 35) == math.ceil(asked / (n_peers - 1))


def test_the_simulator_is_reproducible_for_a_seed() -> None:
    work = zipf_workload(20, 3000, n_topics=50, random_state=4)
    a = simulate_p2p(work, random_state=9)
    b = simulate_p2p(work, random_state=9)
    np.testing.assert_array_equal(a.submitters, b.submitters)
    pd.testing.assert_frame_equal(a.per_peer, b.per_peer)
    assert 0 < a.forwarded_share < 1
    assert 0 <= a.delta <= 1
    assert a.timeline["queries"].iloc[-1] == 3000
    assert "δ" in a.summary()


def test_the_protocol_raises_entropy_vs_the_engine_on_a_zipf_workload() -> None:
    result = simulate_p2p(zipf_workload(50, 20_000, n_topics=200, random_state=2), random_state=3)
    peers = result.per_peer
    assert (peers["entropy_vs_engine"] > peers["entropy_alone"]).mean() > 0.9
    # Nobody submits a query for a peer unless it raises her own entropy: accepted <= received.
    assert (peers["requests_accepted"] <= peers["requests_received"]).all()
    assert result.delta > 0.5


def test_aol_users_as_peers() -> None:
    path = SHARED_DATA / "aol_query_log_sample.csv"
    if not path.exists():
        pytest.skip(f"{path} is not present")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False).head(3000)
    work = log_workload(frame, topics="query")
    assert work.n_queries > 2500
    times = frame["QueryTime"].to_numpy()
    assert list(np.sort(times)) == sorted(times)  # ordered by time, not by user
    result = simulate_p2p(work, random_state=0)
    assert len(result.per_peer) == work.n_peers
    assert result.per_peer["queries"].sum() == work.n_queries


def test_bad_simulation_parameters() -> None:
    work = zipf_workload(3, 10, random_state=0)
    with pytest.raises(ParameterError, match="max_attempts"):
        simulate_p2p(work, max_attempts=0)
    with pytest.raises(ParameterError, match="n_peers"):
        zipf_workload(1, 10)
    with pytest.raises(ParameterError, match="topics must be"):
        log_workload(pd.DataFrame({"AnonID": [1], "Query": ["a"]}), topics="words")
    with pytest.raises(ParameterError, match="time_column 'QueryTime' is not a column"):
        log_workload(pd.DataFrame({"AnonID": [1], "Query": ["a"]}), topics="query")


def test_running_out_of_peers_is_counted_apart() -> None:
    # Three peers: after both other peers refuse, P^i submits herself before
    # max_attempts = 5; with 20 peers and 3 attempts that never happens.
    few = simulate_p2p(
        zipf_workload(n_peers=3, n_queries=3000, n_topics=20, random_state=1),
        max_attempts=5,
        random_state=1,
    )
    stopped = (few.outcomes == REJECTED) & (few.attempts < 5)
    assert few.n_exhausted > 0
    np.testing.assert_array_equal(few.exhausted, stopped)
    assert set(few.attempts[few.exhausted].tolist()) == {2}
    assert f"every other peer refused (fewer peers than max_attempts): {few.n_exhausted:,}" in (
        few.summary()
    )
    many = simulate_p2p(
        zipf_workload(n_peers=20, n_queries=3000, n_topics=20, random_state=1),
        max_attempts=3,
        random_state=1,
    )
    assert many.n_exhausted == 0 and (many.outcomes == REJECTED).any()
