"""A guard on the real `claude` binary: the project's own unittest suite, added with
`vacant contract add --keep`, broken by an Edit, blocks the Stop with a finding on that step; the
agent fixes it, and then a vacant.toml broken by someone else blocks the next Stop naming the file
and the line, until the round budget is spent and the person is told. One agent run."""

from __future__ import annotations

import json
import os
import sys

import pytest
from claude_harness import FakeUpstream, run_claude_p, tool, turn
from vacant_run import make_workspace, vacant

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e

CALC = "def add(a, b):\n    return a + b\n"
SUITE = ("import unittest\n\nfrom calc import add\n\n\nclass AddTests(unittest.TestCase):\n"
         "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
         "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n")
FILES = {"calc.py": CALC, "tests/__init__.py": "", "tests/test_calc.py": SUITE}


def test_a_guard_broken_by_an_edit_and_a_contract_that_does_not_read(tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "vacant-data"))
    ws, home = make_workspace(tmp_path, FILES)
    env = dict(os.environ, HOME=str(home))
    (ws / "vacant.toml").write_text("[stop]\nrounds = 2\n")
    added = vacant(["contract", "add", "tests", "--keep", "--", f"{sys.executable} -m unittest tests.test_calc"], ws, env=env)
    assert added.stdout.startswith("added guard 'tests'") and "  | OK" in added.stdout
    vacant(["contract", "add", "notes", "--", "test -s NOTES.md"], ws, env=env)
    good_contract = (ws / "vacant.toml").read_text()
    broken_contract = good_contract + "[[check]\n"
    broken_line = len(broken_contract.splitlines())
    calc = str(ws / "calc.py")
    turns = [
        turn(tool("Write", file_path=str(ws / "NOTES.md"), content="calc: add two numbers\n")),  # step 1
        turn(tool("Read", file_path=calc)),  # step 2 (Claude Code edits only what it has read)
        turn(tool("Edit", file_path=calc, old_string="return a + b", new_string="return a - b")),  # step 3
        turn({"type": "text", "text": "Done."}),  # Stop 1: the guard is broken
        turn(tool("Edit", file_path=calc, old_string="return a - b", new_string="return a + b"),  # step 4: fixed
             match="broke this guard", write_files={str(ws / "vacant.toml"): broken_contract}),  # someone breaks it
        turn({"type": "text", "text": "Fixed."}),  # Stop 2: the contract does not read
        turn({"type": "text", "text": "I cannot fix vacant.toml."}, match="the contract cannot be read"),  # Stop 3
    ]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(ws, home, upstream, "write NOTES.md and tidy calc.py")
        requests = upstream.requests()
    assert proc.returncode == 0, proc.stderr

    stops = json.loads(vacant(["report", "--json"], ws, env=env).stdout)["stop"]
    reports = [json.loads(vacant(["report", "--json", "--stop", str(n)], ws, env=env).stdout) for n in range(1, stops + 1)]
    main = [r for r in reports if r["agent_id"] is None]
    assert [r["decision"] for r in main] == ["block", "block", "stop"], json.dumps(main, indent=1)[:3000]

    first = main[0]
    assert [(c["kind"], c["name"], c["passed"]) for c in first["checks"]] == [("guard", "tests", False),
                                                                             ("check", "notes", True)]
    [finding] = first["findings"]
    edit = [r for r in json.loads("[" + ",".join(vacant(["log", "--json"], ws, env=env).stdout.splitlines()) + "]")
            if r["type"] == "step_start" and r["tool"] == "Edit"][0]
    assert (finding["name"], finding["flip_step"], finding["tool"]) == ("tests", edit["step"], "Edit")
    assert finding["blocking"] and finding["actor"] is not None

    bodies = [json.dumps(r.get("body")) for r in requests]
    told = [b for b in bodies if "broke this guard" in b]
    assert told and f"broke this guard at step {edit['step']} (Edit)" in told[0] and "guard tests says" in told[0]

    path = str(ws / "vacant.toml")
    for report in main[1:]:
        problem = report["contract_error"]
        assert (problem["path"], problem["line"]) == (path, broken_line) and report["findings"] == []
    told = [b for b in bodies if "the contract cannot be read" in b]
    assert told and f"{path} is not valid TOML at line {broken_line}" in told[0]
    assert main[2]["round"] == 2 and main[2]["rounds"] == 2  # the person is told once the rounds are spent

    text = vacant(["report"], ws, env=env).stdout
    assert f"contract error: {path} is not valid TOML at line {broken_line}" in text
    doctor = vacant(["doctor", "--json"], ws, env=env, check=False)
    assert doctor.returncode == 1
    assert next(line for line in json.loads(doctor.stdout)["lines"] if line["name"] == "contract")["status"] == "fail"
    errors = state_dir(ws) / "errors.log"
    assert not errors.exists(), errors.read_text()  # nothing called it anything else
