"""`vacant daemon start|stop|status [--json]`, and the daemon in init, doctor and uninstall."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent / "vacant"


def vacant(args: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(cwd.parent / "home"), "VACANT_HOME": str(cwd.parent / "data")}
    proc = subprocess.run([str(BIN), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr + proc.stdout
    return proc


@pytest.mark.slow
def test_start_status_doctor_uninstall(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    out = vacant(["init", "--platform", "claude"], ws).stdout
    assert "watch daemon" in out
    settings = ws / ".claude" / "settings.local.json"
    assert oct(settings.stat().st_mode & 0o777) == "0o600"  # it holds the daemon's secret
    assert json.loads(vacant(["daemon", "status", "--json"], ws).stdout)["running"] is False
    started = json.loads(vacant(["daemon", "start", "--json"], ws).stdout)
    assert started["running"] and started["pid"] and started["watches"] >= 1
    assert started["max_user_watches"]
    again = json.loads(vacant(["daemon", "start", "--json"], ws).stdout)
    assert again["pid"] == started["pid"]  # one instance
    doctor = vacant(["doctor", "--platform", "claude"], ws, check=False).stdout
    assert f"pid {started['pid']}" in doctor and "max_user_watches" in doctor and "last rescan" in doctor
    out = vacant(["uninstall", "--platform", "claude"], ws).stdout
    assert "stopped the workspace's watch daemon" in out
    assert json.loads(vacant(["daemon", "status", "--json"], ws).stdout)["running"] is False
    assert "X-Vacant-Token" not in (settings.read_text() if settings.exists() else "")
    assert json.loads(vacant(["daemon", "stop", "--json"], ws).stdout) == {"stopped": False}
