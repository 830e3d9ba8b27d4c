"""An approved line the platform's wall would break, run once by vacant's hook outside the wall
(vacant/record/unwalled.py): which lines may run there (generated lines against an oracle that
knows each part), and the whole path through the real Codex hook with a real git remote on disk."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from vacant.core import events
from vacant.core.locations import mark_installed, run_dir
from vacant.core.wall import wall_for
from vacant.hook import call as hook
from vacant.hook.paths import info, socket_path
from vacant.platforms.codex import wall as codex_wall
from vacant.policy.gate.asks import answer as person, views
from vacant.record import unwalled

# -- which lines are plain pushes: parts whose fate is known, joined --------------------------------

PLAIN = ["git push", "git push -q origin HEAD:main", "git  'push' origin", "git push --force-with-lease origin main",
         "git push -o ci.skip origin main", "git push --repo=origin", "echo PUSH-EXIT=$?", "printf '%s' done",
         "true", ":", "false", "git push 2>&1", "git push >/dev/null 2>&1", "echo \"pushed $HOME\""]
NOT_PLAIN = ["./x.sh", "sh x.sh", "cd /tmp/r", "git -c core.hooksPath=h push", "git -C .. push",
             "git push --receive-pack=./evil", "git push --exec=./evil", "git push --recurse-submodules=on-demand",
             "git push $REMOTE", "git push origin $(cat ref)", "echo $(id)", "echo `id`", "git status", "cat f",
             "git push > out.txt", "echo x >> ~/.bashrc", "python3 -c 'print(1)'", "git push <<EOF\nx\nEOF",
             "(git push)", "git push &", "/usr/bin/git push", "git fetch"]
JOINS = [";", "&&", "||", " ; ", "\n"]
BAD_JOINS = ["|", "&", "|&"]


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 99)), min_size=1, max_size=4),
       st.lists(st.tuples(st.booleans(), st.integers(0, 99)), min_size=3, max_size=3))
@settings(max_examples=120, deadline=None)
def test_only_a_line_of_plain_pushes_and_harmless_commands_may_run_outside(parts, joins):
    line, plain = "", True
    for at, (good, pick) in enumerate(parts):
        part = PLAIN[pick % len(PLAIN)] if good else NOT_PLAIN[pick % len(NOT_PLAIN)]
        plain &= good
        if at:
            join_good, join_pick = joins[at - 1]
            line += f" {JOINS[join_pick % len(JOINS)] if join_good else BAD_JOINS[join_pick % len(BAD_JOINS)]} "
            plain &= join_good
        line += part
    why, _ = unwalled.plain_refusal(line)
    assert (why is None) == plain, (line, why)


@pytest.mark.parametrize(("line", "where"), [
    ("git push", []), ("git push -q origin HEAD:main", ["origin"]), ("git push -o x -- ../r.git main", ["../r.git"]),
    ("git push --repo=/srv/r.git; git push up", ["/srv/r.git", "up"]), ("git push --repo /a b", ["/a", "b"]),
])
def test_the_destinations_a_push_names(line, where):
    assert unwalled.plain_refusal(line) == (None, where)


@pytest.mark.parametrize(("url", "local"), [
    ("/srv/r.git", "/srv/r.git"), ("file:///srv/r.git", "/srv/r.git"), ("../r.git", "/srv/r.git"), ("r.git", "/srv/ws/r.git"),
    ("git@host:r.git", None), ("https://host/r.git", None), ("ssh://host/r.git", None), ("host:path/r", None),
])
def test_which_urls_name_a_repository_on_disk(url, local):
    assert unwalled.local_path(url, "/srv/ws") == local


# -- the whole path: the real Codex hook, a real git push ------------------------------------------


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


class Codex:
    """Drives the codex hook as Codex does: a PreToolUse per shell call; the deny's reason, or None."""

    def __init__(self, ws: Path) -> None:
        self.ws, self.n = ws, 0

    def shell(self, command: str) -> str | None:
        self.n += 1
        body = {"session_id": "s1", "turn_id": "t1", "cwd": str(self.ws), "hook_event_name": "PreToolUse",
                "model": "gpt-5.5", "tool_name": "Bash", "tool_input": {"command": command},
                "tool_use_id": f"call-{self.n}"}
        stdout, code = hook.run("codex", json.dumps(body).encode(), {})
        assert code == 0
        return json.loads(stdout)["hookSpecificOutput"]["permissionDecisionReason"] if stdout else None

    def log(self) -> list[dict]:
        return events.load(run_dir(self.ws, "s1") / "events.jsonl")


