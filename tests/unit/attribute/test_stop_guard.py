"""The Stop runs guards like checks, and a contract that does not read never ends it green.

Runs are recorded through the real hook (Claude Code payloads, in process), with a real unittest
suite as the guard; the Stop's answer and its saved report are what is checked.
"""

from __future__ import annotations

import json
import signal
import sys
import uuid
from pathlib import Path

import pytest

from vacant.hook import call as hook
from vacant.core.locations import resolve_run, state_dir
from vacant.store.run import RunView

pytestmark = pytest.mark.usefixtures("isolated_home")

CALC = "def add(a, b):\n    return a + b\n"
SUITE = ("import unittest\n\nfrom calc import add\n\n\nclass AddTests(unittest.TestCase):\n"
         "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n")
GUARD = f'[[guard]]\nname = "tests"\ncommand = "{sys.executable} -m unittest -q tests.test_calc"\n'
NOTES = '[[check]]\nname = "notes"\ncommand = "test -s NOTES.md"\n'


class Run:
    def __init__(self, root: Path) -> None:
        self.root, self.session, self.n = root, uuid.uuid4().hex, 0

    def send(self, event: str, **fields) -> str:
        payload = {"session_id": self.session, "cwd": str(self.root), "hook_event_name": event,
                   "transcript_path": None, **fields}
        out, _ = hook.run("claude", json.dumps(payload).encode(), {"CLAUDE_PROJECT_DIR": str(self.root)})
        signal.alarm(0)
        return out

    def tool(self, name: str, rel: str, change, args: dict, **extra) -> None:
        self.n += 1
        key = f"toolu_{self.n:03d}"
        args = {"file_path": str(self.root / rel), **args}
        self.send("PreToolUse", tool_name=name, tool_input=args, tool_use_id=key, **extra)
        change(self.root / rel)
        self.send("PostToolUse", tool_name=name, tool_input=args, tool_use_id=key,
                  tool_response={"filePath": args["file_path"]}, **extra)

    def write(self, rel: str, text: str, **extra) -> None:
        self.tool("Write", rel, lambda path: path.write_text(text), {"content": text}, **extra)

    def edit(self, rel: str, old: str, new: str) -> None:
        def change(path: Path) -> None:
            path.write_text(path.read_text().replace(old, new, 1))
        self.tool("Edit", rel, change, {"old_string": old, "new_string": new})

    def stop(self) -> tuple[dict, dict]:
        answer = self.send("Stop", stop_hook_active=False)
        run_dir = resolve_run(self.root, self.session)
        return (json.loads(answer) if answer.strip() else {}), json.loads((run_dir / "report.json").read_text())

    def events(self, kind: str) -> list[dict]:
        return RunView.load(resolve_run(self.root, self.session)).of_type(kind)


@pytest.fixture
def project(ws: Path) -> Path:
    (ws / "tests").mkdir()
    (ws / "tests" / "__init__.py").write_text("")
    (ws / "tests" / "test_calc.py").write_text(SUITE)
    (ws / "calc.py").write_text(CALC)
    return ws


def start(root: Path, contract: str) -> Run:
    (root / "vacant.toml").write_text(contract)
    run = Run(root)
    run.send("SessionStart", source="startup")
    run.send("UserPromptSubmit", prompt="write the notes and tidy calc.py")
    return run


@pytest.mark.slow
def test_a_guard_broken_by_a_step_blocks_the_stop_with_that_step(project):
    run = start(project, GUARD + NOTES)
    run.write("NOTES.md", "notes\n")  # step 1: the acceptance check's work
    run.edit("calc.py", "return a + b", "return a - b")  # step 2: breaks the guard
    run.write("README.txt", "calc\n")  # step 3: unrelated
    answer, report = run.stop()
    assert [(c["kind"], c["name"], c["passed"]) for c in report["checks"]] == [("guard", "tests", False),
                                                                              ("check", "notes", True)]
    [finding] = report["findings"]
    assert finding["name"] == "tests" and finding["blocking"] and finding["flip_step"] == 2
    assert finding["step"] == 2 and finding["tool"] == "Edit"
    assert answer["decision"] == "block"
    assert "guard tests says:" in answer["reason"] and "broke this guard at step 2 (Edit)" in answer["reason"]
    assert report["decision"] == "block" and report["contract_error"] is None
    assert not [r for r in run.events("review") if r["score"] == 1]  # no green review for a broken guard


@pytest.mark.slow
def test_a_guard_already_failing_at_the_baseline_blocks_and_blames_nobody(project):
    (project / "calc.py").write_text(CALC.replace("a + b", "a * b"))
    run = start(project, GUARD + NOTES)
    run.write("NOTES.md", "notes\n")
    answer, report = run.stop()
    [finding] = report["findings"]
    assert finding["flip_step"] is None and finding["actor"] is None and finding["blocking"]
    assert "already failing when the work began" in answer["reason"]


@pytest.mark.slow
def test_guards_that_hold_verify_nothing_alone(project):
    run = start(project, GUARD)
    run.write("NOTES.md", "notes\n")
    _, report = run.stop()
    assert report["checks"][0]["passed"] and report["nothing_to_verify"] and not report["findings"]


BROKEN = [
    ("toml", GUARD + NOTES + "[[check]\n", 7, "is not valid TOML at line 7"),
    ("unknown-key", GUARD + NOTES.replace("command =", "comand ="), 6,
     "unknown key 'comand' (did you mean 'command'?)"),
    ("invalid-item", GUARD + NOTES.replace('name = "notes"', 'name = "Notes"'), 5, "key 'name'"),
]


