"""``sdckit coprivacy game | p2p | social``: outputs and one-line errors (exit code 2)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from sdckit.cli.main import main
from shared_data import SHARED_DATA

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coprivacy" / "example2.yaml"


def test_game_prints_equilibria_and_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coprivacy", "game", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "pure Nash equilibria: (H, H), (H, P), (P, H)" in out
    assert "dominant strategy solution (H, H)" in out
    assert "Pareto-optimal profiles: (H, P), (P, H), (P, P)" in out
    assert "coprivate: P2 help(s) P1 in equilibrium" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("players: [a, b]\nstrategies: {a: [x], c: [y]}\npayoffs: []\n", "unknown player(s) ['c']"),
        (
            "players: [a]\nstrategies: {a: [x, y]}\npayoffs: [[x, 1], [z, 2]]\n",
            "payoffs line 2: player a has no strategy 'z'",
        ),
        ("players: [a]\nstrategies: {a: [x, y]}\npayoffs: [[x, 1], [y, .nan]]\n", "must be finite"),
        (
            "players: [a]\nstrategies: {a: [x, y]}\npayoffs: [[x, 1]]\n",
            "1 profile(s) have no payoffs",
        ),
        ("forwarding: {direct: 1, peers: {P2: {helped: 1}}}\n", "P2 has no 'rejected'"),
        ("something: else\n", "needs 'players'"),
    ],
)
def test_bad_game_files_fail_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = tmp_path / "game.yaml"
    path.write_text(text)
    assert main(["coprivacy", "game", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_social_writes_a_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graph = tmp_path / "friends.csv"
    graph.write_text("".join(f"u{a},u{b}\n" for a, b in nx.cycle_graph(12).edges))
    report = tmp_path / "social.html"
    assert (
        main(
            ["coprivacy", "social", str(graph), "--rounds", "20", "--seed", "1", "-o", str(report)]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "dominant strategy solution (H, H)" in out
    page = report.read_text()
    assert 'data-figure="disclosure_over_time"' in page and "tit_for_tat" in page


def test_p2p_on_aol_users_writes_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = SHARED_DATA / "aol_query_log_sample.csv"
    if not log.exists():
        pytest.skip(f"{log} is not present")
    report = tmp_path / "p2p.html"
    args = ["coprivacy", "p2p", str(log), "--peers", "10", "--steps", "2000", "--topics", "query"]
    assert main([*args, "--seed", "3", "--quiet", "-o", str(report)]) == 0
    out = capsys.readouterr().out
    # Empty queries ("-") are not queries: 7 of the first 2,000 lines.
    assert out.startswith("P2P anonymous keyword search: 1,993 queries of 10 peers")
    assert 'data-figure="p2p_timeline"' in report.read_text()
    assert main([*args, "--user-column", "User"]) == 2
    assert "--user-column: no column 'User'" in capsys.readouterr().err
