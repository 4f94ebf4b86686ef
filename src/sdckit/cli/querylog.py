"""``sdckit querylog``: protect a search log by semantic microaggregation (Erola et al. 2011)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
from rich.progress import TextColumn, TimeElapsedColumn

from sdckit.cli._common import (
    HtmlReportOption,
    NoProgressOption,
    SeedOption,
    check_outputs,
    console,
    progress_display,
    with_option_groups,
)
from sdckit.errors import DataError, ParameterError
from sdckit.io import write_table
from sdckit.querylog import (
    evaluate,
    load_taxonomy,
    planted_query_attack,
    protect,
    read_log,
    zealous,
)
from sdckit.querylog.report import write_evaluation_html
from sdckit.querylog.taxonomy import ODP239Taxonomy, Taxonomy, WordNetTaxonomy


@contextmanager
def _stages(quiet: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar whose label follows the stage (reading, classifying, grouping...)."""
    if quiet:
        yield None
        return
    with progress_display(TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn()) as bar:
        task = bar.add_task("reading", total=None)

        def update(stage: str, done: int, total: int) -> None:
            bar.update(task, description=stage, completed=done, total=max(total, 1))

        yield update


def _taxonomy(spec: str, odp239_path: Path | None, wordnet_path: Path | None) -> Taxonomy:
    if odp239_path is not None and spec.lower() != "odp239":
        raise ParameterError("--odp239-path only goes with --taxonomy odp239")
    if wordnet_path is not None and spec.lower() != "wordnet":
        raise ParameterError("--wordnet-path only goes with --taxonomy wordnet")
    if spec.lower() == "odp239":
        return ODP239Taxonomy(odp239_path)
    if spec.lower() == "wordnet":
        return WordNetTaxonomy(wordnet_path)
    return load_taxonomy(Path(spec))


_TAXONOMY_HELP = (
    "odp239 (the ODP239 file: --odp239-path, else $SDCKIT_ODP239, else "
    "shared/data/odp239_taxonomy.csv beside the sdckit checkout, not the working "
    "directory), wordnet (Debian's wordnet-base: --wordnet-path, "
    "else $SDCKIT_WORDNET, else /usr/share/wordnet) or a CSV of term,category_path rows "
    "(levels separated by '/')."
)

# The options both commands take.
TaxonomyOption = Annotated[str, typer.Option("--taxonomy", help=_TAXONOMY_HELP)]
Odp239PathOption = Annotated[
    Path | None, typer.Option("--odp239-path", help="Where the ODP239 taxonomy CSV is installed.")
]
WordnetPathOption = Annotated[
    Path | None,
    typer.Option(
        "--wordnet-path", help="The WordNet dictionary directory (data.noun, index.noun)."
    ),
]
UserColumnOption = Annotated[str, typer.Option("--user-column", help="The user-id column.")]
QueryColumnOption = Annotated[str, typer.Option("--query-column", help="The query column.")]
MethodOption = Annotated[
    str,
    typer.Option(
        "--method",
        help="microaggregation (Erola et al. 2011: user-level k-anonymity, the queries of "
        "every user) or zealous (Götz et al. 2012: query frequencies with (epsilon, "
        "delta)-differential privacy for each user; only queries many users share).",
    ),
]
EpsilonOption = Annotated[
    float, typer.Option("--epsilon", help="zealous: the privacy-loss bound for each user.")
]
DeltaOption = Annotated[
    float, typer.Option("--delta", help="zealous: the probability allowed to exceed it.")
]
MaxQueriesOption = Annotated[
    int,
    typer.Option(
        "--max-queries-per-user", help="zealous: distinct queries each user contributes at most."
    ),
]
KOption = Annotated[
    int, typer.Option("--k", help="Each released user stands for at least k users.")
]
_KEEP_TIMES_HELP = (
    "microaggregation: keep query times as hour, day or month, coarsened further until at "
    "least k members of the group searched in the period, else withheld (default: dropped)."
)
_KEEP_CLICKS_HELP = (
    "microaggregation: keep the host of a query's click if at least --min-click-users users "
    "clicked it (default: clicks dropped)."
)
_ITEMS_HELP = "zealous: count queries, or query-clicks ((query, clicked address) pairs)."
KeepTimesOption = Annotated[str | None, typer.Option("--keep-times", help=_KEEP_TIMES_HELP)]
KeepClicksOption = Annotated[bool, typer.Option("--keep-clicks", help=_KEEP_CLICKS_HELP)]
MinClickUsersOption = Annotated[
    int | None, typer.Option("--min-click-users", help="Users sharing a kept host (default k).")
]
ItemsOption = Annotated[str, typer.Option("--items", help=_ITEMS_HELP)]
TimeColumnOption = Annotated[str, typer.Option("--time-column", help="The query-time column.")]
ClickColumnOption = Annotated[str, typer.Option("--click-column", help="The click column.")]


