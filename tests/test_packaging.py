"""The wheel carries the templates and the migrations, so an installed server works anywhere."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_carries_templates_and_migrations(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("pbmserv-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "pbmserv/" + str(p.relative_to(ROOT))
        for folder in ("templates", "migrations")
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert expected <= names, sorted(expected - names)
    assert "pbmserv/games/base.py" in names
