"""A run recorded by the real `claude` binary through vacant's installed hooks in one clone,
shared with `vacant sync`, seen by another clone with its own HOME and key."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from claude_harness import FakeUpstream, isolated_home, run_claude_p, tool, turn
from harness import text, vacant

pytestmark = pytest.mark.e2e
MODEL = "claude-opus-4-8"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def person_env(home: Path) -> dict[str, str]:
    return {**os.environ, **GIT_ENV, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "VACANT_HOME": str(home / "vacant-data")}


def test_a_real_claude_run_reaches_another_clone(tmp_path, monkeypatch):
    bare, seed = tmp_path / "remote.git", tmp_path / "seed"
    homes = {name: tmp_path / f"home-{name}" for name in ("a", "c")}
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    lines = [vacant(["sync", "--key", "--name", name], seed, env=person_env(home)).stdout for name, home in homes.items()]
    (seed / ".vacant-team-keys").write_text("".join(lines))
    (seed / "vacant.toml").write_text('task_family = "share"\n\n[[check]]\nname = "no-bad"\n'
                                      'command = "! grep -q bad out.txt"\n')
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "seed")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    start = git(seed, "rev-parse", "HEAD").strip()

    ws_a, ws_c = tmp_path / "ws-a", tmp_path / "ws-c"
    git(tmp_path, "clone", "-q", str(bare), str(ws_a))
    env_a = person_env(homes["a"])
    vacant(["init", "--platform", "claude"], ws_a, env=env_a)
    isolated_home(homes["a"], ws_a)
    for name in ("XDG_CONFIG_HOME", "VACANT_HOME"):  # the hooks claude runs inherit a's environment
        monkeypatch.setenv(name, env_a[name])
    with FakeUpstream({"turns": [turn(tool("Write", file_path=str(ws_a / "out.txt"), content="fine\n")),
                                 turn(text("done"))]}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(ws_a, homes["a"], upstream, "write out.txt")
    assert proc.returncode == 0, proc.stderr
    pushed = json.loads(vacant(["sync", "--json"], ws_a, env=env_a).stdout)
    assert pushed["published_runs"] == 1 and pushed["published_reviews"] == 1 and len(pushed["pushed"]) == 1

    git(tmp_path, "clone", "-q", str(bare), str(ws_c))
    env_c = person_env(homes["c"])
    vacant(["sync"], ws_c, env=env_c)
    shown = json.loads(vacant(["reputation", "--json"], ws_c, env=env_c).stdout)
    assert [(c["platform"], c["model"], c["task_family"], c["n"], c["mean"]) for c in shown["cells"]] == [
        ("claude-code", MODEL, "share", 1, 1.0)]
    assert shown["provenance"]["local"] == 0 and shown["provenance"]["team"] == 1
    assert [a["name"] for a in shown["provenance"]["authors"]] == ["a"]
    local = json.loads(vacant(["reputation", "--json", "--local"], ws_c, env=env_c).stdout)
    assert local["cells"] == [] and local["provenance"]["mode"] == "local"
    status = json.loads(vacant(["sync", "--status", "--json"], ws_c, env=env_c).stdout)
    assert status["runs_counted"] == 1 and status["rejected"] == []
    ref = f"refs/vacant/authors/{pushed['author']}"
    (path,) = [p for p in git(ws_c, "ls-tree", "-r", "--name-only", ref).split() if p.startswith("runs/")]
    record = json.loads(git(ws_c, "cat-file", "blob", f"{ref}:{path}"))["body"]
    assert record["platform"] == "claude-code" and record["commit"] == start
    assert [(s["tool"], s["changed"]) for s in record["steps"]] == [("Write", ["out.txt"])]
    assert record["cells"][0]["model"] == MODEL and record["read_coverage"]["state"] in ("complete", "partial", "none")