@dataclass(frozen=True)
class _TaxonomyChoice:
    """--taxonomy and where its files are: the options of every command that classifies."""

    taxonomy: TaxonomyOption = "odp239"
    odp239_path: Odp239PathOption = None
    wordnet_path: WordnetPathOption = None

    def load(self) -> Taxonomy:
        return _taxonomy(self.taxonomy, self.odp239_path, self.wordnet_path)


@dataclass(frozen=True)
class _Zealous:
    """The parameters of ZEALOUS (Götz et al. 2012)."""

    epsilon: EpsilonOption = 1.0
    delta: DeltaOption = 1e-5
    max_queries: MaxQueriesOption = 5

    def parameters(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "max_queries_per_user": self.max_queries,
        }


@dataclass(frozen=True)
class _LogColumns:
    """Which columns of a search log hold the user and the query."""

    user_column: UserColumnOption = "AnonID"
    query_column: QueryColumnOption = "Query"

    def parameters(self) -> dict[str, Any]:
        return {"user_column": self.user_column, "query_column": self.query_column}


@with_option_groups
def protect_command(
    log_path: Annotated[
        Path,
        typer.Argument(metavar="LOG", help="The search log: AOL format (tab- or comma-separated)."),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The protected log (.csv/.parquet).")
    ],
    method: MethodOption = "microaggregation",
    k: KOption = 5,
    zealous_parameters: _Zealous = _Zealous(),
    taxonomy: _TaxonomyChoice = _TaxonomyChoice(),
    levels: Annotated[
        int, typer.Option("--levels", help="Depth L: category levels 1..L compared.")
    ] = 2,
    categories: Annotated[
        int,
        typer.Option(
            "--categories-per-term", help="A term's ranked categories used (the paper: 1 or 5)."
        ),
    ] = 1,
    min_level_share: Annotated[
        float,
        typer.Option(
            "--min-level-share",
            help="A level beyond 1 is used only if this share of classified terms reaches it.",
        ),
    ] = 0.5,
    block_size: Annotated[
        int,
        typer.Option(
            "--block-size",
            help="Largest block of users grouped together (memory grows as its square).",
        ),
    ] = 2000,
    exact: Annotated[
        bool,
        typer.Option(
            "--exact", help="No blocks: the paper's algorithm on the whole log (small logs)."
        ),
    ] = False,
    key: Annotated[
        Path | None,
        typer.Option(
            "--key",
            help="Also write the CONFIDENTIAL table original user -> released user (for "
            "'querylog evaluate'); keep it with the original log, never publish it.",
        ),
    ] = None,
    columns: _LogColumns = _LogColumns(),
    keep_times: KeepTimesOption = None,
    keep_clicks: KeepClicksOption = False,
    min_click_users: MinClickUsersOption = None,
    items: ItemsOption = "queries",
    time_column: TimeColumnOption = "QueryTime",
    click_column: ClickColumnOption = "ClickURL",
    seed: SeedOption = None,
    quiet: NoProgressOption = False,
) -> None:
    """Release a search log with user-level k-anonymity (Erola et al. 2011) or ZEALOUS."""
    check_outputs(output, key, inputs=[log_path])
    if method not in ("microaggregation", "zealous"):
        raise ParameterError(f"--method must be microaggregation or zealous, got {method!r}")
    if method == "zealous":
        if key is not None:
            raise ParameterError(
                "--key goes with --method microaggregation: ZEALOUS releases no users, so "
                "there is no key"
            )
        if keep_times is not None or keep_clicks:
            raise ParameterError(
                "--keep-times and --keep-clicks go with --method microaggregation; ZEALOUS "
                "releases no times, and query-click pairs with --items query-clicks"
            )
        release = zealous(
            log_path,
            **zealous_parameters.parameters(),
            **columns.parameters(),
            items=items,
            click_column=click_column,
            random_state=seed,
        )
        write_table(release.data, output)
        console.print(release.summary(), highlight=False)
        console.print(f"wrote {output}")
        return
    if key is not None and not re.search(r"internal|confidential", key.name, re.IGNORECASE):
        raise ParameterError(
            f"--key {key.name!r} links every original user to a released one: name it so it "
            "cannot be mistaken for a release (the name must contain 'internal' or "
            "'confidential', e.g. log_key_confidential.csv)"
        )
    if items != "queries":
        raise ParameterError("--items goes with --method zealous")
    tax = taxonomy.load()
    with _stages(quiet) as progress:
        result = protect(
            log_path,
            k=k,
            taxonomy=tax,
            levels=levels,
            categories_per_term=categories,
            min_level_share=min_level_share,
            block_size=None if exact else block_size,
            **columns.parameters(),
            times=keep_times,
            clicks=keep_clicks,
            min_click_users=min_click_users,
            time_column=time_column,
            click_column=click_column,
            random_state=seed,
            progress=progress,
        )
    write_table(result.data, output)
    if key is not None:
        write_table(result.membership, key)
    console.print(result.summary(), highlight=False)
    console.print(result.log.summary(), highlight=False)
    console.print(f"wrote {output}" + (f" and the confidential key {key}" if key else ""))


