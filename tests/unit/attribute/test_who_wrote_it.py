"""Who wrote it (issue 40): a step is never graded `provable` or `lineage_*` for a change it did not
make. A person's save while the agent's command runs (a plain write, or a save by rename), a
process an earlier step left writing in the background, or the person's line next to the agent's
in the same file is out of band during the step (`gap`, actor nobody); the agent's own `sed`, its
`python -c` and a generator that stamps the time stay `provable`. A shell step is re-run behind
the wall on the state before it (vacant/attribute/rerun.py); a file tool's input says what it
wrote (vacant/attribute/toolwrites.py). Commands that must not or cannot be re-run are
`heuristic` at most, saying why. Real recorder, real commands, real Stop pipeline."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest
from step_histories import Session

from vacant.attribute import stop as stop_module
from vacant.attribute.stop import Pipeline
from vacant.core.locations import mark_installed
from vacant.policy.contract.contract import load_contract
from vacant.store import reputation

pytestmark = pytest.mark.usefixtures("isolated_home")

GOOD = "RATE = 0.08\nNAME = 'a'\nLIMIT = 10\n"
GUARD = "grep -qx 'RATE = 0.08' config.py && grep -qx 'LIMIT = 10' config.py"
# a located check: each line holding BAD is a finding at its line
LINT = "! grep -Hn BAD config.py"


def workspace(base: Path, command: str = GUARD, kind: str = "guard") -> Path:
    root = base / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    mark_installed(root)
    (root / "config.py").write_text(GOOD)
    (root / "vacant.toml").write_text(f'[[{kind}]]\nname = "rate"\ncommand = "{command}"\n')
    return root


def save(root: Path, old: str, new: str, by_rename: bool = False) -> None:
    """The person's editor saves config.py with `old` replaced (as an editor does: in place, or a
    temporary file renamed over it)."""
    text = (root / "config.py").read_text().replace(old, new)
    if not by_rename:
        (root / "config.py").write_text(text)
        return
    temporary = root / ".config.py.swp~"
    temporary.write_text(text)
    os.replace(temporary, root / "config.py")


def graded(root: Path, session: Session) -> list[dict]:
    return Pipeline(root, session.run_dir, load_contract(root), budget_s=600).run()["findings"]


def only(findings: list[dict]) -> dict:
    assert len(findings) == 1, findings
    return findings[0]


@pytest.mark.parametrize("by_rename", [False, True], ids=["write", "rename"])
def test_a_persons_save_while_the_agents_command_runs_is_not_the_agents(tmp_path: Path, by_rename: bool) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sleep 0.2; echo tests done", during=lambda: save(root, "RATE = 0.08", "RATE = 0.09", by_rename))
    report = Pipeline(root, session.run_dir, load_contract(root), budget_s=600).run()
    finding = only(report["findings"])
    assert (finding["level"], finding["actor"], finding["step"]) == ("gap", None, 1), finding
    assert finding["evidence"]["during_step"] == 1 and not finding["blocking"]
    authorship = finding["evidence"]["authorship"]
    assert authorship["verdict"] == "not_own" and authorship["rerun"]["files"] == {"config.py": "foreign"}
    assert "by someone else" in finding["evidence"]["why"]
    assert report["reruns"]["runs"] == 1  # the command never wrote that file: no second re-run is needed
    assert finding["evidence"]["written_by"]["who"] == "unknown"  # no recorded step or background process


def test_the_agents_own_sed_in_a_slow_command_stays_provable(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sleep 0.2; sed -i 's/^RATE = .*/RATE = 0.09/' config.py")
    finding = only(graded(root, session))
    assert (finding["level"], finding["step"]) == ("provable", 1) and finding["actor"] is not None
    assert finding["evidence"]["authorship"]["verdict"] == "own"
    assert finding["evidence"]["authorship"]["rerun"]["files"] == {"config.py": "same"}


@pytest.mark.parametrize("first", [False, True], ids=["after-the-command", "before-the-command"])
def test_the_persons_line_next_to_the_agents_line_is_the_persons(tmp_path: Path, first: bool) -> None:
    """The agent's sed changes NAME (harmless); the person, while it runs, breaks LIMIT in the same
    file: the guard's finding is the person's, whichever came first."""
    root = workspace(tmp_path)
    session = Session(root)
    persons = lambda: save(root, "LIMIT = 10", "LIMIT = 99")  # noqa: E731
    session.shell("sleep 0.1; sed -i \"s/^NAME = .*/NAME = 'b'/\" config.py",
                  during=None if first else persons, before=persons if first else None)
    finding = only(graded(root, session))
    assert (finding["level"], finding["actor"]) == ("gap", None), finding
    assert finding["evidence"]["authorship"]["rerun"]["files"] == {"config.py": "split"}


def test_the_persons_save_over_the_very_line_the_agents_command_wrote_is_the_persons(tmp_path: Path) -> None:
    """The command's sed writes RATE; the person's save then rewrites that same line. The re-run
    writes that line otherwise than the record, twice the same way: the recorded line is not the
    command's output."""
    root = workspace(tmp_path, LINT, "check")
    session = Session(root)
    session.shell("sed -i 's/^RATE = .*/RATE = 0.08 # fine agent/' config.py",
                  during=lambda: save(root, "# fine agent", "# BAD person"))
    finding = only(graded(root, session))
    assert (finding["level"], finding["actor"]) == ("gap", None), finding
    rerun_evidence = finding["evidence"]["authorship"]["rerun"]
    assert rerun_evidence["files"] == {"config.py": "clash"} and rerun_evidence["steady"] is True


