"""boards: the seats a draw was drawn among (the players still in at the end; those already out
keep their loss)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 09:00:00

Boards finished before keep NULL: a draw stored then was a tie of every seat and was rated so
(``Board.drawn_seats`` reads it that way), and a four-player Ploy draw among some of the seats
was stored and rated as their shared win; their results stay as they were rated.  The downgrade drops the seats: a draw among some of
the seats then reads as a tie of every seat.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # plain ADD COLUMN, never a batch copy of ``boards`` (see 0008)
    op.add_column("boards", sa.Column("drawn", sa.JSON(), nullable=True))


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":  # SQLite >= 3.35: no copy of the table
        op.execute("ALTER TABLE boards DROP COLUMN drawn")
    else:
        op.drop_column("boards", "drawn")
