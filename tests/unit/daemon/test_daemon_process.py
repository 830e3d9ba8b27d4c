"""A real daemon process: one instance, stale files replaced, security of both doors, the lean
client's fallback when there is none, idle exit, and exit when the workspace disappears."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.daemon import lifecycle
from vacant.hook.paths import daemon_dir, info, socket_path

CLIENT = Path(__file__).resolve().parents[3] / "vacant" / "vacant-hook-client.py"


def start(root: Path, *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "vacant.daemon", str(root), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if (info(root) or {}).get("pid") == proc.pid and os.path.exists(socket_path(root)):
            return proc
        if proc.poll() is not None:
            raise AssertionError(proc.stdout.read().decode())
        time.sleep(0.05)
    raise AssertionError("daemon did not come up")


@pytest.fixture
def daemon(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".vacant").mkdir()  # an installed workspace (hooks record nothing elsewhere), state kept in .vacant/
    (root / "a.txt").write_text("a\n")
    proc = start(root)
    yield root, proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def post(root: Path, body: bytes, headers: dict, path: str = "/hook/claude") -> tuple[int, bytes]:
    port = info(root)["port"]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("POST", path, skip_host=True)
    for name, value in headers.items():
        conn.putheader(name, value)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    response = conn.getresponse()
    return response.status, response.read()


def good_headers(root: Path) -> dict:
    config = lifecycle.ensure_config(root)
    return {"Host": f"127.0.0.1:{info(root)['port']}", "X-Vacant-Token": config["secret"],
            "Content-Type": "application/json"}


def payload(root: Path, event: str, **fields) -> bytes:
    return json.dumps({"session_id": "s1", "transcript_path": "/nonexistent", "cwd": str(root),
                       "hook_event_name": event, **fields}).encode()


def errors(root: Path) -> str:
    path = root / ".vacant" / "errors.log"
    return path.read_text() if path.exists() else ""


def test_one_instance_and_private_files(daemon):
    root, proc = daemon
    second = subprocess.run([sys.executable, "-m", "vacant.daemon", str(root)], timeout=20)
    assert second.returncode == 0 and info(root)["pid"] == proc.pid  # it left at once
    assert stat.S_IMODE(os.stat(socket_path(root)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(daemon_dir(root) / "config.json").st_mode) == 0o600
    assert lifecycle.running(root)


@pytest.mark.slow
def test_a_stale_pid_and_socket_from_a_killed_daemon_are_replaced(daemon):
    root, proc = daemon
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert os.path.exists(socket_path(root)) and info(root)["pid"] == proc.pid  # left behind
    assert not lifecycle.running(root)
    fresh = start(root)
    try:
        assert lifecycle.ask_status(root)["pid"] == fresh.pid
    finally:
        assert lifecycle.stop(root)
        fresh.wait(10)


def test_http_records_an_authenticated_call(daemon):
    root, _ = daemon
    status, body = post(root, payload(root, "PostToolUse", tool_name="Bash", tool_use_id="t1",
                                      tool_input={"command": "true"}, tool_response={"stdout": "hi"}),
                        good_headers(root))
    assert status == 200, body
    events = [json.loads(line)["type"] for line in (root / ".vacant/runs/s1/events.jsonl").read_text().splitlines()]
    assert "step_start" in events and "read" in events


@pytest.mark.parametrize("change, expected", [
    ({"X-Vacant-Token": None}, 401),
    ({"X-Vacant-Token": "0" * 64}, 401),
    ({"Host": "evil.example:80"}, 403),
    ({"Host": None}, 403),
])
def test_unauthenticated_or_foreign_host_requests_are_refused_and_logged(daemon, change, expected):
    root, _ = daemon
    headers = good_headers(root)
    for name, value in change.items():
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    status, _ = post(root, payload(root, "PostToolUse", tool_name="Bash", tool_use_id="t9"), headers)
    assert status == expected
    assert f"refused with {expected}" in errors(root)
    assert not (root / ".vacant/runs/s1").exists()  # nothing recorded
    status, _ = post(root, payload(root, "Stop"), good_headers(root))  # and the daemon still serves
    assert status == 200


def test_malformed_oversized_and_unknown_requests_get_4xx(daemon):
    root, proc = daemon
    assert post(root, b"{not json", good_headers(root))[0] == 400
    assert post(root, b"[1, 2]", good_headers(root))[0] == 400
    assert post(root, b"{}", good_headers(root), path="/hook/../../etc")[0] == 404
    assert post(root, b"{}", good_headers(root), path="/hook/nosuchplatform")[0] == 404
    headers = {**good_headers(root)}
    port = info(root)["port"]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:  # a lying Content-Length
        raw.sendall(f"POST /hook/claude HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Vacant-Token: {headers['X-Vacant-Token']}"
                    f"\r\nContent-Length: {10**12}\r\n\r\n".encode())
        assert raw.recv(100).startswith(b"HTTP/1.1 413")
    with socket.socket(socket.AF_UNIX) as conn:  # garbage over the socket
        conn.settimeout(10)
        conn.connect(socket_path(root))
        conn.sendall(b"\xff\xfe garbage\n")
        assert conn.recv(4096).split()[:3] == [b"400", b"0", b"0"]  # refused, in the one framing
    with socket.socket(socket.AF_UNIX) as conn:  # the JSON header line of old: no longer a request
        conn.settimeout(10)
        conn.connect(socket_path(root))
        conn.sendall(b'{"op": "status"}\n')
        assert conn.recv(4096).split()[:3] == [b"400", b"0", b"0"]
    assert lifecycle.request(root, "@nosuchop")[0] == 400
    other = root.parent / "other"
    (other / ".vacant").mkdir(parents=True)
    reply = lifecycle.request(root, "claude", b"{}", env={"CLAUDE_PROJECT_DIR": str(other)})
    assert reply[0] == 200  # an ignorable payload; now a real call for another workspace:
    body = payload(other, "PostToolUse", tool_name="Bash", tool_use_id="t1")
    reply = lifecycle.request(root, "claude", body, env={"CLAUDE_PROJECT_DIR": str(other)})
    assert reply[0] == 409 and not (other / ".vacant" / "runs").exists()
    assert proc.poll() is None and lifecycle.ask_status(root)["refused"] >= 6


def test_a_slow_sender_does_not_stall_others(daemon):
    root, _ = daemon
    port = info(root)["port"]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
        slow.sendall(b"POST /hook/claude HTTP/1.1\r\n")  # and nothing more
        status, _ = post(root, payload(root, "Stop"), good_headers(root))
        assert status == 200


LAUNCHER = [sys.executable, "-I", "-S", str(CLIENT)]  # what `vacant init` installs in local scope
CONSOLE_SCRIPT = [str(Path(sys.executable).with_name("vacant-hook"))]  # the portable `--scope project` command


def run_client(root: Path, body: bytes, command: list[str] = LAUNCHER) -> subprocess.CompletedProcess:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root)}
    return subprocess.run([*command, "claude"], input=body, env=env, capture_output=True, timeout=60)


def test_with_no_daemon_the_client_answers_in_process_and_starts_one(tmp_path):
    root = tmp_path / "ws"
    (root / ".vacant").mkdir(parents=True)
    body = payload(root, "PreToolUse", tool_name="Bash", tool_use_id="t1", tool_input={"command": "git push origin main"})
    started = time.monotonic()
    proc = run_client(root, body)
    assert proc.returncode == 0 and b'"deny"' in proc.stdout  # the gate held it, in-process
    deadline = time.monotonic() + 20
    while not lifecycle.running(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert lifecycle.running(root)  # started detached by that call
        proc = run_client(root, payload(root, "PreToolUse", tool_name="Bash", tool_use_id="t2",
                                        tool_input={"command": "git push origin main"}))
        assert b'"deny"' in proc.stdout
    finally:
        lifecycle.stop(root)
    assert time.monotonic() - started < 60


@pytest.mark.slow
def test_idle_timeout_and_workspace_removal_end_the_daemon(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".vacant").mkdir()  # its state inside the tree, as in a git workspace (.git/vacant)
    proc = start(root, "--idle", "1")
    assert proc.wait(20) == 0 and not os.path.exists(socket_path(root))
    proc = start(root)
    shutil.rmtree(root)
    assert proc.wait(20) == 0


def wakeups(pid: int) -> int:
    """Every time any thread of `pid` went to sleep and was woken: the kernel's own count."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{task}/status").read_text()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        total += sum(int(line.split()[1]) for line in status.splitlines()
                     if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
    return total


