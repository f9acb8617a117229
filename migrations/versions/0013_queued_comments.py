"""seats: the comment written with a queued move or a queued resignation, mailed with it

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 09:00:00

A comment sent with ``queue`` or with a resignation out of turn was dropped: it now waits on
the seat with what it came with, and goes out in the board mail when that is played.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("queued_move_comment", sa.Text(), nullable=True))
        batch.add_column(sa.Column("queued_resign_comment", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("queued_resign_comment")
        batch.drop_column("queued_move_comment")