def test_the_agents_line_next_to_the_persons_line_is_the_agents(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sed -i 's/^RATE = .*/RATE = 0.09/' config.py", during=lambda: save(root, "NAME = 'a'", "NAME = 'c'"))
    finding = only(graded(root, session))
    assert (finding["level"], finding["step"]) == ("provable", 1), finding
    assert finding["evidence"]["authorship"]["own_write_shows_it"] == "present"


def test_a_located_finding_on_the_persons_line_is_the_persons_and_the_agents_line_the_agents(tmp_path: Path) -> None:
    root = workspace(tmp_path, LINT, "check")
    session = Session(root)
    session.shell("sed -i 's/^RATE = .*/RATE = 0.09 # BAD agent/' config.py",
                  during=lambda: save(root, "LIMIT = 10", "LIMIT = 10 # BAD person"))
    by_text = {finding["text"].split("# ")[1]: finding for finding in graded(root, session)}
    assert (by_text["BAD agent"]["level"], by_text["BAD agent"]["step"]) == ("provable", 1)
    assert (by_text["BAD person"]["level"], by_text["BAD person"]["actor"]) == ("gap", None)


@pytest.mark.parametrize("program", ["python3 -c", "generator"])
def test_the_agents_python_and_a_generator_that_stamps_the_time_stay_provable(tmp_path: Path, program: str) -> None:
    """Re-run, the generator writes another time stamp than the record holds (its output varies),
    yet the finding shows on the state before it plus what the re-run wrote: its own write."""
    root = workspace(tmp_path)
    stamp = "import time; t = time.time_ns(); "
    write = "open('config.py', 'w').write(f'# generated {t}\\nRATE = 0.09\\nNAME = 1\\nLIMIT = 10\\n')"
    if program == "generator":
        (root / "gen.py").write_text(stamp + write + "\n")
        command = "sleep 0.1; python3 gen.py"
    else:
        command = f'python3 -c "{stamp}{write}"'
    session = Session(root)
    assert session.shell(command) == 0
    finding = only(graded(root, session))
    assert (finding["level"], finding["step"]) == ("provable", 1), finding
    if program == "generator":
        assert finding["evidence"]["authorship"]["rerun"]["files"] == {"config.py": "clash"}


@pytest.mark.slow
def test_a_background_writer_an_earlier_step_started_is_not_the_later_steps(tmp_path: Path) -> None:
    """Step 1 starts a writer in the background that waits for a signal; it writes while step 2
    (`sleep`) runs. Step 2 did not write it: out of band during step 2."""
    root = workspace(tmp_path)
    go, done, pid = tmp_path / "go", tmp_path / "done", tmp_path / "pid"
    writer = (f"while [ ! -e {go} ]; do sleep 0.02; done; sed -i 's/^LIMIT = .*/LIMIT = 0/' config.py; touch {done}")
    session = Session(root)
    session.shell(f"nohup sh -c \"{writer}\" >/dev/null 2>&1 & echo $! > {pid}")

    def signal_and_wait() -> None:
        go.touch()
        deadline = time.monotonic() + 20
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert done.exists(), "the background writer did not write"

    session.shell("sleep 0.1; echo built", during=signal_and_wait)
    _gone(int(pid.read_text()))
    finding = only(graded(root, session))
    assert (finding["level"], finding["actor"], finding["flip_step"]) == ("gap", None, 2), finding
    assert {key: finding["evidence"]["written_by"].get(key) for key in ("who", "step")} == {"who": "background",
                                                                                           "step": 1}, finding


def _gone(pid: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)


# -- file tools: their input says what they wrote ----------------------------------------------


def test_an_edit_owns_what_its_input_wrote_and_not_the_persons_save_to_the_same_file(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.edit("config.py", "NAME = 'a'", "NAME = 'b'", during=lambda: save(root, "LIMIT = 10", "LIMIT = 99"))
    finding = only(graded(root, session))
    assert (finding["level"], finding["actor"], finding["step"]) == ("gap", None, 1), finding
    assert finding["evidence"]["authorship"]["input"]["files"] == {"config.py": "split"}


def test_an_edit_that_breaks_it_stays_provable_with_the_persons_save_beside_it(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.edit("config.py", "RATE = 0.08", "RATE = 0.09", during=lambda: save(root, "NAME = 'a'", "NAME = 'c'"))
    finding = only(graded(root, session))
    assert (finding["level"], finding["step"]) == ("provable", 1), finding


def test_a_persons_save_over_what_a_write_just_wrote_is_the_persons(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.write("config.py", GOOD.replace("'a'", "'w'"), during=lambda: save(root, "RATE = 0.08", "RATE = 0.07", True))
    finding = only(graded(root, session))
    assert (finding["level"], finding["actor"]) == ("gap", None), finding


def test_a_write_whose_input_is_the_whole_change_stays_provable(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.write("config.py", GOOD.replace("0.08", "0.09"))
    finding = only(graded(root, session))
    assert finding["level"] == "provable"
    assert finding["evidence"]["authorship"]["why"] == "its input accounts for the whole change"


@pytest.mark.parametrize("person", [False, True], ids=["alone", "with-a-persons-save"])
def test_apply_patch_run_through_the_shell_is_judged_by_its_patch(tmp_path: Path, person: bool) -> None:
    """Codex runs apply_patch through the shell: the command is its patch, not a program to run
    again (there is no apply_patch program outside Codex)."""
    root = workspace(tmp_path)
    old, new = ("NAME = 'a'", "NAME = 'b'") if person else ("RATE = 0.08", "RATE = 0.09")
    patch = f"*** Begin Patch\n*** Update File: config.py\n@@\n-{old}\n+{new}\n*** End Patch"

    def effect() -> None:  # what Codex's apply_patch does, and the person's save while it runs
        save(root, old, new)
        if person:
            save(root, "LIMIT = 10", "LIMIT = 0")

    session = Session(root)
    session.tool_call("Bash", {"command": shlex.join(["apply_patch", patch])}, None, effect, exit_code=0)
    finding = only(graded(root, session))
    authorship = finding["evidence"]["authorship"]
    assert "rerun" not in authorship
    assert authorship["input"]["files"] == {"config.py": "split" if person else "same"}
    assert (finding["level"], finding["step"]) == ("gap" if person else "provable", 1), finding


# -- commands that are not re-run: heuristic at most, saying why ---------------------------------


def test_an_act_command_is_never_re_run(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sed -i 's/^RATE = .*/RATE = 0.09/' config.py; git push origin main 2>/dev/null; true")
    finding = only(graded(root, session))
    assert finding["level"] == "heuristic" and "ACT" in finding["evidence"]["why"], finding
    assert finding["evidence"]["authorship"]["rerun"] == {"refused": finding["evidence"]["why"]}


def test_a_command_that_reads_a_terminal_is_never_re_run(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sed -i 's/^RATE = .*/RATE = 0.09/' config.py; less config.py > /dev/null")
    finding = only(graded(root, session))
    assert finding["level"] == "heuristic" and "runs less" in finding["evidence"]["why"], finding


def test_a_command_over_the_cap_is_never_re_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vacant.attribute import rerun

    monkeypatch.setattr(rerun, "MAX_STEP_S", 0.05)  # a unit test's stand-in for a step of minutes
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sleep 0.2; sed -i 's/^RATE = .*/RATE = 0.09/' config.py")
    finding = only(graded(root, session))
    assert finding["level"] == "heuristic" and "to be re-run at a Stop" in finding["evidence"]["why"], finding


def test_a_re_run_that_does_not_run_as_the_step_did_is_heuristic(tmp_path: Path) -> None:
    """The command's write hangs on a file outside the workspace that is gone by the Stop: the re-run
    exits 1 and writes nothing. Not reproduced, but not shown to be someone else's either."""
    root = workspace(tmp_path)
    marker = tmp_path / "marker"
    marker.touch()
    session = Session(root)
    session.shell(f"test -e {marker} && sed -i 's/^RATE = .*/RATE = 0.09/' config.py")
    marker.unlink()
    finding = only(graded(root, session))
    assert finding["level"] == "heuristic" and "exited 1 where the step exited 0" in finding["evidence"]["why"]


@pytest.mark.parametrize("person", [False, True], ids=["reproduced", "not-reproduced"])
def test_a_re_run_on_a_state_not_kept_whole_proves_only_a_reproduced_change(tmp_path: Path, person: bool) -> None:
    """A file the store keeps out (`[store] exclude`) is not in the rebuilt state. A re-run that
    still writes the whole recorded change is the step's; one that does not proves nothing either
    way (it may write otherwise for want of that file): heuristic, not gap."""
    root = workspace(tmp_path)
    (root / "vacant.toml").write_text((root / "vacant.toml").read_text() + '\n[store]\nexclude = ["secret.env"]\n')
    (root / "secret.env").write_text("TOKEN=1\n")
    session = Session(root)
    if person:
        session.shell("grep -q TOKEN secret.env; echo done", during=lambda: save(root, "RATE = 0.08", "RATE = 0.09"))
    else:
        session.shell("grep -q TOKEN secret.env; sed -i 's/^RATE = .*/RATE = 0.09/' config.py")
    finding = only(graded(root, session))
    assert finding["level"] == ("heuristic" if person else "provable"), finding
    if person:
        assert "without 1 file(s) vacant does not keep (e.g. secret.env)" in finding["evidence"]["why"]


def test_without_the_wall_no_command_is_re_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stop_module, "site_for", lambda *_a, **_k: None)
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sed -i 's/^RATE = .*/RATE = 0.09/' config.py")
    finding = only(graded(root, session))
    assert finding["level"] == "heuristic" and "unwalled" in finding["evidence"]["why"], finding


def test_a_re_run_never_touches_the_live_workspace(tmp_path: Path) -> None:
    """The re-run's command writes by the workspace's absolute path: behind the wall that path is
    the scratch copy of the state before the step, never the live file."""
    root = workspace(tmp_path)
    session = Session(root)
    session.shell(f"sed -i 's/^RATE = .*/RATE = 0.09/' {root / 'config.py'}; echo again >> {root / 'log.txt'}")
    (root / "config.py").write_text(GOOD.replace("0.08", "0.09").replace("'a'", "'live'"))
    before = {path: path.read_bytes() for path in root.iterdir() if path.is_file()}
    graded(root, session)
    assert {path: path.read_bytes() for path in root.iterdir() if path.is_file()} == before


# -- feedback: what the agent did not write goes to the person --------------------------------------


def two_guards(base: Path) -> Path:
    root = workspace(base)
    (root / "vacant.toml").write_text('[[guard]]\nname = "rate"\ncommand = "grep -qx \'RATE = 0.08\' config.py"\n\n'
                                      '[[guard]]\nname = "limit"\ncommand = "grep -qx \'LIMIT = 10\' config.py"\n')
    return root


def test_the_agent_is_told_only_of_what_it_wrote(tmp_path: Path) -> None:
    """One command: the agent's sed breaks RATE while the person's save breaks LIMIT. The feedback
    names the rate guard's finding and never the person's; only the agent's finding is a review."""
    root = two_guards(tmp_path)
    session = Session(root)
    session.shell("sed -i 's/^RATE = .*/RATE = 0.09/' config.py", during=lambda: save(root, "LIMIT = 10", "LIMIT = 0"))
    outcome = stop_module.stop(root, session.run_dir, budget_s=600)
    by_name = {finding["name"]: finding for finding in outcome.report["findings"]}
    assert (by_name["rate"]["level"], by_name["limit"]["level"]) == ("provable", "gap")
    assert [finding["name"] for finding in outcome.blocking] == ["rate"]
    assert by_name["rate"]["id"] in outcome.feedback and by_name["limit"]["id"] not in outcome.feedback
    assert "limit" not in outcome.feedback
    reviews = [row for row in reputation.review_rows() if row.run == session.run_dir.name]
    assert [(row.score, row.finding) for row in reviews] == [(0, by_name["rate"]["id"])]
    assert reputation.counts("coverage_gaps", "platform") == []  # the platform missed nothing


def test_a_stop_red_only_by_the_persons_save_is_the_persons_to_see(tmp_path: Path) -> None:
    root = two_guards(tmp_path)
    session = Session(root)
    session.shell("sleep 0.1; echo tests done", during=lambda: save(root, "LIMIT = 10", "LIMIT = 0", by_rename=True))
    outcome = stop_module.stop(root, session.run_dir, budget_s=600)
    (finding,) = outcome.report["findings"]
    assert (finding["level"], finding["actor"], finding["blocking"]) == ("gap", None, False)
    assert outcome.feedback is None and outcome.report["decision"] == "stop"
    assert "someone other than the agent made during step(s) 1" in outcome.system_message
    assert not [row for row in reputation.review_rows() if row.run == session.run_dir.name]  # not green either


def test_a_change_whose_writer_is_not_known_is_not_told_as_the_agents(tmp_path: Path) -> None:
    """An ACT command is not re-run: its finding still blocks (heuristic), but the agent is told it
    appeared during that step, not that the step introduced it."""
    root = workspace(tmp_path)
    session = Session(root)
    session.shell("sed -i 's/^RATE = .*/RATE = 0.09/' config.py; git push origin main 2>/dev/null; true")
    outcome = stop_module.stop(root, session.run_dir, budget_s=600)
    (finding,) = outcome.blocking
    assert finding["level"] == "heuristic"
    assert "appeared during step 1 (Bash), which changed config.py; not shown to be that step's own write" in outcome.feedback
    assert "introduced" not in outcome.feedback and "broke this guard" not in outcome.feedback
