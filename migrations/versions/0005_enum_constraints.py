"""closed value sets: CHECK constraints on every enum column

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 06:00:00

Board, inbox and outbox states, subscription and proposal kinds, tournament formats, states and
results are Python enums (pbmserv.store.models); the database now refuses any other value.
Batch mode, so that SQLite (which cannot add a constraint to a table) recreates the tables.
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# table -> [(constraint name, column, values)]; names follow the metadata's naming convention
CHECKS: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "boards": [("board_status", "status", ("active", "finished", "removed"))],
    "inbox": [
        ("inbox_status", "status", ("new", "processing", "done", "ignored", "shunted")),
    ],
    "outbox": [("outbox_status", "status", ("pending", "sending", "sent", "failed"))],
    "subscriptions": [("subscription_kind", "kind", ("all", "result"))],
    "proposals": [("proposal_kind", "kind", ("draw", "undo"))],
    "tournaments": [
        ("tournament_format", "format", ("roundrobin", "swiss", "knockout")),
        ("tournament_status", "status", ("open", "running", "finished")),
    ],
    "tournament_games": [("game_result", "result", ("1-0", "0-1", "1/2", "bye"))],
}


def _name(table: str, name: str) -> str:
    return op.f(f"ck_{table}_{name}")


def upgrade() -> None:
    for table, checks in CHECKS.items():
        with op.batch_alter_table(table) as batch:
            for name, column, values in checks:
                listed = ", ".join(f"'{v}'" for v in values)
                batch.create_check_constraint(_name(table, name), f"{column} IN ({listed})")


def downgrade() -> None:
    for table, checks in CHECKS.items():
        with op.batch_alter_table(table) as batch:
            for name, _column, _values in checks:
                batch.drop_constraint(_name(table, name), type_="check")
