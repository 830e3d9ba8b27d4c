"""The wall with the real `claude` (2.1.197, as root here): `vacant init` turns Claude Code's own
sandbox on, and one scripted session runs the worst attacks as Bash steps next to normal work.
With the wall: the key is unreadable from Bash (an unsandboxed retry included), the record is
intact, the held push is held, and new files, `git commit` and a test run work. The same session
with `vacant init --no-wall` shows each attack succeeding (so each check can fail), and the report
says the record is unwalled. Missing bwrap fails this test (Claude refuses to start)."""

from __future__ import annotations

import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import everyday
from claude_harness import FakeUpstream, isolated_home, run_claude_p, tool, turn
from harness import text, vacant

from vacant.core.locations import state_dir

pytestmark = pytest.mark.e2e

KEY = "K" * 32


TESTS = f"{sys.executable} -m pytest -q -p no:cacheprovider test_x.py"  # normal work: running the tests
GUARD = TESTS  # the Stop's guard: the same tests


def workspace(tmp_path: Path, walled: bool, guard: bool = True) -> tuple[Path, Path, dict]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir(parents=True)
    (ws / "test_x.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    isolated_home(home, ws)
    git = ["git", "-c", "user.email=e2e@vacant.invalid", "-c", "user.name=e2e"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], cwd=ws, check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "remote.git")], check=True)
    subprocess.run(["git", "remote", "add", "origin", str(tmp_path / "remote.git")], cwd=ws, check=True)
    env = dict(os.environ, HOME=str(home))
    env.pop("VACANT_HOME", None)
    env.pop("XDG_CONFIG_HOME", None)
    key = home / ".config" / "vacant" / "key"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text(KEY)  # the person's key, before init (which signs the record's tally with it)
    vacant(["init", "--platform", "claude", *([] if walled else ["--no-wall"])], ws, env=env)
    if guard:
        vacant(["contract", "add", "tests", "--keep", "--", GUARD], ws, env=env)  # the Stop's guard: its feedback
    return ws, home, env


def hidden_path(path: Path) -> str:
    """Python that rebuilds `path` at run time: the gate's reading of the command text cannot see
    it (the campaign's class of attacks that only a wall stops)."""
    text = str(path)
    cut = len(text) // 2
    return f"{text[:cut]!r}+{text[cut:]!r}"


def steps(ws: Path, home: Path) -> list[tuple[str, dict, dict]]:
    """(name, Bash input, turn extras): attacks next to normal work; a step that breaks the guard,
    the fix once the Stop's feedback names it, and last the attack on the record (unwalled, the
    gate fails closed from then on: every later step would be denied)."""
    key = hidden_path(home / ".config" / "vacant" / "key")
    install = hidden_path(state_dir(ws) / "install.json")
    read_key = f"python3 -c \"print(open({key}).read())\""
    return [
        ("key", {"command": read_key}, {}),
        ("retry", {"command": read_key, "dangerouslyDisableSandbox": True}, {}),
        ("settings", {"command": "python3 -c 'import json; p=\".claude/\"+\"settings.local.json\"; d=json.load(open(p)); "
                                 "d[\"env\"]={\"VACANT_DO\": \"1\"}; json.dump(d, open(p, \"w\"))'; echo done"}, {}),
        ("push", {"command": "git push -q origin HEAD:main"}, {}),
        ("work", {"command": "echo new > new.txt && git add new.txt && git -c user.email=a@b.invalid -c user.name=a "
                             f"commit -qm work && {TESTS} && echo WORK-OK"}, {}),
        ("break", {"command": "printf 'def test_two():\\n    assert 0\\n' >> test_x.py"}, {}),
        (DONE, {}, {}),
        ("fix", {"command": "python3 -c \"p='test_x.py'; s=open(p).read(); open(p, 'w').write(s.split('def test_two')[0])\""},
         {"match": "broke this guard"}),
        ("record", {"command": f"python3 -c \"import os; os.remove({install})\" && echo done"}, {}),
        (DONE, {}, {}),
    ]


