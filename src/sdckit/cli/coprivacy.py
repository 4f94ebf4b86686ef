"""``sdckit coprivacy``: games, P2P search, social disclosure, vehicular networks, multicast (Domingo-Ferrer 2011)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import networkx as nx
import typer

from sdckit.cli._common import (
    HtmlReportOption,
    QuietOption,
    SeedOption,
    check_outputs,
    console,
    err_console,
    progress_bar,
)
from sdckit.cli.querylog import QueryColumnOption, UserColumnOption
from sdckit.errors import DataError, ParameterError


def _report_written(output: Path | None, write: Callable[[Path], Path | None]) -> None:
    """Write the report when ``-o`` was given and say where it went."""
    if output is not None:
        err_console.print(f"wrote the report to {write(output)}")


def game_command(
    path: Annotated[
        Path,
        typer.Argument(metavar="FILE.yaml", help="A game in the YAML format of docs/coprivacy.md."),
    ],
    epsilon: Annotated[
        float,
        typer.Option("--epsilon", help="ε of the correlated equilibria and correlated coprivacy."),
    ] = 0.0,
    min_request: Annotated[
        float,
        typer.Option(
            "--min-request", help="Mixed coprivacy: least probability that P1 asks the peer."
        ),
    ] = 0.5,
    min_help: Annotated[
        float,
        typer.Option(
            "--min-help",
            help="Mixed and correlated coprivacy: least probability that the peer helps.",
        ),
    ] = 0.5,
) -> None:
    """Equilibria, dominant strategies, Pareto set and the coprivacy verdict of a game."""
    from sdckit.coprivacy import (
        correlated_equilibrium,
        dominant_strategies,
        is_coprivate,
        is_correlated_coprivate,
        is_mixed_coprivate,
        mixed_equilibria,
        pareto_set,
        pure_nash,
    )
    from sdckit.coprivacy.files import read_game

    game, forwarding = read_game(path)
    out = []
    if game is not None:

        def shown(profiles: list[tuple[str, ...]]) -> str:
            return ", ".join(f"({', '.join(p)})" for p in profiles) or "none"

        out += [game.summary(), f"pure Nash equilibria: {shown(pure_nash(game))}"]
        strict = pure_nash(game, strict=True)
        out.append(f"strict pure Nash equilibria: {shown(strict)}")
        out.append(dominant_strategies(game).summary())
        out.append(f"Pareto-optimal profiles: {shown(pareto_set(game))}")
        try:
            out.append(mixed_equilibria(game).summary())
        except ParameterError as exc:
            out.append(f"mixed equilibria: not computed ({exc})")
        out.append(correlated_equilibrium(game, epsilon=epsilon).summary())
    if forwarding is not None:
        out.append(forwarding.summary())
        out.append(is_coprivate(forwarding).summary())
        out.append(
            is_mixed_coprivate(forwarding, min_request=min_request, min_help=min_help).summary()
            + f" (bounds: P(ask) >= {min_request:g}, P(help) >= {min_help:g})"
        )
        out.append(
            is_correlated_coprivate(forwarding, epsilon=epsilon, min_help=min_help).summary()
            + f" (ε = {epsilon:g}, P(ask and help) >= {min_help:g})"
        )
    console.print("\n".join(out), highlight=False, soft_wrap=True)


def p2p_command(
    log: Annotated[
        Path,
        typer.Argument(
            metavar="LOG", help="A search log (AOL format or a CSV with user and query columns)."
        ),
    ],
    output: HtmlReportOption = None,
    peers: Annotated[
        int | None,
        typer.Option("--peers", help="Keep the N users with most queries (default: all users)."),
    ] = None,
    steps: Annotated[
        int | None,
        typer.Option("--steps", help="Simulate the first N queries in time order (default: all)."),
    ] = None,
    topics: Annotated[
        str,
        typer.Option(
            "--topics", help="A query's topic: 'category' (ODP239, level 1) or 'query' (its text)."
        ),
    ] = "category",
    max_attempts: Annotated[
        int,
        typer.Option("--max-attempts", help="Peers asked before a user submits her query herself."),
    ] = 3,
    user_column: UserColumnOption = "AnonID",
    query_column: QueryColumnOption = "Query",
    time_column: Annotated[
        str,
        typer.Option(
            "--time-column", help="The column giving the time order ('' keeps the file order)."
        ),
    ] = "QueryTime",
    seed: SeedOption = None,
    quiet: QuietOption = False,
) -> None:
    """Simulate P2P anonymous keyword search with entropy utilities on a search log (§4)."""
    import pandas as pd

    from sdckit.coprivacy import log_workload, simulate_p2p
    from sdckit.coprivacy.report import p2p_report

    check_outputs(inputs=[log], reports=[output])
    try:
        frame = pd.read_csv(log, sep=None, engine="python", dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the search log {str(log)!r}: {exc}") from None
    for option, column in (("--user-column", user_column), ("--query-column", query_column)):
        if column not in frame.columns:
            raise ParameterError(
                f"{option}: no column {column!r}; the log has {list(frame.columns)}"
            )
    if peers is not None:
        if peers < 2:
            raise ParameterError(f"--peers must be at least 2, got {peers}")
        keep = frame[user_column].value_counts().index[:peers]
        frame = frame[frame[user_column].isin(keep)]
    if time_column:
        if time_column not in frame.columns:
            raise ParameterError(
                f"--time-column: no column {time_column!r}; the log has {list(frame.columns)}"
            )
        frame = frame.sort_values(time_column, kind="stable")
    if steps is not None:
        if steps < 1:
            raise ParameterError(f"--steps must be at least 1, got {steps}")
        frame = frame.head(steps)
    workload = log_workload(
        frame, topics=topics, user_column=user_column, query_column=query_column, time_column=None
    )
    workload = type(workload)(
        originators=workload.originators,
        topics=workload.topics,
        peer_names=workload.peer_names,
        topic_names=workload.topic_names,
        source=str(log),
    )
    with progress_bar("simulating", quiet=quiet) as callback:
        result = simulate_p2p(
            workload, max_attempts=max_attempts, random_state=seed, progress=callback
        )
    console.print(result.summary(), highlight=False, soft_wrap=True)
    _report_written(output, lambda path: p2p_report(result, path=path).path)


def _read_graph(path: Path) -> nx.Graph:
    import pandas as pd

    try:
        edges = pd.read_csv(path, sep=None, engine="python", header=None, dtype=str, comment="#")
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read the graph {str(path)!r}: {exc}") from None
    if edges.shape[1] < 2:
        raise DataError(f"{path}: a graph file has one edge per line: two user ids (an edge list)")
    graph = nx.Graph()
    graph.add_edges_from(zip(edges[0], edges[1], strict=True))
    return graph


def social_command(
    graph_path: Annotated[
        Path,
        typer.Argument(
            metavar="GRAPH",
            help="An edge list: one line per friendship, two user ids (comma, tab or space).",
        ),
    ],
    output: HtmlReportOption = None,
    beta: Annotated[float, typer.Option("--beta", help="Sensitivity β of the attribute.")] = 1.0,
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds of the repeated game.")] = 100,
    noise: Annotated[
        float,
        typer.Option("--noise", help="Probability that a user overrides her protocol in a round."),
    ] = 0.05,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Reputation a neighbour needs to be disclosed to.")
    ] = 0.5,
    seed: SeedOption = None,
) -> None:
    """The disclosure game on a social graph: one-shot collapse, tit-for-tat and reputation (§5)."""
    from sdckit.coprivacy import disclosure_game, dominant_strategies, repeated_disclosure
    from sdckit.coprivacy.report import social_report

    check_outputs(inputs=[graph_path], reports=[output])
    graph = _read_graph(graph_path)
    stage = disclosure_game(2, [beta])
    one_shot = (
        f"one-shot game (Example 2, β = {beta:g}): dominant strategy solution "
        f"({', '.join(dominant_strategies(stage).solution or ())}); without a protocol nobody "
        f"discloses and each of the {graph.number_of_nodes():,} users gets 0 "
        f"(all disclosing: {beta / (1 + beta):.3g} per friend)"
    )
    plays = [
        repeated_disclosure(
            graph,
            protocol=protocol,
            rounds=rounds,
            sensitivity=beta,
            noise=noise,
            threshold=threshold,
            random_state=seed,
        )
        for protocol in ("tit_for_tat", "reputation")
    ]
    console.print(
        "\n".join([one_shot, *(p.summary() for p in plays)]), highlight=False, soft_wrap=True
    )
    _report_written(output, lambda path: social_report(plays, path=path, notes=[one_shot]).path)


def _option(name: str, help_text: str) -> Any:
    return typer.Option(name, help=help_text)


_PRIVACY_COST_HELP = "An endorser's loss if singled out, shared by the m endorsers (cost / m)."


def vehicular_command(
    vehicles: Annotated[int, _option("--vehicles", "Vehicles near the event (at most 20).")] = 6,
    threshold: Annotated[int, _option("--threshold", "Endorsements a credited alert needs.")] = 3,
    functionality: Annotated[float, _option("--functionality", "A credited alert's worth.")] = 1.0,
    privacy_cost: Annotated[float, _option("--privacy-cost", _PRIVACY_COST_HELP)] = 2.0,
) -> None:
    """General coprivacy in vehicular networks (§6): the endorsement game and its equilibria."""
    from sdckit.coprivacy import check_vehicular

    result = check_vehicular(
        n_vehicles=vehicles,
        threshold=threshold,
        functionality=functionality,
        privacy_cost=privacy_cost,
    )
    console.print(result.summary(), highlight=False, soft_wrap=True)


def multicast_command(
    costs: Annotated[
        tuple[float, float],
        _option("--costs", "A forwarder's cost of fingerprinting a copy; the source's of unicast."),
    ] = (1.0, 5.0),
    penalties: Annotated[
        tuple[float, float],
        _option(
            "--penalties", "What a traced leak costs the forwarder (plain copy), the receiver."
        ),
    ] = (10.0, 10.0),
    audit: Annotated[
        tuple[float, float],
        _option("--audit", "Probability that a plain copy is found by an audit; its penalty."),
    ] = (0.0, 0.0),
    detection: Annotated[
        float, _option("--detection", "Probability that a leak is found and traced.")
    ] = 0.5,
    leak_gain: Annotated[
        float, _option("--leak-gain", "What a receiver gains by leaking or keeping past expiry.")
    ] = 2.0,
    oblivion_loss: Annotated[
        float, _option("--oblivion-loss", "What a leak costs the content's source.")
    ] = 10.0,
) -> None:
    """Fingerprinted multicast and digital oblivion (§7): who fingerprints, who leaks."""
    from sdckit.coprivacy import check_multicast

    result = check_multicast(
        fingerprint_cost=costs[0],
        unicast_cost=costs[1],
        forwarder_penalty=penalties[0],
        receiver_penalty=penalties[1],
        audit=audit[0],
        audit_penalty=audit[1],
        detection=detection,
        leak_gain=leak_gain,
        oblivion_loss=oblivion_loss,
    )
    console.print(result.summary(), highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``sdckit coprivacy`` to the command line."""
    group = typer.Typer(
        help="Coprivacy (Domingo-Ferrer 2011): equilibria of games, P2P anonymous keyword "
        "search, the social-network disclosure game, vehicular networks and fingerprinted "
        "multicast.",
        no_args_is_help=True,
    )
    group.command("game")(game_command)
    group.command("p2p")(p2p_command)
    group.command("social")(social_command)
    group.command("vehicular")(vehicular_command)
    group.command("multicast")(multicast_command)
    app.add_typer(group, name="coprivacy")
