"""Storage of the analysis service: accounts, the audit log and the server secret.

The Microdata Analysis System keeps an audit trail of every query and the
rules' verdicts (Lucero et al. 2011, Section 2); the MAS design
logs queries *without* analyst identity. Here identity logging is a switch
of the service: when on, an entry carries a pseudonym of the account (a
keyed hash), never its name or token.

Everything goes through SQLAlchemy 2:

* SQLite file by default (embedded; WAL journal, ``synchronous=FULL``, so a
  committed entry survives a killed process);
* PostgreSQL by URL (``postgresql+psycopg://user@host:port/db``;
  ``postgresql://`` is read as psycopg 3).

The schema is created and upgraded by the Alembic migrations shipped in
``sdckit/server/migrations``, run programmatically when a :class:`Store`
opens, so upgrading sdckit keeps an existing log.

API tokens are 256-bit random strings; only their SHA-256 digest is stored
(a fast hash is enough for a random secret of that length: there is nothing
to brute-force), with the first characters kept to tell tokens apart.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from sdckit.errors import ParameterError
from sdckit.server.dropq import MIN_SECRET_BYTES, generate_secret
from sdckit.server.engine import AuditRecord

__all__ = [
    "DEFAULT_DB_URL",
    "AccountInfo",
    "AuditEntryInfo",
    "Store",
    "analyst_pseudonym",
    "hash_token",
    "normalize_db_url",
]

DEFAULT_DB_URL = "sqlite:///sdckit-server.db"
TOKEN_PREFIX = "sdck_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@\-]{0,99}")
_MIGRATIONS = Path(__file__).resolve().parent / "migrations"

# --------------------------------------------------------------------------- models


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(100), unique=True)
    token_hash: Mapped[str] = mapped_column(sa.String(64), unique=True)
    token_prefix: Mapped[str] = mapped_column(sa.String(16))
    created_at: Mapped[datetime] = mapped_column(sa.DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(sa.DateTime(timezone=True), nullable=True)
    rate_per_minute: Mapped[int | None] = mapped_column(sa.Integer, nullable=True)
    daily_budget: Mapped[int | None] = mapped_column(sa.Integer, nullable=True)


class AuditEntry(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(
        sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True
    )
    arrived_at: Mapped[datetime] = mapped_column(sa.DateTime(timezone=True))
    analysis: Mapped[str] = mapped_column(sa.String(32))
    query: Mapped[Any] = mapped_column(sa.JSON)
    outcome: Mapped[str] = mapped_column(sa.String(16))
    verdicts: Mapped[Any] = mapped_column(sa.JSON)
    response_digest: Mapped[str | None] = mapped_column(sa.String(64), nullable=True)
    elapsed_seconds: Mapped[float] = mapped_column(sa.Float)
    error: Mapped[str | None] = mapped_column(sa.Text, nullable=True)
    analyst: Mapped[str | None] = mapped_column(sa.String(64), nullable=True, index=True)


class ServerState(Base):
    __tablename__ = "server_state"

    name: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    value: Mapped[str] = mapped_column(sa.Text)


class DailyUsage(Base):
    __tablename__ = "daily_usage"

    account_id: Mapped[int] = mapped_column(
        sa.Integer, sa.ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[str] = mapped_column(sa.String(10), primary_key=True)
    queries: Mapped[int] = mapped_column(sa.Integer)


# --------------------------------------------------------------------------- plain results


@dataclass(frozen=True)
class AccountInfo:
    """An analyst account as the admin sees it (never the token or its hash)."""

    id: int
    name: str
    token_prefix: str
    created_at: datetime
    revoked_at: datetime | None
    rate_per_minute: int | None
    daily_budget: int | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "token_prefix": self.token_prefix,
            "created_at": self.created_at.isoformat(),
            "revoked_at": None if self.revoked_at is None else self.revoked_at.isoformat(),
            "rate_per_minute": self.rate_per_minute,
            "daily_budget": self.daily_budget,
            "active": self.active,
        }


@dataclass(frozen=True)
class AuditEntryInfo:
    """One stored audit entry."""

    id: int
    arrived_at: datetime
    analysis: str
    query: Mapping[str, Any]
    outcome: str
    verdicts: tuple[Mapping[str, Any], ...]
    response_digest: str | None
    elapsed_seconds: float
    error: str | None
    analyst: str | None

    def to_dict(self, *, include_analyst: bool = False) -> dict[str, Any]:
        out = {
            "id": self.id,
            "arrived_at": self.arrived_at.isoformat(),
            "analysis": self.analysis,
            "query": dict(self.query),
            "outcome": self.outcome,
            "verdicts": [dict(v) for v in self.verdicts],
            "response_digest": self.response_digest,
            "elapsed_seconds": self.elapsed_seconds,
            "error": self.error,
        }
        if include_analyst:
            out["analyst"] = self.analyst
        return out


def _account_info(row: Account) -> AccountInfo:
    return AccountInfo(
        id=row.id,
        name=row.name,
        token_prefix=row.token_prefix,
        created_at=_aware(row.created_at),
        revoked_at=None if row.revoked_at is None else _aware(row.revoked_at),
        rate_per_minute=row.rate_per_minute,
        daily_budget=row.daily_budget,
    )


def _entry_info(row: AuditEntry) -> AuditEntryInfo:
    return AuditEntryInfo(
        id=int(row.id),
        arrived_at=_aware(row.arrived_at),
        analysis=row.analysis,
        query=row.query,
        outcome=row.outcome,
        verdicts=tuple(row.verdicts),
        response_digest=row.response_digest,
        elapsed_seconds=float(row.elapsed_seconds),
        error=row.error,
        analyst=row.analyst,
    )


def _aware(value: datetime) -> datetime:
    """SQLite returns naive datetimes; every stored time is UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- helpers


