"""refusals: an address's owner refused a code, and the account that gave the address never
mails it again

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25 09:00:00

A reply with words of its own ("I never signed up, STOP") confirmed a forged sign-up; now it
confirms nothing, and ``refuse CODE`` withdraws the code for good.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "refusals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=320), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name="fk_refusals_user_id_users", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_refusals"),
        sa.UniqueConstraint("user_id", "address", name="uq_refusals_user_address"),
    )
    op.create_index("ix_refusals_user_id", "refusals", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_refusals_user_id", table_name="refusals")
    op.drop_table("refusals")
