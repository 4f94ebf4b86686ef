"""Accounts with hashed API tokens, the audit log and the server secret.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("token_prefix", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
        sa.Column("arrived_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("analysis", sa.String(32), nullable=False),
        sa.Column("query", sa.JSON, nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("verdicts", sa.JSON, nullable=False),
        sa.Column("response_digest", sa.String(64), nullable=True),
        sa.Column("elapsed_seconds", sa.Float, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("analyst", sa.String(64), nullable=True),
    )
    op.create_index("ix_audit_log_analyst", "audit_log", ["analyst"])
    op.create_table(
        "server_state",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("server_state")
    op.drop_index("ix_audit_log_analyst", table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_table("accounts")
