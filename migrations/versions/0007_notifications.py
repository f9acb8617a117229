"""notifications: a mail mode per user and per board (every move, daily digest, once)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 06:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("notify", sa.String(length=8), nullable=False, server_default="every")
        )
        batch.add_column(sa.Column("digest_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("notify", sa.String(length=8), nullable=True))
        batch.add_column(sa.Column("mailed_ply", sa.Integer(), nullable=True))
        batch.add_column(
            sa.Column("digest_pending", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("digest_pending")
        batch.drop_column("mailed_ply")
        batch.drop_column("notify")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("digest_at")
        batch.drop_column("notify")