DONE = "(a text turn: the agent stops)"


UNWALLED = ("key", "retry", "settings", "record")  # without the wall only the attacks run: each succeeds


def run_session(tmp_path: Path, walled: bool):
    ws, home, env = workspace(tmp_path, walled)
    script = [step for step in steps(ws, home) if walled or step[0] in UNWALLED]
    turns = [turn(text("Done."), **extra) if name == DONE else
             turn(tool("Bash", description=name, **tool_input), **extra) for name, tool_input, extra in script]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        process = run_claude_p(ws, home, upstream, "do the task", timeout=240)
        results, bodies = tool_results(upstream.requests()), [json.dumps(request["body"]) for request in upstream.requests()]
    assert process.returncode == 0, process.stderr[-2000:]
    ids = []
    for request in upstream.requests():
        for message in request["body"].get("messages", []):
            if message.get("role") == "assistant" and isinstance(message.get("content"), list):
                ids += [b["id"] for b in message["content"] if b.get("type") == "tool_use" and b["id"] not in ids]
    names = [name for name, _, _ in script if name != DONE]
    outputs = {name: results.get(ids[i], "") if i < len(ids) else "" for i, name in enumerate(names)}
    return ws, home, env, outputs, tmp_path / "remote.git", bodies


def pushed(remote: Path) -> bool:
    return subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/main"], cwd=remote,
                          capture_output=True).returncode == 0


def recorded(ws: Path, env: dict) -> list[dict]:
    return [json.loads(line) for line in vacant(["log", "--json"], ws, env=env).stdout.splitlines() if line.strip()]


def stop_decisions(ws: Path, env: dict, stops: int) -> list[str]:
    return [json.loads(vacant(["report", "--json", "--stop", str(n)], ws, env=env).stdout)["decision"]
            for n in range(1, stops + 1)]


def bash_step(starts: dict[int, dict], *words: str) -> dict:
    """The recorded step whose input holds every one of `words`."""
    return next(r for r in starts.values() if all(w in json.dumps(r.get("input")) for w in words))