@pytest.mark.slow
def test_an_idle_daemon_polls_nothing(daemon):
    """While nothing changes and nobody calls, no thread of the daemon wakes: no timer, no poll
    (one wake-up a second anywhere would make four in this window)."""
    root, proc = daemon
    time.sleep(1.0)  # past start-up: its first scan, its watch set up
    before = wakeups(proc.pid)
    time.sleep(4.0)
    assert wakeups(proc.pid) - before < 3
    (root / "a.txt").write_text("changed\n")  # the oracle can see a wake-up: a change wakes it
    deadline = time.monotonic() + 5
    while wakeups(proc.pid) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert wakeups(proc.pid) > before


@pytest.mark.parametrize("command", [LAUNCHER, CONSOLE_SCRIPT], ids=["launcher", "vacant-hook"])
def test_the_lean_client_reaches_the_daemon_through_its_pointer(daemon, command):
    root, _ = daemon
    before = lifecycle.ask_status(root)["requests"]
    proc = run_client(root, payload(root, "PreToolUse", tool_name="Bash", tool_use_id="t1",
                                    tool_input={"command": "git push origin main"}), command)
    assert b'"deny"' in proc.stdout  # the daemon's gate answered
    assert lifecycle.ask_status(root)["requests"] == before + 1


def test_a_call_the_daemon_answers_loads_no_more_than_the_launcher_and_socket(daemon):
    root, _ = daemon
    body = payload(root, "PreToolUse", tool_name="Read", tool_use_id="t1", tool_input={"file_path": str(root / "a.txt")})
    proc = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", str(CLIENT), "claude"], input=body,
                          capture_output=True, cwd=root, env=dict(os.environ, CLAUDE_PROJECT_DIR=str(root)), timeout=60)
    assert proc.returncode == 0
    bare = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", "-c", "pass"], capture_output=True).stderr
    names = lambda err: {line.split("|")[-1].strip() for line in err.decode().splitlines() if line.startswith("import time:")}  # noqa: E731
    assert lifecycle.ask_status(root)["requests"] >= 1  # the daemon answered it
    loaded = names(proc.stderr) - names(bare)  # the proof's keyed hash; a non-git root's path hash
    assert {"_socket", "client", "_blake2"} <= loaded <= {"_socket", "client", "_blake2", "_sha256", "_sha2", "gc"}, loaded


