"""The service's storage: accounts, audit log, secret, migrations; SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import date

import pytest
import sqlalchemy as sa

from sdckit.errors import ParameterError
from sdckit.server.engine import AuditRecord
from sdckit.server.rules import Verdict
from sdckit.server.store import Store, analyst_pseudonym, hash_token, normalize_db_url
from service_helpers import BACKENDS, backend_url


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path):
    yield from backend_url(request.param, tmp_path)


def record(sequence: int, outcome: str = "released") -> AuditRecord:
    return AuditRecord(
        sequence=sequence,
        time="2025-03-04T05:06:07.890+00:00",
        analysis="crosstab",
        query={"universe": "sex = female", "rows": "region", "cols": None},
        outcome=outcome,
        verdicts=(Verdict("universe_gamma", True, "disjoint universe"),),
        response_digest="ab" * 32 if outcome == "released" else None,
        elapsed_seconds=0.01,
    )


def test_accounts_lifecycle(db_url):
    with Store(db_url) as store:
        info, token = store.add_account("ana.lyst@example", rate_per_minute=30, daily_budget=100)
        assert token.startswith("sdck_") and len(token) > 40
        assert info.token_prefix == token[:11] and info.active
        assert store.authenticate(token).name == "ana.lyst@example"
        assert store.authenticate(token + "x") is None
        assert store.authenticate("Bearer " + token) is None
        with pytest.raises(ParameterError, match="already exists"):
            store.add_account("ana.lyst@example")
        with pytest.raises(ParameterError, match="account name"):
            store.add_account("robert'); DROP TABLE accounts;--")
        with pytest.raises(ParameterError, match="daily_budget"):
            store.add_account("zero", daily_budget=0)
        revoked = store.revoke_account("ana.lyst@example")
        assert not revoked.active and store.authenticate(token) is None
        with pytest.raises(ParameterError, match="no account"):
            store.revoke_account("nobody")
        [listed] = store.list_accounts()
        assert listed.name == "ana.lyst@example" and listed.daily_budget == 100
        with store.engine.connect() as conn:
            stored = conn.execute(sa.text("SELECT token_hash FROM accounts")).scalar_one()
        assert stored == hash_token(token) != token


def test_daily_budget_counts_per_day(db_url):
    with Store(db_url) as store:
        info, _ = store.add_account("budget")
        day1, day2 = date(2025, 1, 1), date(2025, 1, 2)
        assert [store.consume_daily_query(info.id, 3, day1) for _ in range(4)] == [
            True,
            True,
            True,
            False,
        ]
        assert store.consume_daily_query(info.id, 3, day2)


def test_audit_entries_are_kept_in_order(db_url):
    with Store(db_url) as store:
        first = store.append_audit(record(1), analyst="p" * 64)
        second = store.append_audit(record(2, "refused"))
        assert second > first
        entries = store.audit_entries()
        assert [e.id for e in entries] == [first, second]
        assert entries[0].query == {"universe": "sex = female", "rows": "region", "cols": None}
        assert entries[0].verdicts[0]["rule"] == "universe_gamma"
        assert entries[0].arrived_at.isoformat().startswith("2025-03-04T05:06:07.890")
        assert entries[1].response_digest is None and entries[1].outcome == "refused"
        assert [e.id for e in store.audit_entries(analyst="p" * 64)] == [first]
        assert [e.id for e in store.audit_entries(limit=1, newest_first=True)] == [second]
        assert store.audit_count() == 2
        assert store.integrity_check() == "ok"


def test_secret_generated_once(db_url):
    with Store(db_url) as store:
        secret = store.server_secret()
        assert len(secret) == 32 and store.server_secret() == secret
    with Store(db_url) as again:
        assert again.server_secret() == secret


def test_upgrade_from_first_revision_keeps_the_log(db_url):
    store = Store(db_url, migrate=False)
    try:
        assert store.schema_revision() is None
        store.migrate("0001")
        assert store.schema_revision() == "0001"
        with store.engine.connect() as conn:
            columns = {c["name"] for c in sa.inspect(conn).get_columns("accounts")}
        assert "daily_budget" not in columns
        kept = [store.append_audit(record(i)) for i in range(1, 4)]
        secret = store.server_secret()
        store.migrate()
        assert store.schema_revision() == "0002"
        assert [e.id for e in store.audit_entries()] == kept
        assert store.server_secret() == secret
        info, _ = store.add_account("after-upgrade", daily_budget=5)
        assert info.daily_budget == 5
    finally:
        store.close()


def test_sqlite_runs_in_wal_mode_with_full_sync(tmp_path):
    with Store(tmp_path / "wal.db") as store:
        with store.engine.connect() as conn:
            assert conn.execute(sa.text("PRAGMA journal_mode")).scalar() == "wal"
            assert conn.execute(sa.text("PRAGMA synchronous")).scalar() == 2  # FULL
    with pytest.raises(ParameterError, match="in-memory"):
        Store("sqlite:///:memory:")


def test_db_urls_and_pseudonyms(tmp_path):
    assert normalize_db_url(None) == "sqlite:///sdckit-server.db"
    assert normalize_db_url("postgresql://u@h:5/d") == "postgresql+psycopg://u@h:5/d"
    assert normalize_db_url("postgres://u@h/d") == "postgresql+psycopg://u@h/d"
    assert normalize_db_url(tmp_path / "x.db") == f"sqlite:///{(tmp_path / 'x.db').resolve()}"
    with pytest.raises(ParameterError, match="scheme"):
        normalize_db_url("mysql://u@h/d")
    a = analyst_pseudonym(b"k" * 32, "alice")
    assert a == analyst_pseudonym(b"k" * 32, "alice") and len(a) == 64
    assert a != analyst_pseudonym(b"j" * 32, "alice") != analyst_pseudonym(b"k" * 32, "bob")
    assert "alice" not in a
