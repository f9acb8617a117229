"""The SQL store: models, engine and sessions, migrations."""
