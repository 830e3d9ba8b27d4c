"""Ctrl-C stops every long command within a second: a real SIGINT (or SIGTERM) sent to the
command's process group, as a terminal sends it, while a child it started (a check, a probe, git,
an agent) sleeps; the command exits 130 with one sentence, no child it started survives, and the
state it was writing is as it was before (no half-written contract, step log, report or ref)."""

from __future__ import annotations

import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vacant.core.locations import mark_installed, state_dir

_SHOW = str(Path(__file__).resolve().parents[1] / "show")
if _SHOW not in sys.path:  # the show tests' in-process recorder (tests/unit/show/recording.py)
    sys.path.insert(0, _SHOW)
from recording import Recording  # noqa: E402

pytestmark = pytest.mark.usefixtures("isolated_home")

BIN = Path(sys.executable).parent / "vacant"
STOP_WITHIN_S = 1.0  # the promise
SLACK_S = 0.5  # a loaded 2-core test machine: scheduling, not the command


def marker() -> str:
    """A `sleep` nobody else runs: its argument names this test's child in the process table."""
    return f"sleep 30.{random.randrange(10**6):06d}"


def processes_running(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cmdline.startswith(text):  # the sleep itself, not a shell or vacant naming it in its argv
            found.append(int(entry.name))
    return found


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def start(args: list[str], cwd: Path, **env: str) -> subprocess.Popen:
    """The command as a terminal starts it: the leader of its own (foreground) process group."""
    return subprocess.Popen([str(BIN), *args], cwd=cwd, env={**os.environ, **env}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def interrupt_while(proc: subprocess.Popen, child: str, sig: int = signal.SIGINT) -> tuple[str, float]:
    """Wait until `child` runs, signal the command's whole group; (stderr, seconds to exit)."""
    wait_until(lambda: processes_running(child) or proc.poll() is not None, 60, f"{child!r} to start")
    assert proc.poll() is None, f"the command ended before its child ran: {proc.communicate()}"
    sent = time.monotonic()
    os.killpg(proc.pid, sig)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    wait_until(lambda: not processes_running(child), 2, f"{child!r} to be gone")  # reaped by init, if orphaned
    return err, took


def assert_stopped(proc: subprocess.Popen, err: str, took: float, sig: int = signal.SIGINT) -> None:
    assert proc.returncode == 130, err
    assert took < STOP_WITHIN_S + SLACK_S, f"took {took:.2f} s to stop"
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert lines and f"stopped by {signal.Signals(sig).name}" in lines[-1], err
    assert "Traceback" not in err


def git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    git_init(root)  # its own top level: whatever sits above tmp_path is never taken for the workspace
    mark_installed(root)
    return root


def slow_contract(root: Path, child: str) -> None:
    (root / "vacant.toml").write_text(f'[[check]]\nname = "slow"\ncommand = "{child}"\ntimeout = 60\n')


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_check_stops_and_kills_its_check(repo, sig):
    child = marker()
    slow_contract(repo, child)
    proc = start(["check"], repo)
    err, took = interrupt_while(proc, child, sig)
    assert_stopped(proc, err, took, sig)
    assert "process group" in err  # it says the check went with it


@pytest.mark.slow
def test_contract_add_stops_its_probe_and_writes_no_contract(repo):
    child = marker()
    before = b'# the team\'s checks\n[[check]]\nname = "ok"\ncommand = "false"\n'
    (repo / "vacant.toml").write_bytes(before)
    proc = start(["contract", "add", "slow", "--", f"{child}; false"], repo)
    err, took = interrupt_while(proc, child)
    assert_stopped(proc, err, took)
    assert (repo / "vacant.toml").read_bytes() == before
    assert sorted(p.name for p in repo.iterdir()) == [".git", "vacant.toml"]  # no temp file left beside it


def recorded_run(repo: Path) -> Path:
    (repo / "vacant.toml").write_text('[[check]]\nname = "quick"\ncommand = "grep -q 1 a.txt"\n')
    recording = Recording(repo)
    recording.write("a.txt", "1\n")
    recording.stop()
    recording.end()
    wait_until(lambda: (recording.run_dir / "vacuous.json").exists(), 30, "the detached baseline probe")
    return recording.run_dir


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_replay_stops_and_leaves_the_run_as_it_was(repo):
    run = recorded_run(repo)
    before = snapshot(run)
    child = marker()
    slow_contract(repo, child)  # the replay runs today's contract: a check that sleeps
    proc = start(["replay"], repo)
    err, took = interrupt_while(proc, child)
    assert_stopped(proc, err, took)
    assert snapshot(run) == before


@pytest.mark.slow
@pytest.mark.disk_tmp  # `vacant do` walls its command: nothing on tmpfs is visible behind the wall
def test_do_stops_in_its_stop_pipeline(repo):
    child = marker()
    slow_contract(repo, f"test -f a.txt && {child}")  # quick on the baseline (the detached probe), slow at Stop
    proc = start(["do", "--", "sh", "-c", "echo 1 > a.txt"], repo)
    err, took = interrupt_while(proc, child)  # the command is done; the Stop runs the sleeping check
    assert_stopped(proc, err, took)
    runs = list((state_dir(repo) / "runs").iterdir())
    assert runs and not any((run / "report.json").exists() for run in runs)  # no Stop report half-made


@pytest.mark.slow
@pytest.mark.disk_tmp  # `vacant do` walls its command: nothing on tmpfs is visible behind the wall
def test_do_stops_while_the_agent_runs(repo):
    child = marker()
    proc = start(["do", "--", "sh", "-c", child], repo)
    err, took = interrupt_while(proc, child)
    assert_stopped(proc, err, took)


@pytest.mark.slow
def test_sync_stops_a_hanging_fetch(repo, tmp_path):
    child = marker()
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "ssh://nowhere.invalid/x.git"], check=True)
    proc = start(["sync"], repo, GIT_SSH_COMMAND=f"{child} #")  # the "network": an ssh that never answers
    err, took = interrupt_while(proc, child)
    assert_stopped(proc, err, took)
    refs = subprocess.run(["git", "-C", str(repo), "for-each-ref", "refs/vacant/"], capture_output=True, text=True)
    assert refs.stdout == ""


