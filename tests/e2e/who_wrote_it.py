"""What the two who-wrote-it e2e tests (issue 40, tests/e2e/test_claude_who_wrote_it.py and
test_codex_who_wrote_it.py) share: a workspace with two guards on config.py, the person's save
made from the test while the agent's long shell step runs, and the assertions on the Stops.

Side by side in one run: the person saves config.py (by rename, as an editor does) breaking guard
`rate` while the agent's `sleep 3; echo tests done` runs, and the agent's own `sed` in a long step
breaks guard `limit`. The first is `gap` during its step (not sent to the agent, not blocking); the
second is `provable` on its step and blocks until the agent puts it back.

This module holds no tests."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from vacant.core.locations import state_dir

GOOD = "RATE = 0.08\nLIMIT = 10\n"
CONTRACT = ("[[guard]]\nname = \"rate\"\ncommand = \"grep -qx 'RATE = 0.08' config.py\"\n"
            "[[guard]]\nname = \"limit\"\ncommand = \"grep -qx 'LIMIT = 10' config.py\"\n")
FILES = {"config.py": GOOD, "vacant.toml": CONTRACT}
LONG = "sleep 3; echo tests done"  # the person saves while this runs
SED = "sleep 1; sed -i 's/^LIMIT = .*/LIMIT = 0/' config.py"  # the agent's own write, in a slow command
FIX = "sed -i 's/^LIMIT = .*/LIMIT = 10/' config.py"
SAVE_AFTER_S = 1.0  # into the 3 s command


class PersonSaves(threading.Thread):
    """Waits for the step running LONG to be recorded as started, then saves config.py with
    RATE = 0.09 (a temporary file renamed over it). `saved_at`: when (epoch s)."""

    def __init__(self, workspace: Path, timeout_s: float = 90.0) -> None:
        super().__init__(daemon=True)
        self.workspace, self.timeout_s = workspace, timeout_s
        self.saved_at: float | None = None

    def run(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if self._step_began():
                time.sleep(SAVE_AFTER_S)
                path = self.workspace / "config.py"
                temporary = self.workspace / ".config.py.swp"
                temporary.write_text(path.read_text().replace("RATE = 0.08", "RATE = 0.09"))
                os.replace(temporary, path)
                self.saved_at = time.time()
                return
            time.sleep(0.05)

    def _step_began(self) -> bool:
        for log in (state_dir(self.workspace) / "runs").glob("*/events.jsonl"):
            try:
                text = log.read_text()
            except OSError:
                continue
            if any('"step_start"' in line and "sleep 3" in line for line in text.splitlines()):
                return True
        return False


def shell_steps(log: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """step_start and step_end of the LONG and SED steps, by which."""
    starts = {r["step"]: r for r in log if r["type"] == "step_start" and r.get("kind") == "shell"}
    ends = {r["step"]: r for r in log if r["type"] == "step_end"}
    found = {}
    for number, start in starts.items():
        command = json.dumps(start.get("intent") or start.get("input"))
        for name, text in (("long", "sleep 3"), ("sed", "LIMIT = 0")):
            if text in command:
                found[name] = {"start": start, "end": ends.get(number)}
    return found


def assert_side_by_side(reports: list[dict[str, Any]], log: list[dict[str, Any]], saved_at: float | None,
                        told: list[str]) -> None:
    """The person's save during LONG: gap during that step, never told to the agent, never blocking;
    the agent's sed: provable on its step, told and blocking, until the fix; the last Stop lets it stop."""
    steps = shell_steps(log)
    long, sed = steps["long"], steps["sed"]
    assert saved_at is not None and long["start"]["ts"] < saved_at < long["end"]["ts"], (saved_at, long)
    main = [report for report in reports if report["agent_id"] is None]
    first, last = main[0], main[-1]
    by_name = {item["name"]: item for item in first["findings"]}
    rate, limit = by_name["rate"], by_name["limit"]
    assert (rate["level"], rate["actor"], rate["blocking"]) == ("gap", None, False), rate
    assert rate["evidence"]["during_step"] == long["start"]["step"], rate
    assert rate["evidence"]["authorship"]["verdict"] == "not_own", rate
    assert rate["evidence"]["written_by"]["who"] == "unknown", rate
    assert (limit["level"], limit["step"], limit["blocking"]) == ("provable", sed["start"]["step"], True), limit
    assert limit["evidence"]["authorship"]["verdict"] == "own", limit
    assert first["decision"] == "block"
    assert told and "guard limit says" in told[0] and f"at step {sed['start']['step']}" in told[0], told
    assert not any("guard rate" in text or "RATE" in text for text in told), told  # never the agent's to fix
    assert last["decision"] == "stop" and [item["name"] for item in last["findings"]] == ["rate"], last
    assert last["findings"][0]["level"] == "gap"
