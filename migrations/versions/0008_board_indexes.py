"""who is to move and when the clock is due, per board, indexed (robot turns and the clock tick
look only at their boards instead of replaying every board)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 08:30:00

The data migration fills ``to_move_id`` of every active board from its position (the cached one
when it is current, else a replay of the record). ``due_at`` starts empty: the first clock tick
computes it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

FORFEIT = "Forfeit"  # pbmserv.domain.boards.FORFEIT: replayed as a resignation


def upgrade() -> None:
    # plain ADD COLUMN, never a batch copy of ``boards``: on SQLite with foreign keys on,
    # dropping the old table would cascade to the seats, moves and comments
    op.add_column("boards", sa.Column("to_move_id", sa.Integer(), nullable=True))
    op.add_column("boards", sa.Column("due_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(op.f("ix_boards_to_move_id"), "boards", ["to_move_id"], unique=False)
    op.create_index(op.f("ix_boards_due_at"), "boards", ["due_at"], unique=False)
    op.create_table(
        "clock_basis",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("nag_days", sa.Float(), nullable=False),
        sa.Column("forfeit_days", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clock_basis")),
    )
    _fill_to_move()


def _fill_to_move() -> None:
    from pbmserv.games import get_game  # lazy: the engines, only for this data migration
    from pbmserv.games.base import RESIGN  # lazy: as above

    conn = op.get_bind()
    boards = conn.execute(
        sa.text(
            "SELECT id, game, params, position_cache, cache_ply FROM boards WHERE status = 'active'"
        )
    ).fetchall()
    for board_id, game_name, params, cache, cache_ply in boards:
        seats = [
            row[0]
            for row in conn.execute(
                sa.text('SELECT user_id FROM seats WHERE board_id = :b ORDER BY "index"'),
                {"b": board_id},
            )
        ]
        moves = [
            row[0]
            for row in conn.execute(
                sa.text("SELECT text FROM moves WHERE board_id = :b ORDER BY ply"),
                {"b": board_id},
            )
        ]
        game = get_game(game_name)
        if cache and cache_ply == len(moves):
            position = game.position_class.deserialize(cache)
        else:
            if isinstance(params, str):
                import json  # lazy: SQLite returns JSON columns as text in plain SQL

                params = json.loads(params)
            position = game.new(len(seats), params)
            for text in moves:
                position.play(RESIGN if text == FORFEIT else position.parse_move(text))
        seat = position.to_move
        mover = None if seat is None else seats[position.controller(seat)]
        conn.execute(
            sa.text("UPDATE boards SET to_move_id = :u WHERE id = :b"),
            {"u": mover, "b": board_id},
        )


def downgrade() -> None:
    op.drop_table("clock_basis")
    op.drop_index(op.f("ix_boards_due_at"), table_name="boards")
    op.drop_index(op.f("ix_boards_to_move_id"), table_name="boards")
    for column in ("due_at", "to_move_id"):
        if op.get_bind().dialect.name == "sqlite":  # SQLite >= 3.35: no copy of the table
            op.execute(f"ALTER TABLE boards DROP COLUMN {column}")
        else:
            op.drop_column("boards", column)
