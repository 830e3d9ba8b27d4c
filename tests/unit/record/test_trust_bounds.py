"""Class 8 of issue 11: bad paths and resource bombs.

* Tool calls naming `/dev/zero`, a FIFO nobody writes to, a socket, a directory, a 3 GB sparse
  file, inside and outside the workspace, through the real hook process (a FIFO that stalled it
  would hit the subprocess timeout; reading 3 GB would hit the memory limit set for it): each
  call returns, exit 0, and is recorded.
* A FIFO made by a shell step is recorded as a special entry, never opened.
* safeio's capped read against the file itself (hypothesis: sizes around the cap).
* Payloads from directories vacant was never installed in create nothing, anywhere.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.hook import call as hook
from vacant.core import safeio
from vacant.core.locations import run_dir, state_dir
from vacant.platforms.base import read_file_bytes
from vacant.store.steplog import StepLog

pytestmark = pytest.mark.usefixtures("isolated_home")
MEMORY_LIMIT = 1 << 30  # the hook never needs more than a fraction of this


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.fixture
def bombs(ws, tmp_path) -> dict[str, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    made = {"dev-zero": Path("/dev/zero"), "dev-urandom": Path("/dev/urandom")}
    for where, base in (("in", ws), ("out", outside)):
        fifo = base / f"fifo-{where}"
        os.mkfifo(fifo)
        made[f"fifo-{where}"] = fifo
        big = base / f"big-{where}.bin"
        with open(big, "wb") as handle:
            handle.truncate(3 * (1 << 30))  # sparse: 3 GB that costs no disk
        made[f"3GB-{where}"] = big
        made[f"dir-{where}"] = base
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ws / "sock"))
    made["socket-in"] = ws / "sock"
    link = ws / "zero-link"
    link.symlink_to("/dev/zero")
    made["link-to-dev-zero"] = link
    yield made
    sock.close()


def run_hook(ws: Path, body: dict) -> subprocess.CompletedProcess:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(ws), "VACANT_HOOK_BUDGET_S": "25"}
    return subprocess.run([sys.executable, "-m", "vacant.hook.entry", "claude"], input=json.dumps(body).encode(),
                          env=env, capture_output=True, timeout=60, preexec_fn=_limit_memory)


TOOLS = {
    "Read": lambda p: {"file_path": str(p)},
    "Edit": lambda p: {"file_path": str(p), "old_string": "a", "new_string": "b"},
    "MultiEdit": lambda p: {"file_path": str(p), "edits": [{"old_string": "", "new_string": "b"}]},
    "Write": lambda p: {"file_path": str(p), "content": "x"},
}


@pytest.mark.slow
def test_special_files_and_bombs_never_stall_or_flood_a_hook(ws, bombs, trust_tally):
    n = 0
    for name, path in bombs.items():
        for tool, make in TOOLS.items():
            n += 1
            key = f"t{n}"
            base = {"session_id": "s1", "cwd": str(ws), "tool_name": tool, "tool_use_id": key,
                    "tool_input": make(path)}
            pre = run_hook(ws, {**base, "hook_event_name": "PreToolUse"})
            post = run_hook(ws, {**base, "hook_event_name": "PostToolUse",
                                 "tool_response": {"type": "text", "file": {"filePath": str(path), "content": "x"}}})
            errors = (state_dir(ws) / "errors.log")
            logged = errors.read_text() if errors.exists() else ""
            keys = {r.get("key") for r in StepLog(run_dir(ws, "s1")).records() if r["type"] == "step_end"}
            ok = (pre.returncode == 0 and post.returncode == 0 and f"main/{key}" in keys
                  and "MemoryError" not in logged and "HookTimeout" not in logged)  # neither flooded nor stalled
            trust_tally("8 special files and bombs (hook returns, call recorded)", ok)
            assert ok, (name, tool, pre.stderr[-500:], post.stderr[-500:], logged[-2000:])


def test_a_fifo_a_shell_step_makes_is_recorded_as_special(ws, trust_tally):
    body = {"session_id": "s1", "cwd": str(ws), "tool_name": "Bash", "tool_use_id": "b1",
            "tool_input": {"command": "mkfifo pipe"}}
    assert run_hook(ws, {**body, "hook_event_name": "PreToolUse"}).returncode == 0
    os.mkfifo(ws / "pipe")
    assert run_hook(ws, {**body, "hook_event_name": "PostToolUse", "tool_response": {"stdout": ""}}).returncode == 0
    changes = [r for r in StepLog(run_dir(ws, "s1")).records() if r["type"] == "change"]
    [entry] = [c["added"]["pipe"] for c in changes if "pipe" in c["added"]]
    assert entry[0] == "s" and entry[3] is None
    trust_tally("8 special files and bombs (hook returns, call recorded)", True)


def test_read_file_bytes_refuses_special_and_oversized_files(bombs, trust_tally):
    for name, path in bombs.items():
        got = read_file_bytes(str(path))
        assert got is None, name  # a device, FIFO, socket, directory or 3 GB file has no kept content
        trust_tally("8 reads of special files (no content)", True)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(0, 4096), cap=st.integers(0, 4096), truncate=st.booleans())
def test_capped_reads_return_the_file_or_refuse_never_more(tmp_path, trust_tally, size, cap, truncate):
    path = tmp_path / "f.bin"
    data = os.urandom(size)
    path.write_bytes(data)
    if size > cap and not truncate:
        with pytest.raises(safeio.TooLarge):
            safeio.read_capped(path, cap)
    else:
        assert safeio.read_capped(path, cap, truncate=truncate) == data[:cap]
    trust_tally("8 capped reads", True)


SEGMENTS = st.text(alphabet="abcdefgh-_", min_size=1, max_size=6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(SEGMENTS, min_size=1, max_size=4), project_dir=st.booleans(),
       event=st.sampled_from(["SessionStart", "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionEnd"]))
def test_a_directory_never_installed_gets_no_state(tmp_path_factory, trust_tally, parts, project_dir, event):
    base = tmp_path_factory.mktemp("bare")
    where = base.joinpath(*parts)
    where.mkdir(parents=True, exist_ok=True)
    body = {"session_id": "s", "cwd": str(where), "hook_event_name": event, "tool_name": "Bash",
            "tool_use_id": "x", "tool_input": {"command": "git push"}, "prompt": "hi", "source": "startup"}
    env = {"CLAUDE_PROJECT_DIR": str(where)} if project_dir else {}
    assert hook.run("claude", json.dumps(body).encode(), env) == ("", 0)
    created = [p for p in base.rglob("*") if p.is_file()]
    assert created == [] and not (Path(os.environ["VACANT_HOME"]) / "workspaces").exists()
    trust_tally("8 no state outside an installed workspace", True)
