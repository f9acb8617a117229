"""inbox: the Date of the mails stored before 0014, read from their bytes

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28 18:30:00

A mail without a Date now runs nothing (:mod:`pbmserv.mail.replay`), and the key of a mail
without one is no longer kept once it is deleted.  A mail stored before 0014 had no ``dated``
kept, though it may well have a Date: it would be refused if it still waits, and its key
dropped with it.  Its Date is read from its bytes here, as the inbox reads it when it stores a
mail (the copy kept of a processed mail masks passwords in its text, not its header).  The
keys already kept with no Date are left to the clean-up, which keeps them ``stale_mail_days``
more (:mod:`pbmserv.domain.housekeeping`).

The downgrade changes nothing: the dates read are true, and older code reads them as its own.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from pbmserv.mail.replay import dated_of
from pbmserv.store.models import UTCDateTime

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

inbox = sa.table(
    "inbox",
    sa.column("id", sa.Integer),
    sa.column("raw", sa.LargeBinary),
    sa.column("dated", UTCDateTime()),
)


def upgrade() -> None:
    connection = op.get_bind()
    last = 0
    while True:  # a few hundred mails at a time: a raw mail may be large
        rows = connection.execute(
            sa.select(inbox.c.id, inbox.c.raw)
            .where(inbox.c.dated.is_(None), inbox.c.id > last)
            .order_by(inbox.c.id)
            .limit(200)
        ).all()
        if not rows:
            return
        dates = [{"row": row.id, "dated": dated_of(row.raw)} for row in rows if row.raw]
        dated = [item for item in dates if item["dated"] is not None]
        if dated:
            connection.execute(inbox.update().where(inbox.c.id == sa.bindparam("row")), dated)
        last = rows[-1].id


def downgrade() -> None:
    pass