@pytest.fixture
def walled(tmp_path, isolated_home, monkeypatch) -> tuple[Path, Path]:
    """(a git workspace behind Codex's wall as vacant writes it, a bare remote on disk outside it).
    The test's temporary directory stands where the agent cannot write (a real one is under /tmp)."""
    ws, remote = tmp_path / "ws", tmp_path / "remote.git"
    ws.mkdir()
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(ws, "init", "-q")
    (ws / "a.txt").write_text("a\n")
    git(ws, "add", "a.txt")
    git(ws, "-c", "user.email=a@b.invalid", "-c", "user.name=a", "commit", "-qm", "one")
    git(ws, "remote", "add", "origin", str(remote))
    mark_installed(ws, walls={"codex": True})
    codex_wall.install(ws, wall_for(ws))
    monkeypatch.chdir(ws)
    monkeypatch.setattr(unwalled, "writable_roots", lambda root, env: [str(root.resolve())])
    return ws, remote


def pushed(remote: Path) -> str | None:
    found = subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/main"], cwd=remote,
                           capture_output=True, text=True)
    return found.stdout.strip() or None


def ask_of(reason: str) -> str:
    return json.loads(reason)["askId"]


PUSH = "git push -q origin HEAD:main 2>&1; echo PUSH-EXIT=$?"


def test_an_approved_push_runs_once_outside_the_wall_by_the_hook(walled):
    ws, remote = walled
    agent = Codex(ws)
    ask = ask_of(agent.shell(PUSH))
    assert pushed(remote) is None
    person.answer(ws, ask, "approved")
    told = agent.shell(PUSH)
    assert told.startswith(f"Ran once, as the person approved ({ask})") and "Exit status 0" in told, told
    assert "PUSH-EXIT=0" in told and pushed(remote) == git(ws, "rev-parse", "HEAD").strip()
    assert views.resolve(ws, ask)["fate"] == "spent"
    ran = [r for r in agent.log() if r["type"] == "step_end" and r.get("ran_by") == "vacant"]
    assert [(r["outcome"], r["exit_code"], r["ask"]) for r in ran] == [("ok", 0, ask)]
    start = next(r for r in agent.log() if r["type"] == "step_start" and r["step"] == ran[0]["step"])
    assert start["intent"] == {"command": PUSH}
    first = pushed(remote)
    git(ws, "-c", "user.email=a@b.invalid", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "two")
    again = agent.shell(PUSH)  # the approval is spent: held for a new answer, and nothing ran
    assert ask_of(again) != ask and pushed(remote) == first


@pytest.mark.parametrize("line", [f"{PUSH} && sh x.sh", "git push origin HEAD:main > pushed.txt"])
def test_an_approved_line_that_is_no_plain_push_is_not_run_and_keeps_its_approval(walled, line):
    ws, remote = walled
    (ws / "x.sh").write_text("touch ran-as-the-person\n")
    agent = Codex(ws)
    ask = ask_of(agent.shell(line))
    person.answer(ws, ask, "approved")
    told = agent.shell(line)
    assert told.startswith(f"Not run: the person approved this ({ask})") and "plain `git push`" in told, told
    assert not (ws / "ran-as-the-person").exists() and not (ws / "pushed.txt").exists() and pushed(remote) is None
    assert views.resolve(ws, ask)["fate"] == "approved"  # kept, unspent


def test_no_push_runs_as_the_person_where_git_would_run_what_the_agent_wrote(walled, tmp_path):
    ws, remote = walled
    inner = ws / "inner.git"  # a remote the agent can write: git would run its hooks as the person
    git(ws, "init", "-q", "--bare", str(inner))
    agent = Codex(ws)
    line = f"git push -q {inner} HEAD:main"
    ask = ask_of(agent.shell(line))
    person.answer(ws, ask, "approved")
    told = agent.shell(line)
    assert "a repository on disk the agent can write" in told and pushed(inner) is None, told
    (ws / ".git" / "commondir").write_text(str(tmp_path / "elsewhere"))  # git's config and hooks moved
    ask = ask_of(agent.shell(PUSH))
    person.answer(ws, ask, "approved")
    told = agent.shell(PUSH)
    assert "commondir" in told and pushed(remote) is None, told
    assert views.resolve(ws, ask)["fate"] == "approved"


