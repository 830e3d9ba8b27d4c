"""Details a new user trips over (issue 24): help that names where the state really is, a doctor
line that says `daemon` once, `log --json` that is JSON lines (and `--json-array` one array), a
step's actor as resolved over the whole run, and a `--version` that imports nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vacant.store.steplog import StepLog

_SHOW = str(Path(__file__).resolve().parents[1] / "show")
if _SHOW not in sys.path:  # the show tests' in-process recorder (tests/unit/show/recording.py)
    sys.path.insert(0, _SHOW)
from recording import Recording, cli  # noqa: E402

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.mark.slow
def test_view_help_names_the_state_directory_inside_git(ws):
    shown = cli(["view", "--help"], ws).stdout
    assert ".git/vacant/runs/RUN/" in " ".join(shown.split()) and ".vacant/runs" not in shown


@pytest.mark.slow
def test_doctor_says_daemon_once(ws):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    out = cli(["doctor", "--platform", "claude"], ws).stdout
    [line] = [line for line in out.splitlines() if "daemon" in line.split(":")[0]]
    assert "daemon: daemon" not in line and line.count("daemon:") == 1, line


@pytest.fixture
def recorded(ws) -> Recording:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    recording = Recording(ws)
    recording.write("a.txt", "1\n")  # the model is unknown when the step starts (no transcript yet)
    StepLog(recording.run_dir).emit("actor", agent_id="main", agent_definition="main", model="model-later")
    recording.write("b.txt", "2\n")
    recording.end()
    return recording


@pytest.mark.slow
def test_log_json_is_json_lines_and_json_array_one_array(ws, recorded):
    lines = cli(["log", "--json"], ws).stdout.splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert json.loads(cli(["log", "--json-array"], ws).stdout) == records
    assert "JSON lines" in cli(["log", "--help"], ws).stdout


def test_log_shows_the_actor_resolved_over_the_run(ws, recorded):
    starts = [line for line in cli(["log"], ws).stdout.splitlines() if "step_start" in line]
    assert len(starts) == 2 and all(line.endswith("[main/model-later]") for line in starts), starts


def test_version_imports_nothing_heavy():
    probe = ("import sys; sys.argv = ['vacant', '--version']\n"
             "from vacant.__main__ import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('typer', 'click', 'pydantic', 'rich', 'vacant.cli') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    version, heavy = proc.stdout.splitlines()
    assert version.startswith("vacant ") and heavy == "[]"


def test_the_readmes_wheel_build_leaves_nothing_untracked():
    repo = Path(__file__).resolve().parents[3]
    ignored = subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", "dist/vacant_trace-0.1.0-py3-none-any.whl"])
    assert ignored.returncode == 0, "`pip wheel -w dist .` (README) would leave an untracked dist/"
