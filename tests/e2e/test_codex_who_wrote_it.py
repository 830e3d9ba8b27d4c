"""Who wrote it on the real `codex` binary (issue 40): the person's save during the agent's long
`exec_command` and the agent's own `sed` in a long one, side by side in one run
(tests/e2e/who_wrote_it.py). The save is `gap` during its step, never in the `<hook_prompt>` Codex
hands the model; the sed is `provable` on its step and blocks until the agent puts it back."""

from __future__ import annotations

import json

import pytest
from codex_harness import FakeResponses, codex_env, make_codex_workspace, run_codex_exec, shell, turn
from harness import text
from vacant_run import vacant
from who_wrote_it import FILES, FIX, LONG, SED, PersonSaves, assert_side_by_side

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e


def test_a_persons_save_and_the_agents_sed_side_by_side_on_codex(scratch, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(scratch.vacant_home))
    ws = make_codex_workspace(scratch, FILES)
    turns = [
        turn(shell(LONG, "call_long")),  # the person saves config.py while it runs
        turn(shell(SED, "call_sed")),  # the agent's own write breaks guard `limit`
        turn(text("Done.")),  # Stop 1: blocks on `limit` only
        turn(shell(FIX, "call_fix"), match="guard limit says"),
        turn(text("Fixed.")),  # Stop 2: the person's change is left to the person
    ]
    person = PersonSaves(ws)
    person.start()
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        proc = run_codex_exec(ws, scratch.codex_home, upstream, "run the tests and set the limit", home=scratch.home,
                              vacant_home=scratch.vacant_home, timeout=180)
        requests = upstream.requests()
    person.join(timeout=5)
    assert proc.returncode == 0, proc.stderr
    env = codex_env(scratch.home, scratch.codex_home, scratch.vacant_home)
    log = [json.loads(line) for line in vacant(["log", "--json"], ws, env=env).stdout.splitlines() if line.strip()]
    stops = json.loads(vacant(["report", "--json"], ws, env=env).stdout)["stop"]
    reports = [json.loads(vacant(["report", "--json", "--stop", str(n)], ws, env=env).stdout)
               for n in range(1, stops + 1)]
    told = [body for body in (json.dumps(r.get("body")) for r in requests) if "must be fixed before you stop" in body]
    assert_side_by_side(reports, log, person.saved_at, told)
    errors = state_dir(ws) / "errors.log"
    assert not errors.exists(), errors.read_text()
