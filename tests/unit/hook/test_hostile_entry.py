"""Attacks on the hook itself, run for real: the agent's move is done (a settings `env` block is the
environment the platform hands the hook, a planted file, a held lock, a killed daemon), then the
installed hook command (`hook_command`, exactly what `vacant init` writes: the lean client
launcher under `python -I -S`) gets a pre-tool call on stdin, as Claude Code sends it.

Oracle: the call is held (a deny the platform reads) and, where time is the attack, within the
whole-call deadline. Each control (`ls` in an intact workspace) is let through, so a test that
holds everything would fail too. Against the code before issue 22 each class went through:
see the report on the branch `trustgate`.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from vacant.core.locations import registry_path, state_dir
from vacant.platforms.settings_file import hook_command

pytestmark = pytest.mark.usefixtures("isolated_home")
REPO = Path(__file__).resolve().parents[3]
HOOK = shlex.split(hook_command("claude"))  # the launcher as installed
# the in-process hook as the client falls back to it (no daemon yet, or a dead one)
IN_PROCESS = [sys.executable, "-I", "-m", "vacant.hook.entry", "claude"]


@pytest.fixture
def gws(tmp_path) -> Path:
    """A git workspace with vacant installed (state in .git/vacant), as `vacant init` leaves it."""
    from vacant.core.locations import mark_installed

    root = tmp_path / "gws"
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # a real repository: git passes over an empty .git
    (root / "a.txt").write_text("a\n")
    mark_installed(root)
    return root


def pre_tool(root: Path, command: str, key: str = "t1") -> bytes:
    return json.dumps({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_use_id": key, "tool_input": {"command": command}, "cwd": str(root),
                       "transcript_path": str(root / "none.jsonl")}).encode()


def run_hook(root: Path, payload: bytes, extra_env: dict | None = None, timeout: float = 90, command=None):
    env = dict(os.environ, CLAUDE_PROJECT_DIR=str(root), **(extra_env or {}))
    started = time.monotonic()
    proc = subprocess.run(command or HOOK, input=payload, env=env, cwd=root, capture_output=True, timeout=timeout)
    return proc, time.monotonic() - started


def denied(proc) -> bool:
    if proc.returncode == 2:
        return True  # Claude: exit 2 blocks a pre-tool call
    if proc.returncode != 0 or not proc.stdout.strip():
        return False
    data = json.loads(proc.stdout)
    return data.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"


# -- class: the hook never trusts its environment ----------------------------------------------


def _env_names() -> list[str]:
    """Every VACANT_* name the package reads anywhere, and the interpreter's own PYTHON* ones:
    found in the source, not picked by hand."""
    names = set()
    for path in (REPO / "vacant").rglob("*.py"):
        names.update(re.findall(r"\bVACANT_[A-Z_]+[A-Z]\b", path.read_text()))
    return sorted(names - {"VACANT_HOOK_COMMAND__"}) + ["PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
                                                      "PYTHONSAFEPATH", "PYTHONINSPECT"]


def _values(tmp: Path) -> dict[str, str]:
    return {"word": "x", "one": "1", "negative": "-1", "nan": "nan", "zero": "0", "huge-number": "1e12",
            "agent-dir": str(tmp / "agent"), "oversized": "v" * 120_000}


@pytest.fixture
def agent_dir(tmp_path) -> Path:
    """What an agent plants: a `vacant` package and a sitecustomize that say so when imported."""
    planted = tmp_path / "agent"
    (planted / "vacant").mkdir(parents=True)
    marker = tmp_path / "AGENT-CODE-RAN"
    code = f"open({str(marker)!r}, 'a').write('ran\\n')\n"
    (planted / "vacant" / "__init__.py").write_text(code)
    (planted / "sitecustomize.py").write_text(code)
    (planted / "usercustomize.py").write_text(code)
    return planted


@pytest.mark.slow
@pytest.mark.parametrize("value", list(_values(Path("/x"))))
def test_no_hostile_environment_lets_a_push_through_or_runs_agent_code(gws, tmp_path, agent_dir, value):
    """Every variable the package reads (and the interpreter's) set to every hostile kind of value
    at once per name: the hook still holds `git push` and runs none of the agent's code."""
    from vacant.daemon.lifecycle import stop

    values = _values(tmp_path)
    missed = []
    try:
        for name in _env_names():
            for command in (IN_PROCESS, HOOK):  # the fallback path, then the client (and its daemon)
                proc, _ = run_hook(gws, pre_tool(gws, "git push origin main"), {name: values[value]}, command=command)
                if not denied(proc):
                    missed.append((name, command[-2].rpartition("/")[2], proc.returncode, proc.stdout[:200]))
    finally:
        stop(gws)
    assert not missed, missed
    assert not (tmp_path / "AGENT-CODE-RAN").exists()


def test_many_large_vacant_values_and_a_bad_budget_at_once(gws):
    """The campaign's settings `env` block: a bad budget plus large VACANT_* values."""
    env = {"VACANT_HOOK_BUDGET_S": "x", **{f"VACANT_PAD_{i}": "p" * 120_000 for i in range(8)}}
    proc, _ = run_hook(gws, pre_tool(gws, "git push"), env)
    assert denied(proc), (proc.returncode, proc.stdout, proc.stderr[-500:])


def test_state_dir_in_the_environment_does_not_uninstall_the_workspace(gws, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc, _ = run_hook(gws, pre_tool(gws, "git push"), {"VACANT_STATE_DIR": str(elsewhere)})
    assert denied(proc)
    assert list(elsewhere.iterdir()) == []  # nothing recorded into the agent's directory either
    assert any(state_dir(gws).joinpath("runs").iterdir())  # the call went into the real record


def _stop_payload(root: Path) -> bytes:
    return json.dumps({"session_id": "s1", "hook_event_name": "Stop", "cwd": str(root),
                       "transcript_path": str(root / "none.jsonl"), "stop_hook_active": False}).encode()


@pytest.mark.slow
@pytest.mark.parametrize("value", ["1", "parent", "self"])
def test_vacant_do_in_the_environment_does_not_turn_stop_off(gws, value):
    pid = {"1": "1", "parent": str(os.getpid()), "self": str(os.getpid())}[value]
    run_hook(gws, pre_tool(gws, "ls"))
    proc, _ = run_hook(gws, _stop_payload(gws), {"VACANT_DO": pid})
    assert proc.returncode == 0
    runs = list(state_dir(gws).joinpath("runs").iterdir())
    assert runs and (runs[0] / "report.json").is_file(), "the Stop pipeline did not run"


def test_a_real_vacant_do_marker_still_turns_stop_off(gws):
    """The control: the marker `vacant do` leaves, with `vacant do` (here: this process) an ancestor."""
    from vacant.core.trustenv import mark_do, unmark_do

    value = mark_do(state_dir(gws))
    try:
        run_hook(gws, pre_tool(gws, "ls"))
        run_hook(gws, _stop_payload(gws), {"VACANT_DO": value})
    finally:
        unmark_do(state_dir(gws))
    runs = list(state_dir(gws).joinpath("runs").iterdir())
    assert runs and not (runs[0] / "report.json").exists()


# -- class: installed means installed ----------------------------------------------------------


@pytest.mark.parametrize("loss", ["install.json", "state directory"])
def test_an_installed_workspace_that_lost_its_state_fails_closed(gws, loss):
    assert not denied(run_hook(gws, pre_tool(gws, "ls"))[0])  # the control: an intact install lets ls run
    state = state_dir(gws)
    if loss == "install.json":
        (state / "install.json").unlink()
    else:
        subprocess.run(["rm", "-rf", str(state)], check=True)
    proc, _ = run_hook(gws, pre_tool(gws, "ls", key="t2"))
    assert denied(proc), proc.stdout
    reason = json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "vacant doctor" in reason and "gone" in reason
    assert registry_path(gws).is_file()


# -- class: the gate never fails open in time ----------------------------------------------------


def _daemon(root: Path) -> subprocess.Popen:
    from vacant.hook.paths import info, socket_path

    proc = subprocess.Popen([sys.executable, "-I", "-m", "vacant.daemon", str(root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if (info(root) or {}).get("pid") == proc.pid and os.path.exists(socket_path(root)) and \
                (state_dir(root) / "daemon" / "socket").exists():
            return proc
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("daemon did not come up")


@pytest.fixture
def live_daemon(gws):
    proc = _daemon(gws)
    yield proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:  # a loaded machine: the subject here is the hook's answer
            proc.kill()
            proc.wait()


BUDGET = 4.0


@pytest.mark.slow
def test_a_frozen_daemon_gets_its_call_denied_inside_the_whole_call_deadline(gws, live_daemon):
    assert not denied(run_hook(gws, pre_tool(gws, "ls"))[0])  # the control, through the daemon
    live_daemon.send_signal(signal.SIGSTOP)
    holder = open(state_dir(gws) / "lock", "a")  # and the fallback finds the workspace lock held
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        proc, took = run_hook(gws, pre_tool(gws, "git push", key="t2"), {"VACANT_HOOK_BUDGET_S": str(BUDGET)})
    finally:
        holder.close()
        live_daemon.send_signal(signal.SIGCONT)
    assert denied(proc), proc.stdout
    assert took < BUDGET + 2.0, f"{took:.1f} s: past the whole-call deadline"


@pytest.mark.slow
def test_a_held_workspace_lock_gets_the_call_denied_inside_the_whole_call_deadline(gws):
    """No daemon yet (the in-process path), the workspace lock held by a background process."""
    from vacant.daemon.lifecycle import stop

    holder = open(state_dir(gws) / "lock", "a")
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        proc, took = run_hook(gws, pre_tool(gws, "git push", key="t2"), {"VACANT_HOOK_BUDGET_S": str(BUDGET)})
    finally:
        holder.close()
        stop(gws)  # the call started one for later calls
    assert denied(proc), proc.stdout
    assert took < BUDGET + 2.0, f"{took:.1f} s: past the whole-call deadline"


# -- class: a pointer or socket is trusted only inside the state directory, with proof ----------


class FakeDaemon:
    """An agent's own 'daemon': answers every call, in any protocol, with an allow."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.calls = 0
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        os.chmod(path, 0o600)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(1 << 20)
                except OSError:
                    pass
                self.calls += 1
                body = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                          "permissionDecision": "allow"}}).encode()
                try:
                    conn.sendall(b"200 0 %d %s\n" % (len(body), b"0" * 32) + body)
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


def test_a_fake_daemon_behind_a_pointer_in_the_temp_directory_gets_no_trust(gws, tmp_path, monkeypatch):
    """The campaign's move: bind a 0600 socket and write the pointer under $TMPDIR/vacant-<uid>/
    (the old lookup: fnv1a64 of the root's real path)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    base = tmp_path / f"vacant-{os.getuid()}" / "roots"
    base.mkdir(parents=True, mode=0o700)
    os.chmod(base.parent, 0o700)
    fake = FakeDaemon(str(tmp_path / "fake.sock"))
    value = 0xCBF29CE484222325
    for byte in os.path.realpath(gws).encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    (base / f"{value:016x}").write_text(f"{os.path.realpath(gws)}\n{fake.path}\n")
    try:
        proc, _ = run_hook(gws, pre_tool(gws, "git push"))
    finally:
        fake.close()
    assert denied(proc) and fake.calls == 0


def test_a_fake_daemon_bound_at_the_real_sockets_path_gets_no_trust(gws, live_daemon):
    """The socket path the state directory's pointer names, taken over (the daemon's own socket
    unlinked and an impostor bound there): it cannot prove itself, so the call is answered
    in-process (held) and errors.log says so."""
    from vacant.hook.paths import socket_path

    path = socket_path(gws)
    os.unlink(path)
    fake = FakeDaemon(path)
    try:
        proc, _ = run_hook(gws, pre_tool(gws, "git push"))
    finally:
        fake.close()
    assert fake.calls == 1 and denied(proc)
    assert "proof of identity" in (state_dir(gws) / "errors.log").read_text()


@pytest.mark.slow
def test_pythonpath_and_a_daemon_kill_do_not_make_the_respawned_daemon_the_agents_code(gws, tmp_path, agent_dir):
    from vacant.hook.paths import info

    env = {"PYTHONPATH": str(agent_dir), "PYTHONSTARTUP": str(agent_dir / "sitecustomize.py")}
    run_hook(gws, json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "cwd": str(gws),
                              "source": "startup"}).encode(), env)  # starts the daemon, waits for it
    pid = (info(gws) or {}).get("pid")
    assert pid, "the session start did not start a daemon"
    try:
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        proc = None
        while time.monotonic() < deadline and (info(gws) or {}).get("pid") in (None, pid):
            proc, _ = run_hook(gws, pre_tool(gws, "git push"), env)  # each call may respawn it
            time.sleep(0.2)
        assert proc is None or denied(proc)
        assert (info(gws) or {}).get("pid") not in (None, pid), "no daemon was respawned"
        assert not (tmp_path / "AGENT-CODE-RAN").exists()
        assert denied(run_hook(gws, pre_tool(gws, "git push", key="t9"), env)[0])
    finally:
        from vacant.daemon.lifecycle import stop

        stop(gws)


# -- class: approvals come from a person --------------------------------------------------------


AGENT_SIGNS = r"""
import json, sys, time
from pathlib import Path
from vacant.core.keys import sign          # reads ~/.config/vacant/key, as any script of the agent's could
from vacant.policy.gate.asks.book import AskBook, signed_body
book = AskBook(Path(sys.argv[1]))
card = book.get("ask#1")
record = {"decision": "approved", "at": time.time(), "expires_at": None, "refuse_if_moved": False, "workspace": None}
record["signature"] = sign(signed_body(card, record))
card["decision"] = record
book.save(card)
"""


@pytest.mark.parametrize("who", ["the agent signs with the stolen key", "the person approves"])
def test_an_approval_is_honoured_only_when_the_person_recorded_it(gws, who):
    from vacant.core.keys import user_key
    from vacant.policy.gate.asks import book, answer as person

    user_key()  # the person's key exists (they approved something before)
    first, _ = run_hook(gws, pre_tool(gws, "git push origin main", key="p1"), command=IN_PROCESS)
    assert denied(first) and "ask#1" in first.stdout.decode()
    if who == "the person approves":
        person.answer(gws, "ask#1", "approved")
    else:
        subprocess.run([sys.executable, "-c", AGENT_SIGNS, str(gws)], check=True, cwd=gws)
        assert book.fate(book.AskBook(gws).get("ask#1"))[0] == "approved"  # the card itself verifies
    again, _ = run_hook(gws, pre_tool(gws, "git push origin main", key="p2"), command=IN_PROCESS)
    assert denied(again) == (who != "the person approves"), again.stdout