def hash_token(token: str) -> str:
    """SHA-256 hex digest under which a token is stored.

    Parameters
    ----------
    token : str
        The API token.

    Returns
    -------
    str
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def analyst_pseudonym(secret: bytes, account_name: str) -> str:
    """The keyed hash logged as an analyst's identity when identity logging is on.

    HMAC-SHA256 of the account name under a key derived from the server
    secret: stable for one deployment (so an auditor holding the secret can
    link entries to an account), meaningless without the secret.

    Parameters
    ----------
    secret : bytes
        The server secret.
    account_name : str
        The account.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    key = hmac.new(secret, b"analyst-identity", hashlib.sha256).digest()
    return hmac.new(key, account_name.encode("utf-8"), hashlib.sha256).hexdigest()


def normalize_db_url(db: str | Path | None) -> str:
    """A SQLAlchemy URL from a URL, a SQLite file path, or None (the default file).

    ``postgresql://`` and ``postgres://`` are read as psycopg 3
    (``postgresql+psycopg://``).

    Parameters
    ----------
    db : str, Path or None
        A database URL or a SQLite file path.

    Returns
    -------
    str
    """
    if db is None:
        return DEFAULT_DB_URL
    text = str(db)
    if not text.strip():
        raise ParameterError("db must be a database URL or a SQLite file path, got ''")
    if "://" not in text:
        return f"sqlite:///{Path(text).expanduser().resolve()}"
    scheme, _, rest = text.partition("://")
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    if scheme.split("+")[0] not in ("sqlite", "postgresql"):
        raise ParameterError(
            f"db URL must be sqlite:///FILE or postgresql+psycopg://..., got scheme {scheme!r}"
        )
    return text


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ParameterError(
            f"account name must be 1-100 letters, digits or _ . @ - (starting with a letter "
            f"or digit), got {name!r}"
        )
    return name


