"""``sdckit serve`` and ``sdckit server add-user|revoke|list-users|audit``: the analysis service."""

from __future__ import annotations

import json
import secrets
import shutil
import signal
import socket
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, overload

import typer
from rich.markup import escape
from rich.table import Table

from sdckit.cli._common import console, err_console, read_input
from sdckit.errors import ParameterError, SchemaError

if TYPE_CHECKING:  # the server is imported only when a server command runs
    from sdckit.server.metadata import Metadata

DB_HELP = (
    "Database: sqlite:///FILE, a SQLite file path, or postgresql+psycopg://USER@HOST:PORT/DB "
    "(default sqlite:///sdckit-server.db, or $SDCKIT_SERVER_DB)."
)


def _db_option() -> typer.models.OptionInfo:
    """The ``--db`` option of every server command (used inside ``Annotated``)."""
    return typer.Option("--db", envvar="SDCKIT_SERVER_DB", help=DB_HELP)


@overload
def _positive(value: int, option: str) -> int: ...


@overload
def _positive(value: int | None, option: str) -> int | None: ...


def _positive(value: int | None, option: str) -> int | None:
    if value is not None and value < 1:
        raise ParameterError(f"{option} must be a positive integer, got {value}")
    return value


def _positive_number(value: float, option: str) -> float:
    if not value > 0:
        raise ParameterError(f"{option} must be a number > 0, got {value:g}")
    return float(value)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or a ParameterError saying the port is taken.

    Bound before anything is printed or created, so that a busy port never
    leaves a token, a URL or a demo database behind; uvicorn then serves on
    this very socket (no race with another process between check and use).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ParameterError(f"--host {host!r} cannot be resolved: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ParameterError(
            f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc}); "
            "another server may be using it - choose another --port"
        ) from None
    sock.set_inheritable(True)
    return sock


def serve_command(
    data: Annotated[
        Path | None, typer.Option("--data", help="Confidential microdata (.csv or .parquet).")
    ] = None,
    metadata: Annotated[
        Path | None,
        typer.Option("--metadata", help="Metadata YAML: the variables analysts may use."),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Rules config YAML (thresholds; keep it private)."),
    ] = None,
    id_column: Annotated[
        str | None, typer.Option("--id", help="Column identifying units (default: row number).")
    ] = None,
    db: Annotated[str | None, _db_option()] = None,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    demo: Annotated[
        bool, typer.Option("--demo", help="Serve a generated demo dataset and print a demo token.")
    ] = False,
    log_identity: Annotated[
        bool,
        typer.Option(
            "--log-identity/--no-log-identity",
            help="Log a keyed hash of the account with every query (enables query history).",
        ),
    ] = False,
    rate_per_minute: Annotated[
        int, typer.Option("--rate-per-minute", help="Default requests per minute per account.")
    ] = 120,
    daily_budget: Annotated[
        int | None,
        typer.Option(
            "--daily-budget", help="Default queries per UTC day per account (none: unlimited)."
        ),
    ] = None,
    max_request_bytes: Annotated[
        int, typer.Option("--max-request-bytes", help="Larger request bodies are refused (413).")
    ] = 65536,
    cpu_seconds_per_minute: Annotated[
        float,
        typer.Option(
            "--cpu-seconds-per-minute",
            help="Cost budget per account: CPU seconds of analyses per minute (429 beyond).",
        ),
    ] = 20.0,
    max_analysis_seconds: Annotated[
        float, typer.Option("--max-analysis-seconds", help="Maximum run time of one analysis.")
    ] = 60.0,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "info",
    rules: Annotated[
        str | None,
        typer.Option(
            "--rules",
            help="Rule set: 'default' (no refusal oracle) or 'mas2011' (Lucero et al. 2011 as "
            "stated); overrides the config file's 'rules'.",
        ),
    ] = None,
) -> None:
    """Serve the remote analysis server (HTTP API and web page) with uvicorn."""
    from dataclasses import replace

    import uvicorn

    from sdckit.server.app import ServiceSettings, create_app
    from sdckit.server.config import RULE_SETS, load_config
    from sdckit.server.demo import demo_metadata, make_demo_data
    from sdckit.server.store import Store

    if not 0 < port < 65536:
        raise ParameterError(f"--port must be in 1..65535, got {port}")
    if rules is not None and rules not in RULE_SETS:
        raise ParameterError(f"--rules must be one of {list(RULE_SETS)}, got {rules!r}")
    loaded = load_config(config)
    if rules is not None:
        loaded = replace(loaded, rules=rules)
    settings = ServiceSettings(
        log_identity=log_identity,
        rate_per_minute=_positive(rate_per_minute, "--rate-per-minute"),
        daily_budget=_positive(daily_budget, "--daily-budget"),
        max_request_bytes=_positive(max_request_bytes, "--max-request-bytes"),
        cpu_seconds_per_minute=_positive_number(cpu_seconds_per_minute, "--cpu-seconds-per-minute"),
        max_analysis_seconds=_positive_number(max_analysis_seconds, "--max-analysis-seconds"),
    )
    if demo:
        if data is not None or metadata is not None:
            raise ParameterError("--demo serves its own dataset; leave out --data and --metadata")
    elif data is None or metadata is None:
        raise ParameterError("serve needs --data and --metadata (or --demo)")
    served = None if demo or data is None or metadata is None else (data, metadata)
    sock = _bind(host, port)
    # uvicorn ends run() gracefully on SIGTERM and then raises the signal again
    # for the previous handler; with the default one the process would die
    # before the clean-up below. This handler turns it into a normal exit.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    demo_dir: Path | None = None
    store = None
    try:
        meta: Metadata | Path
        if served is None:  # --demo
            frame = make_demo_data(5000, random_state=0)
            meta = demo_metadata(frame)
            if db is None:
                demo_dir = Path(tempfile.mkdtemp(prefix="sdckit-demo-"))
                db = str(demo_dir / "demo.db")
        else:
            data_path, meta = served
            frame = read_input(data_path)
            if id_column is not None and id_column != frame.index.name:
                if id_column not in frame.columns:
                    raise SchemaError(f"--id: column {id_column!r} is not in {data_path}")
                frame = frame.set_index(id_column)
        store = Store(db)
        app = create_app(frame, meta, loaded, store=store, settings=settings)
        shown_host = "localhost" if host in ("0.0.0.0", "::") else host
        err_console.print(f"sdckit analysis server on http://{shown_host}:{port}/", highlight=False)
        err_console.print(f"  database: {escape(repr(store))}", highlight=False)
        err_console.print(f"  rules: {loaded.rules}", highlight=False)
        err_console.print(f"  API reference: http://{shown_host}:{port}/api/docs", highlight=False)
        if demo:
            names = {a.name for a in store.list_accounts()}
            name = "demo" if "demo" not in names else f"demo-{secrets.token_hex(3)}"
            _, token = store.add_account(name)
            # Plain print so a script can read the token from stdout.
            print(f"demo token: {token}", flush=True)
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host=host,
                port=port,
                log_level=log_level,
                server_header=False,
                timeout_keep_alive=5,
            )
        )
        # uvicorn turns SIGINT and SIGTERM into a graceful exit from run(), so
        # the finally clause below also runs on Ctrl-C and on a service stop.
        server.run(sockets=[sock])
    finally:
        sock.close()
        if store is not None:
            store.close()
        if demo_dir is not None:
            shutil.rmtree(demo_dir, ignore_errors=True)


