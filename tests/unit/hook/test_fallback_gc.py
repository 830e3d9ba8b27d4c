"""A tool call answered in-process runs no cyclic garbage collection (the collector's passes over
the modules a call imports cost 1-2 ms of each) and looks its state directory up once, and a Stop
answered in-process has the collector back on and nothing remembered for its pipeline. Measured in the process itself: the lean client's `main`, as the
launcher calls it, with a callback counting the collector's passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from vacant.core.locations import mark_installed
from vacant.hook.paths import daemon_dir

REPO = Path(__file__).resolve().parents[3]
PROBE = r"""
import gc, io, json, sys
passes = []
gc.callbacks.append(lambda phase, info: passes.append(info["generation"]) if phase == "stop" else None)
sys.path.insert(0, sys.argv[1])
import vacant.core.locations as locations  # each lookup of a state directory reads the install registry
lookups = []
registered = locations.registered
locations.registered = lambda root: (lookups.append(str(root)), registered(root))[1]
sys.path[0] = sys.argv[1] + "/vacant/hook"
import client
del sys.path[0]
sys.argv = ["vacant-hook-client", "claude"]
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.stdin.buffer.read()))
out, sys.stdout = sys.stdout, io.StringIO()
del passes[:], lookups[:]  # the call's own passes and lookups only (this probe's imports made some)
code = client.main(package_root=%r)
sys.stdout = out
print(json.dumps({"code": code, "passes": len(passes), "enabled": gc.isenabled(),
                  "answered_in_process": "vacant.hook.entry" in sys.modules,
                  "lookups": lookups}, default=str))
""" % str(REPO)


def call(root: Path, body: dict) -> dict:
    marker = daemon_dir(root) / "spawned"  # a daemon starting: the client answers in-process, starts none
    marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker.write_text("test")
    payload = json.dumps({"session_id": "s1", "cwd": str(root), **body}).encode()
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE, str(REPO)], input=payload, capture_output=True,
                          cwd=root, env=dict(os.environ, CLAUDE_PROJECT_DIR=str(root)), timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def test_a_tool_call_in_process_collects_nothing_and_a_stop_collects_again(tmp_path, monkeypatch):
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    mark_installed(root)
    target = str(root / "a.txt")
    for n, body in enumerate([
        {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": target}},
        {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": target},
         "tool_response": {"type": "text", "file": {"filePath": target, "content": "a\n"}}},
        {"hook_event_name": "PreToolUse", "tool_name": "Edit",
         "tool_input": {"file_path": target, "old_string": "a", "new_string": "b"}},
    ]):
        answer = call(root, {"tool_use_id": f"t{n}", **body})
        assert answer["answered_in_process"], "a daemon answered: this measured no fallback"
        assert answer["passes"] == 0 and not answer["enabled"], answer
        # the call looked its state directory up once, for its one workspace, and passed it down
        assert answer["lookups"] == [str(root)], answer
    stop = call(root, {"hook_event_name": "Stop", "stop_hook_active": False, "transcript_path": "/nonexistent"})
    assert stop["answered_in_process"] and stop["enabled"], stop

