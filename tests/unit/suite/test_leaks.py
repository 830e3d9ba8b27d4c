"""The suite's leak check (tests/plugins/leaks.py), on a pytest of its own: a session whose test
leaves a process behind fails, naming the process and the test, and the process is gone after."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
PLUGINS = Path(__file__).resolve().parents[2] / "plugins"

LEAKY = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    from pathlib import Path

    def test_starts_and_waits(tmp_path):
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    def test_leaves_one_behind():
        code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
        proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        Path(os.environ["LEAK_PIDS"]).write_text(str(proc.pid))
        time.sleep(0.2)
""")
CLEAN = textwrap.dedent("""
    import subprocess, sys

    def test_starts_and_waits():
        subprocess.run([sys.executable, "-c", "pass"], check=True)
""")


def run_pytest(tmp_path: Path, source: str, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_case.py").write_text(source)
    (tmp_path / "conftest.py").write_text(
        "import pytest\nfrom leaks import note_marked\n\n"
        "@pytest.fixture(autouse=True)\ndef _note(request):\n    yield\n    note_marked(request.node.nodeid)\n")
    env = {**os.environ, "PYTHONPATH": str(PLUGINS), "LEAK_PIDS": str(tmp_path / "pid")}
    env.pop("VACANT_TEST_SESSION", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "leaks", "-p", "no:cacheprovider", "-q",
                           "--rootdir", str(tmp_path), *extra, str(tmp_path / "test_case.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["one process", "xdist"])
def test_a_test_that_leaves_a_process_fails_the_run_and_the_process_is_killed(tmp_path, workers):
    done = run_pytest(tmp_path, LEAKY, *workers)
    pid = int((tmp_path / "pid").read_text())
    try:
        assert done.returncode == 1, done.stdout + done.stderr
        assert "2 passed" in done.stdout  # every test passed: the leak alone fails the run
        assert "1 process(es) outlived the session" in done.stdout
        assert f"pid {pid} " in done.stdout and "test_case.py::test_leaves_one_behind" in done.stdout
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
    finally:
        if alive(pid):
            os.kill(pid, 9)


def test_a_session_that_leaves_nothing_passes(tmp_path):
    done = run_pytest(tmp_path, CLEAN)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "outlived" not in done.stdout
