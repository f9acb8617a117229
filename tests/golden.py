"""Golden files: a test compares what it renders with a file kept under ``tests/golden``.

A missing golden file is a failure, never silently written.  After a deliberate change of a
layout, regenerate them with ``PBMSERV_UPDATE_GOLDEN=1 make test`` (the one variable for it) and
review the diff before committing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"
UPDATE_VARIABLE = "PBMSERV_UPDATE_GOLDEN"


def assert_golden(name: str, text: str, what: str = "the output") -> None:
    """Fail unless ``text`` equals the golden file ``name`` (rewrite it when asked to)."""
    path = GOLDEN / name
    if os.environ.get(UPDATE_VARIABLE):
        path.write_text(text)
    if not path.exists():
        pytest.fail(
            f"golden file {path} is missing: create it with {UPDATE_VARIABLE}=1 and review it"
        )
    assert text == path.read_text(), (
        f"{what} changed: compare with {path} ({UPDATE_VARIABLE}=1 rewrites it after a deliberate change)"
    )