def test_without_vacants_wall_the_approved_push_is_left_to_the_platform(walled):
    ws, remote = walled
    mark_installed(ws, walls={"codex": False})
    agent = Codex(ws)
    ask = ask_of(agent.shell(PUSH))
    person.answer(ws, ask, "approved")
    assert agent.shell(PUSH) is None  # allowed: the platform runs it (no wall of vacant's breaks it)
    assert pushed(remote) is None and views.resolve(ws, ask)["fate"] == "spent"


def test_a_run_is_bounded_in_time_and_output(tmp_path):
    ran = unwalled.run("yes | head -c 100000; sleep 30", str(tmp_path), {"PATH": "/usr/bin:/bin"}, timeout=1)
    assert ran.exit_code is None and "killed after 1 s" in ran.error and ran.seconds < 10
    assert len(ran.output) < unwalled.OUTPUT_CAP + 100 and "bytes left out" in ran.output
    assert "could not start" in unwalled.run("true", str(tmp_path / "gone"), {}).error


@pytest.mark.parametrize(("line", "cwd", "why"), [
    ("git push -q ./inner.git HEAD:main", ".", "a repository on disk the agent can write"),
    ("git push -q ./link.git HEAD:main", ".", "a repository on disk the agent can write"),  # a link out of it
    ("git push -q 'ext::sh -c true' HEAD:main", ".", "remote helper"),
    ("git push -q origin HEAD:main", "nested", "holds a git repository of its own"),
    ("git push -q origin HEAD:main", "..", "outside the workspace"),
    ("git push -q origin HEAD:main", "sub", None),
])
def test_where_git_would_read_what_the_agent_wrote_nothing_runs(walled, line, cwd, why):
    ws, remote = walled
    git(ws, "init", "-q", "--bare", "inner.git")
    (ws / "link.git").symlink_to(remote)
    (ws / "nested").mkdir()
    git(ws / "nested", "init", "-q")
    (ws / "sub").mkdir()
    env = unwalled.environment(ws, dict(os.environ))
    found = unwalled.refusal(ws, line, str(ws / cwd), line, None, env)
    assert (found is None) if why is None else (why in (found or "")), found


def test_the_run_is_pinned_to_the_workspaces_repository(walled, tmp_path):
    """A `.git/commondir` the agent writes after the checks (it may write `.git`) would move git's
    config and hooks: the run's environment pins git to the workspace's own directory."""
    ws, _remote = walled
    elsewhere = tmp_path / "elsewhere"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    (ws / ".git" / "commondir").write_text(str(elsewhere))
    plain = git(ws, "rev-parse", "--git-common-dir").strip()
    assert plain == str(elsewhere)  # what git reads without the pin
    env = unwalled.environment(ws, dict(os.environ))
    pinned = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=ws / "..", env=env, capture_output=True,
                            text=True, check=True).stdout.strip()
    assert pinned == str((ws / ".git").resolve())


CLIENT = Path(__file__).resolve().parents[3] / "vacant" / "vacant-hook-client.py"
ANCESTRY = 'p=$$; while [ "$p" -gt 1 ]; do echo "$p"; p=$(cut -d" " -f4 /proc/$p/stat); done > "{out}"\n'


