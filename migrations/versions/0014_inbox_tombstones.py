"""inbox: a mail's Date, and the keys of deleted mails kept against replays

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28 15:00:00

A processed mail was deleted after ``inbox_retention_days`` with its key, so the same mail sent
again later (captured, or re-delivered by a broken relay) ran again.  ``inbox.dated`` keeps the
mail's Date header as read when it was stored; a mail dated more than ``stale_mail_days``
before it came is not run.  ``inbox_tombstones`` keeps the key of a deleted mail for as long
as a replay of it would still run: while its Date is within ``stale_mail_days``, for ever when
it had none.  Rows stored before the upgrade have no ``dated``: their keys are kept for ever.

The downgrade drops both: the old code knows neither (a replay of a deleted mail would then
run again, as it did).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbox") as batch:
        batch.add_column(sa.Column("dated", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "inbox_tombstones",
        sa.Column("dedup_key", sa.String(length=998), nullable=False),
        sa.Column("dated", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("dedup_key", name="pk_inbox_tombstones"),
    )
    op.create_index("ix_inbox_tombstones_dated", "inbox_tombstones", ["dated"])


def downgrade() -> None:
    op.drop_index("ix_inbox_tombstones_dated", table_name="inbox_tombstones")
    op.drop_table("inbox_tombstones")
    with op.batch_alter_table("inbox") as batch:
        batch.drop_column("dated")
