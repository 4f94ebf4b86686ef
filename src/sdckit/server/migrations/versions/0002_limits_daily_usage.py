"""Per-account rate limits and daily query budgets.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("accounts", sa.Column("rate_per_minute", sa.Integer, nullable=True))
    op.add_column("accounts", sa.Column("daily_budget", sa.Integer, nullable=True))
    op.create_table(
        "daily_usage",
        sa.Column(
            "account_id",
            sa.Integer,
            sa.ForeignKey("accounts.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("queries", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("daily_usage")
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("daily_budget")
        batch.drop_column("rate_per_minute")