def _check_limit(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{name} must be a positive integer or None, got {value!r}")
    return value


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers (the history endpoint, an auditor) work beside the writer;
    # synchronous=FULL makes each commit durable before the answer is released.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


# --------------------------------------------------------------------------- the store


class Store:
    """Accounts, audit log and server secret in a SQL database.

    Parameters
    ----------
    db : str or Path, optional
        SQLAlchemy URL (``sqlite:///FILE``, ``postgresql+psycopg://...``) or a
        SQLite file path; default ``sqlite:///sdckit-server.db``.
    migrate : bool, default True
        Bring the schema to the newest revision (Alembic) on opening.
    """

    def __init__(self, db: str | Path | None = None, *, migrate: bool = True) -> None:
        self.url = normalize_db_url(db)
        url = sa.make_url(self.url)
        self.dialect = url.get_backend_name()
        if self.dialect == "sqlite":
            if url.database in (None, "", ":memory:"):
                raise ParameterError(
                    "db: an in-memory SQLite database would lose the audit log; give a file"
                )
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
            self.engine: Engine = sa.create_engine(
                url, connect_args={"check_same_thread": False, "timeout": 30}
            )
            event.listen(self.engine, "connect", _sqlite_pragmas)
        else:
            self.engine = sa.create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)
        if migrate:
            self.migrate()

    def __repr__(self) -> str:
        return f"Store({self.engine.url.render_as_string(hide_password=True)!r})"

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- schema

    def _alembic_config(self, connection: sa.Connection):
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(_MIGRATIONS))
        config.attributes["connection"] = connection
        return config

    def migrate(self, revision: str = "head", *, lock_timeout: float = 120.0) -> None:
        """Upgrade the schema to ``revision`` (default the newest); existing rows are kept.

        Migrations run under a lock, so that ``sdckit serve`` and ``sdckit
        server add-user`` started together on a fresh database do not both
        create the tables: on PostgreSQL a transaction-level advisory lock,
        on SQLite an exclusive lock on a file next to the database. The
        second process waits, then finds the schema current. After
        ``lock_timeout`` seconds of waiting it gives up with a clear message.
        """
        from alembic import command

        with self._migration_lock(lock_timeout), self.engine.begin() as connection:
            if self.dialect == "postgresql":
                connection.execute(sa.text("SELECT pg_advisory_xact_lock(7326145501)"))
            command.upgrade(self._alembic_config(connection), revision)

    @contextlib.contextmanager
    def _migration_lock(self, timeout: float):
        if self.dialect != "sqlite":
            yield
            return
        import fcntl

        path = Path(f"{sa.make_url(self.url).database}.migrate-lock")
        with path.open("a") as handle:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ParameterError(
                            f"another process has been migrating {path.with_suffix('')} for "
                            f"over {timeout:g} s; try again when it has finished"
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def schema_revision(self) -> str | None:
        """The Alembic revision the database is at (None before any migration)."""
        from alembic.runtime.migration import MigrationContext

        with self.engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    # ----------------------------------------------------------------- secret

    def server_secret(self) -> bytes:
        """The Drop q secret: generated and stored on first use, the same ever after."""
        with self.engine.begin() as conn:
            value = conn.execute(
                sa.select(ServerState.value).where(ServerState.name == "secret")
            ).scalar_one_or_none()
        if value is None:
            # If another process stores one first, the insert fails: read theirs below.
            with contextlib.suppress(IntegrityError), self.engine.begin() as conn:
                conn.execute(
                    sa.insert(ServerState).values(name="secret", value=generate_secret().hex())
                )
            with self.engine.begin() as conn:
                value = conn.execute(
                    sa.select(ServerState.value).where(ServerState.name == "secret")
                ).scalar_one()
        secret = bytes.fromhex(value)
        if len(secret) < MIN_SECRET_BYTES:
            raise ParameterError("the stored server secret is shorter than 16 bytes")
        return secret

    # ----------------------------------------------------------------- accounts

    def add_account(
        self,
        name: str,
        *,
        rate_per_minute: int | None = None,
        daily_budget: int | None = None,
    ) -> tuple[AccountInfo, str]:
        """Create an account; returns it and its API token (shown this once, stored hashed)."""
        name = _check_name(name)
        rate_per_minute = _check_limit(rate_per_minute, "rate_per_minute")
        daily_budget = _check_limit(daily_budget, "daily_budget")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        row = Account(
            name=name,
            token_hash=hash_token(token),
            token_prefix=token[: len(TOKEN_PREFIX) + 6],
            created_at=datetime.now(UTC),
            revoked_at=None,
            rate_per_minute=rate_per_minute,
            daily_budget=daily_budget,
        )
        try:
            with Session(self.engine) as session, session.begin():
                session.add(row)
                session.flush()
                info = _account_info(row)
        except IntegrityError:
            raise ParameterError(f"an account named {name!r} already exists") from None
        return info, token

    def revoke_account(self, name: str) -> AccountInfo:
        """Revoke an account's token at once; its audit entries stay."""
        with Session(self.engine) as session, session.begin():
            row = session.scalars(sa.select(Account).where(Account.name == name)).one_or_none()
            if row is None:
                raise ParameterError(f"no account named {name!r}")
            if row.revoked_at is None:
                row.revoked_at = datetime.now(UTC)
            session.flush()
            return _account_info(row)

    def list_accounts(self) -> list[AccountInfo]:
        with Session(self.engine) as session:
            rows = session.scalars(sa.select(Account).order_by(Account.id)).all()
            return [_account_info(r) for r in rows]

    def authenticate(self, token: str) -> AccountInfo | None:
        """The active account holding ``token``, or None."""
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        with Session(self.engine) as session:
            row = session.scalars(
                sa.select(Account).where(Account.token_hash == hash_token(token))
            ).one_or_none()
            if row is None or row.revoked_at is not None:
                return None
            return _account_info(row)

    def consume_daily_query(self, account_id: int, budget: int, day: date | None = None) -> bool:
        """Count one query against a daily budget; False (nothing counted) when it is spent."""
        day_text = (day or datetime.now(UTC).date()).isoformat()
        increment = (
            sa.update(DailyUsage)
            .where(
                DailyUsage.account_id == account_id,
                DailyUsage.day == day_text,
                DailyUsage.queries < budget,
            )
            .values(queries=DailyUsage.queries + 1)
        )
        for _ in range(2):
            with self.engine.begin() as conn:
                if conn.execute(increment).rowcount == 1:
                    return True
                exists = conn.execute(
                    sa.select(DailyUsage.queries).where(
                        DailyUsage.account_id == account_id, DailyUsage.day == day_text
                    )
                ).scalar_one_or_none()
                if exists is not None:
                    return False
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        sa.insert(DailyUsage).values(account_id=account_id, day=day_text, queries=1)
                    )
                return True
            except IntegrityError:
                continue  # another request inserted today's row first: increment it
        return False

    # ----------------------------------------------------------------- audit log

    def append_audit(self, record: AuditRecord, analyst: str | None = None) -> int:
        """Store one audit record (committed before returning); its log id."""
        arrived = datetime.fromisoformat(record.time)
        values = {
            "arrived_at": arrived,
            "analysis": record.analysis,
            "query": _json_safe(dict(record.query)),
            "outcome": record.outcome,
            "verdicts": [v.to_dict() for v in record.verdicts],
            "response_digest": record.response_digest,
            "elapsed_seconds": float(record.elapsed_seconds),
            "error": record.error,
            "analyst": analyst,
        }
        with self.engine.begin() as conn:
            result = conn.execute(sa.insert(AuditEntry).values(**values).returning(AuditEntry.id))
            return int(result.scalar_one())

    def audit_entries(
        self,
        *,
        analyst: str | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[AuditEntryInfo]:
        """Stored audit entries (all, or those of one analyst pseudonym)."""
        query = sa.select(AuditEntry)
        if analyst is not None:
            query = query.where(AuditEntry.analyst == analyst)
        query = query.order_by(AuditEntry.id.desc() if newest_first else AuditEntry.id)
        if limit is not None:
            query = query.limit(int(limit))
        with Session(self.engine) as session:
            return [_entry_info(r) for r in session.scalars(query).all()]

    def audit_count(self) -> int:
        with self.engine.connect() as conn:
            count = conn.execute(sa.select(sa.func.count()).select_from(AuditEntry)).scalar()
            return int(count or 0)

    def integrity_check(self) -> str:
        """The database's own consistency check: ``"ok"`` when it passes.

        SQLite: ``PRAGMA integrity_check``. PostgreSQL: every B-tree index of
        the service's tables checked by the ``amcheck`` extension when it can
        be created, otherwise a full read of every table.
        """
        with self.engine.begin() as conn:
            if self.dialect == "sqlite":
                rows = [r[0] for r in conn.execute(sa.text("PRAGMA integrity_check"))]
                return "ok" if rows == ["ok"] else "; ".join(rows)
            for table in Base.metadata.sorted_tables:
                conn.execute(sa.select(sa.func.count()).select_from(table)).scalar()
        try:
            with self.engine.begin() as conn:
                conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS amcheck"))
                indexes = conn.execute(
                    sa.text(
                        "SELECT c.oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                        "JOIN pg_class t ON t.oid = i.indrelid JOIN pg_am a ON a.oid = c.relam "
                        "WHERE a.amname = 'btree' AND t.relname = ANY(:tables)"
                    ),
                    {"tables": [t.name for t in Base.metadata.sorted_tables]},
                ).scalars()
                for oid in list(indexes):
                    conn.execute(sa.text("SELECT bt_index_check(:oid, true)"), {"oid": oid})
        except sa.exc.DBAPIError as exc:
            if "amcheck" in str(exc) and "extension" in str(exc):
                return "ok"  # amcheck not installed: the full reads above passed
            return f"index check failed: {exc.orig}"
        return "ok"


def _json_safe(value: Any) -> Any:
    """Plain JSON values (the engine's canonical query already is; guard against odd input)."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)[:500]