def test_a_pointer_is_trusted_only_in_the_state_directory_private_and_to_a_real_socket(tmp_path, monkeypatch):
    from vacant.core.locations import state_dir
    from vacant.daemon import pointer

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    root = str(tmp_path / "ws")
    os.makedirs(os.path.join(root, ".git"))  # a git top level: the state directory is .git/vacant
    state = state_dir(Path(root))
    secret = "ab" * 32
    sock = tmp_path / "not-a-socket"
    sock.write_text("")
    pointer.write(state, root, str(sock), secret)
    assert pointer.find(root, walk_up=False) is None  # a planted regular file is no daemon
    listener = socket.socket(socket.AF_UNIX)
    real = str(tmp_path / "s")
    listener.bind(real)
    os.chmod(real, 0o600)
    pointer.write(state, root, real, secret)
    assert pointer.find(os.path.join(root), walk_up=False) == (root, real, bytes.fromhex(secret))
    os.makedirs(os.path.join(root, "sub"))
    assert pointer.find(os.path.join(root, "sub"), walk_up=True) == (root, real, bytes.fromhex(secret))
    assert pointer.find(os.path.join(root, "sub"), walk_up=False) is None
    os.chmod(pointer.pointer_path(state), 0o644)  # someone opened the pointer up
    assert pointer.find(root, walk_up=False) is None
    os.chmod(pointer.pointer_path(state), 0o600)
    # the old place, the temp directory, is never read: a pointer planted there finds nothing
    os.unlink(pointer.pointer_path(state))
    planted = tmp_path / f"vacant-{os.getuid()}" / "roots"
    planted.mkdir(parents=True, mode=0o700)
    (planted / "anything").write_text(f"{root}\n{real}\n")
    assert pointer.find(root, walk_up=False) is None
    listener.close()


