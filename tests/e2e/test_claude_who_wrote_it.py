"""Who wrote it on the real `claude` binary (issue 40): the person's save during the agent's long
shell step and the agent's own `sed` in a long step, side by side in one run
(tests/e2e/who_wrote_it.py). The Stop re-runs each shell step behind the wall: the save is `gap`
during its step, never told to the agent; the sed is `provable` on its step and blocks until the
agent puts it back."""

from __future__ import annotations

import json
import os

import pytest
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from vacant_run import make_workspace, vacant
from who_wrote_it import FILES, FIX, LONG, SED, PersonSaves, assert_side_by_side

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e


def test_a_persons_save_and_the_agents_sed_side_by_side_on_claude(tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
    ws, home = make_workspace(tmp_path, FILES)
    env = {"HOME": str(home), "VACANT_HOME": str(tmp_path / "vacant-data")}
    turns = [
        turn(tool("Bash", command=LONG)),  # the person saves config.py while it runs
        turn(tool("Bash", command=SED)),  # the agent's own write breaks guard `limit`
        turn({"type": "text", "text": "Done."}),  # Stop 1: blocks on `limit` only
        turn(tool("Bash", command=FIX), match="guard limit says"),
        turn({"type": "text", "text": "Fixed."}),  # Stop 2: the person's change is left to the person
    ]
    person = PersonSaves(ws)
    person.start()
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(ws, home, upstream, "run the tests and set the limit")
        requests = upstream.requests()
    person.join(timeout=5)
    assert proc.returncode == 0, proc.stderr
    environment = dict(os.environ, **env)
    log = [json.loads(line) for line in vacant(["log", "--json"], ws, env=environment).stdout.splitlines()]
    stops = json.loads(vacant(["report", "--json"], ws, env=environment).stdout)["stop"]
    reports = [json.loads(vacant(["report", "--json", "--stop", str(n)], ws, env=environment).stdout)
               for n in range(1, stops + 1)]
    told = [text for text in (json.dumps(r.get("body")) for r in requests) if "must be fixed before you stop" in text]
    assert_side_by_side(reports, log, person.saved_at, told)
    markdown = vacant(["report", "--format", "md"], ws, env=environment).stdout
    assert "nobody; written by unknown" in markdown, markdown
    errors = state_dir(ws) / "errors.log"
    assert not errors.exists(), errors.read_text()
