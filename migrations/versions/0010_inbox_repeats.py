"""inbox: a repeated delivery is one from the same senders, and is counted

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 09:00:00

A mail's ``dedup_key`` was ``mid:<Message-ID>`` alone, so a mail from anyone with a guessed or
leaked Message-ID made its owner's later mail a "repeat", dropped without a trace.  From now on
the key is ``from:<hash of envelope sender and From> mid:<Message-ID>``
(:func:`pbmserv.mail.inbox.dedup_key`), and ``repeats`` counts the deliveries a row stood for.

The upgrade leaves the keys of the mails stored before it as they are: their From header was
not kept as it came (a processed mail keeps a decoded copy), so their new key cannot be
computed.  The inbox still takes a later mail with the Message-ID of such a row for a repeat
when it comes from the row's envelope sender (``LEGACY_PREFIX`` in ``pbmserv.mail.inbox``).
The downgrade gives each row of the new form the old key back, unless an older row holds it
already (then the new form stays: the old code never makes such a key, and the older row
catches the repeats, as it did).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("repeats", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.text("SELECT id, dedup_key FROM inbox WHERE dedup_key LIKE 'from:%' ORDER BY id")
    ).all()
    taken = set(
        connection.execute(
            sa.text("SELECT dedup_key FROM inbox WHERE dedup_key LIKE 'mid:%'")
        ).scalars()
    )
    for row_id, key in rows:
        old = "mid:" + key.partition(" mid:")[2]
        if old not in taken:
            taken.add(old)
            connection.execute(
                sa.text("UPDATE inbox SET dedup_key = :key WHERE id = :id"),
                {"key": old, "id": row_id},
            )
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("repeats")