def test_a_hook_run_in_a_nested_workspace_is_not_answered_by_the_outer_daemon(daemon):
    root, _ = daemon
    inner = root / "inner"
    (inner / ".vacant").mkdir(parents=True)
    body = json.dumps({"session_id": "c1", "hook_event_name": "PostToolUse", "tool_name": "shell",
                       "tool_use_id": "x"}).encode()
    env = {"VACANT_CLIENT_CWD": str(inner), "PWD": str(inner)}
    assert lifecycle.request(root, "codex", body, env=env)[0] == 409
    assert not (root / ".vacant" / "runs" / "c1").exists()


@pytest.mark.slow
def test_concurrent_calls_get_distinct_steps_and_a_whole_record(daemon):
    """Claude fires the Pre hooks of parallel tool calls at once; the daemon answers each before
    saving the run state (Recorder.begin), so the next call must still see every step."""
    from concurrent.futures import ThreadPoolExecutor

    from vacant.core.locations import run_dir
    from vacant.store.steplog import StepLog, verify

    root, _ = daemon
    headers = good_headers(root)
    keys = [f"t{n}" for n in range(24)]

    def call(event: str, key: str) -> int:
        fields = {"tool_name": "Read", "tool_use_id": key, "tool_input": {"file_path": str(root / "a.txt")}}
        return post(root, payload(root, event, **fields), headers)[0]

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(lambda key: call("PreToolUse", key), keys)) == {200}
        assert set(pool.map(lambda key: call("PostToolUse", key), keys)) == {200}
    log = StepLog(run_dir(root, "s1"))
    records = log.records()
    starts = {r["key"].rpartition("/")[2]: r["step"] for r in records if r["type"] == "step_start"}
    ends = {r["key"].rpartition("/")[2]: r["step"] for r in records if r["type"] == "step_end"}
    assert sorted(starts) == sorted(keys) and ends == starts
    assert sorted(starts.values()) == list(range(1, len(keys) + 1))
    assert verify(log) == []
    deadline = time.monotonic() + 10  # the last call's state is saved just after its answer
    while time.monotonic() < deadline:
        state = json.loads((log.run_dir / "run.json").read_text())
        if state.get("log_seq") == records[-1]["seq"]:
            break
        time.sleep(0.05)
    assert state["open"] == {} and state["next_step"] == len(keys) + 1 and state["log_seq"] == records[-1]["seq"]


def test_a_stop_on_a_broken_contract_through_the_daemon_blocks_and_logs_nothing_else(daemon):
    """The daemon once called the Stop's contract error a malformed request (and the Stop went green)."""
    root, _ = daemon
    before = lifecycle.ask_status(root)["requests"]
    assert run_client(root, payload(root, "SessionStart", source="startup")).returncode == 0
    (root / "vacant.toml").write_text('[[check]]\nname = "a"\ncommand = "test -f b.txt"\n[[check]\n')
    proc = run_client(root, payload(root, "Stop", stop_hook_active=False))
    answer = json.loads(proc.stdout)
    assert answer["decision"] == "block" and f"{root / 'vacant.toml'} is not valid TOML at line 4" in answer["reason"]
    assert lifecycle.ask_status(root)["requests"] >= before + 2  # the daemon answered both
    assert "malformed" not in errors(root) and "vacant.toml" not in errors(root)


def _deep(base: Path, length: int) -> Path:
    """A directory under `base` whose path is at least `length` bytes long."""
    path = base
    while len(os.fsencode(str(path))) < length:
        path = path / ("d" * 40)
    path.mkdir(parents=True, exist_ok=True)
    return path