@pytest.mark.parametrize("contract, line, words", [case[1:] for case in BROKEN], ids=[case[0] for case in BROKEN])
def test_a_contract_that_does_not_read_blocks_naming_the_file_and_line(project, contract, line, words):
    run = start(project, GUARD + NOTES)
    run.write("NOTES.md", "notes\n")
    (project / "vacant.toml").write_text(contract)  # broken after the run began (by anyone)
    answer, report = run.stop()
    path = str(project / "vacant.toml")
    assert answer["decision"] == "block"
    assert f"{path}" in answer["reason"] and f"line {line}" in answer["reason"] and words in answer["reason"]
    assert "nothing was verified" in answer["reason"]
    problem = report["contract_error"]
    assert (problem["path"], problem["line"]) == (path, line) and words in problem["message"]
    assert report["decision"] == "block" and not report["nothing_to_verify"]
    assert [e["line"] for e in run.events("contract_error")] == [line]
    assert not run.events("review")  # nobody is reviewed on a Stop that verified nothing
    errors = state_dir(project) / "errors.log"
    assert not errors.exists() or "vacant.toml" not in errors.read_text()


def test_with_rounds_0_a_broken_contract_is_told_to_the_person(project):
    run = start(project, "[stop]\nrounds = 0\n" + NOTES)
    run.write("NOTES.md", "notes\n")
    (project / "vacant.toml").write_text("[stop]\nrounds = 0\n" + NOTES + "[[check]\n")
    answer, report = run.stop()
    assert answer.get("decision") != "block"
    assert f"{project / 'vacant.toml'} is not valid TOML at line 6" in answer["systemMessage"]
    assert "nothing was verified" in answer["systemMessage"] and "report only" in answer["systemMessage"]
    assert report["decision"] == "stop" and report["rounds"] == 0 and report["contract_error"]["line"] == 6


def test_the_report_command_shows_the_contract_error(project, capsys):
    from vacant.commands.report import render_report

    run = start(project, NOTES)
    (project / "vacant.toml").write_text(NOTES + "[[check]\n")
    _, report = run.stop()
    text = render_report(report)
    assert f"contract error: {project / 'vacant.toml'} is not valid TOML at line 4" in text


@pytest.mark.slow
def test_report_before_any_stop_names_the_contract_error(project):
    import subprocess

    run = start(project, NOTES)
    run.write("NOTES.md", "notes\n")
    (project / "vacant.toml").write_text(NOTES + "[[check]\n")
    proc = subprocess.run([sys.executable, "-m", "vacant", "report"], cwd=project, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 3
    assert "has no Stop report yet: the contract cannot be read" in proc.stderr
    assert f"{project / 'vacant.toml'} is not valid TOML at line 4" in proc.stderr


def test_only_the_main_agents_stop_blocks_on_the_contract(project):
    run = start(project, NOTES)
    run.send("SubagentStart", agent_id="a1", agent_type="general-purpose")
    run.write("NOTES.md", "notes\n", agent_id="a1", agent_type="general-purpose")
    (project / "vacant.toml").write_text(NOTES + "[[check]\n")
    answer = run.send("SubagentStop", agent_id="a1", agent_type="general-purpose", stop_hook_active=False,
                      last_assistant_message="done")
    report = json.loads((resolve_run(project, run.session) / "report.json").read_text())
    assert report["agent_id"] == "a1" and report["contract_error"]["line"] == 4
    assert report["decision"] == "stop" and '"block"' not in answer
    main, report = run.stop()
    assert main["decision"] == "block" and report["agent_id"] is None and report["round"] == 1


@pytest.mark.slow
def test_a_guard_finding_the_budget_left_unreplayed_is_never_called_already_failing(project):
    """The Stop's budget runs out before the guard's run can even start: the message says what was
    left out and that it runs at the next Stop, never that anything predates the agent's work (a
    false clearance), and no finding is made up from a run that did not happen."""
    run = start(project, GUARD + NOTES + "[stop]\nbudget_s = 0.001\n")
    run.write("NOTES.md", "notes\n")
    run.edit("calc.py", "return a + b", "return a - b")  # breaks the guard
    answer, report = run.stop()
    said = (answer.get("reason") or "") + (answer.get("systemMessage") or "")
    assert "already failing" not in said
    assert "time budget of 0.001 s ran out" in said and "guard tests" in said and "next Stop" in said
    assert "tests" in [check["name"] for check in report["left_out"]["checks"]]
    assert report["findings"] == []  # nothing graded from a run that did not happen


@pytest.mark.slow
def test_a_round_where_nothing_changed_reuses_its_answers(project):
    """The agent is told to fix a guard and stops again without changing anything: the second Stop
    repeats the first's findings (a second round) without running a check; once a file changes,
    the checks run again."""
    run = start(project, GUARD + NOTES)
    run.write("NOTES.md", "notes\n")
    run.edit("calc.py", "return a + b", "return a - b")
    first_answer, first = run.stop()
    second_answer, second = run.stop()
    assert first["reused"] is None and first["check_runs"] > 0
    assert second["reused"] == first["stop"] and second["check_runs"] == 0
    assert [f["id"] for f in second["findings"]] == [f["id"] for f in first["findings"]]
    assert second_answer["decision"] == "block" and second["round"] == 2
    run.edit("calc.py", "return a - b", "return a + b")  # the fix
    third_answer, third = run.stop()
    assert third["reused"] is None and third["check_runs"] > 0 and third["findings"] == []
