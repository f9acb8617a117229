"""abuse: confirmed addresses, one-use tokens, outbox leases

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 06:00:00

Addresses that exist already were set by an operator or used for a long time: they count as
confirmed.  Tokens are stored as SHA-256 hashes only.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("addresses") as batch:
        batch.add_column(
            sa.Column("confirmed", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("claimed_by", sa.String(length=64), nullable=True))
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=True),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_tokens_user_id_users", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_tokens"),
        sa.UniqueConstraint("token_hash", name="uq_tokens_token_hash"),
    )
    op.create_index("ix_tokens_user_id", "tokens", ["user_id"])
    op.create_index("ix_tokens_expires", "tokens", ["expires"])


def downgrade() -> None:
    op.drop_index("ix_tokens_expires", table_name="tokens")
    op.drop_index("ix_tokens_user_id", table_name="tokens")
    op.drop_table("tokens")
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("claimed_by")
        batch.drop_column("claimed_at")
    with op.batch_alter_table("addresses") as batch:
        batch.drop_column("confirmed")