@settings(max_examples=20, deadline=None)
@given(root_length=st.integers(10, 300), tmp_length=st.integers(4, 300))
def test_the_socket_path_always_binds_whatever_the_workspace_and_tmpdir(tmp_path_factory, root_length, tmp_length):
    base = tmp_path_factory.mktemp("s")
    root, tmpdir = _deep(base / "ws", root_length), _deep(base / "tmp", tmp_length)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(tmpdir))
        path = socket_path(root)
    Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with socket.socket(socket.AF_UNIX) as sock:  # the oracle is the kernel's own limit
        sock.bind(path)
    os.unlink(path)


def test_a_daemon_starts_under_a_tmpdir_too_long_for_its_socket(tmp_path, monkeypatch):
    """Its state path and TMPDIR both too long for AF_UNIX: it binds under /tmp, and a session's first
    call is answered by it (no fallback wait: it once waited 10 s for a daemon that could not start)."""
    root = _deep(tmp_path / "ws", 120)
    (root / ".vacant").mkdir()
    monkeypatch.setenv("TMPDIR", str(_deep(tmp_path / "tmp", 120)))
    proc = start(root)
    try:
        assert lifecycle.ask_status(root)["pid"] == proc.pid
    finally:
        assert lifecycle.stop(root)


def test_a_session_start_waits_no_longer_for_a_daemon_that_could_not_start(tmp_path):
    """Claude's session start waits for the daemon it starts (its later http calls have no
    fallback), but not for one that has exited: here the daemon's lock is held by another process
    (the daemon leaves at once), and the call is answered in-process well inside the 10 s wait."""
    import fcntl

    root = tmp_path / "ws"
    (root / ".vacant").mkdir(parents=True)
    lock = daemon_dir(root) / "lock"
    lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        proc = run_client(root, payload(root, "SessionStart", source="startup"))
        took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert took < 5, f"the session start waited {took:.1f} s for a daemon that had left"
    assert not lifecycle.running(root) and not errors(root)
    assert list((root / ".vacant" / "runs").iterdir())  # answered (and recorded) in-process


def test_a_killed_daemon_is_started_again_by_the_next_call_not_after_the_grace(daemon):
    """The spawn grace keeps calls from starting a second daemon while one comes up; a daemon that
    came up and was then killed is not coming up, so the next call (answered in-process) starts
    a new one at once rather than SPAWN_GRACE_S after the last start."""
    root, proc = daemon
    marker = daemon_dir(root) / "spawned"  # as the client that started this daemon left it, a moment before
    marker.write_text("client")
    os.utime(marker, (info(root)["started"] - 0.5,) * 2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    answered = run_client(root, payload(root, "PreToolUse", tool_name="Bash", tool_use_id="t1",
                                        tool_input={"command": "git push origin main"}))
    assert b'"deny"' in answered.stdout  # in-process: the gate held it
    deadline = time.monotonic() + 5  # well inside the 10 s grace
    while time.monotonic() < deadline and (info(root) or {}).get("pid") in (None, proc.pid):
        time.sleep(0.05)
    try:
        assert (info(root) or {}).get("pid") not in (None, proc.pid), "no daemon was started again"
    finally:
        lifecycle.stop(root)


def test_a_sigterm_delivered_to_any_thread_ends_the_daemon_at_once(daemon):
    """The kernel hands a process's signal to any thread that does not block it (after a SIGSTOP
    and SIGCONT, often not the main one); the daemon's main thread must wake all the same, not at
    its next idle check a minute later. Here the SIGTERM goes to one of its other threads."""
    import ctypes

    root, proc = daemon
    threads = sorted(int(tid) for tid in os.listdir(f"/proc/{proc.pid}/task") if int(tid) != proc.pid)
    assert threads, "the daemon runs its servers and watcher on threads of their own"
    assert ctypes.CDLL(None, use_errno=True).tgkill(proc.pid, threads[0], signal.SIGTERM) == 0
    assert proc.wait(5) == 0 and not os.path.exists(socket_path(root))
