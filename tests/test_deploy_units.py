"""The systemd units of deploy/: started again when trying again can help, never in a loop
over a configuration or a store that needs the operator."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pbmserv.cli.failures import CONFIG, DATAERR

ROOT = Path(__file__).resolve().parent.parent
UNITS = sorted((ROOT / "deploy").glob("*.service"))


def settings_of(unit: Path) -> dict[str, list[str]]:
    """Every ``Key=value`` of the unit file, by key (a key may come more than once)."""
    found: dict[str, list[str]] = {}
    for line in unit.read_text().splitlines():
        key, equals, value = line.partition("=")
        if equals and not line.startswith(("#", ";", "[")):
            found.setdefault(key.strip(), []).append(value.strip())
    return found


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_a_unit_is_not_restarted_over_what_the_operator_must_fix(unit):
    """Restart=on-failure started a server that exits 78 (a wrong setting, a database a newer
    pbmserv migrated) or 65 (a damaged store) again every 5 seconds, for ever (5 s apart, the
    starts never reach systemd's limit of 5 in 10 s): the unit never showed as failed, and the
    journal filled with the same line.  ExecStartPre=pbmserv db upgrade failed first with
    the same status, and RestartPreventExitStatus does not apply to ExecStartPre."""
    found = settings_of(unit)
    assert found["Restart"] == ["on-failure"]
    prevented = " ".join(found.get("RestartPreventExitStatus", [])).split()
    assert {str(CONFIG), str(DATAERR)} <= set(prevented), unit.name
    assert "ExecStartPre" not in found, unit.name


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_a_unit_that_waits_for_the_network_pulls_it_in(unit):
    """After=network-online.target orders nothing unless the target is pulled in: a worker on
    another host started before its network, and failed to reach the database."""
    found = settings_of(unit)
    if "network-online.target" in " ".join(found.get("After", [])):
        assert "network-online.target" in " ".join(found.get("Wants", [])), unit.name


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_systemd_reads_every_line_of_the_unit(unit, tmp_path):
    """``systemd-analyze verify`` on a copy whose program exists here (the unit names
    /opt/pbmserv, installed on the mail host only)."""
    pbmserv = shutil.which("pbmserv") or str(Path(__file__).parent.parent / ".venv/bin/pbmserv")
    copy = tmp_path / unit.name.replace("@.", "@1.")
    copy.write_text(unit.read_text().replace("/opt/pbmserv/bin/pbmserv", pbmserv))
    result = subprocess.run(
        ["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60
    )
    problems = [
        line for line in result.stderr.splitlines() if str(copy) in line or "Failed" in line
    ]
    assert result.returncode == 0 and not problems, result.stderr


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_systemd_lets_a_stopping_server_finish(unit):
    """TimeoutStopSec=30 killed a server that was still finishing its workers' last batches
    and a mail being sent (it waited up to 30 s for each worker and 30 s for each thread): a
    mail cut mid-send goes again once its lease ends, twice.  The server's stop now waits
    STOP_SECONDS_AT_MOST in all, and the unit lets it."""
    from pbmserv.cli.server import STOP_SECONDS_AT_MOST

    timeout = settings_of(unit).get("TimeoutStopSec", ["90"])[-1]  # (systemd's default: 90 s)
    assert float(timeout) >= STOP_SECONDS_AT_MOST + 15, unit.name
    assert settings_of(unit).get("KillSignal", ["SIGTERM"])[-1] == "SIGTERM", unit.name
