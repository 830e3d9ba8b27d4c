"""The interactive TUI, driven through tmux (libtmux), records the same steps as `claude -p`."""

from __future__ import annotations

import shlex
import time
import uuid

import libtmux
import pytest
from claude_harness import FakeUpstream, claude_binary, claude_env, tool, turn
from harness import summary, text
from vacant_run import ClaudeRun, make_workspace, run_scripted
from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e


def script(ws) -> list[dict]:
    return [
        turn(tool("Write", file_path=str(ws / "hello.py"), content="print('hello')\n")),
        turn(tool("Edit", file_path=str(ws / "hello.py"), old_string="hello", new_string="world")),
        turn(tool("Bash", command="python3 hello.py > out.txt", description="run")),
        turn(text("All done.")),
    ]


def wait_for(predicate, timeout: float, what: str, screen=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}; screen:\n{screen()}")


def test_tui_records_the_same_steps_as_print_mode(tmp_path):
    printed = run_scripted(tmp_path / "p", script(tmp_path / "p" / "ws"), prompt="make hello")
    assert printed.process.returncode == 0

    base = tmp_path / "t"
    base.mkdir()
    workspace, home = make_workspace(base)
    upstream = FakeUpstream({"turns": script(workspace)}, base / "upstream").start()
    server = libtmux.Server(socket_name=f"vacant-{uuid.uuid4().hex[:8]}")
    try:
        command = " ".join(shlex.quote(part) for part in [
            str(claude_binary()), "--permission-mode", "acceptEdits", "--allowedTools", "Bash"])
        session = server.new_session(session_name="tui", start_directory=str(workspace), x=160, y=50,
                                     window_command=command, environment=claude_env(home, upstream.url))
        pane = session.active_window.active_pane
        screen = lambda: "\n".join(pane.capture_pane() or [])  # noqa: E731
        run = ClaudeRun(workspace, home, upstream, None)
        wait_for(lambda: (state_dir(workspace) / "runs").exists() and any((state_dir(workspace) / "runs").iterdir()),
                 60, "SessionStart to be recorded", screen)
        time.sleep(1.0)  # let the input box take focus
        pane.send_keys("make hello", enter=False, literal=True)
        time.sleep(0.3)
        pane.send_keys("Enter", enter=False)
        wait_for(lambda: any(r["type"] == "stop" for r in run.log()), 90, "the Stop hook", screen)
        pane.send_keys("/exit", enter=False, literal=True)
        time.sleep(0.3)
        pane.send_keys("Enter", enter=False)
        wait_for(lambda: any(r["type"] == "run_end" for r in run.log()), 30, "SessionEnd", screen)
    finally:
        server.kill()
        upstream.stop()
    assert run.errors() == ""
    assert summary(run.steps()) == summary(printed.steps()) == [
        ("Write", "ok", None, ["hello.py"]),
        ("Edit", "ok", None, ["hello.py"]),
        ("Bash", "ok", 0, ["out.txt"]),
    ]
    assert [s.actor for s in run.steps()] == [s.actor for s in printed.steps()]
    assert [r["reason"] for r in run.log() if r["type"] == "run_end"] == ["prompt_input_exit"]