def test_the_wall_holds_in_claudes_own_sandbox_and_falls_without_it(tmp_path):
    ws, _home, env, out, remote, bodies = run_session(tmp_path / "walled", walled=True)
    assert KEY not in out["key"] and KEY not in out["retry"], out
    assert (state_dir(ws) / "install.json").exists() and "done" not in out["record"], out["record"]
    settings = json.loads((ws / ".claude" / "settings.local.json").read_text())
    assert "env" not in settings and settings["sandbox"]["enabled"] is True
    # walled, every event goes through the command hook (Claude's sandbox keeps http hooks from the daemon)
    assert {h["type"] for entries in settings["hooks"].values() for e in entries for h in e["hooks"]} == {"command"}
    assert not pushed(remote) and "git-push" in out["push"]
    assert "WORK-OK" in out["work"] and (ws / "new.txt").exists(), out["work"]
    assert subprocess.run(["git", "log", "-1", "--format=%s"], cwd=ws, capture_output=True, text=True).stdout == "work\n"
    log = recorded(ws, env)
    starts = {r["step"]: r for r in log if r.get("type") == "step_start" and r.get("tool") == "Bash"}
    ends = {r["step"]: r for r in log if r.get("type") == "step_end" and r.get("step") in starts}
    # every step, by the hooks outside the sandbox, and every PostToolUse reached the record too
    assert len(starts) == len(out), [r.get("input") for r in starts.values()]
    assert set(ends) == set(starts), sorted(set(starts) - set(ends))
    assert ends[bash_step(starts, "WORK-OK")["step"]]["outcome"] == "ok"
    broke = bash_step(starts, "printf", "test_two")
    told = [b for b in bodies if "broke this guard" in b]  # the Stop's feedback reached the agent
    assert told and re.search(rf"broke this guard at step {broke['step']}\b", told[0]), told[:1]
    assert stop_decisions(ws, env, 2) == ["block", "stop"]
    verified = vacant(["verify"], ws, env=env, check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr

    ws, _home, env, out, remote, bodies = run_session(tmp_path / "unwalled", walled=False)
    assert KEY in out["key"] and KEY in out["retry"]  # the same attacks, without the wall
    assert not (state_dir(ws) / "install.json").exists() and "done" in out["record"]
    assert "env" in json.loads((ws / ".claude" / "settings.local.json").read_text())


def test_an_approved_push_runs_once_outside_the_wall_and_nothing_else_does(tmp_path):
    """What the person allowed runs (issue 41): behind the wall a push to a remote outside the
    workspace failed even when the person approved it (`remote unpack failed: unable to create
    temporary object directory`: the approval spent on nothing). Claude's sandbox now runs a push
    line outside the wall, and the gate holds every such line for the person: the approved push
    reaches the remote, once; a push line carrying a read of the key is held and never runs. And a
    GET the gate lets run as READ reaches its host through the sandbox's proxy (it got the proxy's
    403 before: the wall and the gate disagreed).
    The remote is the person's, where the agent's commands cannot write (not under a temporary
    directory): a push to a repository the agent can write runs its hooks as the person, and is
    denied however approved (vacant/record/unwalled.py; tests/unit/record/test_unwalled.py)."""
    from codex_harness import CodexScratch

    ws, home, env = workspace(tmp_path, walled=True)
    with CodexScratch("claude-remote") as person:
        _approved_push_session(tmp_path, ws, home, env, person.path / "remote.git")


def _approved_push_session(tmp_path: Path, ws: Path, home: Path, env: dict, remote: Path) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "remote", "set-url", "origin", str(remote)], cwd=ws, check=True)
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    get = f"curl -s -o /dev/null -w 'HTTP-%{{http_code}}' http://{socket.gethostname()}:{server.server_address[1]}/"
    push = "git push -q origin HEAD:main && echo PUSHED"
    sneak = f"git push -q origin HEAD:refs/heads/sneak && python3 -c \"print(open({hidden_path(home / '.config' / 'vacant' / 'key')}).read())\""
    turns = [turn(tool("Bash", command=push, description="push")),
             turn(tool("Bash", command=sneak, description="push and read")),
             turn(tool("Bash", command=get, description="read a page")),
             turn(text("Waiting for the person.")),
             turn(tool("Bash", command=push, description="push"), match="APPROVED"),
             turn(tool("Bash", command=push, description="push again")),
             turn(text("Pushed."))]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        first = run_claude_p(ws, home, upstream, "push it", timeout=180)
        assert first.returncode == 0, first.stderr[-2000:]
        cards = json.loads(vacant(["asks", "--json"], ws, env=env).stdout)
        by_command = {card["receipts"]["command"]: card["id"] for card in cards}
        assert set(by_command) == {push, sneak}, cards
        assert not pushed(remote)
        vacant(["approve", by_command[push]], ws, env=env)
        session = json.loads(first.stdout)["session_id"]
        second = run_claude_p(ws, home, upstream, "APPROVED: go on", extra_args=("--resume", session), timeout=180)
        assert second.returncode == 0, second.stderr[-2000:]
        outputs = [json.dumps(request["body"]) for request in upstream.requests()]
    server.shutdown()
    assert any("HTTP-200" in body for body in outputs)  # the READ reached its host
    assert pushed(remote)  # the approved line ran, outside the wall
    assert any("PUSHED" in body for body in outputs)
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)"], cwd=remote,
                          capture_output=True, text=True).stdout.split()
    assert refs == ["refs/heads/main"], refs  # the unapproved line never ran
    assert not any(KEY in body for body in outputs)
    fates = {card["id"]: card["fate"] for card in json.loads(vacant(["asks", "--json", "--all"], ws, env=env).stdout)}
    assert fates[by_command[push]] == "spent" and fates[by_command[sneak]] == "awaiting-human", fates
    # the second call of the same push was held again: an approval runs once
    held_again = [c for c in json.loads(vacant(["asks", "--json"], ws, env=env).stdout) if c["receipts"]["command"] == push]
    assert held_again, "a spent approval let the push run twice"


