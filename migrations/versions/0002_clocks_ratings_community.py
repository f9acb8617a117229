"""clocks, ratings and the community commands

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 19:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("game_limit", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("seeking", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("vacation_until", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("vacation_year", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column("vacation_used", sa.Float(), nullable=False, server_default="0")
        )
    with op.batch_alter_table("boards", schema=None) as batch_op:
        batch_op.add_column(sa.Column("nagged_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("rating_changes", sa.JSON(), nullable=True))
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("submitted_move", sa.String(length=80), nullable=True))
        batch_op.add_column(sa.Column("time_used", sa.Float(), nullable=False, server_default="0"))
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("board_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(
            ["board_id"],
            ["boards.id"],
            name=op.f("fk_subscriptions_board_id_boards"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_subscriptions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subscriptions")),
        sa.UniqueConstraint("board_id", "user_id", name="uq_subscriptions_board_user"),
    )
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_subscriptions_board_id"), ["board_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_subscriptions_user_id"), ["user_id"], unique=False)
    op.create_table(
        "ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("lost", sa.Integer(), nullable=False),
        sa.Column("tied", sa.Integer(), nullable=False),
        sa.Column("last_game_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_ratings_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ratings")),
        sa.UniqueConstraint("user_id", "game", name="uq_ratings_user_game"),
    )
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ratings_game"), ["game"], unique=False)
        batch_op.create_index(batch_op.f("ix_ratings_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ratings_user_id"))
        batch_op.drop_index(batch_op.f("ix_ratings_game"))
    op.drop_table("ratings")
    with op.batch_alter_table("subscriptions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_subscriptions_user_id"))
        batch_op.drop_index(batch_op.f("ix_subscriptions_board_id"))
    op.drop_table("subscriptions")
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_column("time_used")
        batch_op.drop_column("submitted_move")
    with op.batch_alter_table("boards", schema=None) as batch_op:
        batch_op.drop_column("rating_changes")
        batch_op.drop_column("nagged_at")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("vacation_used")
        batch_op.drop_column("vacation_year")
        batch_op.drop_column("vacation_until")
        batch_op.drop_column("seeking")
        batch_op.drop_column("game_limit")
