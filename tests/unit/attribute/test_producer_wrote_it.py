"""lineage_internal's producing step is held to "who wrote it" too (issue 40): when the wrong value
came from a file step j wrote, step j's own write (its command re-run on the state before it, or
its input) must hold the value there. The agent's own shell step that wrote it keeps
lineage_internal with its grade; a person's save into that file while step j ran moves the value
outside the run: `lineage_exact` at the step that copied it, step j's cell untouched. Real
recorder, real commands, real Stop pipeline."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from step_histories import Session

from vacant.attribute.stop import Pipeline
from vacant.core.calls import Read
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract

pytestmark = pytest.mark.usefixtures("isolated_home")

GOOD = "RATE = 0.08\n"
NOTE = "the rate is 0.0931\n"


def workspace(base: Path) -> Path:
    root = base / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "config.py").write_text(GOOD)
    (root / "vacant.toml").write_text('[[guard]]\nname = "rate"\ncommand = "grep -qx \'RATE = 0.08\' config.py"\n')
    return root


def read_then_copy(session: Session, root: Path) -> None:
    """The agent reads notes.txt (a recorded file read) and copies its rate into config.py."""
    session.steps += 1
    tool_input = {"file_path": str(root / "notes.txt")}
    session._call("tool_pre", "Read", tool_input, [])
    session._call("tool_post", "Read", tool_input, [], outcome="ok",
                  reads=[Read("file", str(root / "notes.txt"), (root / "notes.txt").read_text())])
    session.edit("config.py", "RATE = 0.08", "RATE = 0.0931")


def only_finding(root: Path, session: Session) -> dict:
    [finding] = Pipeline(root, session.run_dir, load_contract(root), budget_s=600).run()["findings"]
    return finding


def test_the_agents_own_command_that_wrote_the_value_keeps_lineage_internal(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.shell(f"sleep 0.1; printf '{NOTE.strip()}\\n' > notes.txt")
    read_then_copy(session, root)
    session.finish()
    finding = only_finding(root, session)
    assert (finding["level"], finding["final_level"], finding["step"]) == ("lineage_internal", "provable", 1), finding
    assert finding["evidence"]["producer_authorship"]["verdict"] == "own", finding


def test_a_persons_save_of_the_value_while_the_producing_step_ran_is_outside_the_run(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sleep 0.1; echo tests done", during=lambda: (root / "notes.txt").write_text(NOTE))
    read_then_copy(session, root)
    session.finish()
    finding = only_finding(root, session)
    edit = 3  # the step that copied the value
    assert (finding["level"], finding["step"], finding["final_level"]) == ("lineage_exact", edit, None), finding
    assert finding["origin_source"] == "out-of-band:notes.txt", finding
    producer = finding["evidence"]["producer_authorship"]
    assert (producer["verdict"], producer["step"]) == ("not_own", 1), producer
    assert finding["actor"] is not None and finding["blocking"]
