"""Where the templates and migrations live: inside the installed wheel, or beside the checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"pbmserv cannot find its {name}/ directory")


def templates_dir() -> Path:
    return _find("templates")


def migrations_dir() -> Path:
    return _find("migrations")