def client(ws: Path, command: str, n: int) -> str:
    """One PreToolUse through the installed launcher (the lean client: the daemon when one runs)."""
    body = {"session_id": "s1", "turn_id": "t1", "cwd": str(ws), "hook_event_name": "PreToolUse", "model": "gpt-5.5",
            "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": f"call-d{n}"}
    answer = subprocess.run([sys.executable, str(CLIENT), "codex"], input=json.dumps(body).encode(), cwd=ws,
                            capture_output=True, timeout=60, check=True)
    return json.loads(answer.stdout)["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.slow
def test_through_the_daemons_door_the_daemon_runs_it(tmp_path, isolated_home, monkeypatch):
    """The lean client hands the call to the workspace's daemon (a real process, started by the
    first call's client): the daemon runs the approved push, once, within its share of the call.
    The remote lies where the agent cannot write (not under a temporary directory: the daemon
    checks that for itself); its post-receive hook writes the processes it runs under."""
    outside = Path(__file__).resolve().parents[3] / ".e2e-tmp" / f"unwalled-{uuid.uuid4().hex[:12]}"
    daemon = None
    try:
        ws, remote, ancestry = tmp_path / "ws", outside / "remote.git", outside / "ancestry"
        ws.mkdir()
        git(tmp_path, "init", "-q", "--bare", str(remote))
        (remote / "hooks" / "post-receive").write_text(f"#!/bin/sh\n{ANCESTRY.format(out=ancestry)}")
        (remote / "hooks" / "post-receive").chmod(0o755)
        git(ws, "init", "-q")
        git(ws, "-c", "user.email=a@b.invalid", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "one")
        git(ws, "remote", "add", "origin", str(remote))
        mark_installed(ws, walls={"codex": True})
        codex_wall.install(ws, wall_for(ws))
        ask = json.loads(client(ws, PUSH, 1))["askId"]  # answered in-process; the client then starts a daemon
        deadline = time.monotonic() + 30
        while not ((info(ws) or {}).get("pid") and os.path.exists(socket_path(ws))):
            assert time.monotonic() < deadline, "no daemon came up"
            time.sleep(0.05)
        daemon = int(info(ws)["pid"])
        person.answer(ws, ask, "approved")
        told = client(ws, PUSH, 2)
        assert told.startswith(f"Ran once, as the person approved ({ask})") and "PUSH-EXIT=0" in told, told
        assert str(daemon) in ancestry.read_text().split()  # the daemon ran it
        assert pushed(remote) == git(ws, "rev-parse", "HEAD").strip()
    finally:
        if daemon is not None:
            os.kill(daemon, signal.SIGTERM)
        shutil.rmtree(outside, ignore_errors=True)


# -- Claude Code: its own sandbox runs the approved line outside (`excludedCommands`), as the person --

class Claude(Codex):
    """Drives the claude hook as Claude Code does: a PreToolUse per Bash call; the deny's reason, or None."""

    def shell(self, command: str) -> str | None:
        self.n += 1
        body = {"session_id": "s1", "transcript_path": str(self.ws / "t.jsonl"), "cwd": str(self.ws),
                "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
                "tool_use_id": f"toolu_{self.n}"}
        stdout, code = hook.run("claude", json.dumps(body).encode(), {})
        assert code == 0
        return json.loads(stdout)["hookSpecificOutput"]["permissionDecisionReason"] if stdout else None


@pytest.fixture
def claude_walled(walled):
    ws, remote = walled
    mark_installed(ws, walls={"claude": True})
    return ws, remote


def test_behind_claudes_wall_an_approved_plain_push_is_left_to_its_sandbox(claude_walled):
    ws, remote = claude_walled
    agent = Claude(ws)
    ask = ask_of(agent.shell(PUSH))
    person.answer(ws, ask, "approved")
    assert agent.shell(PUSH) is None  # allowed: Claude's sandbox runs it outside, vacant does not
    assert pushed(remote) is None and views.resolve(ws, ask)["fate"] == "spent"


@pytest.mark.parametrize(("line", "why"), [
    ("git push -q {inner} HEAD:main", "a repository on disk the agent can write"),
    ("cd sub && git push -q origin HEAD:main", "plain `git push`"),
    ("git push -q origin HEAD:main && sh x.sh", "plain `git push`"),
])
def test_behind_claudes_wall_an_approved_line_that_would_run_the_agents_code_is_denied(claude_walled, line, why):
    """Claude's sandbox would run the line as the person: a remote the agent can write (its hooks),
    a repository of the agent's own (`cd` into it), a script: denied however approved, kept unspent."""
    ws, _remote = claude_walled
    inner = ws / "inner.git"
    git(ws, "init", "-q", "--bare", str(inner))
    (ws / "sub").mkdir()
    line = line.format(inner=inner)
    agent = Claude(ws)
    ask = ask_of(agent.shell(line))
    person.answer(ws, ask, "approved")
    told = agent.shell(line)
    assert told and why in told, told
    assert views.resolve(ws, ask)["fate"] == "approved"
