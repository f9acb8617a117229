"""Alembic environment: uses the engine handed over in config.attributes, or the URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from pbmserv.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine = config.attributes.get("engine") or create_engine(
        config.get_main_option("sqlalchemy.url")
    )
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # Batch mode recreates a table (copy, DROP, rename); with foreign keys on, SQLite's
            # DROP TABLE first deletes every row, and ON DELETE CASCADE would take the
            # children with it (every seat and move of every board).  The pragma only works
            # outside a transaction, so it goes to the driver before anything begins.
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        try:
            context.configure(
                connection=connection,
                target_metadata=target_metadata,
                render_as_batch=sqlite,
                compare_type=True,
            )
            with context.begin_transaction():
                context.run_migrations()
                if sqlite:
                    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise RuntimeError(f"the migration broke foreign keys: {broken[:5]}")
            connection.commit()
        finally:
            if sqlite:
                connection.rollback()
                connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
