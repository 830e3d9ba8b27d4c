"""A run recorded by the real `claude` binary through vacant's installed hooks in one clone,
shared with `vacant sync`, seen by another clone with its own HOME and key."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
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


def seed_remote(tmp_path: Path, homes: dict[str, Path], trusted: list[str], files: dict[str, str]) -> Path:
    """A bare remote whose `main` commits the trusted people's keys and `files`."""
    bare, seed = tmp_path / "remote.git", tmp_path / "seed"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    lines = [vacant(["sync", "--key", "--name", name], seed, env=person_env(homes[name])).stdout for name in trusted]
    (seed / ".vacant-team-keys").write_text("".join(lines))
    for rel, content in files.items():
        (seed / rel).write_text(content)
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "seed")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    return bare


def recording_clone(tmp_path: Path, bare: Path, home: Path, monkeypatch) -> tuple[Path, dict[str, str]]:
    """A clone where `vacant init` installed the Claude hooks, under `home`; its path and env."""
    ws = tmp_path / f"ws-{home.name}"
    git(tmp_path, "clone", "-q", str(bare), str(ws))
    env = person_env(home)
    vacant(["init", "--platform", "claude", "--no-wall"], ws, env=env)  # share is tested here; the wall in test_claude_wall.py
    isolated_home(home, ws)
    for name in ("XDG_CONFIG_HOME", "VACANT_HOME"):  # the hooks claude runs inherit this person's environment
        monkeypatch.setenv(name, env[name])
    return ws, env


def test_a_real_claude_run_reaches_another_clone(tmp_path, monkeypatch):
    homes = {name: tmp_path / f"home-{name}" for name in ("a", "c")}
    # red at the baseline (no out.txt yet): a run whose every check was already green reviews nobody
    bare = seed_remote(tmp_path, homes, ["a", "c"], {"vacant.toml": 'task_family = "share"\n\n[[check]]\nname = "fine"\n'
                                                                    'command = "grep -q fine out.txt"\n'})
    start = git(tmp_path / "seed", "rev-parse", "HEAD").strip()
    ws_a, env_a = recording_clone(tmp_path, bare, homes["a"], monkeypatch)
    ws_c = tmp_path / "ws-c"
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