def add_user_command(
    name: Annotated[str, typer.Argument(help="Account name (letters, digits, _ . @ -).")],
    db: Annotated[str | None, _db_option()] = None,
    rate_per_minute: Annotated[
        int | None, typer.Option("--rate-per-minute", help="This account's requests per minute.")
    ] = None,
    daily_budget: Annotated[
        int | None, typer.Option("--daily-budget", help="This account's queries per UTC day.")
    ] = None,
) -> None:
    """Create an analyst account and print its API token (shown once; stored hashed)."""
    from sdckit.server.store import Store

    with Store(db) as store:
        info, token = store.add_account(
            name, rate_per_minute=rate_per_minute, daily_budget=daily_budget
        )
    err_console.print(f"created account {escape(info.name)}; its token (shown only now):")
    print(token, flush=True)


def revoke_command(
    name: Annotated[str, typer.Argument(help="Account to revoke.")],
    db: Annotated[str | None, _db_option()] = None,
) -> None:
    """Revoke an account's token at once (its audit entries stay)."""
    from sdckit.server.store import Store

    with Store(db) as store:
        info = store.revoke_account(name)
    revoked = "" if info.revoked_at is None else f" at {info.revoked_at.isoformat()}"
    console.print(f"revoked {escape(info.name)}{revoked}", highlight=False)


def list_users_command(
    db: Annotated[str | None, _db_option()] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List accounts (never tokens)."""
    from sdckit.server.store import Store

    with Store(db) as store:
        accounts = store.list_accounts()
    if as_json:
        print(json.dumps([a.to_dict() for a in accounts], indent=2))
        return
    table = Table("name", "token", "created", "status", "rate/min", "daily budget")
    for a in accounts:
        table.add_row(
            escape(a.name),
            a.token_prefix + "...",
            a.created_at.strftime("%Y-%m-%d %H:%M"),
            "active" if a.active else f"revoked {a.revoked_at:%Y-%m-%d %H:%M}",
            "default" if a.rate_per_minute is None else str(a.rate_per_minute),
            "default" if a.daily_budget is None else str(a.daily_budget),
        )
    console.print(table)


def audit_command(
    db: Annotated[str | None, _db_option()] = None,
    limit: Annotated[int, typer.Option("--limit", help="Newest entries to show.")] = 20,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON lines instead of a table.")
    ] = False,
) -> None:
    """Show the newest audit log entries."""
    from sdckit.server.store import Store

    _positive(limit, "--limit")
    with Store(db) as store:
        entries = store.audit_entries(limit=limit, newest_first=True)
    if as_json:
        for entry in entries:
            print(json.dumps(entry.to_dict(include_analyst=True)))
        return
    table = Table("id", "arrived (UTC)", "analysis", "outcome", "query", "refused by")
    for e in entries:
        refused = ", ".join(v["rule"] for v in e.verdicts if not v.get("passed", True))
        table.add_row(
            str(e.id),
            e.arrived_at.strftime("%Y-%m-%d %H:%M:%S"),
            e.analysis,
            e.outcome,
            escape(json.dumps(dict(e.query))[:80]),
            escape(refused or (e.error or "")[:60]),
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add ``sdckit serve`` and ``sdckit server ...`` to the command line."""
    app.command("serve")(serve_command)
    group = typer.Typer(
        help="Administer the analysis server: accounts and the audit log.", no_args_is_help=True
    )
    group.command("add-user")(add_user_command)
    group.command("revoke")(revoke_command)
    group.command("list-users")(list_users_command)
    group.command("audit")(audit_command)
    app.add_typer(group, name="server")
