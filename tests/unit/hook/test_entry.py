"""The hook entry: lean imports, fail-open behaviour."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from unittest import mock

from vacant.core.locations import mark_installed, state_dir

# the third-party ones by rule; the stdlib ones because they cost ~20 ms at every hook call
FORBIDDEN = ("pydantic", "typer", "rich", "click", "pathspec", "watchdog", "typing", "dataclasses", "inspect", "ast")

PROBE = """
import sys, json
before = set(sys.modules)
import vacant.hook.entry
from vacant.hook.call import run
run("claude", sys.stdin.buffer.read(), {"CLAUDE_PROJECT_DIR": sys.argv[1]})
stdlib = set(sys.stdlib_module_names)
extra = sorted({m.split(".")[0] for m in set(sys.modules) - before} - stdlib - {"vacant", "xxhash", "_xxhash"})
print(json.dumps(extra))
"""


@pytest.mark.parametrize("event", [
    {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "t1",
     "tool_input": {"file_path": "x.txt", "content": "x"}},
    {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "t2",
     "tool_input": {"file_path": "x.txt"}, "tool_response": {"type": "text", "file": {"content": "x"}}},
    {"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "t3",
     "tool_input": {"file_path": "x.txt", "old_string": "x", "new_string": "y"}},
])
def test_hot_path_imports_only_stdlib_and_xxhash(tmp_path, event):
    env = dict(os.environ, VACANT_HOME=str(tmp_path / "data"))
    with mock.patch.dict(os.environ, env):
        mark_installed(tmp_path)  # an installed workspace: the hook does its whole work
        state = state_dir(tmp_path)
    payload = json.dumps({"session_id": "s1", "cwd": str(tmp_path), **event})
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], input=payload.encode(),
                          capture_output=True, check=True, env=env)
    extra = json.loads(proc.stdout)
    assert extra == [], f"the hook entry imported non-stdlib modules: {extra}"
    assert not (state / "errors.log").exists()
    assert list((state / "runs").iterdir()), "the hook recorded nothing: the probe measured an idle hook"


LEAN_PROBE = """
import re, sys, traceback, json as stdlib_json
for name in [name for name in sys.modules if name == "json" or name.startswith("json.")]:
    del sys.modules[name]  # the probe's own import: the hook must not need json
compiled = []
_compile = re._compile

def _counted(pattern, flags):
    frames = [frame.filename for frame in traceback.extract_stack()[:-1]]
    if calling or any("/vacant/" in name for name in frames[-3:]):  # at import: vacant's own only
        compiled.append(str(pattern)[:60])
    return _compile(pattern, flags)

calling = False
re._compile = _counted
re.purge()
from vacant.hook.call import run
calling = True
run("claude", sys.stdin.buffer.read(), {"CLAUDE_PROJECT_DIR": sys.argv[1]})
loaded = sorted(name for name in ("json", "shlex", "json.decoder", "vacant.attribute", "vacant.policy.contract")
                if name in sys.modules)
gate = "vacant.policy.gate.gate" in sys.modules
print(stdlib_json.dumps({"compiled": compiled, "loaded": loaded, "gate": gate}))
"""


FILE_CALLS = [
    {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "/srv/project/src/Module2/a.py"}},
    {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": "x.txt"},
     "tool_response": {"type": "text", "file": {"filePath": "x.txt", "content": "x"}}},
    {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "x.txt", "content": "x"}},
    {"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": "x.txt", "content": "x"}},
    {"hook_event_name": "PreToolUse", "tool_name": "Edit",
     "tool_input": {"file_path": "x.txt", "old_string": "x", "new_string": "y"}},
    {"hook_event_name": "PostToolUse", "tool_name": "Edit",
     "tool_input": {"file_path": "x.txt", "old_string": "x", "new_string": "y"}},
]


@pytest.mark.parametrize("event", FILE_CALLS)
def test_a_file_tool_call_compiles_no_pattern_and_loads_no_json_module(tmp_path, event):
    """The fallback hook's work for a Read, Write or Edit in a started run: every pattern it could
    need (the redactor's, the gate's, the payload sniffers') is compiled on first use, and none is
    needed for ordinary paths, ids and hashes; JSON goes through the C module alone."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "x.txt").write_text("x\n")
    env = dict(os.environ, VACANT_HOME=str(tmp_path / "data"), CLAUDE_PROJECT_DIR=str(ws))
    with mock.patch.dict(os.environ, env):
        mark_installed(ws)
        state = state_dir(ws)
    start = {"session_id": "s1", "cwd": str(ws), "hook_event_name": "SessionStart", "source": "startup"}
    subprocess.run([sys.executable, "-m", "vacant.hook.entry", "claude"], input=json.dumps(start).encode(), env=env,
                   check=True, cwd=ws, timeout=60)
    payload = json.dumps({"session_id": "s1", "cwd": str(ws), "tool_use_id": "toolu_01", **event})
    proc = subprocess.run([sys.executable, "-c", LEAN_PROBE, str(ws)], input=payload.encode(), capture_output=True,
                          check=True, env=env, cwd=ws, timeout=60)
    seen = json.loads(proc.stdout)
    assert seen == {"compiled": [], "loaded": [], "gate": event["hook_event_name"] == "PreToolUse"}  # a Post never loads the gate
    log = "".join(path.read_text() for path in state.glob("runs/*/events.jsonl"))
    assert '"key":"main/toolu_01"' in log, "the call was not recorded: the probe measured an idle hook"


def test_import_alone_loads_nothing_heavy():
    code = "import sys, vacant.hook.entry, vacant.hook.call; print([m for m in sys.modules if m.split('.')[0] in %r])" % (FORBIDDEN,)
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def hook(tmp_path: Path, stdin: bytes, args=("claude",)) -> subprocess.CompletedProcess:
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(tmp_path), VACANT_HOME=str(tmp_path / "data"))
    return subprocess.run([sys.executable, "-m", "vacant.hook.entry", *args], input=stdin, env=env,
                          capture_output=True, cwd=tmp_path, timeout=30)


@pytest.mark.parametrize("stdin, args", [
    (b"{not json", ("claude",)),
    (b"[1, 2]", ("claude",)),
    (b'{"hook_event_name": "PostToolUse"}', ("no-such-platform",)),
    (b"", ()),
])
def test_bad_input_fails_open_and_is_logged(tmp_path, stdin, args):
    proc = hook(tmp_path, stdin, args)
    assert proc.returncode == 0 and proc.stdout == b""
    # never installed there: the error goes to the user's data directory, nothing into the directory
    assert (tmp_path / "data" / "errors.log").read_text().strip()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


@pytest.mark.slow
def test_hook_bounds_its_own_work(tmp_path):
    """A lock held by someone else forever: the hook gives up within its budget, exit 0."""
    import fcntl

    state = tmp_path / ".vacant"
    state.mkdir()
    holder = open(state / "lock", "w")
    fcntl.flock(holder, fcntl.LOCK_EX)
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(tmp_path), VACANT_HOOK_BUDGET_S="2")
    payload = json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_use_id": "t", "tool_input": {"command": "ls"}, "cwd": str(tmp_path)}).encode()
    proc = subprocess.run([sys.executable, "-m", "vacant.hook.entry", "claude"], input=payload, env=env,
                          capture_output=True, timeout=20)
    holder.close()
    assert proc.returncode == 0 and proc.stdout == b""
    assert "HookTimeout" in (state / "errors.log").read_text()