def forge_on_remote(tmp_path: Path, bare: Path, author: str) -> None:
    """Edit the author's run record on the remote after signing (renamed to its new hash, the
    original dropped, force-pushed as anyone with push rights could)."""
    attacker = tmp_path / "attacker"
    git(tmp_path, "clone", "-q", str(bare), str(attacker))
    git(attacker, "fetch", "-q", "origin", "+refs/vacant/*:refs/vacant/*")
    ref = f"refs/vacant/authors/{author}"
    entries = [line.split(None, 3) for line in git(attacker, "ls-tree", "-r", ref).splitlines()]
    (run_path,) = [e[3] for e in entries if e[3].startswith("runs/")]
    blob = git(attacker, "cat-file", "blob", f"{ref}:{run_path}").encode()
    forged = blob.replace(b'"tool":"Edit"', b'"tool":"Write"')
    assert forged != blob
    oid = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=attacker, input=forged, capture_output=True,
                         check=True).stdout.decode().strip()
    name = hashlib.sha256(forged).hexdigest()
    tree = [f"{mode} {kind} {o}\t{p}" for mode, kind, o, p in entries if p != run_path]
    tree.append(f"100644 blob {oid}\truns/{name[:2]}/{name[2:]}")
    index = attacker / ".git" / "forged-index"
    env = {**os.environ, **GIT_ENV, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "update-index", "--index-info"], cwd=attacker, input="\n".join(tree) + "\n", text=True,
                   env=env, check=True, capture_output=True)
    new_tree = subprocess.run(["git", "write-tree"], cwd=attacker, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()
    parent = git(attacker, "rev-parse", ref).strip()
    commit = git(attacker, "commit-tree", new_tree, "-p", parent, "-m", "not vacant").strip()
    git(attacker, "push", "-q", "--force", "origin", f"{commit}:{ref}")


def line_authors(shown: dict) -> list[tuple]:
    return [(row["text"], row["origin"], row["run"], row["step"], row["tool"],
             tuple((row["actor"] or {}).get(k) for k in ("platform", "agent_definition", "model"))) for row in shown["lines"]]


def test_a_fresh_clone_blames_each_line_of_a_real_claude_run_like_the_recording_clone(tmp_path, monkeypatch):
    """Clone a records a real Claude Code run that writes and edits notes.txt, commits, syncs; a
    fresh clone c (its own HOME and key) names, line by line, the step, run and cell that a's own
    `vacant blame` names. A record edited on the remote, or signed by an unknown key, explains none."""
    homes = {name: tmp_path / f"home-{name}" for name in ("a", "c", "x", "d")}
    bare = seed_remote(tmp_path, homes, ["a", "c"], {"vacant.toml": 'task_family = "notes"\n', "notes.txt": "# notes\nkeep\n"})
    ws_a, env_a = recording_clone(tmp_path, bare, homes["a"], monkeypatch)
    notes = str(ws_a / "notes.txt")
    with FakeUpstream({"turns": [turn(tool("Read", file_path=notes)),
                                 turn(tool("Write", file_path=notes, content="# notes\nkeep\nfrom claude\nscratch\n")),
                                 turn(tool("Edit", file_path=notes, old_string="scratch", new_string="edited\nlast")),
                                 turn(text("done"))]}, tmp_path / "upstream") as upstream:
        proc = run_claude_p(ws_a, homes["a"], upstream, "write notes")
    assert proc.returncode == 0, proc.stderr
    with (ws_a / "notes.txt").open("a") as handle:
        handle.write("by hand\n")  # after the run: outside any run, on every clone
    git(ws_a, "add", "notes.txt")
    git(ws_a, "commit", "-qm", "notes")
    git(ws_a, "push", "-q", "origin", "HEAD:main")
    pushed = json.loads(vacant(["sync", "--json"], ws_a, env=env_a).stdout)
    assert pushed["published_runs"] == 1
    recorded = line_authors(json.loads(vacant(["blame", "notes.txt", "--local", "--json"], ws_a, env=env_a).stdout))
    assert [(t, o, s, tool_) for t, o, _, s, tool_, _ in recorded] == [
        ("# notes", "baseline", None, None), ("keep", "baseline", None, None), ("from claude", "step", 2, "Write"),
        ("edited", "step", 3, "Edit"), ("last", "step", 3, "Edit"), ("by hand", "outside", None, None)]

    ws_c = tmp_path / "ws-c"
    git(tmp_path, "clone", "-q", str(bare), str(ws_c))
    env_c = person_env(homes["c"])
    vacant(["sync"], ws_c, env=env_c)
    shown = json.loads(vacant(["blame", "notes.txt", "--team", "--json"], ws_c, env=env_c).stdout)
    assert line_authors(shown) == recorded
    assert {(row["source"], row["key_name"]) for row in shown["lines"] if row["run"]} == {("team", "a")}
    assert recorded[2][5] == ("claude-code", "main", MODEL) and shown["rejected"] == 0

    # the same run signed by a key nobody trusts, and a's record edited on the remote: neither counts
    ws_x = tmp_path / "ws-x"
    git(tmp_path, "clone", "-q", str(bare), str(ws_x))
    shutil.copytree(ws_a / ".git" / "vacant", ws_x / ".git" / "vacant", ignore=shutil.ignore_patterns("share", "daemon"))
    vacant(["sync"], ws_x, env=person_env(homes["x"]))
    forge_on_remote(tmp_path, bare, pushed["author"])
    ws_d = tmp_path / "ws-d"
    git(tmp_path, "clone", "-q", str(bare), str(ws_d))
    env_d = person_env(homes["d"])
    vacant(["sync"], ws_d, env=env_d)
    fresh = json.loads(vacant(["blame", "notes.txt", "--team", "--json"], ws_d, env=env_d).stdout)
    assert fresh["runs"] == [] and {row["origin"] for row in fresh["lines"]} == {"outside"}
    reasons = json.loads(vacant(["sync", "--status", "--json"], ws_d, env=env_d, check=False).stdout)["rejected"]
    assert any(r["reason"].startswith("unknown key") for r in reasons)
    assert any(r["reason"].startswith("bad signature") and r["path"].startswith("runs/") for r in reasons)
