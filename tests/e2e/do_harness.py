"""What the `vacant do` e2e tests share (tests/e2e/test_do.py and the other platforms' tests): the
contract and files of the rate task, running `vacant do`, reading the log and a report, and the
person's settings files compared byte for byte. A module of its own, not imported from a test
module: tests/unit has a test_do.py too, and a bare `from test_do import` could find that one.
This module holds no tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from codex_harness import BIN, CodexScratch
from scenarios import SCENARIOS

CHECK = "python3 check_value.py RATE config.py 0.08"
FILES = {
    "vacant.toml": f'task_family = "config"\n\n[[check]]\nname = "rate"\ncommand = "{CHECK}"\n',
    "check_value.py": (SCENARIOS / "check_value.py").read_text(),
}
FEEDBACK = "must be fixed before you stop"
CLAUDE_FLAGS = ["--permission-mode", "acceptEdits", "--allowedTools", "Bash", "--output-format", "json"]


def vacant_do(args: list[str], cwd: Path, env: dict, timeout: float = 400, wall: bool = False) -> subprocess.CompletedProcess:
    """`vacant do ARGS` to the end, in its own process group (killed whole on timeout); unwalled
    unless asked: these test the rounds and the recording (the wall: tests/unit/do/test_wall_attacks.py)."""
    proc = subprocess.Popen([str(BIN / "vacant"), "do", *([] if wall else ["--no-wall"]), *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"vacant do did not finish in {timeout} s:\n{err}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def log_of(workspace: Path) -> list[dict]:
    out = subprocess.run([str(BIN / "vacant"), "log", "--json"], cwd=workspace, capture_output=True, text=True,
                         check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def rounds(log: list[dict]) -> list[tuple[int, str]]:
    return [(r["round"], r["decision"]) for r in log if r["type"] == "round"]


def report(workspace: Path, stop: int | None = None) -> dict:
    args = ["report", "--json"] + (["--stop", str(stop)] if stop else [])
    return json.loads(subprocess.run([str(BIN / "vacant"), *args], cwd=workspace, capture_output=True, text=True,
                                     check=True).stdout)


def tools(log: list[dict]) -> list[str]:
    return [r["tool"] for r in log if r["type"] == "step_start" and r["tool"] != "oob"]


# -- the person's files, compared byte for byte --------------------------------------------------


def person_files(scratch: CodexScratch, workspace: Path) -> dict[str, bytes | None]:
    """Every settings file any of the three agents reads hooks or plugins from."""
    home = scratch.home
    paths = [
        home / ".claude" / "settings.json", home / ".claude" / "settings.local.json",
        workspace / ".claude" / "settings.json", workspace / ".claude" / "settings.local.json",
        scratch.codex_home / "config.toml", scratch.codex_home / "hooks.json",
        workspace / ".codex" / "hooks.json", workspace / ".codex" / "config.toml",
        home / ".config" / "opencode" / "opencode.json", workspace / "opencode.json",
    ]
    found: dict[str, bytes | None] = {str(p): (p.read_bytes() if p.exists() else None) for p in paths}
    for directory in (workspace / ".opencode", home / ".config" / "opencode" / "plugins", workspace / ".codex",
                      workspace / ".claude"):
        found[str(directory) + "/"] = b"\n".join(sorted(p.name.encode() for p in directory.iterdir())) \
            if directory.exists() else None
    return found
