"""The real `claude` binary with the hooks `vacant init --no-wall` installs: http hooks to the
workspace's daemon (walled, Claude's sandbox keeps them from it: every event then goes through the
command hook, tests/e2e/test_claude_wall.py), the fail-closed PreToolUse through the lean client.
The daemon is started by the session start; killed in the middle of a run, the run goes on and an
ACT call is still held."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from harness import MARK, text
from vacant_run import make_workspace, vacant

from vacant.core.locations import state_dir
from vacant.daemon import lifecycle
from vacant.hook.paths import info

pytestmark = pytest.mark.e2e


def wait_running(root: Path, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lifecycle.running(root) and (info(root) or {}).get("pid"):
            try:
                return lifecycle.ask_status(root)
            except OSError:
                pass
        time.sleep(0.05)
    raise AssertionError("no daemon came up")


def events(ws: Path) -> list[dict]:
    out = vacant(["log", "--json"], ws).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_a_run_is_recorded_through_the_daemon_and_http_hooks(tmp_path):
    ws, home = make_workspace(tmp_path, {"notes.txt": "notes\n"})
    settings = json.loads((ws / ".claude" / "settings.local.json").read_text())
    assert settings["hooks"]["PostToolUse"][0]["hooks"][0]["type"] == "http"
    vacant(["daemon", "start"], ws)  # as the session-start hook would (detached); here: known pid
    turns = [turn(tool("Write", file_path=str(ws / "a.txt"), content="A\n")),
             turn(tool("Bash", command="mkdir many && for i in $(seq 1 1000); do echo $i > many/f$i; done",
                       description="burst")),
             turn(tool("Read", file_path=str(ws / "notes.txt"))),
             turn(text("done"))]
    with FakeUpstream({"turns": turns}, tmp_path / "up") as up:
        proc = run_claude_p(ws, home, up, "go")
    assert proc.returncode == 0, proc.stderr
    status = wait_running(ws)
    assert status["requests"] >= 8  # Pre (client) and Post (http) of three tools, Stop, session start
    records = events(ws)
    burst = [r for r in records if r["type"] == "change" and any(k.startswith("many/") for k in r["added"])]
    assert len(burst) == 1 and len([k for k in burst[0]["added"] if k.startswith("many/f")]) == 1000
    steps = {r["step"]: r["tool"] for r in records if r["type"] == "step_start"}
    assert sorted(steps.values()) == ["Bash", "Read", "Write"]
    ends = [r for r in records if r["type"] == "step_end"]
    assert all(r["outcome"] == "ok" for r in ends), ends  # every Post reached the daemon over http
    assert any(r["type"] == "read" and r["ref"] == "notes.txt" for r in records)
    errors_log = state_dir(ws) / "errors.log"
    assert not errors_log.exists() or "refused" not in errors_log.read_text()
    lifecycle.stop(ws)


def test_killing_the_daemon_mid_run_the_gate_still_holds(tmp_path):
    ws, home = make_workspace(tmp_path, {"arms/mark.sh": MARK})
    vacant(["daemon", "start"], ws)
    pid = wait_running(ws)["pid"]
    turns = [turn(tool("Bash", command=f"kill -9 {pid}; echo killed > killed.txt", description="kill it")),
             turn(tool("Bash", command="sh arms/mark.sh", description="mark")),
             turn(tool("Write", file_path=str(ws / "after.txt"), content="after\n")),
             turn(text("done"))]
    with FakeUpstream({"turns": turns}, tmp_path / "up") as up:
        proc = run_claude_p(ws, home, up, "go")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert not (ws / "marker.txt").exists()  # the ACT arm never ran
    assert [d["tool_input"]["command"] for d in result["permission_denials"]] == ["sh arms/mark.sh"]
    assert (ws / "after.txt").exists() and (ws / "killed.txt").exists()  # the run went on
    records = events(ws)
    held = [r for r in records if r["type"] == "step_end" and r["outcome"] == "not-run"]
    assert len(held) == 1
    changes = {k for r in records if r["type"] == "change" for k in r["added"]}
    assert {"killed.txt", "after.txt"} <= changes  # nothing lost: found by scans and the Stop scan
    # the killing step's PostToolUse went to the dead daemon: Stop found the step in the transcript
    kill_step = next(r["step"] for r in records if r["type"] == "step_start" and "kill -9" in str(r["input"]))
    reconciled = [r for r in records if r["type"] == "step_end" and r.get("reconciled") == "transcript"]
    assert kill_step in [r["step"] for r in reconciled]  # (a later Post may miss the restarting daemon too)
    coverage = json.loads(vacant(["report", "--json"], ws).stdout)["read_coverage"]
    assert coverage["state"] == "partial" and f"{len(reconciled)} step(s) reached no hook" in coverage["why"]
    if lifecycle.running(ws):  # the first client that found none started a new one
        assert wait_running(ws)["pid"] != pid
        lifecycle.stop(ws)
    assert os.path.exists(state_dir(ws) / "runs")
