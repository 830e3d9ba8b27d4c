"""Two sessions in one workspace (issue 40): each run keeps its own steps, and a Stop whose
workspace holds changes another session (or the person, seen by another session) made says so:
which paths, who is known to have written them, and whether a check green on this run's own
states is red on the workspace because of them (the report's `workspace`, the agent's feedback,
the person's message), instead of a green guard over a red workspace. A change another session
made while one of this run's steps ran, that this run's scan caught first, is `gap` during that
step with `written_by` naming the other session's step. Real recorder, real Stop pipeline."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from step_histories import Session, write_files

from vacant.attribute import stop as stop_module
from vacant.attribute.stop import Pipeline
from vacant.commands.report import render_report
from vacant.core.calls import HookCall
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract
from vacant.show import html, markdown, model
from vacant.store.run import RunView

pytestmark = pytest.mark.usefixtures("isolated_home")

GOOD = "RATE = 0.08\nNAME = 'a'\n"
GUARD = "grep -qx 'RATE = 0.08' config.py"


def workspace(base: Path) -> Path:
    root = base / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "config.py").write_text(GOOD)
    (root / "notes.txt").write_text("start\n")
    (root / "vacant.toml").write_text(f'[[guard]]\nname = "rate"\ncommand = "{GUARD}"\n[[check]]\nname = "notes"\n'
                                      'command = "test -s notes.txt"\n')
    return root


def their_edit_during_my_command(root: Path, mine: Session, theirs: Session) -> None:
    """The other session's Edit of config.py lands while this run's shell step runs, and its Post
    comes only after this run's: this run's scan sees the change first."""
    tool_input = {"file_path": str(root / "config.py"), "old_string": "RATE = 0.08", "new_string": "RATE = 0.09"}
    scope = [str(root / "config.py")]

    def their_edit_lands() -> None:
        theirs.recorder.handle(HookCall("tool_pre", "run-b", root, tool="Edit", key="toolu_b1", scope=scope,
                                        tool_input=tool_input, cwd=str(root)))
        write_files(root, {"config.py": "RATE = 0.09\nNAME = 'a'\n"})

    mine.shell("sleep 0.1; echo tests done", during=their_edit_lands)
    theirs.recorder.handle(HookCall("tool_post", "run-b", root, tool="Edit", key="toolu_b1", scope=scope,
                                    tool_input=tool_input, outcome="ok", cwd=str(root)))


def test_another_sessions_edit_is_named_and_the_guard_red_on_the_workspace_because_of_it(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    mine = Session(root, "run-a")
    theirs = Session(root, "run-b", beside=mine)
    mine.write("notes.txt", "start\nmine\n")
    theirs.edit("config.py", "RATE = 0.08", "RATE = 0.09")  # the other session breaks the guard
    mine.write("notes.txt", "start\nmine\nmore\n")
    mine.finish()
    outcome = stop_module.stop(root, mine.run_dir)
    report = outcome.report
    assert report["findings"] == [] and all(check["passed"] for check in report["checks"])  # its own work: green
    assert [step.tool for step in RunView.load(mine.run_dir).ordered()] == ["Write", "Write"]  # its own steps only
    [change] = report["workspace"]["changes"]
    assert (change["path"], change["change"]) == ("config.py", "changed")
    assert {key: change["by"].get(key) for key in ("who", "run", "step", "tool")} == {
        "who": "session", "run": "run-b", "step": 1, "tool": "Edit"}
    [red] = report["workspace"]["checks"]
    assert (red["name"], red["kind"], red["passed"], red["passed_live"]) == ("rate", "guard", True, False)
    assert outcome.feedback is None and report["decision"] == "stop"  # not the agent's to fix
    message = outcome.system_message or ""
    assert "config.py" in message and "run-b" in message and "guard rate" in message, message


def test_the_agent_is_told_the_other_sessions_change_is_not_its_own_to_fix(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    mine = Session(root, "run-a")
    theirs = Session(root, "run-b", beside=mine)
    theirs.edit("config.py", "RATE = 0.08", "RATE = 0.09")
    mine.write("notes.txt", "")  # its own break: the check `notes` fails
    mine.finish()
    outcome = stop_module.stop(root, mine.run_dir)
    assert [item["name"] for item in outcome.blocking] == ["notes"]
    feedback = outcome.feedback or ""
    not_yours = [line for line in feedback.splitlines() if line.startswith("- Not yours")]
    assert len(not_yours) == 1 and "config.py" in not_yours[0] and "run-b" in not_yours[0], feedback
    assert "guard rate" in not_yours[0] and "claude" not in not_yours[0], feedback  # never a cell to the agent


def test_the_workspace_holds_nothing_else_when_only_this_run_wrote(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    mine = Session(root, "run-a")
    mine.write("config.py", "RATE = 0.09\nNAME = 'a'\n")
    mine.finish()
    report = stop_module.stop(root, mine.run_dir).report
    assert report["workspace"] is None and [f["level"] for f in report["findings"]] == ["provable"]


def test_a_change_the_other_session_saw_between_its_steps_is_out_of_band(tmp_path: Path) -> None:
    """The person's save, scanned first by the other session (between its steps): not an agent's step."""
    root = workspace(tmp_path)
    mine = Session(root, "run-a")
    theirs = Session(root, "run-b", beside=mine)
    mine.write("notes.txt", "start\nmine\n")
    (root / "config.py").write_text("RATE = 0.07\nNAME = 'a'\n")  # the person
    theirs.shell("echo theirs > other.txt")  # its full scan before the step sees the save
    mine.finish()
    report = stop_module.stop(root, mine.run_dir).report
    by_path = {item["path"]: item["by"] for item in report["workspace"]["changes"]}
    assert by_path["config.py"]["who"] == "out_of_band" and by_path["config.py"]["run"] == "run-b"
    assert by_path["other.txt"]["who"] == "session"
    assert [row["name"] for row in report["workspace"]["checks"]] == ["rate"]


def test_another_sessions_edit_caught_by_this_runs_scan_is_a_gap_naming_that_session(tmp_path: Path) -> None:
    """The other session's Edit lands while this run's shell step runs, and this run's scan sees it
    first (the other's own Post then finds nothing new): gap during the step, written by the other
    session's step."""
    root = workspace(tmp_path)
    mine = Session(root, "run-a")
    theirs = Session(root, "run-b", beside=mine)
    their_edit_during_my_command(root, mine, theirs)
    mine.finish()
    report = Pipeline(root, mine.run_dir, load_contract(root), budget_s=600).run()
    [finding] = report["findings"]
    assert (finding["level"], finding["actor"], finding["evidence"]["during_step"]) == ("gap", None, 1), finding
    written = finding["evidence"]["written_by"]
    assert {key: written.get(key) for key in ("who", "run", "tool")} == {"who": "session", "run": "run-b",
                                                                        "tool": "Edit"}, written
    assert report["workspace"] is None  # this run's record holds the change: nothing else in the workspace


def test_the_report_the_markdown_and_the_view_say_who_wrote_what_the_agent_did_not(tmp_path: Path) -> None:
    """The person sees it on every surface: a gap during a step with the session that wrote it, and
    what the workspace holds that the run did not make with the check it turns red."""
    root = workspace(tmp_path)
    mine = Session(root, "run-a")
    theirs = Session(root, "run-b", beside=mine)
    their_edit_during_my_command(root, mine, theirs)
    theirs.write("notes.txt", "")  # the other session empties the notes: check `notes` red on the workspace
    mine.finish()
    outcome = stop_module.stop(root, mine.run_dir)
    assert outcome.feedback is None  # nothing here is the agent's
    message = outcome.system_message or ""
    assert "another session" in message and "run-b" in message and "notes.txt" in message, message
    text = render_report(outcome.report)
    assert "written by: another session" in text and "run run-b, step 1 (Edit)" in text, text
    assert "not this run's:" in text and "check notes: pass on this run's work, FAIL on the workspace" in text, text
    md = markdown.render(outcome.report)
    assert "nobody; written by another session" in md and "**Not this run's**" in md, md
    assert "check notes: ✅ pass on this run's work, ❌ fail on the workspace" in md, md
    data = model.build(root, mine.run_dir)
    [finding] = data["findings"]
    assert finding["written_by"].startswith("another session") and "run-b" in finding["written_by"]
    assert [change["path"] for change in data["elsewhere"]["changes"]] == ["notes.txt"]
    assert "another session" in data["elsewhere"]["changes"][0]["by"]
    assert "elsewhereCard" in html.page(data) and "written by" in html.page(data)


def test_a_stop_that_reuses_its_answers_still_looks_at_the_workspace_afresh(tmp_path: Path) -> None:
    """Nothing of this run changed between two Stops (the second reuses the first's answers), but
    the other session went on: the second Stop names what it changed since."""
    root = workspace(tmp_path)
    mine = Session(root, "run-a")
    theirs = Session(root, "run-b", beside=mine)
    mine.write("notes.txt", "start\nmine\n")
    mine.finish()
    first = stop_module.stop(root, mine.run_dir).report
    assert first["workspace"] is None
    theirs.edit("config.py", "RATE = 0.08", "RATE = 0.09")
    second = stop_module.stop(root, mine.run_dir).report
    assert second["reused"] == first["stop"] and second["check_runs"] == 0
    assert [change["path"] for change in second["workspace"]["changes"]] == ["config.py"]
    assert second["workspace"]["checks_why"] is not None  # no check ran: it says so


def test_a_write_of_the_whole_file_over_another_sessions_change_is_not_provable(tmp_path: Path) -> None:
    """The other session's Edit breaks the guard (its hooks record it); this run then writes the
    whole file as it finds it, changing another line. This run's state before the Write lacks the
    other session's change, so the Write's input looks as if it wrote the break: heuristic, not
    provable on the Write."""
    root = workspace(tmp_path)
    mine = Session(root, "run-a")
    theirs = Session(root, "run-b", beside=mine)
    theirs.edit("config.py", "RATE = 0.08", "RATE = 0.09")
    mine.write("config.py", (root / "config.py").read_text().replace("NAME = 'a'", "NAME = 'b'"))
    mine.finish()
    [finding] = stop_module.stop(root, mine.run_dir).report["findings"]
    assert finding["level"] == "heuristic", finding
    assert finding["evidence"]["unseen"]["run"] == "run-b" and "config.py" in finding["evidence"]["why"], finding
