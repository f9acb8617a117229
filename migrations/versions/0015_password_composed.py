"""users: whether the password hash was made of the password composed (NFC)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28 15:30:00

A hash made before passwords were composed may be of the password as typed, so a password
typed decomposed was checked twice (composed, then as typed): a wrong one cost two argon2
verifications.  A hash made composed is marked, and is checked once.  The hashes already
stored are not marked (which form each holds is unknown): each is checked as before until its
owner's next login marks it (or stores it again, composed).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("password_composed", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("password_composed")
