"""The lean client's in-process fallback (no daemon answers: a session's first call, a daemon that
is down or still starting) loads a bounded set of modules for a Read, Write or Edit call.

Measured like the user's call: the installed launcher (`python -I -S …/vacant-hook-client.py
claude`) as a process under `-X importtime`, in an installed workspace with no daemon, against
`python -I -S -c pass`. Each stdlib module costs every tool call its import (the fallback's budget is
the bare interpreter + 15 ms, issue 26), so the stdlib ones are named one by one: a new one fails
here until it is either made lazy or added on purpose. Timing-free: it counts modules, not ms.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vacant.core.locations import mark_installed, state_dir
from vacant.daemon import lifecycle
from vacant.hook.paths import daemon_dir

LAUNCHER = Path(__file__).resolve().parents[3] / "vacant" / "vacant-hook-client.py"

# what the fallback may load beyond the bare interpreter: pathlib with what it imports (not
# urllib.parse, fnmatch, ntpath, warnings, functools nor operator: lean.lean_pathlib defers them),
# the C half of json (_json, through vacant/core/leanjson.py), _collections (vacant/core/leanstd.py's
# namedtuple), fcntl (the step log's lock), the builtin SHA-256 (`_sha2` from 3.12; no module this
# interpreter lacks is tried: each miss is a search of sys.path). `re` and what it imports only for
# a pattern (a run's first call reads HEAD's commit through one). Not signal (the deadline's alarm
# uses _signal: signal.py adds an enum), shlex (the gate's shell reader: a shell command's only),
# bisect (a broken chain only), math (a candidate secret only).
STDLIB_ALLOWED = {
    "__future__", "_collections", "_collections_abc", "_json", "_sha2", "_sha256", "_stat", "gc",
    "errno", "fcntl", "genericpath", "os", "pathlib", "posixpath", "stat",
    # a pattern's (the run's first call): re with its enum, and what they import
    "re", "re._casefix", "re._compiler", "re._constants", "re._parser", "_sre", "copyreg", "enum", "functools",
    "_functools", "collections", "_operator", "operator", "itertools", "keyword", "reprlib", "types",
}
# the packages a tool call's record and gate stand on (never the Stop pipeline and its contract, the CLI, sharing, ...)
VACANT_ALLOWED = ("vacant.core.", "vacant.store.", "vacant.policy.gate.", "vacant.record.", "vacant.platforms.")
VACANT_ALSO = {"vacant", "vacant.core", "vacant.store", "vacant.policy", "vacant.policy.gate", "vacant.policy.shipped",
               "vacant.record", "vacant.platforms",
               "vacant.hook", "vacant.hook.entry", "vacant.hook.call", "vacant.daemon", "vacant.hook.paths"}
# a Claude call loads Claude's platform only (vacant/platforms/lean_registry.py), and the asks of
# ACT calls only when one is held
VACANT_NEVER = {"vacant.platforms.all_platforms", "vacant.platforms.codex", "vacant.platforms.opencode",
                "vacant.platforms.gemini", "vacant.platforms.qwen", "vacant.platforms.copilot",
                "vacant.platforms.command", "vacant.policy.gate.asks", "vacant.platforms.codex.doctor",
                # the gate's shell reader (a shell command's only: a file tool's writes are checked
                # with policy/gate/scope.py), the transcript (read at Stop), the generated docs'
                # helper, the settings files' writer (install and `vacant do` only; githead, HEAD's
                # commit, loads at a run's start: here the first call)
                "vacant.policy.gate.shellscan", "vacant.policy.gate.shellwords", "vacant.policy.gate.forms",
                "vacant.policy.gate.argv", "vacant.policy.gate.keyrefs", "vacant.policy.gate.recordguard",
                # the modes of the arms directory: a shell command's, or a write into that directory
                "vacant.policy.gate.modes",
                "vacant.platforms.claude_transcript", "vacant.core.docgen", "vacant.platforms.settings_file",
                # the failure paths' deny table: only where vacant failed (as a top-level module too)
                "vacant.platforms.deny", "deny"}
# costly and never needed by a tool call: named so that a failure says which one came back
NEVER = {"hashlib", "_hashlib", "threading", "copy", "typing", "dataclasses", "subprocess", "inspect", "ast",
         "traceback", "textwrap", "tomllib", "socket", "selectors", "tempfile", "logging", "datetime",
         # pathlib's rare methods' (about 3.5 ms), json's Python half (its regexes), zlib (a long socket path's)
         "urllib", "urllib.parse", "ipaddress", "fnmatch", "json", "json.decoder", "json.scanner", "json.encoder",
         "zlib"}


# checks and a task family: neither `[gate]` nor `[store]`, whose readers compile patterns
CONTRACT = 'task_family = "web"\n\n[[check]]\nname = "tests"\ncommand = "true"\ntimeout = 30\n'
# `re` (with the enum it builds its flags from) only where a pattern is used: no file tool's call
# after the run's first (which reads HEAD's commit through one)
PATTERNS = {"re", "enum", "re._compiler", "re._parser", "sre_compile"}
# what vacant/core/leanstd.py and lean.lean_pathlib spare every call but a run's first: about
# 5 ms of each (collections, functools, contextlib and what they import)
SPARED = {"collections", "collections.abc", "functools", "contextlib", "operator", "reprlib", "keyword", "types",
          "ntpath", "warnings", "itertools"}


def imported(proc_stderr: bytes) -> set[str]:
    return {line.split("|")[-1].strip() for line in proc_stderr.decode().splitlines()
            if line.startswith("import time:") and "self [us]" not in line}


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("VACANT_HOME", str(tmp_path / "data"))
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    mark_installed(root)
    return root


def calls(root: Path) -> list[dict]:
    target = str(root / "a.txt")
    return [
        {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": target}},
        {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": target},
         "tool_response": {"type": "text", "file": {"filePath": target, "content": "a\n"}}},
        {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": target, "content": "b\n"}},
        {"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_input": {"file_path": target, "content": "b\n"}},
        {"hook_event_name": "PreToolUse", "tool_name": "Edit",
         "tool_input": {"file_path": target, "old_string": "b", "new_string": "c"}},
        {"hook_event_name": "PostToolUse", "tool_name": "Edit",
         "tool_input": {"file_path": target, "old_string": "b", "new_string": "c"}},
    ]


def run_fallback(root: Path, call: dict, n: int) -> subprocess.CompletedProcess:
    """The installed launcher with no daemon: a `spawned` marker a moment old, as while one starts,
    so the client starts none and answers in-process."""
    marker = daemon_dir(root) / "spawned"
    marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker.write_text("test")
    body = json.dumps({"session_id": "s1", "cwd": str(root), "tool_use_id": f"t{n}", **call}).encode()
    return subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", str(LAUNCHER), "claude"], input=body,
                          capture_output=True, cwd=root, env=dict(os.environ, CLAUDE_PROJECT_DIR=str(root)),
                          timeout=120)


@pytest.mark.slow
def test_the_fallback_for_read_write_edit_loads_only_the_allowed_modules(workspace):
    bare = imported(subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", "-c", "pass"],
                                   capture_output=True, check=True).stderr)
    for n, call in enumerate(calls(workspace)):
        proc = run_fallback(workspace, call, n)
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        loaded = imported(proc.stderr) - bare - {"client", "lean"}  # vacant/hook siblings the client loads by path
        assert "vacant.hook.entry" in loaded, "the call was not answered in-process: this measured no fallback"
        where = f"{call['hook_event_name']}:{call['tool_name']}"
        vacant = {name for name in loaded if name.startswith("vacant") or name == "deny"}
        third_party = {name for name in loaded - vacant if name.split(".")[0] in ("xxhash",)}
        stdlib = loaded - vacant - third_party
        assert not stdlib & NEVER, f"{where} imported {sorted(stdlib & NEVER)}"
        assert stdlib <= STDLIB_ALLOWED, f"{where} imported stdlib modules beyond the allowlist: {sorted(stdlib - STDLIB_ALLOWED)}"
        assert not vacant & VACANT_NEVER, f"{where} imported {sorted(vacant & VACANT_NEVER)}"
        strays = {name for name in vacant if not name.startswith(VACANT_ALLOWED) and name not in VACANT_ALSO}
        assert not strays, f"{where} imported vacant modules off the tool-call path: {sorted(strays)}"
        # xxhash on the first hash only: the first call starts the run (its baseline hashes every
        # file), a Post records what was read or written; a later Pre hashes nothing
        missed = sorted(name for name in stdlib if importlib.util.find_spec(name) is None)
        assert not missed, f"{where} tried {missed}, which this interpreter lacks (each a search of sys.path)"
        if n and call["hook_event_name"] == "PreToolUse":
            assert not third_party, f"{where} imported {sorted(third_party)} and hashed nothing"
        if n:
            assert not stdlib & PATTERNS, f"{where} imported {sorted(stdlib & PATTERNS)} and matched no pattern"
            assert not stdlib & SPARED, f"{where} imported {sorted(stdlib & SPARED)}: vacant/core/leanstd.py spares them"
    state = state_dir(workspace)
    assert not (state / "errors.log").exists(), (state / "errors.log").read_text()
    assert list((state / "runs").iterdir()), "nothing was recorded: the probe measured an idle hook"
    assert not lifecycle.running(workspace), "a daemon answered: the probe measured no fallback"


@pytest.mark.slow
def test_with_a_contract_a_file_call_after_the_first_still_loads_no_pattern_module(workspace):
    """Most workspaces have a contract: reading its task family (every call records its cell), and
    finding no `[gate]` or `[store]` in it, needs no `re`."""
    (workspace / "vacant.toml").write_text(CONTRACT)
    for n, call in enumerate(calls(workspace)):
        proc = run_fallback(workspace, call, n)
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        loaded = imported(proc.stderr)
        assert "vacant.hook.entry" in loaded, "the call was not answered in-process: this measured no fallback"
        if n:
            assert not loaded & PATTERNS, f"call {n} imported {sorted(loaded & PATTERNS)} and matched no pattern"
    state = state_dir(workspace)
    assert not (state / "errors.log").exists(), (state / "errors.log").read_text()
    log = "".join(path.read_text() for path in state.glob("runs/*/events.jsonl"))
    assert '"task_family":"web"' in log, "the contract's task family was not read: the probe proved nothing"