@with_option_groups
def evaluate_command(
    log_path: Annotated[Path, typer.Argument(metavar="LOG", help="The original search log.")],
    protected_path: Annotated[
        Path,
        typer.Argument(
            metavar="PROTECTED", help="The protected log written by 'querylog protect'."
        ),
    ],
    report_path: HtmlReportOption = None,
    key: Annotated[
        Path | None,
        typer.Option(
            "--key",
            help="The confidential key written by 'protect --key'; without it each user is "
            "assigned to the released user sharing most of her queries.",
        ),
    ] = None,
    k: Annotated[
        int | None, typer.Option("--k", help="The k to check (default: the smallest group).")
    ] = None,
    taxonomy: _TaxonomyChoice = _TaxonomyChoice(),
    levels: Annotated[int, typer.Option("--levels", help="SRP at levels 1..L.")] = 2,
    categories: Annotated[
        int, typer.Option("--categories-per-term", help="A term's ranked categories used.")
    ] = 1,
    repeats: Annotated[
        int, typer.Option("--random-repeats", help="Random partitions averaged for the baseline.")
    ] = 5,
    columns: _LogColumns = _LogColumns(),
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the random baseline.")] = None,
    quiet: NoProgressOption = False,
) -> None:
    """SRP by level beside 1/k and a random partition, the privacy check, a linkage attack."""
    check_outputs(reports=[report_path], inputs=[log_path, protected_path, key])
    tax = taxonomy.load()
    membership = None
    if key is not None:
        try:
            membership = pd.read_csv(key, dtype=str, keep_default_na=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"cannot read the key {str(key)!r}: {exc}") from exc
    with _stages(quiet) as progress:
        original = read_log(log_path, **columns.parameters())
        released = read_log(protected_path, **columns.parameters())
        report = evaluate(
            original,
            released=released.to_frame(),
            membership=membership,
            k=k,
            taxonomy=tax,
            levels=levels,
            categories_per_term=categories,
            **columns.parameters(),
            random_repeats=repeats,
            random_state=seed,
            progress=progress,
        )
    console.print(report.summary(), highlight=False)
    if membership is None:
        console.print(
            "  (no --key: each original user was assigned to the released user sharing most of "
            "her queries)",
            highlight=False,
        )
    console.print("top queries (original -> released):", highlight=False)
    for row in report.top_queries.itertuples(index=False):
        console.print(f"  {row.original:>6} -> {row.released:<6} {row.query}", highlight=False)
    console.print("level-1 categories (share of classified terms, original -> released):")
    for row in report.categories.head(14).itertuples(index=False):
        console.print(
            f"  {row.original:>6.1%} -> {row.released:<6.1%} {row.category}", highlight=False
        )
    if report_path is not None:
        write_evaluation_html(report, report_path, title=f"Protected search log {protected_path}")
        console.print(f"wrote {report_path}")


@with_option_groups
def attack_command(
    log_path: Annotated[
        Path, typer.Argument(metavar="LOG", help="The original search log (you hold it).")
    ],
    target: Annotated[
        str, typer.Option("--target", help="The user id whose queries the attacker is after.")
    ],
    method: MethodOption = "microaggregation",
    k: KOption = 5,
    known_share: Annotated[
        float,
        typer.Option(
            "--known-share", help="Share of the target's distinct queries the attacker knows."
        ),
    ] = 0.5,
    zealous_parameters: _Zealous = _Zealous(),
    taxonomy: _TaxonomyChoice = _TaxonomyChoice(),
    columns: _LogColumns = _LogColumns(),
    seed: SeedOption = None,
) -> None:
    """Plant fake users against a protection; see what they learn of a target (Götz et al. 2012)."""
    if method not in ("microaggregation", "zealous"):
        raise ParameterError(f"--method must be microaggregation or zealous, got {method!r}")
    options: dict[str, Any] = {}
    if method == "microaggregation":
        options["taxonomy"] = taxonomy.load()
    result = planted_query_attack(
        log_path,
        target=target,
        method=method,
        k=k,
        known_share=known_share,
        **zealous_parameters.parameters(),
        **columns.parameters(),
        random_state=seed,
        **options,
    )
    console.print(result.summary(), highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``sdckit querylog`` to the command line."""
    group = typer.Typer(
        help="Protect search logs: user-level k-anonymity by semantic microaggregation "
        "(Erola et al. 2011).",
        no_args_is_help=True,
    )
    group.command("protect")(protect_command)
    group.command("evaluate")(evaluate_command)
    group.command("attack")(attack_command)
    app.add_typer(group, name="querylog")