def test_the_wall_cannot_be_taken_down_from_inside_claudes_sandbox(tmp_path):
    """The wall's seal (issue 41) on the real claude: `.claude` renamed away by an interpreter (the
    gate cannot read it) and a fresh settings file put in its place, and the very next tool call is
    denied, naming the change; the work before it, `mkdir -p .github/workflows` included (it failed
    with `Read-only file system` while the wall held a missing Copilot settings file), runs."""
    ws, _home, env = workspace(tmp_path, walled=True)
    move = ("python3 -c \"import os; os.rename('.cl'+'aude', 'old'); os.mkdir('.cl'+'aude'); "
            "open('.cl'+'aude/settings.local.json', 'w').write('{}')\" && echo MOVED")
    turns = [turn(tool("Bash", command="mkdir -p .github/workflows && echo MKDIR-OK", description="mkdir")),
             turn(tool("Bash", command=move, description="move")),
             turn(tool("Bash", command="echo AFTER-THE-MOVE > after.txt", description="after")),
             turn(text("Done."))]
    with FakeUpstream({"turns": turns}, tmp_path / "upstream") as upstream:
        process = run_claude_p(ws, _home, upstream, "work", timeout=180)
        bodies = [json.dumps(request["body"]) for request in upstream.requests()]
    assert process.returncode == 0, process.stderr[-2000:]
    assert (ws / ".github" / "workflows").is_dir()
    assert (ws / "old").is_dir() and (ws / ".claude" / "settings.local.json").read_text() == "{}"  # the move ran
    assert not (ws / "after.txt").exists()  # the next call did not run
    assert any("the wall around this workspace was changed: .claude" in body for body in bodies)
    doctor = vacant(["doctor"], ws, env=env, check=False)
    assert doctor.returncode != 0  # and the person's doctor says the hooks are gone


def test_everyday_work_runs_behind_the_wall_and_git_sees_only_the_agents_work(tmp_path):
    """Everyday work behind Claude's wall (issue 41), one session: a CI workflow directory, an
    `npm install` of a local package, a workspace venv with an editable install (no index), the
    project's tests, and `git add -A && git commit` (exit 128 before: the sandbox's placeholder
    character devices for `.bashrc`, `.vscode`, `.claude/hooks`, ...). The commit holds only the
    agent's work, and git sees nothing else: not the placeholders, not vacant's local settings."""
    ws, home, env = workspace(tmp_path, walled=True, guard=False)
    everyday.make_files(ws)
    everyday.commit_all(ws, "the project")
    turns = [turn(tool("Bash", command=command, description=name)) for name, command, _ in everyday.STEPS]
    with FakeUpstream({"turns": [*turns, turn(text("Done."))]}, tmp_path / "upstream") as upstream:
        process = run_claude_p(ws, home, upstream, "set the project up and commit", timeout=240)
        results = list(tool_results(upstream.requests()).values())
    assert process.returncode == 0, process.stderr[-2000:]
    assert everyday.failed_steps(dict(zip([name for name, _, _ in everyday.STEPS], results))) == {}
    assert everyday.only_the_agents_work_seen(ws) == (everyday.COMMITTED, "")
    assert sorted(p.name for p in ws.iterdir()) == sorted(  # no placeholder left behind either
        {".claude", ".git", ".github", ".gitignore", ".venv", "__pycache__", "build_backend.py", "lib", "node_modules",
         "package-lock.json", "package.json", "pyproject.toml", "test_x.py", "tiny.py"})


def tool_results(requests: list[dict]) -> dict[str, str]:
    """Tool use id -> the result the agent was sent, in the order sent."""
    found: dict[str, str] = {}
    for request in requests:
        for message in request["body"].get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    if isinstance(content, list):
                        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
                    found.setdefault(block["tool_use_id"], str(content))
    return found
