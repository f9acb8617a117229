"""outbox: the text of a sent mail is dropped (how many bytes it had is kept), and the code in
the subject of a sent code mail masked

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 09:00:00

The data migration does the same to the mails sent before: their text and the codes in their
subjects stayed in clear for ever, so a copy of the database let anyone confirm an address or
reset a password with a code still good.  The downgrade cannot bring the texts back.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

MASKED = "confirm ********"  # pbmserv.domain.confirmation.subject_at_rest of "confirm CODE"


def upgrade() -> None:
    op.add_column("outbox", sa.Column("dropped_bytes", sa.Integer(), nullable=True))
    size = (  # the text's bytes in UTF-8 (SQLite's length() of text counts characters)
        "octet_length(body)"
        if op.get_bind().dialect.name == "postgresql"
        else "length(CAST(body AS BLOB))"
    )
    op.execute(
        f"UPDATE outbox SET dropped_bytes = {size}, body = '', "
        f"subject = CASE WHEN subject LIKE 'confirm %' THEN '{MASKED}' ELSE subject END "
        "WHERE status = 'sent'"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":  # SQLite >= 3.35: no copy of the table
        op.execute("ALTER TABLE outbox DROP COLUMN dropped_bytes")
    else:
        op.drop_column("outbox", "dropped_bytes")
