"""tournaments: players and pairings

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21 20:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=True),
        sa.Column("double", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("current_round", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
        sa.UniqueConstraint("name", name=op.f("uq_tournaments_name")),
    )
    op.create_table(
        "tournament_players",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.Column("joined", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_players_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_tournament_players_user_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_players")),
        sa.UniqueConstraint(
            "tournament_id", "user_id", name="uq_tournament_players_tournament_user"
        ),
    )
    with op.batch_alter_table("tournament_players", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_tournament_players_tournament_id"), ["tournament_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_tournament_players_user_id"), ["user_id"], unique=False
        )
    op.create_table(
        "tournament_games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("board_id", sa.Integer(), nullable=True),
        sa.Column("first_id", sa.Integer(), nullable=False),
        sa.Column("second_id", sa.Integer(), nullable=True),
        sa.Column("result", sa.String(length=8), nullable=True),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_games_tournament_id_tournaments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["board_id"], ["boards.id"], name=op.f("fk_tournament_games_board_id_boards")
        ),
        sa.ForeignKeyConstraint(
            ["first_id"], ["users.id"], name=op.f("fk_tournament_games_first_id_users")
        ),
        sa.ForeignKeyConstraint(
            ["second_id"], ["users.id"], name=op.f("fk_tournament_games_second_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_games")),
        sa.UniqueConstraint("board_id", name=op.f("uq_tournament_games_board_id")),
        sa.UniqueConstraint("tournament_id", "round", "number", name="uq_tournament_games_board"),
    )
    with op.batch_alter_table("tournament_games", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_tournament_games_tournament_id"), ["tournament_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("tournament_games", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournament_games_tournament_id"))
    op.drop_table("tournament_games")
    with op.batch_alter_table("tournament_players", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournament_players_user_id"))
        batch_op.drop_index(batch_op.f("ix_tournament_players_tournament_id"))
    op.drop_table("tournament_players")
    op.drop_table("tournaments")