@pytest.mark.disk_tmp  # `vacant do` walls its command: nothing on tmpfs is visible behind the wall
@pytest.mark.slow
def test_experiment_stops_its_agent_and_keeps_the_journal_whole(repo, tmp_path):
    child = marker()
    task = tmp_path / "tasks" / "t1"
    (task / "seed").mkdir(parents=True)
    (task / "task.toml").write_text('family = "general"\n')
    (task / "prompt.md").write_text("write a.txt\n")
    (task / "vacant.toml").write_text('[[check]]\nname = "a"\ncommand = "test -f a.txt"\n')
    (task / "hidden").mkdir()
    (task / "hidden" / "checks.toml").write_text('[[check]]\nname = "held"\ncommand = "test -f a.txt"\n')
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\n{child}\n")
    agent.chmod(0o755)
    out = tmp_path / "exp"
    proc = start(["experiment", str(tmp_path / "tasks"), "--agent", "claude", "--agent-bin", str(agent),
                  "--repeats", "1", "--out", str(out)], repo)
    err, took = interrupt_while(proc, child)
    assert_stopped(proc, err, took)
    journal = [line for line in (out / "journal.jsonl").read_text().splitlines()] if (out / "journal.jsonl").exists() else []
    assert all(line.startswith("{") and line.endswith("}") for line in journal)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used (`/proc/PID/stat` fields 14 and 15)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report_cpu_seconds(args: list[str], cwd: Path) -> float:
    """CPU seconds the command takes when left to finish (its own and its children's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = start(args, cwd)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@pytest.mark.slow
def test_report_stops_while_it_writes_a_run_view_and_leaves_no_page(repo, tmp_path):
    """No child here: the work is vacant's own (a 4,000-step run view), interrupted mid-way: at a
    third of the CPU time a whole report of the same run takes, measured first (a fixed threshold
    was past the page's write on an idle machine and before the work began on a loaded one)."""
    browser = str(Path(__file__).resolve().parents[2] / "browser")
    if browser not in sys.path:
        sys.path.insert(0, browser)
    from gen_run import generate

    generate(repo, steps=4000, run_id="gen-4000")
    whole = report_cpu_seconds(["report", "gen-4000", "--html", str(tmp_path / "whole.html")], repo)
    out = tmp_path / "views"
    out.mkdir()
    proc = start(["report", "gen-4000", "--html", str(out / "big.html")], repo)
    wait_until(lambda: cpu_seconds(proc.pid) >= whole / 3 or proc.poll() is not None, 60, "the report to be at work")
    assert proc.poll() is None, f"the report ended before it was interrupted: {proc.communicate()}"
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert_stopped(proc, err, time.monotonic() - sent)
    assert list(out.iterdir()) == []  # no page, and no half-written temp file beside it


# An interrupt while the command line is still being imported (typer and the command: a second on
# a busy machine) exits as any interrupted command does, not with Python's KeyboardInterrupt.
IMPORT_INTERRUPTED = """
import sys

class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == "typer":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupting())
sys.argv = ["vacant", "report", "--html", "x"]
from vacant.__main__ import main
main()
"""


def test_an_interrupt_while_the_command_line_is_imported_exits_130_with_the_sentence(tmp_path):
    from vacant.core.children import Interrupted, interrupted_sentence

    done = subprocess.run([sys.executable, "-c", IMPORT_INTERRUPTED], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stderr.strip()) == (130, interrupted_sentence(Interrupted(signal.SIGINT)))
