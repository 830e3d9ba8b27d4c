"""`vacant-hook-client PLATFORM`: the lean command hook. Forwards stdin to the workspace's daemon over
its unix socket and prints the answer; with no daemon it starts one (detached, not waited for)
and answers in-process exactly as `vacant-hook` does.

Imports on the fast path: os, sys and the C `_socket` module (not `socket`, whose enum/selectors
imports cost more than the rest of the call), plus vacant.daemon.pointer (os only); a test
measures them like the hook's. The daemon is found through its pointer file (see pointer.py).
Everything else (locating the state directory, starting a daemon, the in-process hook) is
imported only on the slow path. Trust: whatever goes wrong with the daemon (absent, stale,
timeout, refusal, garbage answer), the call is answered in-process, so the gate keeps failing
closed and the recorder keeps failing open exactly as without a daemon.

Wire format (the compact protocol of server.py): `H1 <platform> <env bytes> <payload bytes>\\n`,
then env as `key=value` items joined by NUL, then the payload; the answer is
`<status> <exit code> <stdout bytes>\\n` and the stdout bytes.
"""

from __future__ import annotations

import os
import sys
import time

import _socket

from vacant.daemon import pointer

TOOL_TIMEOUT_S = 20.0  # well inside the 60 s hook timeout: a stuck daemon still leaves time to fall back
STOP_TIMEOUT_S = 560.0  # the Stop pipeline may replay for minutes (the hook's own budget is 570 s)
SESSION_START_WAIT_S = 10.0
CWD_ENV = "VACANT_CLIENT_CWD"
FORWARDED_ENV = ("CLAUDE", "CODEX", "OPENCODE", "VACANT", "HOME", "PWD")


def _is_session_start(raw: bytes) -> bool:
    return b'"SessionStart"' in raw or b'"session.created"' in raw or b'"event": "start"' in raw


def _exchange(sock_path: str, platform: str, raw: bytes, env: dict[str, str]) -> tuple[str, int] | None:
    timeout = STOP_TIMEOUT_S if b'Stop"' in raw or "stop" in platform else TOOL_TIMEOUT_S
    env = {**env, CWD_ENV: os.getcwd()}  # the daemon checks it is this directory's workspace
    envb = b"\0".join(f"{k}={v}".encode("utf-8", "surrogateescape") for k, v in env.items()
                      if k.startswith(FORWARDED_ENV) and "\0" not in k + v)
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(sock_path)
        conn.sendall(f"H1 {platform} {len(envb)} {len(raw)}\n".encode() + envb + raw)
        data = b""
        while True:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        conn.close()
    head, _, body = data.partition(b"\n")
    status, code, length = (int(part) for part in head.split())
    if status != 200 or len(body) != length:
        return None
    return body.decode("utf-8", "surrogateescape"), code


def ask_daemon(platform: str, raw: bytes, env: dict[str, str]) -> tuple[str, int] | None:
    """The daemon's answer, or None when it cannot give one (then the caller falls back).

    With none running (no pointer, or a stale one whose socket refuses), the call starts one and
    does not wait for it, except at session start: Claude's http hooks that follow have no
    fallback, so the session start waits (up to SESSION_START_WAIT_S) until the daemon answers."""
    project = env.get("CLAUDE_PROJECT_DIR")
    answer = _try(project, platform, raw, env)
    if answer is not NO_DAEMON:
        return answer
    if not _start_daemon(project) or not _is_session_start(raw):
        return None
    deadline = time.monotonic() + SESSION_START_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(0.02)
        answer = _try(project, platform, raw, env)
        if answer is not NO_DAEMON:
            return answer
    return None


NO_DAEMON = ("", -1)  # a sentinel: nobody listening (distinct from an answer or a failed one)


def _try(project: str | None, platform: str, raw: bytes, env: dict[str, str]):
    found = pointer.find(project or os.getcwd(), walk_up=not project)
    if found is None:
        return NO_DAEMON
    try:
        return _exchange(found[1], platform, raw, env)
    except (ConnectionRefusedError, FileNotFoundError):
        return NO_DAEMON  # a stale pointer: its daemon died
    except (OSError, ValueError):
        return None


def _start_daemon(project: str | None) -> bool:
    """The slow path: no daemon known for this workspace. Start one (detached)."""
    from pathlib import Path  # only when no daemon runs: the in-process fallback follows anyway

    from vacant.core.locations import find_root, state_dir
    from vacant.daemon.paths import spawn

    root = Path(project) if project else find_root(Path.cwd())
    if not state_dir(root).is_dir():
        return False  # not a vacant workspace: nothing to start
    spawn(root)
    return True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    raw = sys.stdin.buffer.read()
    env = dict(os.environ)
    answer = None
    if len(argv) == 1:
        try:
            answer = ask_daemon(argv[0], raw, env)
        except Exception:  # noqa: BLE001 - any client trouble: the in-process path answers
            answer = None
    if answer is None:
        from vacant import hook  # the fallback: only when the daemon could not answer

        return hook.main(argv, raw)
    stdout, code = answer
    if stdout:
        sys.stdout.write(stdout)
        sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
