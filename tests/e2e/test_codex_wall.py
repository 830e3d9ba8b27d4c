"""The wall with the real `codex` (0.171.0, as root here): `vacant init --platform codex` writes a
permission profile into the project's config; one scripted `codex exec` (no `--sandbox` flag: it
would make Codex ignore the profile) runs the attacks next to normal work. With the wall: the key
and the state are unreadable and unwritable from a command, the held push is held, and new files,
`git commit` and a test run work. With `--no-wall` the same attacks succeed (each check can fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from codex_harness import (
    FakeResponses,
    codex_binary,
    codex_env,
    git_workspace,
    run_bounded,
    shell,
    turn,
    vacant,
    write_config,
)
from harness import text
from test_claude_wall import KEY, hidden_path

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e


def session(scratch, walled: bool) -> tuple[Path, dict[str, str], Path]:
    ws = git_workspace(scratch.path / "ws", {"test_x.py": "def test_one():\n    assert 1 + 1 == 2\n"})
    remote = scratch.path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "remote", "add", "origin", str(remote)], cwd=ws, check=True)
    write_config(scratch.codex_home)
    env = codex_env(scratch.home, scratch.codex_home, scratch.vacant_home)
    vacant(["init", "--platform", "codex", *([] if walled else ["--no-wall"])], ws, env=env)
    key = scratch.home / ".config" / "vacant" / "key"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text(KEY)
    install = hidden_path(state_dir(ws) / "install.json")
    script = {
        "key": f"python3 -c \"print(open({hidden_path(key)}).read())\"",
        "record": f"python3 -c \"import os; os.remove({install})\"; echo done",
        "push": "git push -q origin HEAD:main",
        "work": "echo new > new.txt && git add new.txt && git -c user.email=a@b.invalid -c user.name=a commit -qm work "
                f"&& {sys.executable} -m pytest -q -p no:cacheprovider test_x.py && echo WORK-OK",
    }
    turns = [turn(shell(command, call_id=f"call-{name}", yield_time_ms=120000)) for name, command in script.items()] + [turn(text("Done."))]
    with FakeResponses({"turns": turns}, scratch.path / "upstream") as upstream:
        cmd = [str(codex_binary()), "exec", "--color", "never",
               "-c", f"model_providers.fake.base_url={json.dumps(upstream.base_url)}", "do the task"]
        process = run_bounded(cmd, ws, env, 240)
        found: dict[str, str] = {}
        for request in upstream.requests():
            for item in request["body"].get("input") or []:
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    found[item["call_id"]] = str(item.get("output"))
    assert process.returncode == 0, process.stderr[-2000:]
    return ws, {name: found.get(f"call-{name}", "") for name in script}, remote


def pushed(remote: Path) -> bool:
    return subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/main"], cwd=remote,
                          capture_output=True).returncode == 0


def test_the_wall_holds_in_codexs_own_sandbox_and_falls_without_it(scratch):
    ws, out, remote = session(scratch, walled=True)
    assert KEY not in out["key"] and "Permission denied" in out["key"], out["key"]
    assert (state_dir(ws) / "install.json").exists()
    assert not pushed(remote) and "git-push" in out["push"], out["push"]
    assert "WORK-OK" in out["work"] and (ws / "new.txt").exists(), out["work"]
    assert subprocess.run(["git", "log", "-1", "--format=%s"], cwd=ws, capture_output=True, text=True).stdout == "work\n"


def test_without_the_wall_the_same_attacks_succeed(scratch):
    ws, out, _remote = session(scratch, walled=False)
    assert KEY in out["key"]
    # Codex's own default keeps `.git` read-only (measured): the state in `.git/vacant` survives even
    # unwalled; a state outside `.git` (a non-git workspace) would not
    assert (state_dir(ws) / "install.json").exists() and "Read-only file system" in out["record"], out["record"]
